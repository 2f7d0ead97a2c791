// Training and evaluation tasks over HTTP on loopback, on PGlite and on PostgreSQL. The server
// validates its own answers against the contract here, so a wrong shape fails too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, updateAccount } from '../../server/domain/accounts.ts';
import type { Caller } from '../../server/domain/model.ts';
import { IdempotencyKeyBusy } from '../../server/domain/idempotency.ts';
import { createTrainingTask } from '../../server/domain/training.ts';
import { loadContract } from '../../server/http/contract.ts';
import { trainingTaskView } from '../../server/http/views/training.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

type Json = Record<string, any>;

/** The seed's misspelt path kinds and the type they create; every other path kind is its type. */
const misspelt: Record<string, string> = { documentranscription: 'documenttranscription', segmentannoation: 'segmentannotation' };

/** Every creation path of a generation's contract, with the request example the contract gives. */
function creationExamples(generation: 'current' | 'legacy') {
  const { doc } = loadContract(generation);
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) => {
    const m = /^\/v1\/(training|evaluation)_tasks\/([a-z]+)$/.exec(path);
    if (!m || !item.post) return [];
    const example = Object.values<Json>(item.post.requestBody.content['application/json'].examples)[0]!.value as Json;
    return [{ path, kind: m[1]!, type: misspelt[m[2]!] ?? m[2]!, example }];
  });
}

const image = {
  attachment: 'https://example.com/images/street-1041.jpg',
  attachment_type: 'image',
  geometries: { box: { objects_to_annotate: ['car', 'truck'] } },
};
const imageAnswer = {
  annotations: [{ uuid: '3f1c2b9e-6a0d-4c55-9a3e-1b2c3d4e5f60', type: 'box', label: 'car', left: 120, top: 84, width: 210, height: 96 }],
};
const ner = { text: 'Ada Lovelace was born in London.', labels: [{ name: 'PER' }, { name: 'LOC' }] };
const nerAnswer = { annotations: [{ id: 'a1', start: 0, end: 12, text: 'Ada Lovelace', label: 'PER' }], relationships: [] };

const segmentExample = () => creationExamples('current').find((e) => e.path === '/v1/evaluation_tasks/segmentannoation')!.example;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('training and evaluation tasks on %s', (db) => {
  let server: TestServer;
  let current: ReturnType<typeof client>;
  let legacy: ReturnType<typeof client>;
  let live: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  let accountCount = 0;

  /** A client of a new account: its lists hold only what the test put there. */
  const freshAccount = async () => {
    const secrets = await createAccount(server.uow, `training-${db}-${++accountCount}`, new Date());
    return { name: secrets.name, current: client(server, 'current', secrets.test_key), legacy: client(server, 'legacy', secrets.test_key) };
  };

  beforeAll(async () => {
    server = await startTestServer(db);
    const secrets = await createAccount(server.uow, 'other', new Date());
    current = client(server, 'current', server.dev.test_key);
    legacy = client(server, 'legacy', server.dev.test_key);
    live = client(server, 'current', server.dev.live_key);
    other = client(server, 'current', secrets.test_key);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(['current', 'legacy'] as const)(
    'creates a task from the example of every creation path of the %s generation, misspelt paths and aliases alike',
    async (gen) => {
      const api = gen === 'current' ? current : legacy;
      const examples = creationExamples(gen);
      // Both kinds, both spellings of the two misspelt kinds.
      for (const kind of ['training', 'evaluation']) {
        for (const spelling of ['documentranscription', 'documenttranscription', 'segmentannoation', 'segmentannotation']) {
          expect(examples.map((e) => e.path)).toContain(`/v1/${kind}_tasks/${spelling}`);
        }
      }
      for (const { path, kind, type, example } of examples) {
        const { expected_response, initial_response, ...params } = example;
        const created = await api('POST', path, { json: example });
        expect(created.status, `${path}: ${created.text}`).toBe(200);
        expect(created.body).toEqual({
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          type,
          kind,
          params,
          expected_response,
          ...(initial_response !== undefined ? { initial_response } : {}),
          created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        });
        const read = await api('GET', `/v1/${kind}_tasks/${created.body.id}`);
        expect(read.status, read.text).toBe(200);
        expect(read.body).toEqual(created.body);
      }
    },
  );

  it('refuses what another creation documents and a training task does not take (common task fields, an initial_response), naming it; ignores a name nobody documents; keeps the type parameters', async () => {
    const extras = {
      callback_url: 'https://example.com/cb',
      instruction: 'Draw boxes.',
      metadata: { a: 1 },
      unique_id: 'u-1',
      tags: ['x'],
    };
    for (const [name, value] of [...Object.entries(extras), ['initial_response', imageAnswer]] as const) {
      const refused = await current('POST', '/v1/training_tasks/imageannotation', {
        json: { ...image, [name]: value, expected_response: imageAnswer },
      });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error).toMatch(new RegExp(`^${name} is not supported for imageannotation training tasks`));
    }
    const training = await current('POST', '/v1/training_tasks/imageannotation', {
      json: { ...image, surprise: true, expected_response: imageAnswer },
    });
    expect(training.status, training.text).toBe(200);
    expect(training.body.params).toEqual(image);
    expect(training.body).not.toHaveProperty('initial_response');
    expect(training.body).not.toHaveProperty('surprise');
    const evaluation = await current('POST', '/v1/evaluation_tasks/imageannotation', {
      json: { ...image, expected_response: imageAnswer },
    });
    expect(evaluation.status, evaluation.text).toBe(200);
    expect(evaluation.body).not.toHaveProperty('initial_response');
  });

  it('applies the rules of task creation: Markdown sanitized, lenient booleans stored as booleans', async () => {
    const text = await current('POST', '/v1/training_tasks/textcollection', {
      json: {
        attachments: [{ type: 'markdown', content: '# Title\n<script>alert(1)</script><b onclick="x()">bold</b>' }],
        fields: [{ type: 'text', field_id: 'summary', title: 'Summary' }],
        expected_response: { annotations: { summary: 'A title in bold.' } },
      },
    });
    expect(text.status, text.text).toBe(200);
    expect(text.body.params.attachments[0].content).toBe('# Title\n<b>bold</b>');
    const segment = await current('POST', '/v1/evaluation_tasks/segmentannoation', {
      json: { ...segmentExample(), allow_unlabeled: 'false' },
    });
    expect(segment.status, segment.text).toBe(200);
    expect(segment.body.params.allow_unlabeled).toBe(false);
  });

  it.each([
    ['expected_response missing', '/v1/training_tasks/imageannotation', { ...image }, 'expected_response'],
    [
      'expected_response not in the type response format',
      '/v1/training_tasks/imageannotation',
      { ...image, expected_response: { annotations: 'none' } },
      'expected_response',
    ],
    [
      'expected_response not an object',
      '/v1/evaluation_tasks/namedentityrecognition',
      { ...ner, expected_response: [] },
      'expected_response',
    ],
    [
      'initial_response not in the type response format',
      '/v1/evaluation_tasks/imageannotation',
      { ...image, expected_response: imageAnswer, initial_response: { annotations: [{ type: 'box' }] } },
      'initial_response',
    ],
    [
      'a required parameter missing',
      '/v1/training_tasks/imageannotation',
      { attachment: image.attachment, expected_response: imageAnswer },
      'geometries',
    ],
    [
      'a required parameter missing (misspelt path)',
      '/v1/evaluation_tasks/segmentannoation',
      { attachment: image.attachment, expected_response: segmentExample().expected_response },
      'labels',
    ],
  ])('rejects %s with 400 naming the field, storing nothing', async (_what, path, body, field) => {
    const account = await freshAccount();
    const res = await account.current('POST', path, { json: body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status_code: 400, error: expect.stringContaining(field), request_id: expect.any(String) });
    for (const kind of ['training', 'evaluation']) {
      expect((await account.current('GET', `/v1/${kind}_tasks`)).body.total).toBe(0);
    }
  });

  it('answers 402 for a task type not enabled for the account', async () => {
    const account = await freshAccount();
    await updateAccount(server.uow, account.name, { disableTypes: ['imageannotation'] });
    const res = await account.current('POST', '/v1/evaluation_tasks/imageannotation', {
      json: { ...image, expected_response: imageAnswer },
    });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({
      status_code: 402,
      error: 'Task type "imageannotation" is not enabled for this account.',
      request_id: expect.any(String),
    });
    expect((await account.current('GET', '/v1/evaluation_tasks')).body.total).toBe(0);
  });

  it('lists newest first with offset paging and the type and time filters, each kind apart', async () => {
    const account = await freshAccount();
    const created: Json[] = [];
    for (const [path, body] of [
      ['/v1/training_tasks/imageannotation', { ...image, expected_response: imageAnswer }],
      ['/v1/training_tasks/namedentityrecognition', { ...ner, expected_response: nerAnswer }],
      ['/v1/training_tasks/imageannotation', { ...image, expected_response: imageAnswer }],
    ] as const) {
      // Distinct creation times, so that "newest first" has one answer.
      await sleep(5);
      const res = await account.current('POST', path, { json: body });
      expect(res.status, res.text).toBe(200);
      created.push(res.body);
    }
    const evaluation = await account.current('POST', '/v1/evaluation_tasks/namedentityrecognition', {
      json: { ...ner, expected_response: nerAnswer },
    });
    const [a, b, c] = created.map((t) => t.id as string);
    const ids = (res: { body: Json }) => (res.body.docs as Json[]).map((t) => t.id);

    const first = await account.current('GET', '/v1/training_tasks?limit=2');
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ total: 3, limit: 2, offset: 0, has_more: true });
    expect(ids(first)).toEqual([c, b]);
    expect(first.body.docs[0]).toEqual(created[2]);
    const second = await account.current('GET', '/v1/training_tasks?limit=2&offset=2');
    expect(second.body).toMatchObject({ total: 3, limit: 2, offset: 2, has_more: false });
    expect(ids(second)).toEqual([a]);
    const beyond = await account.current('GET', '/v1/training_tasks?offset=10');
    expect(beyond.body).toEqual({ docs: [], total: 3, limit: 100, offset: 10, has_more: false });

    expect(ids(await account.current('GET', '/v1/training_tasks?type=imageannotation'))).toEqual([c, a]);
    expect((await account.current('GET', '/v1/training_tasks?type=categorization')).body).toMatchObject({ docs: [], total: 0 });
    // A type alias names its type (issue 32); a name that is no type is 400.
    expect(ids(await account.current('GET', '/v1/training_tasks?type=segmentannoation,imageannotation'))).toEqual([c, a]);
    const badType = await account.current('GET', '/v1/training_tasks?type=documenttranscriptio');
    expect(badType.status).toBe(400);
    expect(badType.body.error).toContain('type');

    // The bounds are inclusive.
    const at = encodeURIComponent(created[1]!.created_at);
    expect(ids(await account.current('GET', `/v1/training_tasks?start_time=${at}`))).toEqual([c, b]);
    expect(ids(await account.current('GET', `/v1/training_tasks?end_time=${at}`))).toEqual([b, a]);
    expect(ids(await account.current('GET', `/v1/training_tasks?start_time=${at}&end_time=${at}`))).toEqual([b]);
    const badDate = await account.current('GET', '/v1/training_tasks?start_time=yesterday');
    expect(badDate.status).toBe(400);
    expect(badDate.body.error).toContain('start_time');

    const evaluations = await account.current('GET', '/v1/evaluation_tasks');
    expect(evaluations.body).toEqual({ docs: [evaluation.body], total: 1, limit: 100, offset: 0, has_more: false });
    // The older generation shows the same lists.
    expect(ids(await account.legacy('GET', '/v1/training_tasks'))).toEqual([c, b, a]);
  });

  it('never shows a training or evaluation task in the task list', async () => {
    const account = await freshAccount();
    await account.current('POST', '/v1/training_tasks/namedentityrecognition', { json: { ...ner, expected_response: nerAnswer } });
    await account.current('POST', '/v1/evaluation_tasks/namedentityrecognition', { json: { ...ner, expected_response: nerAnswer } });
    expect((await account.current('GET', '/v1/training_tasks')).body.total).toBe(1);
    expect((await account.current('GET', '/v1/tasks')).body).toMatchObject({ docs: [], total: 0 });
    expect((await account.legacy('GET', '/v1/tasks')).body).toMatchObject({ docs: [], total: 0 });
  });

  it('keeps each task to its account, mode and kind (404 elsewhere, absent from other lists)', async () => {
    const training = (await current('POST', '/v1/training_tasks/imageannotation', { json: { ...image, expected_response: imageAnswer } }))
      .body;
    const evaluation = (
      await current('POST', '/v1/evaluation_tasks/imageannotation', { json: { ...image, expected_response: imageAnswer } })
    ).body;
    for (const api of [other, live]) {
      const res = await api('GET', `/v1/training_tasks/${training.id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ status_code: 404, error: `Training task ${training.id} not found.`, request_id: expect.any(String) });
      expect((await api('GET', `/v1/evaluation_tasks/${evaluation.id}`)).body).toEqual({
        status_code: 404,
        error: `Evaluation task ${evaluation.id} not found.`,
        request_id: expect.any(String),
      });
      const lists = [...(await api('GET', '/v1/training_tasks')).body.docs, ...(await api('GET', '/v1/evaluation_tasks')).body.docs];
      expect(lists.map((t: Json) => t.id)).not.toContain(training.id);
      expect(lists.map((t: Json) => t.id)).not.toContain(evaluation.id);
    }
    // The other kind's id, an ordinary task's id, or any string: not found.
    expect((await current('GET', `/v1/evaluation_tasks/${training.id}`)).body).toEqual({
      status_code: 404,
      error: `Evaluation task ${training.id} not found.`,
      request_id: expect.any(String),
    });
    expect((await current('GET', `/v1/training_tasks/${evaluation.id}`)).status).toBe(404);
    const task = await current('POST', '/v1/task/namedentityrecognition', { json: { callback_url: 'https://example.com/cb', ...ner } });
    expect(task.status, task.text).toBe(200);
    expect((await current('GET', `/v1/training_tasks/${task.body.task_id}`)).status).toBe(404);
    expect((await current('GET', '/v1/evaluation_tasks/not-an-id')).status).toBe(404);
    // The task's own account and mode see it, in either generation.
    expect((await legacy('GET', `/v1/training_tasks/${training.id}`)).body).toEqual(training);
  });

  it('saves the answer with an Idempotency-Key in the creation transaction, and a second claim of the key waits its turn', async () => {
    // Over HTTP the key reaches these handlers only where server/app.ts lets the idempotency
    // middleware cover these paths; the rule itself is the domain's.
    const record = (await server.uow.accounts.findByName('other'))!;
    const caller: Caller = { account: record, mode: 'test' };
    const input = {
      caller,
      kind: 'evaluation' as const,
      type: 'namedentityrecognition',
      body: { ...ner, expected_response: nerAnswer },
      paramNames: new Set(['text', 'labels']),
      now: new Date(),
      idempotency: { key: `key-${db}`, fingerprint: 'f', ttlMs: 60_000, at: new Date() },
      render: (t: Parameters<typeof trainingTaskView>[0]) => JSON.stringify(trainingTaskView(t)),
    };
    const task = await createTrainingTask(server.uow, input);
    const saved = await server.uow.idempotency.find(record.accountId, 'test', `key-${db}`);
    expect(saved).toMatchObject({ statusCode: 200, body: JSON.stringify(trainingTaskView(task)), mode: 'test' });
    const before = (await other('GET', '/v1/evaluation_tasks')).body.total;
    await expect(createTrainingTask(server.uow, input)).rejects.toBeInstanceOf(IdempotencyKeyBusy);
    expect((await other('GET', '/v1/evaluation_tasks')).body.total).toBe(before);
  });
});
