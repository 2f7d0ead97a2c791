// GET /v1/overview (issue 35, the console's overview): tasks by type and status, completions per UTC
// day, pending tasks by project (and of none), callbacks given up on, paused workers, each of the
// caller's account and mode only: another account's work and the other mode's never show. Made as a
// customer makes it, through the API; a callback given up on through the real retry ladder on a
// moved clock (test/support/delivery-clock.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../../server/delivery/mail.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { startClockedDispatcher } from '../support/delivery-clock.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { ticketTask } from '../support/tasks.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the overview on %s', (db) => {
  let server: TestServer;
  let hook: Receiver;
  beforeAll(async () => {
    [server, hook] = await Promise.all([startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' }), startReceiver(500)]);
  });
  afterAll(async () => {
    await hook?.close();
    await server?.close();
  });

  it("counts the account's tasks of the mode by type and status, pending by project, completions per day, and nothing of others", async () => {
    const account = await createAccount(server.uow, `overview-${db}`, new Date());
    const live = client(server, 'current', account.live_key);
    const test = client(server, 'current', account.test_key);
    for (const name of ['north', 'south'])
      expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name } })).status).toBe(200);
    const made: string[] = [];
    for (const project of ['north', 'north', 'north', 'south', undefined, undefined]) {
      const r = await live('POST', '/v1/task/categorization', { json: ticketTask(project ? { project } : {}) });
      expect(r.status, r.text).toBe(200);
      made.push(r.body.task_id);
    }
    expect((await live('POST', `/v1/task/${made[5]}/cancel`)).status).toBe(200);
    const worker = await live('POST', '/v1/workforce/workers', {
      json: { email: `w-${db}@example.com`, display_name: 'Wen', roles: ['labeler'] },
    });
    expect((await live('POST', `/v1/workforce/workers/${worker.body.worker_id}/pause`)).status).toBe(200);
    // The other mode, and another account: never counted here.
    for (let i = 0; i < 2; i++) expect((await test('POST', '/v1/task/categorization', { json: ticketTask() })).status).toBe(200);
    const stranger = client(server, 'current', (await createAccount(server.uow, `overview-other-${db}`, new Date())).live_key);
    expect((await stranger('POST', '/v1/task/categorization', { json: ticketTask() })).status).toBe(200);

    const seen = await live('GET', '/v1/overview?days=3');
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body).toMatchObject({
      tasks: [
        { type: 'categorization', status: 'canceled', count: 1 },
        { type: 'categorization', status: 'pending', count: 5 },
      ],
      pending_by_project: [
        { project: 'north', count: 3 },
        { project: null, count: 1 },
        { project: 'south', count: 1 },
      ],
      failed_callbacks: 0,
      paused_workers: 1,
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(seen.body.completed_per_day).toHaveLength(3);
    expect(seen.body.completed_per_day.at(-1)).toEqual({ day: today, count: 0 });
    expect(seen.body.completed_per_day.map((d: { day: string }) => d.day)).toEqual(
      [2, 1, 0].map((n) => new Date(Date.parse(`${today}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10)),
    );

    // Test mode: its two tasks complete at once, today.
    await until(async () => (await test('GET', '/v1/overview')).body.completed_per_day.at(-1).count === 2, 'the test tasks completed');
    const inTest = (await test('GET', '/v1/overview')).body;
    expect(inTest.completed_per_day).toHaveLength(30);
    expect(inTest).toMatchObject({
      tasks: [{ type: 'categorization', status: 'completed', count: 2 }],
      pending_by_project: [],
      paused_workers: 0,
    });
  });

  it('counts a callback given up on after its last retry', async () => {
    const account = await createAccount(server.uow, `overview-callbacks-${db}`, new Date());
    const test = client(server, 'current', account.test_key);
    const dispatcher = startClockedDispatcher(server.uow, createMailer(undefined));
    try {
      const created = await test('POST', '/v1/task/categorization', { json: ticketTask({ callback_url: hook.url }) });
      expect(created.status, created.text).toBe(200);
      expect((await test('GET', '/v1/overview')).body.failed_callbacks).toBe(0);
      const message = await dispatcher.runRetries(account.account_id, created.body.task_id);
      expect(message.failedAt).toBeInstanceOf(Date);
      expect((await test('GET', '/v1/overview')).body.failed_callbacks).toBe(1);
    } finally {
      await dispatcher.stop();
    }
  });

  it('refuses a window it does not keep, naming it', async () => {
    const api = client(server, 'current', server.dev.live_key);
    for (const days of ['0', '91', 'week']) {
      const r = await api('GET', `/v1/overview?days=${days}`);
      expect(r.status, days).toBe(400);
      expect(r.body.error).toContain('days');
    }
  });
});
