// Issue 32, items 5, 6 and 21: what creation does with what clients send. An unknown creation type
// answers 404 naming it and listing the generation's types (not the validator's 405); a video's
// pre-labels (`hypothesis`) are kept, and what the service does not take (base_annotations, links,
// padding, priority, ...) or another creation's parameter is refused naming it, never dropped,
// while a name nobody documents passes and is ignored (decision 2); training and evaluation creation
// take numeric strings only within the contract's bounds (no 500, nothing stored, the list still
// answers). Raw requests, both generations, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const video = (extra: Record<string, unknown> = {}) => ({
  callback_url: 'https://example.com/cb',
  attachments: ['https://example.com/f/0.jpg', 'https://example.com/f/1.jpg', 'https://example.com/f/2.jpg'],
  geometries: { box: { objects_to_annotate: ['car', 'truck'] }, point: { objects_to_annotate: ['light'] } },
  events_to_annotate: ['lane change'],
  ...extra,
});
const hypothesis = {
  annotations: [
    {
      uuid: '5d6e7f80-9a1b-4c2d-8e3f-405162738495',
      type: 'box',
      label: 'car',
      attributes: {},
      frames: [
        { frame: 0, left: 10, top: 20, width: 100, height: 50 },
        { frame: 2, left: 30, top: 20, width: 100, height: 50 },
      ],
    },
  ],
  events: [{ label: 'lane change', start: 1, end: 2 }],
};

const imageTraining = (minWidth: unknown) => ({
  attachment: 'https://example.com/a.jpg',
  geometries: { box: { objects_to_annotate: ['car'], min_width: minWidth } },
  expected_response: {
    annotations: [{ uuid: '3f1c2b9e-6a0d-4c55-9a3e-1b2c3d4e5f60', type: 'box', label: 'car', left: 1, top: 1, width: 300, height: 9 }],
  },
});
const timeTraining = (increment: unknown) => ({
  attachments: [{ type: 'audio', content: 'https://example.com/a.mp3' }],
  fields: [{ type: 'time_range', field_id: 'ad', title: 'Where?', default_seconds: [0, 30], increment_seconds: increment }],
  expected_response: { annotations: { ad: { from_seconds: 0, to_seconds: 30 } } },
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('creation edges on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'creation-edges', new Date());
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['current', '/v1/task/videoannotation', 'videoannotation', ['imageannotation', 'lidarsegmentation', 'categorization'], []],
    ['current', '/v1/task/bogustype', 'bogustype', ['videoplaybackannotation', 'annotation'], []],
    ['legacy', '/v1/task/bogustype', 'bogustype', ['annotation', 'audiotranscription'], ['imageannotation']],
    ['legacy', '/v1/task/imageannotation', 'imageannotation', ['annotation', 'audiotranscription'], ['lidarsegmentation']],
  ] as const)('%s POST %s → 404 naming the type and listing those of the generation', async (generation, path, name, listed, absent) => {
    const res = await client(server, generation, account.test_key)('POST', path, { json: { callback_url: 'https://example.com/cb' } });
    expect(res.status, res.text).toBe(404);
    expect(res.body.error).toContain(`"${name}"`);
    for (const type of listed) expect(res.body.error).toContain(type);
    for (const type of absent) expect(res.body.error.split('(POST')[0]).not.toContain(type);
    if (path === '/v1/task/imageannotation') expect(res.body.error).toContain('current generation');
    // A key is still needed first.
    expect((await client(server, generation, null)('POST', path, { json: {} })).status).toBe(401);
  });

  it('videoplaybackannotation keeps its pre-labels (hypothesis) on the task, in the callback body and what workers get', async () => {
    const call = client(server, 'current', account.test_key);
    const created = await call('POST', '/v1/task/videoplaybackannotation', { json: video({ hypothesis }) });
    expect(created.status, created.text).toBe(200);
    expect(created.body.params.hypothesis).toEqual(hypothesis);
    const read = await call('GET', `/v1/task/${created.body.task_id}`);
    expect(read.body.params.hypothesis).toEqual(hypothesis);
    const legacy = await client(server, 'legacy', account.test_key)('GET', `/v1/task/${created.body.task_id}`);
    expect(legacy.body.params.hypothesis).toEqual(hypothesis);
  });

  it.each([
    ['base_annotations', { annotations: [] }],
    ['can_add_base_annotations', true],
    ['links', [{ from: 'a', to: 'b' }]],
    ['padding', 10],
    ['padding_x', 10],
    ['priority', 30],
  ])('videoplaybackannotation with %s → 400 naming it, nothing stored', async (name, value) => {
    const own = await createAccount(server.uow, `video-${name}`, new Date());
    const call = client(server, 'current', own.test_key);
    const res = await call('POST', '/v1/task/videoplaybackannotation', { json: video({ [name]: value }) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(name);
    expect((await call('GET', '/v1/tasks')).body.total).toBe(0);
  });

  it('every unsupported parameter is named; one sent as null counts as not given', async () => {
    const call = client(server, 'current', account.test_key);
    const res = await call('POST', '/v1/task/videoplaybackannotation', {
      json: video({ hypothesis, base_annotations: {}, links: [], padding: 1, padding_x: 1, priority: 1 }),
    });
    expect(res.status, res.text).toBe(400);
    for (const name of ['base_annotations', 'links', 'padding', 'padding_x', 'priority']) expect(res.body.error).toContain(name);
    const nulls = await call('POST', '/v1/task/videoplaybackannotation', {
      json: video({ hypothesis, base_annotations: null, priority: null }),
    });
    expect(nulls.status, nulls.text).toBe(200);
    expect(Object.keys(nulls.body.params)).not.toContain('base_annotations');
  });

  it.each([
    [
      'a track type outside the geometries',
      {
        annotations: [
          {
            ...hypothesis.annotations[0],
            type: 'polygon',
            frames: [
              {
                frame: 0,
                vertices: [
                  { x: 1, y: 1 },
                  { x: 9, y: 1 },
                  { x: 5, y: 9 },
                ],
              },
            ],
          },
        ],
      },
      'hypothesis/annotations/0/type',
    ],
    ['a label outside its geometry', { annotations: [{ ...hypothesis.annotations[0], label: 'bus' }] }, 'hypothesis/annotations/0/label'],
    [
      'a frame beyond the frame images',
      { annotations: [{ ...hypothesis.annotations[0], frames: [{ frame: 3, left: 1, top: 1, width: 1, height: 1 }] }] },
      'hypothesis/annotations/0/frames/0/frame',
    ],
    [
      'an event outside events_to_annotate',
      { annotations: [], events: [{ label: 'crash', start: 0, end: 1 }] },
      'hypothesis/events/0/label',
    ],
    [
      'an event ending before it starts',
      { annotations: [], events: [{ label: 'lane change', start: 2, end: 1 }] },
      'hypothesis/events/0/end',
    ],
  ])('a video hypothesis with %s → 400 naming it', async (_case, given, where) => {
    const res = await client(server, 'current', account.test_key)('POST', '/v1/task/videoplaybackannotation', {
      json: video({ hypothesis: given }),
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(where);
  });

  it.each(['current', 'legacy'] as const)(
    '%s: a name nobody documents is accepted and ignored; one the API documents and this creation does not take is refused naming it, a form body included',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const body = {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: 'x',
        categories: ['a'],
      };
      // A misspelt name is no documented one: the client's own extra (decision 2), kept out of params.
      const extra = await call('POST', '/v1/task/categorization', { json: { ...body, categorys: ['b'], x_client_trace: 't-1' } });
      expect(extra.status, extra.text).toBe(200);
      const read = await call('GET', `/v1/task/${extra.body.task_id}`);
      expect(read.body.params).toEqual({ attachment_type: 'text', attachment: 'x', categories: ['a'] });
      expect(read.text).not.toContain('x_client_trace');
      // Another type's parameter: refused, naming it and the types that take it.
      const other = await call('POST', '/v1/task/categorization', { json: { ...body, objects_to_annotate: ['car'] } });
      expect(other.status, other.text).toBe(400);
      expect(other.body.error).toMatch(/^objects_to_annotate is not supported for categorization tasks \(taken by annotation, /);
      if (generation === 'legacy') {
        const form = await call('POST', '/v1/task/categorization', {
          form: 'callback_url=https%3A%2F%2Fexample.com%2Fcb&instruction=Pick&attachment_type=text&attachment=x&categories=a&priority=5',
        });
        expect(form.status, form.text).toBe(400);
        expect(form.body.error).toMatch(/^priority is not supported: no creation takes it; /);
        const trace = await call('POST', '/v1/task/categorization', {
          form: 'callback_url=https%3A%2F%2Fexample.com%2Fcb&instruction=Pick&attachment_type=text&attachment=x&categories=a&x_client_trace=5',
        });
        expect(trace.status, trace.text).toBe(200);
        expect(trace.body.params).not.toHaveProperty('x_client_trace');
      } else {
        // The current generation has no urgency: refused, not taken in silence.
        const urgency = await call('POST', '/v1/task/categorization', { json: { ...body, urgency: 'week' } });
        expect(urgency.status, urgency.text).toBe(400);
        expect(urgency.body.error).toMatch(
          /^urgency is not supported for categorization tasks \(taken by every task creation of the older generation/,
        );
      }
      const version = await call('POST', '/v1/task/categorization', { json: { ...body, project_param_version: 0 } });
      expect(version.status, version.text).toBe(400);
      expect(version.body.error).toContain('project_param_version');
      const training = await call('POST', '/v1/training_tasks/imageannotation', {
        json: { ...imageTraining(3), callback_url: 'https://example.com/cb' },
      });
      expect(training.status, training.text).toBe(400);
      expect(training.body.error).toMatch(
        /^callback_url is not supported for imageannotation training tasks \(taken by every task creation/,
      );
    },
  );

  it.each(['current', 'legacy'] as const)(
    '%s: training and evaluation creation take numeric strings within the bounds only; nothing out of bounds is stored and the list answers',
    async (generation) => {
      const own = await createAccount(server.uow, `bounds-${generation}`, new Date());
      const call = client(server, generation, own.test_key);
      for (const kind of ['training_tasks', 'evaluation_tasks']) {
        const wide = await call('POST', `/v1/${kind}/imageannotation`, { json: imageTraining('99999999') });
        expect(wide.status, wide.text).toBe(400);
        expect(wide.body.error).toContain('min_width');
        const half = await call('POST', `/v1/${kind}/textcollection`, { json: timeTraining('0.5') });
        expect(half.status, half.text).toBe(400);
        expect(half.body.error).toContain('increment_seconds');
        const list = await call('GET', `/v1/${kind}`);
        expect(list.status, list.text).toBe(200);
        expect(list.body.total).toBe(0);
        // Within the bounds a numeric string is stored as the number it stands for.
        const typed = await call('POST', `/v1/${kind}/imageannotation`, { json: imageTraining('30') });
        expect(typed.status, typed.text).toBe(200);
        expect(typed.body.params.geometries.box.min_width).toBe(30);
        const time = await call('POST', `/v1/${kind}/textcollection`, { json: timeTraining('2.5') });
        expect(time.status, time.text).toBe(200);
        expect(time.body.params.fields[0].increment_seconds).toBe(2.5);
        const after = await call('GET', `/v1/${kind}`);
        expect(after.status, after.text).toBe(200);
        expect(after.body.total).toBe(2);
      }
      // Task creation refuses the same value the same way.
      const task = await call('POST', '/v1/task/annotation', {
        json: {
          callback_url: 'https://example.com/cb',
          attachment: 'https://example.com/a.jpg',
          objects_to_annotate: ['car'],
          min_width: '99999999',
        },
      });
      expect(task.status, task.text).toBe(400);
      expect(task.body.error).toContain('min_width');
    },
  );
});
