// Issue 22, rule 7: an Enterprise batch keeps taking tasks. A client creates a batch and adds
// tasks one by one; a task joining a completed Enterprise batch moves it back to in_progress
// (completed_at removed), and it completes again with a new completion callback. Rapid and Studio
// batches keep the finalize rule. Raw requests, both generations, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('Enterprise batches keep taking tasks on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-batches', new Date());
  });
  afterAll(async () => {
    await server?.close();
  });

  const task = (batch: string, i: number) => ({
    callback_url: 'https://example.com/cb',
    instruction: 'Pick',
    attachment_type: 'text',
    attachment: `t${i}`,
    categories: ['a', 'b'],
    batch,
  });

  it.each(['current', 'legacy'] as const)(
    '%s, test mode: three tasks added one by one are all taken; one completion callback each time',
    async (generation) => {
      const call = client(server, generation, account.test_key);
      const project = `ent-${generation}`;
      const name = `ent-${generation}-1`;
      expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: project } })).status).toBe(200);
      expect((await call('POST', '/v1/batches', { json: { project, name, callback: 'https://example.com/batch-cb' } })).status).toBe(200);
      for (let i = 1; i <= 3; i++) {
        const res = await call('POST', '/v1/task/categorization', { json: task(name, i) });
        expect(res.status, res.text).toBe(200);
        expect((await call('GET', `/v1/batches/${name}/status`)).body).toEqual({
          status: 'completed',
          pending: 0,
          completed: i,
          error: 0,
          canceled: 0,
        });
      }
      const queued = await server.uow.outbox.forSubject(account.account_id, name);
      expect(queued.map((m) => m.event)).toEqual(['batch_completed', 'batch_completed', 'batch_completed']);
      expect(queued.map((m) => (m.payload as { counts: { completed: number } }).counts.completed).sort()).toEqual([1, 2, 3]);
    },
  );

  it('live mode: a task joining a completed batch moves it back to in_progress without completed_at; it completes again', async () => {
    const call = client(server, 'current', account.live_key);
    expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: 'ent-live' } })).status).toBe(200);
    expect(
      (await call('POST', '/v1/batches', { json: { project: 'ent-live', name: 'ent-live-1', callback: 'https://example.com/batch-cb' } }))
        .status,
    ).toBe(200);
    const first = await call('POST', '/v1/task/categorization', { json: task('ent-live-1', 1) });
    expect(first.status, first.text).toBe(200);
    await call('POST', `/v1/task/${first.body.task_id}/cancel`);
    const completed = await call('GET', '/v1/batches/ent-live-1');
    expect(completed.body).toMatchObject({ status: 'completed', completed_at: expect.any(String) });
    const second = await call('POST', '/v1/task/categorization', { json: task('ent-live-1', 2) });
    expect(second.status, second.text).toBe(200);
    const reopened = await call('GET', '/v1/batches/ent-live-1');
    expect(reopened.body.status).toBe('in_progress');
    expect(reopened.body).not.toHaveProperty('completed_at');
    await call('POST', `/v1/task/${second.body.task_id}/cancel`);
    expect((await call('GET', '/v1/batches/ent-live-1/status')).body).toEqual({
      status: 'completed',
      pending: 0,
      completed: 0,
      error: 0,
      canceled: 2,
    });
    expect(await server.uow.outbox.forSubject(account.account_id, 'ent-live-1')).toHaveLength(2);
  });

  it('a finalized Studio batch still takes no task, completed or not', async () => {
    const call = client(server, 'current', account.test_key);
    expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: 'studio-w', studio: true } })).status).toBe(200);
    expect((await call('POST', '/v1/batches', { json: { project: 'studio-w', name: 'studio-w-1' } })).status).toBe(200);
    expect((await call('POST', '/v1/task/categorization', { json: task('studio-w-1', 1) })).status).toBe(200);
    expect((await call('POST', '/v1/batches/studio-w-1/finalize')).body.status).toBe('completed');
    const late = await call('POST', '/v1/task/categorization', { json: task('studio-w-1', 2) });
    expect(late.status).toBe(400);
    expect(late.body.error).toContain('finalized');
  });
});
