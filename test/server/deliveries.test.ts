// GET /v1/callbacks (issue 35, the console's Deliveries): the account's callbacks of the mode, the newest
// first, with how each delivery went: one delivered, one given up on after the real retry ladder (on a
// moved clock: test/support/delivery-clock.ts), one waiting for its retry. Filtered by state and
// event, paged by next_token; another account's and the other mode's never show.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../../server/delivery/mail.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { startClockedDispatcher } from '../support/delivery-clock.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { ticketTask } from '../support/tasks.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the account callbacks on %s', (db) => {
  let server: TestServer;
  let ok: Receiver;
  let bad: Receiver;
  beforeAll(async () => {
    [server, ok, bad] = await Promise.all([
      startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' }),
      startReceiver(200),
      startReceiver(500),
    ]);
  });
  afterAll(async () => {
    await Promise.all([ok?.close(), bad?.close()]);
    await server?.close();
  });

  it('lists delivered, failed and retried callbacks, the newest first, by state and event, page by page; nothing of others', async () => {
    const account = await createAccount(server.uow, `deliveries-${db}`, new Date());
    const api = client(server, 'current', account.test_key);
    const other = await createAccount(server.uow, `deliveries-other-${db}`, new Date());
    const stranger = client(server, 'current', other.test_key);
    const dispatcher = startClockedDispatcher(server.uow, createMailer(undefined));
    let later: string;
    let delivered: string;
    let failed: string;
    try {
      delivered = (await api('POST', '/v1/task/categorization', { json: ticketTask({ callback_url: ok.url }) })).body.task_id;
      expect((await dispatcher.runRetries(account.account_id, delivered)).deliveredAt).toBeInstanceOf(Date);
      failed = (await api('POST', '/v1/task/categorization', { json: ticketTask({ callback_url: bad.url }) })).body.task_id;
      expect((await dispatcher.runRetries(account.account_id, failed)).failedAt).toBeInstanceOf(Date);
      expect((await stranger('POST', '/v1/task/categorization', { json: ticketTask({ callback_url: ok.url }) })).status).toBe(200);
      later = (await api('POST', '/v1/task/categorization', { json: ticketTask({ callback_url: bad.url }) })).body.task_id;
      await until(async () => (await server.uow.outbox.forSubject(account.account_id, later))[0]?.attempts === 1, 'the first attempt');
    } finally {
      await dispatcher.stop();
    }

    const all = await api('GET', '/v1/callbacks');
    expect(all.status, all.text).toBe(200);
    expect(all.body).toMatchObject({ limit: 100, has_more: false });
    expect(all.body.docs).toEqual([
      expect.objectContaining({
        event: 'task_completed',
        task_id: later,
        url: bad.url,
        state: 'pending',
        attempts: 1,
        last_attempt: expect.objectContaining({ status_code: 500 }),
        next_attempt_at: expect.any(String),
      }),
      expect.objectContaining({ task_id: failed, state: 'failed', attempts: 21, failed_at: expect.any(String) }),
      expect.objectContaining({
        task_id: delivered,
        url: ok.url,
        state: 'delivered',
        attempts: 1,
        last_attempt: expect.objectContaining({ status_code: 200 }),
        delivered_at: expect.any(String),
      }),
    ]);
    for (const doc of all.body.docs) {
      expect(doc.callback_id).toMatch(/^[0-9a-f]{24}$/);
      // The last attempt is the task's latest in its own history, to the millisecond.
      const history = (await api('GET', `/v1/task/${doc.task_id}/callbacks`)).body.docs;
      expect(doc.last_attempt).toEqual({
        attempted_at: history.at(-1).attempted_at,
        status_code: history.at(-1).status_code,
        duration_ms: history.at(-1).duration_ms,
      });
    }
    expect(all.body.docs[1]).not.toHaveProperty('next_attempt_at');

    const ids = (r: { body: { docs: { task_id: string }[] } }) => r.body.docs.map((d) => d.task_id);
    expect(ids(await api('GET', '/v1/callbacks?state=failed'))).toEqual([failed]);
    expect(ids(await api('GET', '/v1/callbacks?state=pending'))).toEqual([later]);
    expect(ids(await api('GET', '/v1/callbacks?state=delivered'))).toEqual([delivered]);
    expect(ids(await api('GET', '/v1/callbacks?event=batch_completed'))).toEqual([]);
    expect(ids(await api('GET', '/v1/callbacks?event=task_completed&state=delivered'))).toEqual([delivered]);

    // Page by page, each once; a token is refused with other filters.
    const walked: string[] = [];
    let token: string | undefined;
    do {
      const page = await api('GET', `/v1/callbacks?limit=1${token ? `&next_token=${encodeURIComponent(token)}` : ''}`);
      expect(page.status, page.text).toBe(200);
      walked.push(...ids(page));
      token = page.body.next_token;
    } while (token && walked.length < 10);
    expect(walked).toEqual([later, failed, delivered]);
    const first = await api('GET', '/v1/callbacks?limit=1');
    const refused = await api('GET', `/v1/callbacks?limit=1&state=failed&next_token=${encodeURIComponent(first.body.next_token)}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('next_token');

    // The other mode's and another account's lists hold none of these.
    expect((await client(server, 'current', account.live_key)('GET', '/v1/callbacks')).body.docs).toEqual([]);
    expect(ids(await stranger('GET', '/v1/callbacks'))).not.toContain(delivered);
    expect((await stranger('GET', '/v1/callbacks')).body.docs).toHaveLength(1);
  });

  it('refuses a state or event it does not know, naming it', async () => {
    const api = client(server, 'current', server.dev.test_key);
    for (const [query, name] of [
      ['state=lost', 'state'],
      ['event=task_created', 'event'],
      ['limit=0', 'limit'],
    ]) {
      const r = await api('GET', `/v1/callbacks?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.error).toContain(name);
    }
  });
});
