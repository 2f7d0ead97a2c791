// The operability side as an operator and a browser see it: the index at `/`, health and
// readiness, the served contracts, request ids, CORS and the Prometheus metrics, all over HTTP on a
// real server, without a key.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../server/config.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { startServer } from '../../server/main.ts';
import { secretBox } from '../../server/store/secrets.ts';
import { basicAuth } from '../support/net.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { generations, makeValidator, root } from '../support/spec.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const get = (server: { url: string }, p: string, headers: Record<string, string> = {}) => fetch(server.url + p, { headers });

const task = { instruction: 'Pick one', attachment_type: 'text', attachment: 'My invoice is wrong.', categories: ['billing', 'support'] };

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('operability endpoints on %s', (db) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(db);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('`/` lists what the server serves, and every link answers without a key', async () => {
    const res = await get(server, '/');
    expect(res.status).toBe(200);
    const index = await res.json();
    expect(index).toMatchObject({ name: 'humantask', version: expect.any(String) });
    expect(index.links).toMatchObject({
      current: '/v1',
      legacy: '/legacy/v1',
      healthz: '/healthz',
      readyz: '/readyz',
      openapi_current_yaml: '/openapi/current.yaml',
      openapi_current_json: '/openapi/current.json',
      openapi_legacy_yaml: '/openapi/legacy.yaml',
      openapi_legacy_json: '/openapi/legacy.json',
      worker: '/worker/v1',
      openapi_workforce_yaml: '/openapi/workforce.yaml',
      openapi_workforce_json: '/openapi/workforce.json',
    });
    expect(index.links.metrics).toBeUndefined();
    for (const [name, link] of Object.entries<string>(index.links)) {
      if (name === 'current' || name === 'legacy' || name === 'worker') continue; // the API itself wants a key (or a worker token)
      expect((await get(server, link)).status, link).toBe(200);
    }
  });

  it('/healthz and /readyz answer without a key; /readyz says 503 and why when a migration is missing', async () => {
    expect(await (await get(server, '/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await get(server, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.headers.get('cache-control')).toBe('no-store');
    expect(await ready.json()).toEqual({ status: 'ready' });
    const [last] = await server.store.execute<{ id: number; hash: string; created_at: string }>({
      name: 'test_last_migration',
      text: 'select id, hash, created_at from drizzle.__drizzle_migrations order by id desc limit 1',
      values: [],
    });
    await server.store.execute({
      name: 'test_drop_migration',
      text: 'delete from drizzle.__drizzle_migrations where id = $1',
      values: [last!.id],
    });
    try {
      const notReady = await get(server, '/readyz');
      expect(notReady.status).toBe(503);
      const body = await notReady.json();
      expect(body).toMatchObject({ status_code: 503, error: expect.stringMatching(/^Not ready: \d+ of \d+ migrations applied\.$/) });
      expect(body.request_id).toBe(notReady.headers.get('x-request-id'));
      expect((await get(server, '/healthz')).status).toBe(200);
    } finally {
      await server.store.execute({
        name: 'test_restore_migration',
        text: 'insert into drizzle.__drizzle_migrations (id, hash, created_at) values ($1, $2, $3)',
        values: [last!.id, last!.hash, last!.created_at],
      });
    }
    expect((await get(server, '/readyz')).status).toBe(200);
  });

  it('serves the bundled contracts as YAML and JSON, the same documents as generated/', async () => {
    for (const gen of generations) {
      const file = readFileSync(path.join(root, 'generated', `${gen}.openapi.yaml`), 'utf8');
      const yaml = await get(server, `/openapi/${gen}.yaml`);
      expect(yaml.status).toBe(200);
      expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
      expect(await yaml.text()).toBe(file);
      const json = await get(server, `/openapi/${gen}.json`);
      expect(json.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await json.json()).toEqual(parse(file));
    }
    const missing = await get(server, '/openapi/nope.yaml');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status_code: 404, error: expect.stringContaining('GET /') });
  });

  it('what is not the API (/favicon.ico, a stray link) is a 404 JSON error, not a 401', async () => {
    for (const p of ['/favicon.ico', '/bench/README.md', '/robots.txt', '/docs/no-such-page.html']) {
      const res = await get(server, p);
      expect(res.status, p).toBe(404);
      expect(res.headers.get('www-authenticate'), p).toBeNull();
      expect(await res.json(), p).toMatchObject({ status_code: 404 });
    }
    // The API's own paths still ask for a key.
    expect((await get(server, '/v1/nope')).status).toBe(401);
    expect((await get(server, '/legacy/v1/tasks')).status).toBe(401);
  });

  it('X-Request-Id: a sane one is kept, anything else is replaced; echoed, and in error bodies of both generations', async () => {
    const validators = Object.fromEntries(generations.map((g) => [g, makeValidator(g)]));
    for (const gen of generations) {
      const validErrorBody = validators[gen]!('#/components/schemas/ErrorBody');
      const api = client(server, gen, server.dev.test_key);
      const anonymous = client(server, gen, null);

      const unauthorized = await anonymous('GET', '/v1/tasks', { headers: { 'x-request-id': 'trace-42/abc:1' } });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers.get('x-request-id')).toBe('trace-42/abc:1');
      expect(unauthorized.body).toEqual({ status_code: 401, error: expect.any(String), request_id: 'trace-42/abc:1' });
      expect(validErrorBody(unauthorized.body), JSON.stringify(validErrorBody.errors)).toBe(true);

      const invalid = await api('POST', '/v1/task/categorization', {
        json: { ...task, categories: 'x' },
        headers: { 'x-request-id': 'x'.repeat(129) },
      });
      expect(invalid.status).toBe(400);
      const made = invalid.headers.get('x-request-id');
      expect(made).toMatch(/^[0-9a-f-]{36}$/);
      expect(invalid.body.request_id).toBe(made);
      expect(validErrorBody(invalid.body), JSON.stringify(validErrorBody.errors)).toBe(true);

      for (const bad of ['has space', 'semi;colon', '']) {
        const res = await api('GET', '/v1/tasks', { headers: { 'x-request-id': bad } });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      }
      const two = [await api('GET', '/v1/tasks'), await api('GET', '/v1/tasks')].map((r) => r.headers.get('x-request-id'));
      expect(two[0]).not.toBe(two[1]);
    }
  });
});

describe('the access log', () => {
  it('holds the request id of every request', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const server = await startServer(
      { ...readConfig({ DELIVERY_POLL_MS: '0', ATTACHMENT_CHECK_POLL_MS: '0' }), port: 0, dataDir: 'memory://' },
      pino({ level: 'info' }, sink),
    );
    try {
      await fetch(server.url + '/v1/tasks', {
        headers: { 'x-request-id': 'log-me-1', authorization: basicAuth(server.devAccount!.test_key) },
      });
      await fetch(server.url + '/healthz', { headers: { 'x-request-id': 'log-me-2' } });
      await until(() => lines.filter((l) => l.msg === 'request').length >= 2, 'two access log lines');
      expect(lines.filter((l) => l.msg === 'request')).toEqual([
        expect.objectContaining({ method: 'GET', path: '/v1/tasks', status: 200, request_id: 'log-me-1' }),
        expect.objectContaining({ method: 'GET', path: '/healthz', status: 200, request_id: 'log-me-2' }),
      ]);
    } finally {
      await server.close();
    }
  });

  it('logs the path the client asked for, whichever app answered, and the shutdown', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const server = await startServer(
      { ...readConfig({ DELIVERY_POLL_MS: '0', ATTACHMENT_CHECK_POLL_MS: '0' }), port: 0, dataDir: 'memory://' },
      pino({ level: 'info' }, sink),
    );
    let closed = false;
    try {
      const auth = { authorization: basicAuth(server.devAccount!.test_key) };
      await fetch(server.url + '/legacy/v1/tasks?limit=1', { headers: { ...auth, 'x-request-id': 'legacy-1' } });
      await fetch(server.url + '/worker/v1/me', { headers: { 'x-request-id': 'worker-1' } });
      await until(() => lines.filter((l) => l.msg === 'request').length >= 2, 'two access log lines');
      expect(lines.filter((l) => l.msg === 'request')).toEqual([
        expect.objectContaining({ method: 'GET', path: '/legacy/v1/tasks', status: 200, request_id: 'legacy-1' }),
        expect.objectContaining({ method: 'GET', path: '/worker/v1/me', status: 401, request_id: 'worker-1' }),
      ]);
      await server.close('SIGTERM');
      closed = true;
      expect(lines.map((l) => l.msg).slice(-2)).toEqual(['shutting down: in-flight requests finish, then the store closes', 'stopped']);
      expect(lines.at(-2)).toMatchObject({ reason: 'SIGTERM' });
    } finally {
      if (!closed) await server.close();
    }
  });
});

describe('CORS', () => {
  let open: TestServer;
  let closed: TestServer;
  beforeAll(async () => {
    [open, closed] = await Promise.all([
      startTestServer('pglite', { CORS_ORIGINS: 'https://app.example, https://other.example' }),
      startTestServer('pglite'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([open?.close(), closed?.close()]);
  });

  const preflight = (server: { url: string }, origin: string, p = '/v1/task/categorization') =>
    fetch(server.url + p, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    });

  it('answers a preflight from an allowed origin without a key, for both generations', async () => {
    for (const p of ['/v1/task/categorization', '/legacy/v1/task/categorization']) {
      const res = await preflight(open, 'https://app.example', p);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase().split(/, */)).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'x-request-id']),
      );
      expect(res.headers.get('vary')).toContain('Origin');
    }
  });

  it('lets the allowed origin read answers and their headers; other origins get no CORS header', async () => {
    const ok = await fetch(open.url + '/v1/tasks', {
      headers: { origin: 'https://other.example', authorization: basicAuth(open.dev.test_key) },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://other.example');
    expect(ok.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    const denied = await preflight(open, 'https://evil.example');
    expect(denied.status).toBe(204);
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
    const plain = await fetch(open.url + '/v1/tasks', {
      headers: { origin: 'https://evil.example', authorization: basicAuth(open.dev.test_key) },
    });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('sends no CORS header at all when CORS_ORIGINS is not set', async () => {
    const res = await preflight(closed, 'https://app.example');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('vary')).toBeNull();
  });
});

/** A sample's value from Prometheus text: `name{labels} value`, the labels in any order. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('metrics', () => {
  it('are off unless METRICS=true: /metrics is a 404', async () => {
    const server = await startTestServer('pglite');
    try {
      expect((await get(server, '/metrics')).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('with METRICS=true on %s', (db) => {
    let server: TestServer;
    let failing: Receiver;
    let working: Receiver;
    beforeAll(async () => {
      [failing, working] = await Promise.all([startReceiver(503), startReceiver(200)]);
      server = await startTestServer(db, {
        METRICS: 'true',
        DELIVERY_POLL_MS: '5',
        ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
        CALLBACK_SCHEDULE_SCALE: '0.001',
        CALLBACK_JITTER: '0',
      });
    });
    afterAll(async () => {
      await server?.close();
      await Promise.all([failing?.close(), working?.close()]);
    });

    it('count requests by operation and status, callback attempts by outcome, the outbox depth and the pool', async () => {
      const api = client(server, 'current', server.dev.test_key);
      expect((await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: failing.url } })).status).toBe(200);
      expect((await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: working.url } })).status).toBe(200);
      expect((await api('GET', '/v1/tasks')).status).toBe(200);
      expect((await client(server, 'current', null)('GET', '/v1/tasks')).status).toBe(401);
      await until(() => failing.received.length >= 2 && working.received.length >= 1, 'a delivered callback and two failed attempts');

      const res = await get(server, '/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      const count = (labels: Record<string, string>) => sample(text, 'humantask_http_request_duration_seconds_count', labels);
      expect(count({ operation: 'createCategorizationTask', method: 'POST', status: '200' })).toBe(2);
      expect(count({ operation: 'listTasks', method: 'GET', status: '200' })).toBe(1);
      // A request refused before the contract is consulted has no operation yet.
      expect(count({ operation: 'unknown', method: 'GET', status: '401' })).toBe(1);
      expect(sample(text, 'humantask_http_request_duration_seconds_bucket', { operation: 'listTasks', le: '+Inf' })).toBe(1);
      expect(sample(text, 'humantask_callback_attempts_total', { outcome: '2xx' })).toBe(1);
      expect(sample(text, 'humantask_callback_attempts_total', { outcome: '5xx' })).toBeGreaterThanOrEqual(2);
      // The failing receiver's callback waits for its next attempt; the other one was delivered.
      expect(sample(text, 'humantask_outbox_pending')).toBe(1);
      if (db === 'postgres') expect(sample(text, 'humantask_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
      else expect(text).not.toContain('humantask_db_pool_connections');
      expect(text).toContain('humantask_process_resident_memory_bytes');
      expect((await (await get(server, '/')).json()).links.metrics).toBe('/metrics');
    });

    it("count an attempt that sent nothing, as the account's secrets could not be opened, by that outcome", async () => {
      const sealedElsewhere = await createAccount(server.uow, `sealed-elsewhere-${db}`, new Date());
      // As a row sealed under another SECRETS_KEY holds it (say, copied from another installation).
      await server.store.execute({
        name: 'reseal_for_metrics',
        text: 'UPDATE accounts SET signing_secret = $1 WHERE account_id = $2',
        values: [secretBox(randomBytes(32), 'another key').seal(sealedElsewhere.signing_secret), sealedElsewhere.account_id],
      });
      const api = client(server, 'current', sealedElsewhere.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: working.url } });
      expect(created.status, created.text).toBe(200);
      const attempts = async () => (await api('GET', `/v1/task/${created.body.task_id}/callbacks`)).body.docs;
      await until(async () => (await attempts()).length >= 2, 'two attempts');
      const recorded = (await attempts()).length;
      expect((await attempts())[0].error).toMatch(/^secrets_unreadable: /);
      const text = await (await get(server, '/metrics')).text();
      // Counted before it is recorded: at least the attempts the task shows.
      expect(sample(text, 'humantask_callback_attempts_total', { outcome: 'secrets_unreadable' })).toBeGreaterThanOrEqual(recorded);
      expect(working.byTask.has(created.body.task_id)).toBe(false);
    });
  });
});
