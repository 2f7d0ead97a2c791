// Every task type in live mode (issue 18), over the worker API: the contract's creation examples
// become live tasks; a worker answering as test mode's synthetic generator does completes each;
// answers that break the task's params are refused (400) naming the rule, and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticResponse, type TaskType } from '../../server/domain/synthetic.ts';
import { loadContract } from '../../server/http/contract.ts';
import { creationExamples } from '../support/examples.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { basicAuth } from '../support/net.ts';
import { createWorker, workerClient } from '../support/workers.ts';

const contract = loadContract('current');
type Json = Record<string, any>;

/** One example per type, without project, batch or unique_id (each task stands alone). */
const examples = new Map<string, Json>();
for (const [path, , body] of creationExamples(contract)) {
  const type = contract.creations.get(path)!.type;
  if (examples.has(type) || body.project !== undefined || body.batch !== undefined) continue;
  const { unique_id: _u, ...rest } = body;
  examples.set(type, rest);
}

const first = (r: Json, key = 'annotations'): Json => r[key][0];
/** For each type: a way to break a valid answer, and the rule the refusal must name. */
const broken: Record<string, [(r: Json, params: Json) => void, RegExp]> = {
  annotation: [
    (r) => (first(r).label = 'no such label'),
    /annotations\[0\]\.label "no such label" is not one of the task's objects_to_annotate/,
  ],
  pointannotation: [(r) => (first(r).label = 'x'), /annotations\[0\]\.label "x" is not one of the task's objects_to_annotate/],
  lineannotation: [(r) => (first(r).label = 'x'), /objects_to_annotate/],
  polygonannotation: [(r) => (first(r).label = 'x'), /objects_to_annotate/],
  imageannotation: [
    (r) => (first(r).label = 'x'),
    /annotations\[0\]\.label "x" is not one of the task's geometries\.\w+\.objects_to_annotate/,
  ],
  segmentannotation: [
    (r) => (r.annotations.labeled = { ...r.annotations.labeled, 'not a label': 'https://example.com/m.png' }),
    /labeled\.not a label is not one of the task's labels/,
  ],
  categorization: [(r) => (r.category = 'not a category'), /response\.category "not a category" is not one of the task's categories/],
  comparison: [
    (r, p) => {
      if (p.choices) r.choice = 'neither';
      else r.fields = { ...r.fields, extra: 'x' };
    },
    /not one of the task's choices|is not a field of the task/,
  ],
  datacollection: [(r) => (r.fields = { ...r.fields, extra: 'x' }), /response\.fields\.extra is not a field of the task/],
  transcription: [(r) => (r.fields = { ...r.fields, extra: 'x' }), /response\.fields\.extra is not a field of the task/],
  namedentityrecognition: [(r) => (first(r).end = 100_000), /annotations\[0\] spans \d+\.\.100000, not inside the text/],
  audiotranscription: [
    (r) => (r.segments[0].start_seconds = r.segments[0].end_seconds + 1),
    /response\.segments\[0\] ends \([\d.]+ s\) before it starts/,
  ],
  videoplaybackannotation: [
    (r) => (first(r).label = 'x'),
    /annotations\[0\]\.label "x" is not one of the task's geometries\.\w+\.objects_to_annotate/,
  ],
  lidarsegmentation: [(r) => (r.frames[0].point_labels[0] = 99), /response\.frames\[0\]\.point_labels\[0\] is not a label index/],
  textcollection: [
    (r) => (r.annotations = { ...r.annotations, no_such_field: 'x' }),
    /response\.annotations\.no_such_field is not a field of the task/,
  ],
  documenttranscription: [(r) => (first(r).label = 'x'), /annotations\[0\]\.label "x" is not one of the task's features/],
};

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('answers of every task type on %s', (db) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('has an example and a broken answer for every type', () => {
    expect([...examples.keys()].sort()).toEqual(Object.keys(broken).sort());
  });

  it.each([...examples.keys()])(
    '%s over the worker API: a broken answer gets 400 naming the rule; the synthetic answer completes the task',
    async (type) => {
      const api = client(server, 'current', server.dev.live_key);
      const created = await api('POST', `/v1/task/${type}`, { json: examples.get(type) });
      expect(created.status, created.text).toBe(200);
      const taskId = created.body.task_id as string;
      const w = await createWorker(server, { accountId: server.dev.account_id });
      const call = (path: string, json: unknown) => workerClient(server, w.token)('POST', path, json);
      const a = (await call('/v1/assignments/next', {})).body;
      expect(a.task.task_id).toBe(taskId);
      const task = (await server.uow.tasks.get(server.dev.account_id, 'live', taskId))!;
      const valid = syntheticResponse(type as TaskType, task.params, taskId) as Json;

      const bad = structuredClone(valid);
      const [breakIt, rule] = broken[type]!;
      breakIt(bad, task.params);
      const refused = await call(`/v1/assignments/${a.assignment_id}/submit`, {
        lease_token: a.lease_token,
        active_ms: 1000,
        response: bad,
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error).toMatch(rule);
      expect(await server.uow.tasks.get(server.dev.account_id, 'live', taskId)).toMatchObject({ status: 'pending', response: null });

      const done = await call(`/v1/assignments/${a.assignment_id}/submit`, {
        lease_token: a.lease_token,
        active_ms: 61_000,
        response: valid,
      });
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      const stored = (await server.uow.tasks.get(server.dev.account_id, 'live', taskId))!;
      expect(stored.status).toBe('completed');
      // datacollection: the time spent is the measured active time (at most the time that passed), not what the worker sent.
      if (type === 'datacollection')
        expect(stored.response).toEqual({ ...valid, time_spent_in_seconds: Math.round((done.body.active_ms as number) / 1000) });
      else expect(stored.response).toEqual(valid);
      const shown = (await api('GET', `/v1/task/${taskId}`)).body;
      if (type !== 'videoplaybackannotation') expect(shown).toMatchObject({ status: 'completed', response: stored.response });
      else {
        // A video response's tracks and events are files the task links (decision record 24): they hold the answer.
        expect(shown.status).toBe('completed');
        for (const file of ['annotations', 'events']) {
          const read = await fetch(shown.response[file].url, { headers: { authorization: basicAuth(server.dev.live_key) } });
          expect(await read.json()).toEqual((stored.response as Record<string, unknown>)[file]);
        }
      }
    },
  );

  it('a comparison answer takes no fields the task does not ask for, and without its choice says which to choose', async () => {
    const api = client(server, 'current', server.dev.live_key);
    const { fields: _none, ...example } = examples.get('comparison')!;
    const created = await api('POST', '/v1/task/comparison', { json: { ...example, choices: ['left', 'right'] } });
    expect(created.status, created.text).toBe(200);
    const w = await createWorker(server, { accountId: server.dev.account_id });
    const call = (path: string, json: unknown) => workerClient(server, w.token)('POST', path, json);
    const a = (await call('/v1/assignments/next', {})).body;
    expect(a.task.task_id).toBe(created.body.task_id);
    const submit = (response: Json) =>
      call(`/v1/assignments/${a.assignment_id}/submit`, { lease_token: a.lease_token, active_ms: 1000, response });
    const extra = await submit({ choice: 'left', fields: { note: 'not asked for' } });
    expect([extra.status, extra.body.error]).toEqual([400, 'response.fields is given, but the task has no fields.']);
    const noChoice = await submit({ fields: {} });
    expect([noChoice.status, noChoice.body.error]).toEqual([400, 'response.choice is missing: choose one of "left", "right".']);
    const done = await submit({ choice: 'right' });
    expect(done.status, done.text).toBe(200);
    expect((await api('GET', `/v1/task/${created.body.task_id}`)).body).toMatchObject({
      status: 'completed',
      response: { choice: 'right' },
    });
  });

  it('a polygon whose outline crosses or touches itself (a bow-tie, a vertex repeated) is refused with 400 naming the shape', async () => {
    const api = client(server, 'current', server.dev.live_key);
    const square: Json[] = [
      { x: 10, y: 10 },
      { x: 110, y: 10 },
      { x: 110, y: 110 },
      { x: 10, y: 110 },
    ];
    const [nw, ne, se, sw] = square as [Json, Json, Json, Json];
    const bowTie = [nw, se, ne, sw];
    const closedTwice = [...square, nw];
    for (const [type, params, shape] of [
      [
        'imageannotation',
        { geometries: { polygon: { objects_to_annotate: ['lot'] } } },
        (vertices: Json[]) => ({ uuid: '7a3c2a64-6f4e-4d8e-9a53-1f0b2c3d4e5f', type: 'polygon', label: 'lot', vertices }),
      ],
      ['polygonannotation', { objects_to_annotate: ['lot'] }, (vertices: Json[]) => ({ label: 'lot', vertices })],
    ] as const) {
      const created = await api('POST', `/v1/task/${type}`, {
        json: {
          callback_url: 'https://example.com/hook',
          instruction: 'Outline the lot.',
          attachment: 'https://example.com/lot.png',
          attachment_type: 'image',
          ...params,
        },
      });
      expect(created.status, created.text).toBe(200);
      const w = await createWorker(server, { accountId: server.dev.account_id });
      const call = (path: string, json: unknown) => workerClient(server, w.token)('POST', path, json);
      const a = (await call('/v1/assignments/next', {})).body;
      expect(a.task.task_id).toBe(created.body.task_id);
      const submit = (vertices: Json[]) =>
        call(`/v1/assignments/${a.assignment_id}/submit`, {
          lease_token: a.lease_token,
          active_ms: 1000,
          response: { annotations: [shape(vertices)] },
        });
      const crossing = await submit(bowTie);
      expect(crossing.status, type).toBe(400);
      expect(crossing.body.error).toContain(
        "response.annotations[0] (a polygon) crosses itself at (60, 60): a polygon's outline may not cross or touch itself.",
      );
      const repeated = await submit(closedTwice);
      expect(repeated.status, type).toBe(400);
      expect(repeated.body.error).toContain('response.annotations[0] (a polygon) has vertices 0 and 4 at the same place (10, 10)');
      expect((await api('GET', `/v1/task/${created.body.task_id}`)).body).toMatchObject({ status: 'pending' });
      const done = await submit(square);
      expect(done.status, done.text).toBe(200);
      expect((await api('GET', `/v1/task/${created.body.task_id}`)).body).toMatchObject({
        status: 'completed',
        response: { annotations: [shape(square)] },
      });
    }
  });
});
