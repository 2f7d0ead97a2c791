// Issue 34: failed member log-ins are limited per client address, as the API's unknown keys are
// (AUTH_FAILURE_BURST, AUTH_FAILURE_PER_SECOND), and the address is the one a trusted proxy names
// (TRUSTED_PROXIES): behind the proxy, one person guessing passwords is stopped without locking out
// everyone else behind it; without it, a forged X-Forwarded-For changes nothing. The per-member limit
// is off here (members.test.ts tests it), so only the address counts. Both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithOwner, send, type MemberSession } from '../support/members.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const limits = {
  AUTH_FAILURE_BURST: '2',
  // A failure is forgotten after 1000 s: nothing refills while the test runs, however slowly.
  AUTH_FAILURE_PER_SECOND: '0.001',
  MEMBER_LOGIN_FAILURE_BURST: '0',
};

describe.each(databases)('failed member log-ins per address (%s)', (db) => {
  let proxied: TestServer;
  let direct: TestServer;
  let owner: MemberSession;
  let directOwner: MemberSession;
  beforeAll(async () => {
    if (db === 'postgres' && !hasPostgres()) return;
    proxied = await startTestServer(db, { ...limits, TRUSTED_PROXIES: '127.0.0.1' });
    direct = await startTestServer(db, limits);
    ({ owner } = await accountWithOwner(proxied, 'behind'));
    ({ owner: directOwner } = await accountWithOwner(direct, 'direct'));
  }, 120_000);
  afterAll(async () => {
    await proxied?.close();
    await direct?.close();
  });

  /** A log-in (each with another member's e-mail, so that no per-member count could be what stops it). */
  let n = 0;
  const logIn = (server: TestServer, account: string, password: string, email = `nobody-${++n}@example.com`, from?: string) =>
    send(`${server.url}/v1/session`, 'POST', {
      json: { account, email, password },
      headers: from ? { 'x-forwarded-for': from } : {},
    });

  it('behind a trusted proxy: the address it names is stopped past the burst, even with the right password; others are not', async () => {
    if (!proxied) return;
    const guesser = '203.0.113.7';
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await logIn(proxied, 'behind', 'wrong-password', undefined, guesser)).status);
    expect(statuses).toEqual([401, 401, 429]);
    const right = await logIn(proxied, 'behind', owner.password, owner.email, guesser);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(right.body).toMatchObject({ status_code: 429, error: expect.stringContaining('Too many failed log-ins') });
    // Someone else behind the same proxy: a wrong password is theirs to get wrong, the right one works.
    expect((await logIn(proxied, 'behind', 'wrong-password', undefined, '203.0.113.8')).status).toBe(401);
    expect((await logIn(proxied, 'behind', owner.password, owner.email, '203.0.113.9')).status).toBe(200);
  });

  it('without a trusted proxy: X-Forwarded-For is not believed, so a new one each time does not escape the limit', async () => {
    if (!direct) return;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await logIn(direct, 'direct', 'wrong-password', undefined, `198.51.100.${i + 1}`)).status);
    expect(statuses).toEqual([401, 401, 429]);
    expect((await logIn(direct, 'direct', directOwner.password, directOwner.email, '198.51.100.99')).status).toBe(429);
  });
});
