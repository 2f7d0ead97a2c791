// Test mode as a sandbox (issue 32, item 16; decision 19): a test-mode task chooses how it ends by
// `metadata.test_outcome`, and a client reaches each outcome through the API alone: its status, the
// callback a real receiver on loopback gets, the body. Live mode ignores the key. On PGlite and
// PostgreSQL; the delay lapses on the server's clock, which the test moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { testClock } from '../support/clock.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const task = (callback_url: string, metadata?: object) => ({
  callback_url,
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'a cat',
  categories: ['cat', 'dog'],
  ...(metadata ? { metadata } : {}),
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('test-mode outcomes on %s', (db) => {
  let server: TestServer;
  let hook: Receiver;
  const clock = testClock();
  beforeAll(async () => {
    hook = await startReceiver();
    server = await startTestServer(
      db,
      { DELIVERY_POLL_MS: '5', TEST_COMPLETION_POLL_MS: '20', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' },
      undefined,
      { now: clock.now },
    );
  });
  afterAll(async () => {
    await server?.close();
    await hook?.close();
  });

  async function keys() {
    return createAccount(server.uow, `outcomes-${db}-${Math.random().toString(16).slice(2)}`, new Date());
  }

  // First, while the server's clock is still the wall clock's: a creation stamps its due time with the latter.
  it('"delayed:<ms>": the task stays pending for that long on the server\'s clock, then completes and calls back', async () => {
    const api = client(server, 'current', (await keys()).test_key);
    const created = await api('POST', '/v1/task/categorization', { json: task(hook.url, { test_outcome: 'delayed:600000' }) });
    const id = created.body.task_id as string;
    expect((await api('GET', `/v1/task/${id}`)).body.status).toBe('pending');
    // A delayed task can be canceled meanwhile; this one is left to complete.
    clock.advance(600_001);
    // The completion poller finds it due on the server's clock; its callback says it is done.
    await hook.waitFor(() => hook.bodiesOf(id).length === 1, 'the delayed callback');
    expect((await api('GET', `/v1/task/${id}`)).body.status).toBe('completed');
    expect(hook.bodiesOf(id)[0]).toMatchObject({ task_id: id, task: { status: 'completed' } });
  });

  it('without a choice, a task is completed at once and its callback sent (as before)', async () => {
    const api = client(server, 'current', (await keys()).test_key);
    const created = await api('POST', '/v1/task/categorization', { json: task(hook.url) });
    expect(created.status, created.text).toBe(200);
    const id = created.body.task_id as string;
    expect((await api('GET', `/v1/task/${id}`)).body.status).toBe('completed');
    await hook.waitFor(() => hook.bodiesOf(id).length === 1, 'the callback');
    expect(hook.bodiesOf(id)[0]).toMatchObject({ task_id: id, task: { status: 'completed' } });
  });

  it('"error": the task ends in error, its response says why, the callback carries it (both generations)', async () => {
    const secrets = await keys();
    const api = client(server, 'current', secrets.test_key);
    const created = await api('POST', '/v1/task/categorization', { json: task(hook.url, { test_outcome: 'error' }) });
    expect(created.status, created.text).toBe(200);
    expect(created.body.status).toBe('pending');
    const id = created.body.task_id as string;
    const error = { error: 'The test outcome "error" was chosen (metadata.test_outcome).' };
    expect((await api('GET', `/v1/task/${id}`)).body).toMatchObject({
      status: 'error',
      response: error,
      metadata: { test_outcome: 'error' },
    });
    // The older generation shows an error as completed with `{error}` (decision 1).
    const legacy = client(server, 'legacy', secrets.test_key);
    expect((await legacy('GET', `/v1/task/${id}`)).body).toMatchObject({ status: 'completed', response: error });
    await hook.waitFor(() => hook.bodiesOf(id).length === 1, 'the callback of the error');
    expect(hook.bodiesOf(id)[0]).toMatchObject({ task_id: id, response: error, task: { status: 'error' } });
  });

  it('"pending": the task waits until the client cancels it, and reaches canceled', async () => {
    const api = client(server, 'current', (await keys()).test_key);
    const created = await api('POST', '/v1/task/categorization', { json: task(hook.url, { test_outcome: 'pending' }) });
    const id = created.body.task_id as string;
    expect((await api('GET', `/v1/task/${id}`)).body.status).toBe('pending');
    expect((await api('GET', `/v1/task/${id}/callbacks`)).body).toEqual(expect.objectContaining({ docs: [] }));
    const canceled = await api('POST', `/v1/task/${id}/cancel`);
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect((await api('GET', `/v1/task/${id}`)).body.status).toBe('canceled');
  });

  it.each([['delayed:0'], ['delayed:86400001'], ['later'], [true]])(
    'refuses the unknown choice %j with 400 naming it, storing nothing',
    async (value) => {
      const api = client(server, 'current', (await keys()).test_key);
      const res = await api('POST', '/v1/task/categorization', { json: task(hook.url, { test_outcome: value }) });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(
        `metadata.test_outcome must be "completed", "error", "pending" or "delayed:<milliseconds>" (1 to 86400000) in test mode, not ${JSON.stringify(value)}.`,
      );
      expect((await api('GET', '/v1/tasks')).body.total).toBe(0);
    },
  );

  it('live mode ignores the key: the task waits for a worker, the key is kept as metadata', async () => {
    const api = client(server, 'current', (await keys()).live_key);
    for (const value of ['error', 'delayed:1000', 'anything']) {
      const created = await api('POST', '/v1/task/categorization', { json: task(hook.url, { test_outcome: value }) });
      expect(created.status, created.text).toBe(200);
      clock.advance(2000);
      expect((await api('GET', `/v1/task/${created.body.task_id}`)).body).toMatchObject({
        status: 'pending',
        metadata: { test_outcome: value },
      });
    }
  });
});
