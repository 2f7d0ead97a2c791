// The limits of issue 31 (findings 6 and 11), on PGlite and PostgreSQL (where the limits' buckets
// live in the database), tried as an attacker would: unknown keys and failed log-ins from one
// address, behind a reverse proxy and not, a flood of log-ins against password hashing. The client
// addresses behind a proxy are told by X-Forwarded-For from loopback (TRUSTED_PROXIES), as a proxy
// on the same machine would send them.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../support/net.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { bearer, createWorker, type TestWorker } from '../support/workers.ts';

/** A server whose warnings are kept, one parsed line each. */
async function serverWithLog(db: (typeof databases)[number], env: Record<string, string>) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write: (chunk, _enc, done) => {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const server = await startTestServer(db, env, pino({ level: 'warn' }, stream));
  return { server, lines };
}

/** A status (and the answer) of a request with an unknown key from `forwardedFor`, if given. */
async function unknownKey(server: TestServer, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/v1/tasks`, {
    headers: { authorization: basicAuth('live_0000000000000000000000000000000'), ...headers },
  });
  return { status: res.status, body: (await res.json()) as { error: string }, retryAfter: res.headers.get('retry-after') };
}

const xff = (address: string) => ({ 'x-forwarded-for': address });

async function logIn(server: TestServer, email: string, password: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/worker/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password }),
  });
  return { status: res.status, body: (await res.json()) as { error: string; code: string }, retryAfter: res.headers.get('retry-after') };
}

/** The password hashes the server started, from its metrics. */
async function hashes(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^humantask_password_hashes_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
}

const me = async (server: TestServer, w: TestWorker) => (await fetch(`${server.url}/worker/v1/me`, { headers: bearer(w.token) })).status;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('limits on %s', (db) => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("ignores X-Forwarded-For without TRUSTED_PROXIES; keeps a key and a session that worked going while others' unknown keys throttle their address; says so once in the log", async () => {
    const { server, lines } = await serverWithLog(db, { AUTH_FAILURE_BURST: '3', AUTH_FAILURE_PER_SECOND: '0.001' });
    servers.push(server);
    const customer = client(server, 'current', server.dev.test_key);
    expect((await customer('GET', '/v1/tasks')).status).toBe(200);
    const w = await createWorker(server);
    expect(await me(server, w)).toBe(200);
    const other = await createWorker(server);

    // 104 unknown keys, each claiming another address: one address all the same.
    const statuses: number[] = [];
    for (let i = 0; i < 104; i++) statuses.push((await unknownKey(server, xff(`198.51.100.${i + 1}`))).status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(new Set(statuses.slice(3))).toEqual(new Set([429]));

    // The key and the session that worked before keep working ...
    expect((await customer('GET', '/v1/tasks')).status).toBe(200);
    expect(await me(server, w)).toBe(200);
    // ... what has not proven itself waits, without a lookup: another key, a new log-in.
    expect((await client(server, 'current', server.dev.live_key)('GET', '/v1/tasks')).status).toBe(429);
    const login = await logIn(server, other.email, other.password);
    expect([login.status, login.body.code]).toEqual([429, 'rate_limited']);
    expect(Number(login.retryAfter)).toBeGreaterThanOrEqual(1);

    const tripped = lines.filter((l) => l.msg === 'limit reached: failed authentications');
    expect(tripped).toEqual([
      expect.objectContaining({ level: 40, limit: 'failed authentications', address: '127.0.0.1', retry_after: expect.any(Number) }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('live_0000');
  });

  it('behind TRUSTED_PROXIES limits two clients of the proxy apart, by the right-most hop the proxy did not forward', async () => {
    const server = await startTestServer(db, { AUTH_FAILURE_BURST: '3', AUTH_FAILURE_PER_SECOND: '0.001', TRUSTED_PROXIES: '127.0.0.0/8' });
    servers.push(server);
    for (let i = 0; i < 3; i++) expect((await unknownKey(server, xff('198.51.100.1'))).status).toBe(401);
    const blocked = await unknownKey(server, xff('198.51.100.1'));
    expect([blocked.status, blocked.body.error]).toEqual([429, expect.stringMatching(/failed authentications from this address/)]);
    // Another client behind the proxy, and the proxy itself, are still answered.
    expect((await unknownKey(server, xff('198.51.100.2'))).status).toBe(401);
    expect((await unknownKey(server)).status).toBe(401);
    // The blocked client puts a made-up address in front: the proxy appends the real one, which counts.
    expect((await unknownKey(server, xff('203.0.113.7, 198.51.100.1'))).status).toBe(429);
    // A proxy chain: each trusted hop is skipped.
    expect((await unknownKey(server, xff('198.51.100.1, 127.0.0.5'))).status).toBe(429);
  });

  it('takes no X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const server = await startTestServer(db, { AUTH_FAILURE_BURST: '3', AUTH_FAILURE_PER_SECOND: '0.001', TRUSTED_PROXIES: '10.0.0.0/8' });
    servers.push(server);
    for (let i = 0; i < 3; i++) expect((await unknownKey(server, xff(`198.51.100.${i + 1}`))).status).toBe(401);
    expect((await unknownKey(server, xff('198.51.100.99'))).status).toBe(429);
  });

  it('reads Forwarded instead when TRUSTED_PROXY_HEADER says so (and then not X-Forwarded-For)', async () => {
    const server = await startTestServer(db, {
      AUTH_FAILURE_BURST: '3',
      AUTH_FAILURE_PER_SECOND: '0.001',
      TRUSTED_PROXIES: '127.0.0.0/8',
      TRUSTED_PROXY_HEADER: 'forwarded',
    });
    servers.push(server);
    const forwarded = (value: string) => ({ forwarded: value });
    for (let i = 0; i < 3; i++) expect((await unknownKey(server, forwarded('for="[2001:db8:cafe::17]:4711"'))).status).toBe(401);
    expect((await unknownKey(server, forwarded('for="[2001:db8:cafe::17]"; proto=https'))).status).toBe(429);
    expect((await unknownKey(server, forwarded('for=192.0.2.60;proto=http;by=203.0.113.43'))).status).toBe(401);
    expect((await unknownKey(server, forwarded('for=198.51.100.7, for="[2001:db8:cafe::17]:1"'))).status).toBe(429);
    // X-Forwarded-For is not read: these are the proxy's own address, not yet blocked.
    for (let i = 0; i < 3; i++) expect((await unknownKey(server, xff('2001:db8:cafe::17'))).status).toBe(401);
    expect((await unknownKey(server, xff('198.51.100.50'))).status).toBe(429);
  });

  it('counts a log-in before hashing: a flood from one address gets fast 429s, costs at most its limit in hashes, and a genuine log-in from another address succeeds', async () => {
    const { server, lines } = await serverWithLog(db, {
      METRICS: 'true',
      TRUSTED_PROXIES: '127.0.0.0/8',
      AUTH_FAILURE_BURST: '5',
      AUTH_FAILURE_PER_SECOND: '0.001',
      WORKER_LOGIN_FAILURE_BURST: '3',
      WORKER_LOGIN_FAILURE_PER_MINUTE: '0.001',
      // The production cost (tens of milliseconds a hash), one at a time, one waiting, one per client.
      WORKER_PASSWORD_COST: '15',
      WORKER_PASSWORD_CONCURRENCY: '1',
      WORKER_PASSWORD_QUEUE: '1',
      WORKER_PASSWORD_PER_CLIENT: '1',
    });
    servers.push(server);
    const genuine = await createWorker(server);
    const before = await hashes(server);

    // 60 log-ins at once from one address, each for another (unknown) e-mail address, and a genuine one from elsewhere.
    const flood = Array.from({ length: 60 }, (_, i) => logIn(server, `nobody-${i}@example.com`, 'wrong-password-1', xff('198.51.100.10')));
    const real = await logIn(server, genuine.email, genuine.password, xff('198.51.100.20'));
    const answers = await Promise.all(flood);
    expect(real.status).toBe(200);
    const refused = answers.filter((a) => a.status === 429);
    const wrong = answers.filter((a) => a.status === 401);
    expect(refused.length + wrong.length).toBe(60);
    expect(wrong.length).toBeLessThanOrEqual(5);
    for (const r of refused) expect([r.body.code, Number(r.retryAfter) >= 1]).toEqual(['rate_limited', true]);
    expect(await hashes(server)).toBe(before + wrong.length + 1);

    // The address used its five failures (if the flood did not): from then on, no hash at all.
    for (let i = 0; i < 10 && (await hashes(server)) < before + 6; i++)
      expect([401, 429]).toContain((await logIn(server, `nobody-more-${i}@example.com`, 'wrong-password-1', xff('198.51.100.10'))).status);
    expect(await hashes(server)).toBe(before + 6);
    const spent = await hashes(server);
    for (let i = 0; i < 5; i++) {
      const over = await logIn(server, genuine.email, genuine.password, xff('198.51.100.10'));
      expect([over.status, over.body.error]).toEqual([429, expect.stringMatching(/failed authentications from this address/)]);
    }
    expect(await hashes(server)).toBe(spent);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, limit: 'failed authentications', address: '198.51.100.10' }));
  });

  it("limits failed log-ins per e-mail address whatever the address; the worker's session keeps working, and the locked log-in costs no hash", async () => {
    const { server, lines } = await serverWithLog(db, {
      METRICS: 'true',
      TRUSTED_PROXIES: '127.0.0.0/8',
      AUTH_FAILURE_BURST: '100',
      WORKER_LOGIN_FAILURE_BURST: '3',
      WORKER_LOGIN_FAILURE_PER_MINUTE: '0.001',
    });
    servers.push(server);
    const target = await createWorker(server);
    const bystander = await createWorker(server);
    for (let i = 0; i < 3; i++)
      expect((await logIn(server, target.email.toUpperCase(), `guess-number-${i}`, xff(`198.51.100.${30 + i}`))).status).toBe(401);
    const spent = await hashes(server);
    const locked = await logIn(server, target.email, target.password, xff('198.51.100.40'));
    expect([locked.status, locked.body.code, locked.body.error]).toEqual([
      429,
      'rate_limited',
      expect.stringMatching(/failed log-ins for this e-mail address/),
    ]);
    expect(await hashes(server)).toBe(spent);
    expect(await me(server, target)).toBe(200);
    expect((await logIn(server, bystander.email, bystander.password, xff('198.51.100.40'))).status).toBe(200);
    expect(lines).toContainEqual(expect.objectContaining({ limit: 'failed log-ins', email: target.email.toLowerCase() }));
    expect(JSON.stringify(lines)).not.toContain('guess-number');
  });

  it('answers 503 with Retry-After when the hashing queue is full, and bounds the worker creations of one account', async () => {
    const { server, lines } = await serverWithLog(db, {
      TRUSTED_PROXIES: '127.0.0.0/8',
      AUTH_FAILURE_BURST: '100',
      WORKER_PASSWORD_COST: '15',
      WORKER_PASSWORD_CONCURRENCY: '1',
      WORKER_PASSWORD_QUEUE: '1',
      WORKER_PASSWORD_PER_CLIENT: '1',
    });
    servers.push(server);
    // Twelve clients at once: one hashes, one waits, the others are told to come back.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => logIn(server, `someone-${i}@example.com`, 'wrong-password-1', xff(`198.51.100.${60 + i}`))),
    );
    const busy = answers.filter((a) => a.status === 503);
    expect(answers.filter((a) => a.status !== 503).map((a) => a.status)).toEqual(answers.filter((a) => a.status !== 503).map(() => 401));
    expect(busy.length).toBeGreaterThan(0);
    for (const b of busy) expect([b.body.code, b.retryAfter]).toEqual(['busy', '1']);
    expect(lines).toContainEqual(expect.objectContaining({ limit: 'password hashing queue' }));

    // One account creating 12 workers at once: one hash at a time for it; the others 429 at once.
    const customer = client(server, 'current', server.dev.live_key);
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        customer('POST', '/v1/workforce/workers', {
          json: { email: `made-${i}@example.com`, display_name: `Made ${i}`, roles: ['labeler'] },
        }),
      ),
    );
    const created = made.filter((m) => m.status === 200);
    expect(created.length).toBeGreaterThan(0);
    for (const m of made.filter((x) => x.status !== 200))
      expect([m.status, m.headers.get('retry-after'), m.body.error]).toEqual([429, '1', expect.stringMatching(/passwords being checked/)]);
    const listed = await customer('GET', '/v1/workforce/workers?limit=100');
    expect(listed.body.docs).toHaveLength(created.length);
  });
});
