// Work starts when it is queued, not at the next poll: with every poll interval at ten minutes, a
// callback, a retry, a delayed test completion and a live attachment check still happen within
// seconds, because the transaction that queued them NOTIFYs the pollers (PostgreSQL: across
// connections and server processes; PGlite: in-process). The waits are far below that.
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readConfig } from '../../server/config.ts';
import { updateAccount } from '../../server/domain/accounts.ts';
import { startServer } from '../../server/main.ts';
import { listenPostgres, parseWorkPayload, workChannel } from '../../server/store/notify.ts';
import { clusterAt, dropDatabase } from '../support/postgres.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';

const tenMinutes = '600000';
const slowPolls = {
  DELIVERY_POLL_MS: tenMinutes,
  ATTACHMENT_CHECK_POLL_MS: tenMinutes,
  TEST_COMPLETION_POLL_MS: tenMinutes,
  ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
};
/** Well below the poll interval: what arrives by then came by a nudge. */
const promptly = 15_000;

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

const task = (callbackUrl: string, extra: Record<string, unknown> = {}) => ({
  callback_url: callbackUrl,
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
  ...extra,
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('work nudges on %s', (db) => {
  let server: TestServer;
  let files: { server: Server; base: string };
  let hook: { server: Server; base: string };
  /** Callback bodies by path; `/fail-once/...` answers 500 to its first POST. */
  const received = new Map<string, unknown[]>();

  beforeAll(async () => {
    files = await listen((_req, res) => res.writeHead(404).end());
    hook = await listen((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const list = received.get(req.url!) ?? [];
        list.push(JSON.parse(body));
        received.set(req.url!, list);
        res.writeHead(req.url!.startsWith('/fail-once/') && list.length === 1 ? 500 : 200).end();
      });
    });
    server = await startTestServer(db, { ...slowPolls, CALLBACK_SCHEDULE_SCALE: '0.01' });
  });
  afterAll(async () => {
    await server?.close();
    files?.server.close();
    hook?.server.close();
  });

  const arrived = (path: string, n = 1) => until(() => (received.get(path)?.length ?? 0) >= n, `${n} callback(s) at ${path}`, promptly);

  it('delivers the callback of a task completed at creation', async () => {
    const api = client(server, 'current', server.dev.test_key);
    const created = await api('POST', '/v1/task/categorization', { json: task(`${hook.base}/now`) });
    expect(created.status).toBe(200);
    await arrived('/now');
    expect(received.get('/now')).toEqual([expect.objectContaining({ task_id: created.body.task_id })]);
  });

  it('retries when the retry falls due (5 s × 0.01), not at the next poll', async () => {
    const api = client(server, 'current', server.dev.test_key);
    const created = await api('POST', '/v1/task/categorization', { json: task(`${hook.base}/fail-once/${db}`) });
    await arrived(`/fail-once/${db}`, 2);
    // The second attempt is recorded once its answer is in.
    const attempts = () => server.uow.outbox.attemptsFor(server.dev.account_id, created.body.task_id);
    await until(async () => (await attempts()).length === 2, 'the second attempt recorded', promptly);
    expect((await attempts()).map((a) => a.statusCode)).toEqual([500, 200]);
  });

  it('completes a delayed test task when its delay is over, and sends its callback', async () => {
    await updateAccount(server.uow, 'dev', { testCompletionDelayMs: 300 });
    try {
      const api = client(server, 'current', server.dev.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: task(`${hook.base}/delayed`) });
      expect(created.body.status).toBe('pending');
      await arrived('/delayed');
      // Completed by the completer (a read would have completed it too: none was made).
      expect(received.get('/delayed')).toEqual([
        expect.objectContaining({ task_id: created.body.task_id, task: expect.objectContaining({ status: 'completed' }) }),
      ]);
    } finally {
      await updateAccount(server.uow, 'dev', { testCompletionDelayMs: 0 });
    }
  });

  it('checks a live task’s attachment at once and sends the error callback', async () => {
    const api = client(server, 'current', server.dev.live_key);
    const url = `${files.base}/missing.jpg`;
    const created = await api('POST', '/v1/task/categorization', {
      json: task(`${hook.base}/attachment`, { attachment_type: 'image', attachment: url }),
    });
    expect(created.status).toBe(200);
    await arrived('/attachment');
    expect(received.get('/attachment')).toEqual([
      { task_id: created.body.task_id, error: expect.stringContaining('missing.jpg'), attachments: [{ statusCode: 404, url }] },
    ]);
  });
});

describe.runIf(hasPostgres())('work nudges between server processes on PostgreSQL', () => {
  it('a callback queued through one server is sent at once by another one that listens', async () => {
    const databaseUrl = await clusterAt(inject('postgresUrl')).createDatabase({ template: inject('postgresTemplate') });
    const hook = await listen((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const posts: string[] = [];
    hook.server.on('request', (req) => posts.push(req.url!));
    const config = (env: Record<string, string>) => ({
      ...readConfig({ RATE_LIMIT_BURST: '0', ...env }),
      port: 0,
      host: '127.0.0.1',
      databaseUrl,
    });
    // The sender delivers (polling every ten minutes); the other one takes requests with delivery off.
    const sender = await startServer(config(slowPolls), pino({ level: 'silent' }));
    const front = await startServer(
      config({ DELIVERY_POLL_MS: '0', ATTACHMENT_CHECK_POLL_MS: '0', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' }),
      pino({ level: 'silent' }),
    );
    try {
      const api = client(front, 'current', sender.devAccount!.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: task(`${hook.base}/elsewhere`) });
      expect(created.status).toBe(200);
      await until(() => posts.length === 1, 'the callback from the other server', promptly);
      expect(posts).toEqual(['/elsewhere']);
    } finally {
      await front.close();
      await sender.close();
      hook.server.close();
      await dropDatabase(databaseUrl);
    }
  });

  it('listens again after its connection is cut, and says so (nudges sent meanwhile were lost)', async () => {
    const databaseUrl = await clusterAt(inject('postgresUrl')).createDatabase();
    const payloads: string[] = [];
    const errors: unknown[] = [];
    let relistens = 0;
    const unlisten = await listenPostgres(
      databaseUrl,
      workChannel,
      { onPayload: (p) => payloads.push(p), onRelisten: () => relistens++, onError: (e) => errors.push(e) },
      50,
    );
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      await admin.query(`SELECT pg_notify($1, 'outbox')`, [workChannel]);
      await until(() => payloads.length === 1, 'the first nudge', promptly);
      const cut = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`,
      );
      expect(cut.rowCount).toBe(1);
      await until(() => relistens === 1, 'listening again', promptly);
      expect(errors.length).toBeGreaterThan(0);
      await admin.query(`SELECT pg_notify($1, 'test_completion@1')`, [workChannel]);
      await until(() => payloads.length === 2, 'a nudge after the cut', promptly);
      expect(payloads).toEqual(['outbox', 'test_completion@1']);
      expect(parseWorkPayload(payloads[1]!)).toEqual({ queue: 'test_completion', dueAt: new Date(1) });
    } finally {
      await admin.end();
      await unlisten();
      await dropDatabase(databaseUrl);
    }
  });
});
