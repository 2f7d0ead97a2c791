// Issue 15: what no input, neighbour process or local user may do to the service or its data.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFile, runAccountCommand, startAdmin } from '../../server/admin.ts';
import { safeRequest } from '../../server/delivery/net.ts';
import { accountSummary, createAccount, updateAccount } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('hardening on %s', (db) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(db);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('counts live requests per account, not for all accounts at once', async () => {
    const now = new Date();
    const busy = await createAccount(server.uow, 'busy', now);
    const quiet = await createAccount(server.uow, 'quiet', now);
    await createAccount(server.uow, 'idle', now);
    for (let i = 0; i < 3; i++) expect((await client(server, 'current', busy.live_key)('GET', '/v1/tasks')).status).toBe(200);
    expect((await client(server, 'current', quiet.live_key)('GET', '/v1/tasks')).status).toBe(200);
    // Test-mode requests are not counted.
    expect((await client(server, 'current', quiet.test_key)('GET', '/v1/tasks')).status).toBe(200);
    const counts = Object.fromEntries((await server.uow.accounts.list()).map((a) => [a.name, accountSummary(a).live_requests]));
    expect(counts).toMatchObject({ busy: 3, quiet: 1, idle: 0 });
    expect((await server.uow.accounts.findByName('busy'))!.liveRequestCount).toBe(3);
    expect((await server.uow.accounts.findById(quiet.account_id))!.liveRequestCount).toBe(1);
  });

  it('counts a live task creation once, whatever its answer, before answering (by its creating statement, or else on its own)', async () => {
    const counter = await createAccount(server.uow, 'creation-counter', new Date());
    const live = client(server, 'current', counter.live_key);
    const legacy = client(server, 'legacy', counter.live_key);
    const task = {
      callback_url: 'https://example.com/cb',
      instruction: 'Pick',
      attachment_type: 'text',
      attachment: 'x',
      categories: ['a', 'b'],
    };
    const key = { 'idempotency-key': 'count-me-once' };
    const answers = [
      await live('POST', '/v1/task/categorization', { json: task }), // created
      await legacy('POST', '/v1/task/categorization', { json: task }), // created (older generation)
      await live('POST', '/v1/task/categorization', { json: task, headers: key }), // created under a key
      await live('POST', '/v1/task/categorization', { json: task, headers: key }), // replayed
      await live('POST', '/v1/task/categorization', { json: { ...task, instruction: 'Other' }, headers: key }), // key used for another request
      await live('POST', '/v1/task/categorization', { json: { ...task, unique_id: 'once' } }), // created
      await live('POST', '/v1/task/categorization', { json: { ...task, unique_id: 'once' } }), // unique_id taken: rolled back
      await live('POST', '/v1/task/categorization', { json: { ...task, categories: 'not a list' } }), // refused before any handler
      await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'counted' } }), // not a task creation
      await live('POST', '/v1/task/categorization', { json: { ...task, project: 'counted' } }), // created in a transaction
      await live('POST', '/v1/task/categorization', { json: { ...task, project: 'no-such-project' } }), // 404 in a transaction
      await live('GET', '/v1/tasks'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 409, 200, 409, 400, 200, 200, 404, 200]);
    expect(answers[3]!.headers.get('idempotent-replayed')).toBe('true');
    // Test-mode creations are not counted.
    expect((await client(server, 'current', counter.test_key)('POST', '/v1/task/categorization', { json: task })).status).toBe(200);
    // Counted before each answer was sent, each once.
    const counted = async () => (await server.uow.accounts.findById(counter.account_id))!.liveRequestCount;
    expect(await counted()).toBe(answers.length);
    // And not again later.
    expect((await live('GET', '/v1/tasks')).status).toBe(200);
    expect(await counted()).toBe(answers.length + 1);
  });

  it('refuses a default callback URL that is no callback address, on the admin path as on the API path', async () => {
    await expect(runAccountCommand(server.uow, { command: 'set', name: 'dev', defaultCallbackUrl: 'not a url' })).rejects.toThrow(
      /default callback URL must be an http\(s\) URL or an e-mail address/,
    );
    await expect(updateAccount(server.uow, 'dev', { defaultCallbackUrl: 'ftp://example.com/x' })).rejects.toThrow(/not ftp:/);
    expect((await server.uow.accounts.findByName('dev'))!.defaultCallbackUrl).toBeNull();
    await updateAccount(server.uow, 'dev', { defaultCallbackUrl: 'ops@example.com' });
    await updateAccount(server.uow, 'dev', { defaultCallbackUrl: null });
    const api = client(server, 'current', server.dev.test_key);
    const task = { instruction: 'Pick', attachment_type: 'text', attachment: 'x', categories: ['a', 'b'] };
    const refused = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: 'not a url' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^(body\.)?callback_url must be an http\(s\) URL or an e-mail address/);
    expect((await api('POST', '/v1/projects', { json: { type: 'categorization', name: 'cb-project' } })).status).toBe(200);
    const batch = await api('POST', '/v1/batches', { json: { project: 'cb-project', name: 'cb-batch', callback: 'not a url' } });
    expect(batch.status).toBe(400);
    expect(batch.body.error).toMatch(/^(body\.)?callback must be/);
  });

  it('refuses callback and attachment URLs into private networks at creation (400, nothing stored)', async () => {
    const api = client(server, 'current', server.dev.test_key);
    const before = (await api('GET', '/v1/tasks')).body.total;
    const task = { instruction: 'Pick', attachment_type: 'text', attachment: 'x', categories: ['a', 'b'] };
    for (const url of [
      'http://127.0.0.1:8080/cb',
      'http://2130706433/cb',
      'http://0x7f.1/cb',
      'http://[::1]/cb',
      'http://localhost/cb',
      'http://api.localhost/cb',
      'http://API.LocalHost:8080/cb',
      'http://localhost./cb',
      'http://example.com@127.0.0.1/cb',
      'http://127.1/cb',
      'http://0177.0.0.1/cb',
      'http://10.1.2.3/cb',
      'http://169.254.169.254/latest',
    ]) {
      const res = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error, url).toMatch(/^callback_url .* points to not a public address/);
    }
    const image = await api('POST', '/v1/task/categorization', {
      json: { ...task, attachment_type: 'image', attachment: 'http://192.168.1.1/a.png', callback_url: 'https://example.com/cb' },
    });
    expect(image.status).toBe(400);
    expect(image.body.error).toMatch(/^attachment http:\/\/192\.168\.1\.1\/a\.png points to not a public address/);
    expect((await api('GET', '/v1/tasks')).body.total).toBe(before);
    // A public address, and a name (judged when it is fetched), are accepted.
    expect((await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: 'https://93.184.215.14/cb' } })).status).toBe(
      200,
    );
  });

  it('replays project and batch creation under an Idempotency-Key: one object, the same answer, 409 for another body', async () => {
    const api = client(server, 'current', server.dev.test_key);
    const once = { headers: { 'Idempotency-Key': 'project-1' } };
    const first = await api('POST', '/v1/projects', { json: { type: 'categorization', name: 'idem-project' }, ...once });
    expect(first.status, first.text).toBe(200);
    const again = await api('POST', '/v1/projects', { json: { type: 'categorization', name: 'idem-project' }, ...once });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect((await api('POST', '/v1/projects', { json: { type: 'categorization', name: 'other-project' }, ...once })).status).toBe(409);
    expect(
      (await api('GET', '/v1/projects')).body.filter((p: { name: string }) => ['idem-project', 'other-project'].includes(p.name)),
    ).toHaveLength(1);

    const batch = { headers: { 'Idempotency-Key': 'batch-1' } };
    const created = await api('POST', '/v1/batches', { json: { project: 'idem-project', name: 'idem-batch' }, ...batch });
    expect(created.status, created.text).toBe(200);
    const replayed = await api('POST', '/v1/batches', { json: { project: 'idem-project', name: 'idem-batch' }, ...batch });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(created.text);
    // An error answer is saved too: the retry gets the same 404, even once the project exists.
    const missing = { headers: { 'Idempotency-Key': 'batch-2' } };
    expect((await api('POST', '/v1/batches', { json: { project: 'later', name: 'b2' }, ...missing })).status).toBe(404);
    expect((await api('POST', '/v1/projects', { json: { type: 'categorization', name: 'later' } })).status).toBe(200);
    const stillMissing = await api('POST', '/v1/batches', { json: { project: 'later', name: 'b2' }, ...missing });
    expect(stillMissing.status).toBe(404);
    expect(stillMissing.headers.get('idempotent-replayed')).toBe('true');
  });
});

/** One raw HTTP/1.1 request (headers exactly as given, duplicates included): the status line's code. */
async function rawStatus(url: string, lines: string[]): Promise<number> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.write(`GET /v1/tasks HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`);
  let text = '';
  for await (const chunk of socket) text += chunk;
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)![1]);
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('authentication on %s', (db) => {
  let server: TestServer;
  let lookups = 0;
  beforeAll(async () => {
    server = await startTestServer(db, { AUTH_FAILURE_BURST: '3', AUTH_FAILURE_PER_SECOND: '0.001' });
    const authenticate = server.uow.accounts.authenticate;
    server.uow.accounts.authenticate = (hash) => {
      lookups++;
      return authenticate(hash);
    };
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses a non-empty password and a second Authorization header (401), accepts the key with an empty password', async () => {
    const key = server.dev.test_key;
    const basic = (userPass: string) => `Authorization: Basic ${Buffer.from(userPass).toString('base64')}`;
    expect(await rawStatus(server.url, [basic(`${key}:`)])).toBe(200);
    expect(await rawStatus(server.url, [basic(`${key}:secret`)])).toBe(401);
    expect(await rawStatus(server.url, [basic(`${key}:`), basic(`${key}:`)])).toBe(401);
    expect(await rawStatus(server.url, [basic(`${key}:`), basic('someone-else:')])).toBe(401);
  });

  it('limits failed authentications per address: 429 with Retry-After, without a database lookup, even for a good key not yet seen working', async () => {
    // The bucket holds 3 unknown keys (none refills in this test's time). Requests without a usable
    // key (the test above) cost no lookup and do not count.
    const bad = client(server, 'current', 'test_00000000000000000000000000000000');
    for (let i = 0; i < 3; i++) expect((await bad('GET', '/v1/tasks')).status).toBe(401);
    const before = lookups;
    const refused = await bad('GET', '/v1/tasks');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toEqual({
      status_code: 429,
      error: expect.stringMatching(/failed authentications/),
      request_id: expect.any(String),
    });
    // A key that has not worked on this server yet is refused like the unknown ones, without a lookup ...
    expect((await client(server, 'current', server.dev.live_key)('GET', '/v1/tasks')).status).toBe(429);
    expect(lookups).toBe(before);
    // ... one that worked (the test above) is not locked out by someone else's unknown keys.
    expect((await client(server, 'current', server.dev.test_key)('GET', '/v1/tasks')).status).toBe(200);
  });
});

describe('callback history', () => {
  it('says "not a public address", never what a name resolved to inside our network', async () => {
    const result = await safeRequest('http://internal.example.test/cb', {
      method: 'POST',
      body: 'x',
      timeoutMs: 5_000,
      maxResponseBytes: 1_000,
      allowPrivateNetworks: [],
      resolve: async () => [{ address: '10.20.30.40', family: 4 }],
    });
    expect(result).toEqual(
      expect.objectContaining({ ok: false, error: 'refused_address', message: 'internal.example.test: not a public address' }),
    );
    expect(JSON.stringify(result)).not.toContain('10.20.30.40');
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('no SQL in logs and admin answers on %s', (db) => {
  it('logs the statement name and error code of a failed query, never its text or parameters', async () => {
    let log = '';
    const stream = new Writable({
      write: (chunk, _enc, done) => {
        log += chunk;
        done();
      },
    });
    const server = await startTestServer(db, {}, pino({ level: 'error' }, stream));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-admin-'));
    try {
      const api = client(server, 'current', server.dev.test_key);
      const { task_id: id } = (
        await api('POST', '/v1/task/categorization', {
          json: {
            callback_url: 'https://example.com/cb',
            instruction: 'Pick',
            attachment_type: 'text',
            attachment: 'x',
            categories: ['a', 'b'],
          },
        })
      ).body;
      const broken = () =>
        server.store.execute({ name: 'broken_read', text: "SELECT 1/0 AS x WHERE $1::text <> ''", values: ['param-secret-1'] });
      server.uow.tasks.get = broken as never;
      expect((await api('GET', `/v1/task/${id}`)).status).toBe(500);
      // A query built by drizzle, too.
      server.uow.tasks.get = (() => server.store.db.execute(sql`SELECT 1/0 WHERE ${'param-secret-2'} <> ''`)) as never;
      expect((await api('GET', `/v1/task/${id}`)).status).toBe(500);
      expect(log).toContain('"statement":"broken_read"');
      expect(log.match(/"code":"22012"/g)).toHaveLength(2);
      for (const leak of ['SELECT', 'param-secret', '1/0']) expect(log).not.toContain(leak);

      const uow = { ...server.uow, accounts: { ...server.uow.accounts, list: broken as never } };
      const logged: Record<string, unknown>[] = [];
      const admin = await startAdmin(uow, dataDir, (err) => logged.push(err));
      try {
        const { url, token } = JSON.parse(readFileSync(adminFile(dataDir), 'utf8'));
        const res = await fetch(`${url}/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({ command: 'list' }),
        });
        expect(res.status).toBe(500);
        const text = await res.text();
        expect(text).toBe(JSON.stringify({ error: 'the command failed on the server (see its log)' }));
        expect(logged).toEqual([expect.objectContaining({ code: '22012', statement: 'broken_read' })]);
      } finally {
        await admin.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await server.close();
    }
  });
});

describe('slow and idle connections', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', { HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '600', KEEP_ALIVE_TIMEOUT_MS: '2000' });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Opens a connection, writes `text`, and answers what came back once the server closed it. */
  async function untilClosed(text: string): Promise<string> {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    socket.write(text);
    let received = '';
    for await (const chunk of socket) received += chunk;
    return received;
  }

  it('closes a connection whose request head never ends (408), within HEADERS_TIMEOUT_MS', { timeout: 20_000 }, async () => {
    const received = await untilClosed(`GET /v1/tasks HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nX-Slow: `);
    expect(received).toMatch(/^(HTTP\/1\.1 408|$)/);
  });

  it('closes an idle kept-alive connection after KEEP_ALIVE_TIMEOUT_MS', { timeout: 20_000 }, async () => {
    const received = await untilClosed(`GET /v1/tasks HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\n\r\n`);
    expect(received).toMatch(/^HTTP\/1\.1 401/);
    expect(received).toMatch(/\r\nkeep-alive: timeout=2\r\n/i); // the default would say 5
  });
});
