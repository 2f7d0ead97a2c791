// The typed client against the real reference server on loopback (PGlite), both generations:
// every convenience method, retried creations that create one task, and iteration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  createLegacyClient,
  HumantaskError,
  type ClientOptions,
  type HumantaskClient,
  type LegacyHumantaskClient,
} from '../../client/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { deref, loadBundle, type Generation, type Json } from '../support/spec.ts';
import { freshAccount, resetOnceProxy } from './support.ts';

type AnyClient = HumantaskClient | LegacyHumantaskClient;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(async () => {
  await server?.close();
});

function make(gen: Generation, apiKey: string, extra: Partial<ClientOptions> = {}, baseUrl = server.url): AnyClient {
  const options = { apiKey, baseUrl, ...extra };
  return gen === 'current' ? createClient(options) : createLegacyClient(options);
}

/** Both generations have the same creation signature for these bodies; the union needs one of them. */
const creator = (c: AnyClient) => (c as HumantaskClient).tasks;
const trainer = (c: AnyClient) => (c as HumantaskClient).trainingTasks;
const evaluator = (c: AnyClient) => (c as HumantaskClient).evaluationTasks;

const categorization = (extra: Record<string, unknown> = {}) => ({
  callback_url: 'https://example.com/humantask/callback',
  instruction: 'Pick one',
  attachment_type: 'text' as const,
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
  ...extra,
});

/** The first request example of an operation of the contract. */
function requestExample(gen: Generation, path: string): any {
  const doc = loadBundle(gen);
  const body = deref(doc, doc.paths[path].post.requestBody);
  const [first] = Object.values<Json>(body.content['application/json'].examples);
  return structuredClone(deref(doc, first)?.value);
}

function ok<T extends { ok: boolean; status: number; error?: unknown }>(r: T): asserts r is Extract<T, { ok: true }> {
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.ok).toBe(true);
  expect(r.status).toBe(200);
}

describe.each(['current', 'legacy'] as const)('%s generation against the reference server', (gen) => {
  it('has a working convenience method for every task operation', async () => {
    const c = make(gen, server.dev.test_key);
    const created = await creator(c).create('categorization', categorization({ tags: ['a'] }));
    ok(created);
    expect(created.data).toMatchObject({ type: 'categorization', status: 'pending', tags: ['a'] });
    expect(created.response.headers.get('idempotent-replayed')).toBeNull();
    const id = created.data.task_id;

    const got = await c.tasks.get(id);
    ok(got);
    expect(got.data.status).toBe('completed'); // test mode completes at once
    expect(got.data.response).toHaveProperty('category');

    const list = await c.tasks.list({ limit: 5, type: ['categorization'] });
    ok(list);
    expect(list.data.docs.map((t) => t.task_id)).toContain(id);

    const meta = await c.tasks.setMetadata(id, { order: 7 });
    ok(meta);
    expect(meta.data.metadata).toEqual({ order: 7 });

    const uid = `uid-${gen}-${Date.now()}`;
    const withUid = await c.tasks.setUniqueId(id, uid);
    ok(withUid);
    expect(withUid.data.unique_id).toBe(uid);
    const taken = await creator(c).create('categorization', categorization({ unique_id: uid }));
    expect(taken.ok).toBe(false);
    expect(taken.status).toBe(409);
    expect(taken.error).toMatchObject({ status_code: 409, error: expect.stringContaining(uid) });
    const withoutUid = await c.tasks.deleteUniqueId(id);
    ok(withoutUid);
    expect(withoutUid.data).not.toHaveProperty('unique_id');

    const added = await c.tasks.addTags(id, ['b', 'c']);
    ok(added);
    expect([...(added.data.tags ?? [])].sort()).toEqual(['a', 'b', 'c']);
    const put = await c.tasks.putTags(id, ['c', 'd']);
    ok(put);
    expect(put.data.tags).toEqual(['a', 'b', 'c', 'd']);
    const removed = await c.tasks.removeTags(id, ['a', 'c']);
    ok(removed);
    expect(removed.data.tags).toEqual(['b', 'd']);

    const attempts = await c.tasks.listCallbacks(id);
    ok(attempts);
    expect(attempts.data.docs).toEqual([]); // delivery is off in this test server (see delivery.test.ts)
    ok(await c.tasks.redeliverCallback(id));

    const audited = await c.tasks.audit(id, { accepted: true });
    ok(audited);
    expect(audited.data.customer_review_status).toBe('accepted');

    // Cancelling a completed task: 400 in the current generation, 500 in the older one (not retried).
    const started = Date.now();
    const refused = await c.tasks.cancel(id);
    expect(refused.ok).toBe(false);
    expect(refused.status).toBe(gen === 'current' ? 400 : 500);
    expect(refused.error?.status_code).toBe(refused.status);
    expect(Date.now() - started).toBeLessThan(1000);

    const missing = await c.tasks.get('65f1c0a2b3c4d5e6f7a8b9c0');
    expect(missing.status).toBe(404);
    expect(missing.error).toMatchObject({ status_code: 404 });
  });

  it('cancels a pending task, clearing its unique_id', async () => {
    const account = await freshAccount(server, { testCompletionDelayMs: 600_000 });
    const c = make(gen, account.test_key);
    const created = await creator(c).create('categorization', categorization({ unique_id: 'to-free' }));
    ok(created);
    const canceled = await c.tasks.cancel(created.data.task_id, { clearUniqueId: true });
    ok(canceled);
    expect(canceled.data.status).toBe('canceled');
    expect(canceled.data).not.toHaveProperty('unique_id');
    const again = await c.tasks.cancel(created.data.task_id);
    ok(again); // a repeated cancel is idempotent, which is why the client retries cancels
  });

  it('has a working convenience method for every project and batch operation', async () => {
    const c = make(gen, (await freshAccount(server)).test_key);
    const project = await c.projects.create({
      type: 'categorization',
      name: 'tickets',
      params: { categories: ['a', 'b'], attachment_type: 'text' },
    });
    ok(project);
    expect(project.data.name).toBe('tickets');
    const studio = await c.projects.create({ type: 'categorization', name: 'studio tickets', studio: true });
    ok(studio);
    ok(await c.projects.get('studio tickets')); // a name that needs percent-encoding
    const projects = await c.projects.list();
    ok(projects);
    expect(projects.data.map((p) => p.name)).toEqual(['tickets', 'studio tickets']);
    const params = await c.projects.setParams('tickets', { patch: true, instruction: 'Choose one.', categories: ['a', 'b', 'c'] });
    ok(params);
    const ontology = await c.projects.setOntology('tickets', { ontology: ['a', 'b'] });
    ok(ontology);
    const unknown = await c.projects.get('nope');
    expect(unknown.status).toBe(404);

    const batch = await c.batches.create({ project: 'tickets', name: 'tickets-1', metadata: { week: 1 } });
    ok(batch);
    expect(batch.data.status).toBe('in_progress');
    const staged = await c.batches.create({ project: 'studio tickets', name: 'studio-1' });
    ok(staged);
    expect(staged.data.status).toBe('staging');
    const finalized = await c.batches.finalize('studio-1');
    ok(finalized);
    expect(finalized.data.status).toBe('in_progress');
    const got = await c.batches.get('tickets-1');
    ok(got);
    expect(got.data.metadata).toEqual({ week: 1 });
    const status = await c.batches.status('tickets-1');
    ok(status);
    expect(status.data).toMatchObject({ status: 'in_progress', pending: 0 });
    const meta = await c.batches.setMetadata('tickets-1', { week: 2 });
    ok(meta);
    expect(meta.data.metadata).toEqual({ week: 2 });
    const list = await c.batches.list({ project: ['tickets'] });
    ok(list);
    expect(list.data.docs.map((b) => b.name)).toEqual(['tickets-1']);

    // A task joining the batch, created from the project's parameters.
    const task = await creator(c).create('categorization', {
      callback_url: 'https://example.com/cb',
      batch: 'tickets-1',
      attachment: 'Refund please',
    });
    ok(task);
    expect(task.data).toMatchObject({ project: 'tickets', batch: 'tickets-1' });
  });

  it('iterates batches over offset pages', async () => {
    const c = make(gen, (await freshAccount(server)).test_key);
    ok(await c.projects.create({ type: 'categorization', name: 'p' }));
    for (let i = 0; i < 5; i++) ok(await c.batches.create({ project: 'p', name: `b-${i}` }));
    const names: string[] = [];
    for await (const b of c.batches.iterate({ limit: 2 })) names.push(b.name);
    expect(names.sort()).toEqual(['b-0', 'b-1', 'b-2', 'b-3', 'b-4']);
  });

  it('has a working convenience method for every training and evaluation task operation', async () => {
    const c = make(gen, (await freshAccount(server)).test_key);
    const training = await trainer(c).create('textcollection', requestExample(gen, '/v1/training_tasks/textcollection'));
    ok(training);
    expect(training.data).toMatchObject({ type: 'textcollection', kind: 'training' });
    const gotTraining = await c.trainingTasks.get(training.data.id);
    ok(gotTraining);
    expect(gotTraining.data.id).toBe(training.data.id);
    const trainingList = await c.trainingTasks.list({ type: ['textcollection'] });
    ok(trainingList);
    expect(trainingList.data.docs.map((t) => t.id)).toEqual([training.data.id]);

    const evaluation = await evaluator(c).create('textcollection', requestExample(gen, '/v1/evaluation_tasks/textcollection'));
    ok(evaluation);
    expect(evaluation.data.kind).toBe('evaluation');
    const gotEvaluation = await c.evaluationTasks.get(evaluation.data.id);
    ok(gotEvaluation);
    const evaluationList = await c.evaluationTasks.list();
    ok(evaluationList);
    expect(evaluationList.data.total).toBe(1);
    const notTraining = await c.trainingTasks.get(evaluation.data.id);
    expect(notTraining.status).toBe(404);

    ok(await trainer(c).create('textcollection', requestExample(gen, '/v1/training_tasks/textcollection')));
    const ids: string[] = [];
    for await (const t of c.trainingTasks.iterate({ limit: 1 })) ids.push(t.id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    const evaluations: string[] = [];
    for await (const t of c.evaluationTasks.iterate()) evaluations.push(t.id);
    expect(evaluations).toEqual([evaluation.data.id]);
  });

  it('throws a typed HumantaskError with throwOnError', async () => {
    const c =
      gen === 'current'
        ? createClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true })
        : createLegacyClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true });
    const err = await c.tasks.get('65f1c0a2b3c4d5e6f7a8b9c0').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HumantaskError);
    expect(err).toMatchObject({ status: 404, body: { status_code: 404 }, operation: 'GET /v1/task/{taskId}' });
    const unauthorized = await make(gen, 'test_wrong', { throwOnError: true })
      .tasks.list()
      .catch((e: unknown) => e);
    expect(unauthorized).toMatchObject({ name: 'HumantaskError', status: 401 });
    const page = await c.tasks.list({ limit: 1 });
    expect(page.data.limit).toBe(1);
  });

  it('retries a creation whose connection was reset after the server received it, creating one task', async () => {
    const account = await freshAccount(server);
    const proxy = await resetOnceProxy(server.url);
    const keys: (string | null)[] = [];
    try {
      const c = make(
        gen,
        account.test_key,
        {
          retry: { retries: 2, minDelayMs: 10, maxDelayMs: 50 },
          fetch: (request) => {
            keys.push(request.headers.get('idempotency-key'));
            return fetch(request);
          },
        },
        proxy.url,
      );
      const created = await creator(c).create('categorization', categorization());
      ok(created);
      expect(proxy.resets).toBe(1);
      expect(keys).toHaveLength(2);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      expect(created.response.headers.get('idempotent-replayed')).toBe('true');

      const list = await make(gen, account.test_key).tasks.list();
      ok(list);
      expect(list.data.total).toBe(1);
      expect(list.data.docs[0]?.task_id).toBe(created.data.task_id);
    } finally {
      await proxy.close();
    }
  });

  it('retries a project or batch creation whose connection was reset, creating one of each', async () => {
    const account = await freshAccount(server);
    for (const create of [
      (c: ReturnType<typeof make>) => c.projects.create({ type: 'categorization', name: 'once' }),
      (c: ReturnType<typeof make>) => c.batches.create({ name: 'once-batch', project: 'once' }),
    ]) {
      const proxy = await resetOnceProxy(server.url);
      try {
        const c = make(gen, account.test_key, { retry: { retries: 2, minDelayMs: 10, maxDelayMs: 50 } }, proxy.url);
        const created = await create(c);
        ok(created);
        expect(proxy.resets).toBe(1);
        // The first attempt created it; the retry got that answer again instead of 409.
        expect(created.response.headers.get('idempotent-replayed')).toBe('true');
      } finally {
        await proxy.close();
      }
    }
    const reader = make(gen, account.test_key);
    const projects = await reader.projects.list();
    ok(projects);
    expect(projects.data.map((p: { name: string }) => p.name)).toEqual(['once']);
    const batches = await reader.batches.list();
    ok(batches);
    expect(batches.data.docs.map((b: { name: string }) => b.name)).toEqual(['once-batch']);
  });

  it('does not retry a non-idempotent request after a connection reset', async () => {
    const account = await freshAccount(server);
    ok(await make(gen, account.test_key).projects.create({ type: 'categorization', name: 'versions' }));
    const proxy = await resetOnceProxy(server.url);
    try {
      const c = make(gen, account.test_key, { retry: { retries: 2, minDelayMs: 10, maxDelayMs: 50 } }, proxy.url);
      await expect(c.projects.setParams('versions', { instruction: 'Which animal?' })).rejects.toThrow();
      expect(proxy.resets).toBe(1);
      // The server did set them, once: a blind retry would have made a second version.
      const project = await make(gen, account.test_key).projects.get('versions');
      ok(project);
      expect(project.data.param_history).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('iterates 250 tasks: each once, created_at descending', async () => {
    const account = await freshAccount(server);
    const c = make(gen, account.test_key);
    const created = new Set<string>();
    for (let i = 0; i < 250; i += 25) {
      const results = await Promise.all(Array.from({ length: 25 }, () => creator(c).create('categorization', categorization())));
      for (const r of results) {
        ok(r);
        created.add(r.data.task_id);
      }
    }
    const seen: { task_id: string; created_at: string }[] = [];
    for await (const t of c.tasks.iterate({ limit: 40 })) seen.push(t);
    expect(seen).toHaveLength(250);
    expect(new Set(seen.map((t) => t.task_id))).toEqual(created);
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      const order = Date.parse(a.created_at) - Date.parse(b.created_at) || (a.task_id > b.task_id ? 1 : -1);
      expect(order, `${a.created_at} ${a.task_id} before ${b.created_at} ${b.task_id}`).toBeGreaterThan(0);
    }
  });

  it('yields each earlier task once while tasks are created during the walk', async () => {
    const account = await freshAccount(server);
    const c = make(gen, account.test_key);
    const before: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await creator(c).create('categorization', categorization());
      ok(r);
      before.push(r.data.task_id);
    }
    const seen: string[] = [];
    for await (const t of c.tasks.iterate({ limit: 3 })) {
      seen.push(t.task_id);
      if (seen.length === 3) for (let i = 0; i < 4; i++) ok(await creator(c).create('categorization', categorization()));
    }
    expect(seen).toEqual([...before].reverse());
  });
});

describe('both generations on one account', () => {
  it('shows a task created through one generation in the other', async () => {
    const current = createClient({ apiKey: server.dev.test_key, baseUrl: server.url + '/' });
    const legacy = createLegacyClient({ apiKey: server.dev.test_key, baseUrl: server.url });
    const created = await current.tasks.create('textcollection', requestExample('current', '/v1/task/textcollection'));
    ok(created);
    const seen = await legacy.tasks.get(created.data.task_id);
    ok(seen);
    expect(seen.data.urgency).toBe('day');
  });
});
