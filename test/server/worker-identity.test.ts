// Worker identity over real HTTP, PGlite and PostgreSQL: log-in, sessions that lapse and renew by
// use, log-out, API tokens and their revocation, accounts managing only their own workers, and the
// two kinds of principal never mixing (a worker token at /v1, an API key at /worker/v1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { testClock } from '../support/clock.ts';
import { basicAuth } from '../support/net.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { bearer, createWorker, logIn, workerClient } from '../support/workers.ts';

const worker = (server: TestServer, method: string, path: string, token: string | null, json?: unknown) =>
  workerClient(server, token)(method, path, json);

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('worker identity on %s', (db) => {
  let server: TestServer;
  let a: AccountSecrets;
  let b: AccountSecrets;

  beforeAll(async () => {
    server = await startTestServer(db);
    [a, b] = await Promise.all([createAccount(server.uow, 'identity-a', new Date()), createAccount(server.uow, 'identity-b', new Date())]);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('logs in with e-mail (any letter case) and password; the session token works, log-out revokes it', async () => {
    const w = await createWorker(server, { roles: ['labeler', 'reviewer'] });
    const login = await worker(server, 'POST', '/v1/session', null, { email: w.email.toUpperCase(), password: w.password });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({
      token: expect.stringMatching(/^wks_/),
      worker: { worker_id: w.workerId, email: w.email, roles: ['labeler', 'reviewer'], workforce: 'operator', status: 'active' },
    });
    expect(Date.parse(login.body.expires_at)).toBeLessThanOrEqual(Date.parse(login.body.absolute_expires_at));
    const me = await worker(server, 'GET', '/v1/me', login.body.token);
    expect(me.status).toBe(200);
    expect(me.body.worker_id).toBe(w.workerId);
    expect((await worker(server, 'DELETE', '/v1/session', login.body.token)).status).toBe(204);
    const after = await worker(server, 'GET', '/v1/me', login.body.token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toBe('Bearer realm="humantask-worker"');
    expect(after.body).toMatchObject({ status_code: 401, code: 'unauthenticated' });
    // The helper's own session is another session: still valid.
    expect((await worker(server, 'GET', '/v1/me', w.token)).status).toBe(200);
  });

  it('answers a wrong password and an unknown address alike, naming neither', async () => {
    const w = await createWorker(server);
    const wrong = await worker(server, 'POST', '/v1/session', null, { email: w.email, password: 'not-the-password' });
    const unknown = await worker(server, 'POST', '/v1/session', null, { email: 'nobody@example.com', password: w.password });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status_code: 401, error: 'Wrong e-mail address or password.', code: 'unauthenticated' });
    }
  });

  it('refuses what is not a worker token at /worker/v1, and a worker token at /v1 and /legacy/v1', async () => {
    const w = await createWorker(server);
    for (const headers of [
      {},
      { authorization: basicAuth(a.test_key) },
      { authorization: basicAuth(a.live_key) },
      { authorization: 'Bearer wks_not-a-token' },
    ] as Record<string, string>[]) {
      const res = await fetch(`${server.url}/worker/v1/me`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="humantask-worker"');
    }
    for (const base of ['', '/legacy']) {
      const res = await fetch(`${server.url}${base}/v1/tasks`, { headers: bearer(w.token) });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="humantask"');
    }
  });

  it('creates, lists and revokes API tokens; the secret is shown once and a revoked token stops working', async () => {
    const w = await createWorker(server);
    const created = await worker(server, 'POST', '/v1/tokens', w.token, { name: 'script' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ token_id: expect.stringMatching(/^wtk_/), name: 'script', token: expect.stringMatching(/^wka_/) });
    const api = created.body.token as string;
    expect((await worker(server, 'GET', '/v1/me', api)).status).toBe(200);
    const list = await worker(server, 'GET', '/v1/tokens', api);
    expect(list.body.docs).toEqual([
      expect.objectContaining({ token_id: created.body.token_id, name: 'script', last_used_at: expect.any(String) }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain(api);
    // An API token is no session: it cannot log out.
    expect((await worker(server, 'DELETE', '/v1/session', api)).status).toBe(400);
    expect((await worker(server, 'DELETE', `/v1/tokens/${created.body.token_id}`, w.token)).status).toBe(204);
    expect((await worker(server, 'GET', '/v1/me', api)).status).toBe(401);
    expect((await worker(server, 'DELETE', `/v1/tokens/${created.body.token_id}`, w.token)).status).toBe(404);
    // Another worker's token id is 404 too.
    const other = await createWorker(server);
    const theirs = await worker(server, 'POST', '/v1/tokens', other.token, { name: 'theirs' });
    expect((await worker(server, 'DELETE', `/v1/tokens/${theirs.body.token_id}`, w.token)).status).toBe(404);
    expect((await worker(server, 'GET', '/v1/me', theirs.body.token)).status).toBe(200);
  });

  it('limits live API tokens to 20 per worker (409 token_limit)', async () => {
    const w = await createWorker(server);
    const made = await Promise.all(Array.from({ length: 22 }, (_, i) => worker(server, 'POST', '/v1/tokens', w.token, { name: `t${i}` })));
    expect(made.filter((r) => r.status === 200)).toHaveLength(20);
    expect(made.filter((r) => r.status === 409).map((r) => r.body.code)).toEqual(['token_limit', 'token_limit']);
    expect((await worker(server, 'GET', '/v1/tokens', w.token)).body.docs).toHaveLength(20);
  });

  it('lets an account manage its own workers, who log in; another account sees none of them (404)', async () => {
    const callA = client(server, 'current', a.live_key);
    const callB = client(server, 'current', b.test_key);
    const created = await callA('POST', '/v1/workforce/workers', {
      json: { email: 'ana.identity@example.com', display_name: 'Ana', roles: ['labeler'] },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      worker_id: expect.stringMatching(/^wkr_/),
      email: 'ana.identity@example.com',
      status: 'active',
      calibrator: false,
      initial_password: expect.any(String),
    });
    const id = created.body.worker_id as string;
    const token = await logIn(server, 'ana.identity@example.com', created.body.initial_password);
    expect((await worker(server, 'GET', '/v1/me', token)).body).toMatchObject({ worker_id: id, workforce: 'account' });
    // The same e-mail address again in the same workforce: 409 email_taken (another workforce may
    // use it: test/server/work-isolation.test.ts).
    const again = await callA('POST', '/v1/workforce/workers', {
      json: { email: 'ANA.identity@example.com', display_name: 'Ana', roles: ['labeler'], password: 'a-long-enough-password' },
    });
    expect([again.status, again.body.code]).toEqual([409, 'email_taken']);
    // The key of the other mode sees none of them (decision 0013); the other account sees nothing.
    expect((await client(server, 'current', a.test_key)('GET', `/v1/workforce/workers/${id}`)).status).toBe(404);
    for (const [method, path, json] of [
      ['GET', `/v1/workforce/workers/${id}`, undefined],
      ['PATCH', `/v1/workforce/workers/${id}`, { roles: ['reviewer'] }],
      ['DELETE', `/v1/workforce/workers/${id}`, undefined],
      ['POST', `/v1/workforce/workers/${id}/pause`, undefined],
      ['POST', `/v1/workforce/workers/${id}/reset_password`, {}],
    ] as const) {
      const res = await callB(method, path, json !== undefined ? { json } : {});
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await callB('GET', '/v1/workforce/workers')).body.docs).toEqual([]);
    expect((await callA('GET', '/v1/workforce/workers')).body.docs.map((w: { worker_id: string }) => w.worker_id)).toEqual([id]);
    // An operator's worker is no account's to manage.
    const operatorWorker = await createWorker(server);
    expect((await callA('GET', `/v1/workforce/workers/${operatorWorker.workerId}`)).status).toBe(404);

    const patched = await callA('PATCH', `/v1/workforce/workers/${id}`, { json: { roles: ['labeler', 'reviewer'], calibrator: true } });
    expect(patched.body).toMatchObject({ roles: ['labeler', 'reviewer'], calibrator: true });
    expect((await callA('POST', `/v1/workforce/workers/${id}/pause`)).body.status).toBe('paused');
    expect((await worker(server, 'GET', '/v1/me', token)).body.status).toBe('paused');
    expect((await callA('POST', `/v1/workforce/workers/${id}/unpause`)).body.status).toBe('active');

    const reset = await callA('POST', `/v1/workforce/workers/${id}/reset_password`, { json: {} });
    expect(reset.body).toMatchObject({ worker_id: id, password: expect.any(String), revoked_tokens: 1 });
    expect((await worker(server, 'GET', '/v1/me', token)).status).toBe(401);
    const fresh = await logIn(server, 'ana.identity@example.com', reset.body.password);

    const removed = await callA('DELETE', `/v1/workforce/workers/${id}`);
    expect(removed.body.status).toBe('removed');
    const gone = await worker(server, 'GET', '/v1/me', fresh);
    expect(gone.status).toBe(401);
    expect(
      (await worker(server, 'POST', '/v1/session', null, { email: 'ana.identity@example.com', password: reset.body.password })).status,
    ).toBe(401);
    // The address is free again.
    expect(
      (
        await callA('POST', '/v1/workforce/workers', {
          json: { email: 'ana.identity@example.com', display_name: 'Ana B', roles: ['labeler'] },
        })
      ).status,
    ).toBe(200);
  });

  it("pages an account's workers with next_token, bound to the account", async () => {
    const acct = await createAccount(server.uow, `identity-pages-${db}`, new Date());
    const call = client(server, 'current', acct.test_key);
    for (let i = 0; i < 5; i++)
      expect(
        (
          await call('POST', '/v1/workforce/workers', {
            json: { email: `p${i}.${db}@example.com`, display_name: `P${i}`, roles: ['labeler'], password: 'a-long-enough-password' },
          })
        ).status,
      ).toBe(200);
    const seen: string[] = [];
    let next: string | undefined;
    do {
      const page = await call('GET', `/v1/workforce/workers?limit=2${next ? `&next_token=${next}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.docs.map((w: { email: string }) => w.email));
      next = page.body.next_token;
      if (next) expect((await client(server, 'current', b.test_key)('GET', `/v1/workforce/workers?next_token=${next}`)).status).toBe(400);
    } while (next);
    expect(seen).toEqual([4, 3, 2, 1, 0].map((i) => `p${i}.${db}@example.com`));
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))(
  'sessions on %s, with a 1-hour lifetime renewed by use and a 2-hour cap, on a clock the test moves on',
  (db) => {
    let server: TestServer;
    // The server's clock moves only as the test moves it on: a slow request uses up none of a lifetime.
    const clock = testClock();
    beforeAll(async () => {
      server = await startTestServer(db, { WORKER_SESSION_TTL_SECONDS: '3600', WORKER_SESSION_MAX_SECONDS: '7200' }, undefined, {
        now: clock.now,
      });
    });
    afterAll(async () => {
      await server?.close();
    });

    it('lapses without use, is renewed by use, and ends at its cap however used', async () => {
      const idle = await createWorker(server);
      const busy = await createWorker(server);
      let minutes = 0;
      const later = () => {
        clock.advance(15 * 60_000);
        minutes += 15;
      };
      // The busy session is used every quarter of an hour; the idle one not at all.
      while (minutes < 78) {
        expect((await worker(server, 'GET', '/v1/me', busy.token)).status).toBe(200);
        later();
      }
      const lapsed = await worker(server, 'GET', '/v1/me', idle.token);
      expect(lapsed.status).toBe(401);
      expect(lapsed.body.code).toBe('session_expired');
      while (minutes < 129) {
        await worker(server, 'GET', '/v1/me', busy.token);
        later();
      }
      expect((await worker(server, 'GET', '/v1/me', busy.token)).body.code).toBe('session_expired');
    });
  },
);

describe('failed worker authentications on pglite, limited per address (burst 3)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', { AUTH_FAILURE_BURST: '3', AUTH_FAILURE_PER_SECOND: '1' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('counts wrong passwords and unknown tokens; past the burst every worker request of the address gets 429 with Retry-After', async () => {
    const w = await createWorker(server);
    expect((await worker(server, 'POST', '/v1/session', null, { email: w.email, password: 'wrong-password-1' })).status).toBe(401);
    expect((await worker(server, 'POST', '/v1/session', null, { email: w.email, password: 'wrong-password-2' })).status).toBe(401);
    expect((await worker(server, 'GET', '/v1/me', 'wks_unknown')).status).toBe(401);
    const blocked = await worker(server, 'POST', '/v1/session', null, { email: w.email, password: w.password });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(blocked.body).toMatchObject({ status_code: 429, code: 'rate_limited' });
    expect((await worker(server, 'GET', '/v1/me', w.token)).status).toBe(429);
  });
});
