// Callbacks as a receiver sees them: a real HTTP receiver on loopback, the retry schedule
// compressed through configuration (CALLBACK_SCHEDULE_SCALE), or run in full on a clock the test
// moves on (test/support/delivery-clock.ts), on PGlite and on PostgreSQL.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedDeliveries } from '../../server/admin.ts';
import { readConfig } from '../../server/config.ts';
import { startDispatcher } from '../../server/delivery/dispatcher.ts';
import { createMailer } from '../../server/delivery/mail.ts';
import { safeRequest } from '../../server/delivery/net.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { startServer } from '../../server/main.ts';
import { secretBox } from '../../server/store/secrets.ts';
import { expectWholeLadder, startClockedDispatcher } from '../support/delivery-clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { freePort } from '../support/net.ts';
import { type Received, startReceiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const task = {
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
};

const env = { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' };

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('callbacks on %s', (db) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(db, { ...env, CALLBACK_SCHEDULE_SCALE: '0.005' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('POSTs the completed task once, signed, with service-callback-auth; the flag becomes true', async () => {
    const hook = await startReceiver();
    try {
      const api = client(server, 'current', server.dev.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
      await until(async () => (await api('GET', `/v1/task/${created.body.task_id}`)).body.callback_completed === true, 'the flag');
      expect(hook.received).toHaveLength(1);
      const [{ headers, body }] = hook.received as [Received];
      const read = (await api('GET', `/v1/task/${created.body.task_id}`)).body;
      const { callback_completed: _flag, ...taskAtCompletion } = read;
      expect(JSON.parse(body)).toEqual({ task_id: read.task_id, response: read.response, task: taskAtCompletion });
      expect(headers['content-type']).toBe('application/json');
      expect(headers['service-callback-auth']).toBe(server.dev.callback_auth_key);
      const key = Buffer.from(server.dev.signing_secret.replace(/^whsec_/, ''), 'base64');
      const signed = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
      expect(headers['webhook-signature']).toBe(`v1,${signed}`);
      expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    } finally {
      await hook.close();
    }
  });

  it('retries after 500 on the schedule: 500 three times then 200 → exactly 4 POSTs', async () => {
    const hook = await startReceiver((n) => (n <= 3 ? 500 : 200));
    try {
      const api = client(server, 'legacy', server.dev.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
      await until(async () => (await api('GET', `/v1/task/${created.body.task_id}`)).body.callback_succeeded === true, 'the legacy flag');
      expect(hook.received).toHaveLength(4);
      // The older generation's task shows in its own view (urgency, callback_succeeded).
      expect(hook.received[0]!.json.task).toMatchObject({ urgency: 'day', status: 'completed' });
      const ids = new Set(hook.received.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      const scale = 0.005;
      // No retry comes early (the planned times themselves are checked in schedule.test.ts).
      [5, 30, 60].forEach((seconds, i) => {
        const gap = hook.received[i + 1]!.at - hook.received[i]!.at;
        expect(gap).toBeGreaterThanOrEqual(seconds * 1000 * scale * 0.9 - 1);
      });
      const attempts = await server.uow.outbox.attemptsFor(server.dev.account_id, created.body.task_id);
      expect(attempts.map((a) => a.statusCode)).toEqual([500, 500, 500, 200]);
      // The customer sees the same history, in both generations.
      const history = await api('GET', `/v1/task/${created.body.task_id}/callbacks`);
      expect(history.status).toBe(200);
      expect(history.body.docs.map((d: { status_code: number }) => d.status_code)).toEqual([500, 500, 500, 200]);
      expect(history.body.docs[0]).toMatchObject({ event: 'task_completed', url: hook.url, duration_ms: expect.any(Number) });
    } finally {
      await hook.close();
    }
  });

  it('waits at least the 60 s floor after a 429 with Retry-After, and follows no redirect', async () => {
    const canary = await startReceiver();
    const hook = await startReceiver((n) => (n === 1 ? 429 : 200));
    const redirecting = createServer((_req, res) => res.writeHead(302, { location: canary.url }).end());
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r));
    try {
      const api = client(server, 'current', server.dev.test_key);
      const slowed = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
      await until(async () => (await api('GET', `/v1/task/${slowed.body.task_id}`)).body.callback_completed === true, 'the retry');
      expect(hook.received).toHaveLength(2);
      expect(hook.received[1]!.at - hook.received[0]!.at).toBeGreaterThanOrEqual(60 * 1000 * 0.005 - 1);
      const redirectUrl = `http://127.0.0.1:${(redirecting.address() as { port: number }).port}/moved`;
      const moved = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: redirectUrl } });
      await until(async () => (await api('GET', `/v1/task/${moved.body.task_id}/callbacks`)).body.docs.length >= 2, 'two attempts');
      const history = (await api('GET', `/v1/task/${moved.body.task_id}/callbacks`)).body.docs;
      expect(history.slice(0, 2).map((d: { status_code: number }) => d.status_code)).toEqual([302, 302]);
      expect(canary.received).toEqual([]);
    } finally {
      redirecting.close();
      await hook.close();
      await canary.close();
    }
  });

  it('keeps retrying while the receiver is down (nothing listening) and delivers once it is up', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const api = client(server, 'current', server.dev.test_key);
    const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: url } });
    await until(async () => (await api('GET', `/v1/task/${created.body.task_id}/callbacks`)).body.docs.length >= 2, 'two refused attempts');
    const refused = (await api('GET', `/v1/task/${created.body.task_id}/callbacks`)).body.docs;
    expect(refused[0]).toMatchObject({ url, error: expect.stringContaining('connection_refused') });
    const up = await startReceiver(204, port);
    try {
      await until(async () => (await api('GET', `/v1/task/${created.body.task_id}`)).body.callback_completed === true, 'the delivery');
      expect(up.received).toHaveLength(1);
      expect(up.received[0]!.json.task_id).toBe(created.body.task_id);
    } finally {
      await up.close();
    }
  });

  it('redelivers a callback on request, as a new message; only a task with a callback can be redelivered', async () => {
    const hook = await startReceiver();
    try {
      const api = client(server, 'current', server.dev.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
      await hook.waitFor(1, 'the first delivery');
      const again = await api('POST', `/v1/task/${created.body.task_id}/callbacks/redeliver`);
      expect(again.status, again.text).toBe(200);
      expect(again.body.task_id).toBe(created.body.task_id);
      await hook.waitFor(2, 'the redelivery');
      expect(hook.received[1]!.headers['webhook-id']).not.toBe(hook.received[0]!.headers['webhook-id']);
      expect(hook.received[1]!.json.task_id).toBe(created.body.task_id);
      const live = client(server, 'current', server.dev.live_key);
      const pending = await live('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
      const refused = await live('POST', `/v1/task/${pending.body.task_id}/callbacks/redeliver`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain('pending');
      expect((await live('GET', `/v1/task/${created.body.task_id}/callbacks`)).status).toBe(404);
      expect((await live('GET', `/v1/task/${pending.body.task_id}/callbacks`)).body).toEqual({ docs: [] });
    } finally {
      await hook.close();
    }
  });

  it('sends the attachment error body for a task in error, and the batch completion callback', async () => {
    const hook = await startReceiver();
    try {
      const api = client(server, 'current', server.dev.test_key);
      const failing = await api('POST', '/v1/task/categorization', {
        json: { ...task, attachment_type: 'image', attachment: 'https://gone.invalid/x.png', callback_url: hook.url },
      });
      await hook.waitFor(1, 'the error callback');
      expect(hook.received[0]!.json).toEqual({
        task_id: failing.body.task_id,
        error: expect.stringContaining('gone.invalid'),
        attachments: [{ statusCode: 404, url: 'https://gone.invalid/x.png' }],
      });
      expect((await api('GET', `/v1/task/${failing.body.task_id}`)).body.status).toBe('error');
      await api('POST', '/v1/projects', {
        json: { type: 'categorization', name: `p-${db}`, params: { attachment_type: 'text', categories: ['a'], instruction: 'i' } },
      });
      await api('POST', '/v1/batches', { json: { project: `p-${db}`, name: `b-${db}`, callback: hook.url } });
      await api('POST', '/v1/task/categorization', { json: { callback_url: hook.url, batch: `b-${db}`, attachment: 't' } });
      await hook.waitFor((received) => received.some((r) => 'batch' in r.json), 'the batch callback');
      const batchCallback = hook.received.find((r) => 'batch' in r.json)!.json;
      expect(batchCallback).toEqual({
        batch: expect.objectContaining({ name: `b-${db}`, status: 'completed' }),
        counts: { completed: 1, canceled: 0, error: 0 },
      });
    } finally {
      await hook.close();
    }
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('an account whose secrets cannot be opened, on %s', (db) => {
  it("fails alone: its callbacks are recorded as failed attempts and retried, the other accounts' go out", async () => {
    const logs: { level: number; msg: string; account?: string; message?: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line)) });
    // Delivery off while the callbacks are queued: the dispatcher started below claims them all at once.
    const server = await startTestServer(db, { ALLOW_PRIVATE_NETWORKS: env.ALLOW_PRIVATE_NETWORKS });
    const hook = await startReceiver();
    const dispatcher = { stop: async () => {} };
    try {
      const bad = await createAccount(server.uow, 'sealed-elsewhere', new Date());
      // As a row sealed under another SECRETS_KEY (say, copied from another installation) holds it.
      const reseal = (sealed: string) =>
        server.store.execute({
          name: 'reseal',
          text: 'UPDATE accounts SET signing_secret = $1 WHERE account_id = $2',
          values: [sealed, bad.account_id],
        });
      await reseal(secretBox(randomBytes(32), 'another key').seal(bad.signing_secret));
      const badApi = client(server, 'current', bad.test_key);
      const api = client(server, 'current', server.dev.test_key);
      const create = async (call: typeof api) => {
        const created = await call('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
        expect(created.status, created.text).toBe(200);
        return created.body.task_id as string;
      };
      // The unreadable account's callbacks are the oldest: the first of the claim.
      const badIds = [await create(badApi), await create(badApi)];
      const goodIds = [await create(api), await create(api), await create(api)];

      const options = readConfig({ ...env, CALLBACK_SCHEDULE_SCALE: '0.005' }).delivery;
      Object.assign(dispatcher, startDispatcher(server.uow, safeRequest, createMailer(undefined), options, logger));
      for (const id of goodIds)
        await until(async () => (await api('GET', `/v1/task/${id}`)).body.callback_completed === true, "the other account's callbacks");
      const attemptsOf = async (id: string) => (await badApi('GET', `/v1/task/${id}/callbacks`)).body.docs;
      for (const id of badIds) await until(async () => (await attemptsOf(id)).length >= 2, 'a retry of the unreadable one');

      // Nothing unsigned went out; the customer sees why, and that it is still being retried.
      expect(hook.received.map((r) => r.json.task_id).sort()).toEqual([...goodIds].sort());
      for (const id of badIds) {
        const [first] = await attemptsOf(id);
        expect(first).toMatchObject({ event: 'task_completed', url: hook.url });
        expect(first).not.toHaveProperty('status_code');
        expect(first.error).toMatch(/^secrets_unreadable: .*signing secret.*could not be opened/);
        // Still being retried: neither delivered nor given up.
        expect((await badApi('GET', `/v1/task/${id}`)).body).not.toHaveProperty('callback_completed');
      }
      // The operator sees which account and message, and what to do.
      const logged = logs.find((l) => l.msg.includes('could not be opened'));
      expect(logged).toMatchObject({ level: 50, account: bad.account_id, message: expect.any(String) });
      expect(logged!.msg).toMatch(/SECRETS_KEY/);

      // The right key's seal restored: the next retry delivers, signed with the account's secret.
      await reseal(server.store.secrets.seal(bad.signing_secret));
      for (const id of badIds)
        await until(async () => (await badApi('GET', `/v1/task/${id}`)).body.callback_completed === true, 'the retry after the repair');
      const delivered = hook.byTask.get(badIds[0]!)![0]!;
      const key = Buffer.from(bad.signing_secret.replace(/^whsec_/, ''), 'base64');
      const { headers, body } = delivered;
      const signed = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
      expect(headers['webhook-signature']).toBe(`v1,${signed}`);
    } finally {
      await dispatcher.stop();
      await hook.close();
      await server.close();
    }
  });
});

describe('callbacks that keep failing', () => {
  it('stops after the 20th retry (21 POSTs in all) and sets the flag to false', async () => {
    // The real schedule (21.8 h of the 24 h window, no jitter) on a clock moved on to each retry's
    // due time (test/support/delivery-clock.ts): no wait, and no slack that load could use up.
    const server = await startTestServer('pglite', { ALLOW_PRIVATE_NETWORKS: env.ALLOW_PRIVATE_NETWORKS });
    const hook = await startReceiver(500);
    const dispatcher = startClockedDispatcher(server.uow, createMailer(undefined));
    try {
      const api = client(server, 'current', server.dev.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
      const message = await dispatcher.runRetries(server.dev.account_id, created.body.task_id);
      await until(
        async () => (await api('GET', `/v1/task/${created.body.task_id}`)).body.callback_completed === false,
        'the final failure',
      );
      expect(hook.received).toHaveLength(21);
      expect(message).toMatchObject({ attempts: 21, deliveredAt: null, failedAt: expect.any(Date) });
      // On the dispatcher's clock: no retry before its delay (5 s, 30 s, 1 min, ... 3 h), within 24 h.
      expectWholeLadder(await server.uow.outbox.attemptsFor(server.dev.account_id, created.body.task_id));
      // The operator's list (`humantask deliveries --failed`).
      expect(await failedDeliveries(server.uow, 10)).toEqual([
        expect.objectContaining({
          subject: created.body.task_id,
          event: 'task_completed',
          url: hook.url,
          attempts: 21,
          last_result: 'HTTP 500',
        }),
      ]);
    } finally {
      await dispatcher.stop();
      await hook.close();
      await server.close();
    }
  });
});

describe('callbacks across a restart', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('delivers what was pending after a restart, without resetting the attempt count', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-restart-'));
    dirs.push(dataDir);
    const config = { ...readConfig({ ...env, CALLBACK_SCHEDULE_SCALE: '0.01', RATE_LIMIT_BURST: '0' }), port: 0, dataDir };
    const hook = await startReceiver(503);
    const first = await startServer(config, pino({ level: 'silent' }));
    const key = first.devAccount!.test_key;
    const created = await client(first, 'current', key)('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } });
    await hook.waitFor(2, 'two failed attempts');
    await first.close();
    const failedBefore = hook.received.length;
    hook.answer = 200;
    const second = await startServer(config, pino({ level: 'silent' }));
    try {
      const api = client(second, 'current', key);
      await until(
        async () => (await api('GET', `/v1/task/${created.body.task_id}`)).body.callback_completed === true,
        'delivery after restart',
      );
      const [message] = await second.uow.outbox.forSubject(first.devAccount!.account_id, created.body.task_id);
      expect(message!.attempts).toBe(failedBefore + 1);
      expect(hook.received.at(-1)!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    } finally {
      await second.close();
      await hook.close();
    }
  });
});
