// Issue 34: members as people meet them. An invitation over a real SMTP exchange, accepted once (a
// second use, an expired link: 400 naming it); roles changed within the owner rules (the last owner
// stays, a role that does not exist is 400); password reset by mail; TOTP set up, required, and
// asked at log-in; sessions that lapse on the server's clock, end everywhere, and refuse a change
// without the CSRF token; log-ins limited per member; every change in the activity log with its
// actor. Both databases.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { TOTP, Secret } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithOwner, login, memberWithRole, send, type MemberSession } from '../support/members.ts';
import { testClock } from '../support/clock.ts';
import { basicAuth } from '../support/net.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

interface Mail {
  to: string[];
  text: string;
}

async function smtpServer() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    disableReverseLookup: true,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        // The body, quoted-printable decoded (soft line breaks, =XX).
        const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
        const text = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const tokenIn = (text: string) => /#token=(htl_[0-9a-f]{24}\.[A-Za-z0-9_-]{43})/.exec(text)?.[1];
const code = (secret: string, at: Date) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: at.getTime() });

describe.each(databases)('members (%s)', (db) => {
  let server: TestServer;
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  const clock = testClock();
  let owner: MemberSession;
  let keyHeader: string;
  beforeAll(async () => {
    if (db === 'postgres' && !hasPostgres()) return;
    smtp = await smtpServer();
    server = await startTestServer(db, { SMTP_URL: smtp.url, MEMBER_LOGIN_FAILURE_BURST: '3' }, undefined, { now: clock.now });
    ({ owner, keyHeader } = await accountWithOwner(server, 'acme'));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });
  const mailed = (email: string) => tokenIn(smtp.mails.filter((m) => m.to.includes(email)).at(-1)!.text)!;
  const activity = async (query = '') => (await owner.call('GET', `/v1/activity${query}`)).body.docs as any[];

  it('invites by mail over SMTP: the link works once, for the person invited, and the activity log says who did it', async () => {
    if (!server) return;
    const invited = await owner.call('POST', '/v1/members', { json: { email: 'bo@example.com', role: 'reviewer', display_name: 'Bo' } });
    expect(invited.status, invited.text).toBe(200);
    expect(invited.body.invitation).toEqual({ expires_at: expect.any(String), mailed: true });
    expect(invited.body.member).toMatchObject({ email: 'bo@example.com', role: 'reviewer', status: 'invited' });
    const mail = smtp.mails.find((m) => m.to.includes('bo@example.com'))!;
    expect(mail.text).toContain('/console/accept-invitation#token=');
    const token = tokenIn(mail.text)!;
    // Not a member yet: no log-in.
    expect(
      (await send(`${server.url}/v1/session`, 'POST', { json: { account: 'acme', email: 'bo@example.com', password: 'x' } })).status,
    ).toBe(401);
    const accepted = await send(`${server.url}/v1/invitations/accept`, 'POST', { json: { token, password: 'bo-password-long' } });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ account: 'acme', member: { status: 'active', role: 'reviewer' } });
    const again = await send(`${server.url}/v1/invitations/accept`, 'POST', { json: { token, password: 'bo-password-long' } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 'link_used', error: 'This invitation link was used already.' });
    // A token changed by one character is not the server's.
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect(
      (await send(`${server.url}/v1/invitations/accept`, 'POST', { json: { token: forged, password: 'bo-password-long' } })).body.code,
    ).toBe('link_invalid');
    const bo = await login(server, 'acme', 'bo@example.com', 'bo-password-long');
    expect(bo.reply.body.member.role).toBe('reviewer');
    const log = await activity('?action=member.*');
    expect(log.map((e) => e.action)).toEqual(expect.arrayContaining(['member.invited', 'member.joined']));
    expect(log.find((e) => e.action === 'member.invited')).toMatchObject({
      actor: { type: 'member', id: owner.memberId },
      target: { type: 'member', id: invited.body.member.member_id },
      details: { email: 'bo@example.com', role: 'reviewer' },
      address: '127.0.0.1',
      request_id: expect.any(String),
    });
  });

  it('refuses an expired invitation, naming its end; a second invitation voids the first', async () => {
    if (!server) return;
    const invited = await owner.call('POST', '/v1/members', { json: { email: 'late@example.com', role: 'viewer' } });
    const first = tokenIn(smtp.mails.filter((m) => m.to.includes('late@example.com')).at(-1)!.text)!;
    const resent = await owner.call('POST', `/v1/members/${invited.body.member.member_id}/invitation`);
    expect(resent.status, resent.text).toBe(200);
    expect(
      (await send(`${server.url}/v1/invitations/accept`, 'POST', { json: { token: first, password: 'late-password-long' } })).body.code,
    ).toBe('link_void');
    const second = tokenIn(smtp.mails.filter((m) => m.to.includes('late@example.com')).at(-1)!.text)!;
    clock.advance(8 * 86_400_000);
    const expired = await send(`${server.url}/v1/invitations/accept`, 'POST', { json: { token: second, password: 'late-password-long' } });
    expect(expired.status).toBe(400);
    expect(expired.body.code).toBe('link_expired');
    expect(expired.body.error).toMatch(/^This invitation link expired at \d{4}-/);
    // The owner's session lapsed meanwhile (idle and absolute): log in again.
    expect((await owner.call('GET', '/v1/session')).body.code).toBe('session_expired');
    owner = await login(server, 'acme', owner.email, owner.password);
  });

  it('changes roles within the rules: no such role, the last owner, owners only by owners; removal ends every session', async () => {
    if (!server) return;
    const admin = await memberWithRole(server, 'acme', owner, 'admin', mailed);
    const viewer = await memberWithRole(server, 'acme', owner, 'viewer', mailed);
    const bad = await owner.call('PATCH', `/v1/members/${viewer.memberId}`, { json: { role: 'superuser' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('role');
    const lastOwner = await owner.call('PATCH', `/v1/members/${owner.memberId}`, { json: { role: 'admin' } });
    expect(lastOwner.status).toBe(400);
    expect(lastOwner.body.code).toBe('last_owner');
    expect((await owner.call('DELETE', `/v1/members/${owner.memberId}`)).body.code).toBe('last_owner');
    // An admin cannot make an owner (nor itself).
    const raise = await admin.call('PATCH', `/v1/members/${admin.memberId}`, { json: { role: 'owner' } });
    expect(raise.status).toBe(403);
    expect(raise.body.error).toContain('Only an owner');
    // Nor can a key with the admin scope.
    expect(
      (
        await send(`${server.url}/v1/members/${viewer.memberId}`, 'PATCH', {
          json: { role: 'owner' },
          headers: { authorization: keyHeader },
        })
      ).status,
    ).toBe(403);
    const promoted = await admin.call('PATCH', `/v1/members/${viewer.memberId}`, { json: { role: 'manager' } });
    expect(promoted.status, promoted.text).toBe(200);
    // The member's session carries the new role from its next request: a manager may create a project.
    expect((await viewer.call('POST', '/v1/projects', { json: { type: 'categorization', name: 'from-viewer' } })).status).toBe(200);
    const entry = (await activity('?action=member.updated'))[0];
    expect(entry).toMatchObject({ actor: { type: 'member', id: admin.memberId }, details: { from: 'viewer', to: 'manager' } });
    const removed = await admin.call('DELETE', `/v1/members/${viewer.memberId}`);
    expect(removed.body.status).toBe('removed');
    expect((await viewer.call('GET', '/v1/session')).status).toBe(401);
    expect(
      (await send(`${server.url}/v1/session`, 'POST', { json: { account: 'acme', email: viewer.email, password: viewer.password } }))
        .status,
    ).toBe(401);
  });

  it('refuses a change made with the session cookie but without its CSRF token; reads need none', async () => {
    if (!server) return;
    const noToken = await send(`${server.url}/v1/projects`, 'POST', {
      json: { type: 'categorization', name: 'csrf' },
      headers: { cookie: owner.cookie },
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.code).toBe('csrf_token_missing');
    expect((await send(`${server.url}/v1/projects`, 'GET', { headers: { cookie: owner.cookie } })).status).toBe(200);
    // A session works in the mode its request names; a wrong name is 400.
    expect((await owner.call('GET', '/v1/tasks', { headers: { 'humantask-mode': 'staging' } })).status).toBe(400);
  });

  it('resets a forgotten password by mail; the same answer for an address that is no member', async () => {
    if (!server) return;
    const carol = await memberWithRole(server, 'acme', owner, 'manager', mailed);
    const before = smtp.mails.length;
    const unknown = await send(`${server.url}/v1/password_resets`, 'POST', { json: { account: 'acme', email: 'nobody@example.com' } });
    expect(unknown.body).toEqual({ requested: true });
    expect(smtp.mails.length).toBe(before);
    const asked = await send(`${server.url}/v1/password_resets`, 'POST', { json: { account: 'acme', email: carol.email.toUpperCase() } });
    expect(asked.body).toEqual({ requested: true });
    const mail = smtp.mails.at(-1)!;
    expect(mail.to).toEqual([carol.email]);
    const token = tokenIn(mail.text)!;
    const done = await send(`${server.url}/v1/password_resets/complete`, 'POST', { json: { token, password: 'carol-new-password' } });
    expect(done.status, done.text).toBe(200);
    // Every session of the member ended; the old password is gone.
    expect((await carol.call('GET', '/v1/session')).status).toBe(401);
    expect(
      (await send(`${server.url}/v1/session`, 'POST', { json: { account: 'acme', email: carol.email, password: carol.password } })).status,
    ).toBe(401);
    await login(server, 'acme', carol.email, 'carol-new-password');
    expect(
      (await send(`${server.url}/v1/password_resets/complete`, 'POST', { json: { token, password: 'carol-new-password' } })).body.code,
    ).toBe('link_used');
  });

  it('limits failed log-ins per member: past the burst, 429 before the password is checked', async () => {
    if (!server) return;
    const dan = await memberWithRole(server, 'acme', owner, 'viewer', mailed);
    const wrong = () =>
      send(`${server.url}/v1/session`, 'POST', { json: { account: 'acme', email: dan.email, password: 'wrong-password' } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await wrong()).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const right = await send(`${server.url}/v1/session`, 'POST', { json: { account: 'acme', email: dan.email, password: dan.password } });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('sets up TOTP, asks for a code at every password log-in, takes each code once; an owner can require it', async () => {
    if (!server) return;
    const erin = await memberWithRole(server, 'acme', owner, 'manager', mailed);
    const enrolled = await erin.call('POST', '/v1/me/totp');
    expect(enrolled.status, enrolled.text).toBe(200);
    expect(enrolled.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\//);
    const secret = enrolled.body.secret as string;
    expect((await erin.call('PUT', '/v1/me/totp', { json: { code: '000000' } })).body.code).toBe('totp_invalid');
    const confirmed = await erin.call('PUT', '/v1/me/totp', { json: { code: code(secret, clock.now()) } });
    expect(confirmed.body.totp_enabled).toBe(true);
    const noCode = await send(`${server.url}/v1/session`, 'POST', {
      json: { account: 'acme', email: erin.email, password: erin.password },
    });
    expect(noCode.status).toBe(401);
    expect(noCode.body.code).toBe('totp_required');
    clock.advance(30_000);
    const now = code(secret, clock.now());
    await login(server, 'acme', erin.email, erin.password, { totp_code: now });
    const replayed = await send(`${server.url}/v1/session`, 'POST', {
      json: { account: 'acme', email: erin.email, password: erin.password, totp_code: now },
    });
    expect(replayed.body.code).toBe('totp_invalid');
    // The secret is never shown again, and is not in the member's view.
    expect(JSON.stringify((await owner.call('GET', `/v1/members/${erin.memberId}`)).body)).not.toContain(secret);

    // Required: a member without TOTP (its sessions of before too) may, after the password, only set it up.
    const frank = await memberWithRole(server, 'acme', owner, 'viewer', mailed);
    expect(frank.reply.body.second_factor_setup_required).toBe(false);
    expect((await owner.call('PATCH', '/v1/account/security', { json: { require_totp: true } })).body.require_totp).toBe(true);
    expect((await login(server, 'acme', frank.email, frank.password)).reply.body.second_factor_setup_required).toBe(true);
    const blocked = await frank.call('GET', '/v1/tasks');
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('second_factor_setup_required');
    const own = (await frank.call('POST', '/v1/me/totp')).body.secret as string;
    expect((await frank.call('PUT', '/v1/me/totp', { json: { code: code(own, clock.now()) } })).status).toBe(200);
    expect((await frank.call('GET', '/v1/tasks')).status).toBe(200);
    // The owner, without TOTP, is held to it too, then turns the rule off.
    expect((await owner.call('PATCH', '/v1/account/security', { json: { require_totp: false } })).body.code).toBe(
      'second_factor_setup_required',
    );
    const ownerSecret = (await owner.call('POST', '/v1/me/totp')).body.secret as string;
    clock.advance(30_000);
    expect((await owner.call('PUT', '/v1/me/totp', { json: { code: code(ownerSecret, clock.now()) } })).status).toBe(200);
    expect((await owner.call('PATCH', '/v1/account/security', { json: { require_totp: false } })).status).toBe(200);
    const log = await activity('?action=account.security_updated');
    expect(log[0]).toMatchObject({ actor: { id: owner.memberId }, details: { require_totp: false } });
  });

  it('ends sessions: one, the others by a password change, all by log-out everywhere', async () => {
    if (!server) return;
    const gil = await memberWithRole(server, 'acme', owner, 'viewer', mailed);
    const laptop = await login(server, 'acme', gil.email, gil.password);
    const phone = await login(server, 'acme', gil.email, gil.password);
    const listed = await gil.call('GET', '/v1/sessions');
    expect(listed.body.docs.length).toBe(3);
    expect(listed.body.docs.filter((s: any) => s.current).map((s: any) => s.session_id)).toEqual([gil.reply.body.session_id]);
    expect((await gil.call('DELETE', `/v1/sessions/${phone.reply.body.session_id}`)).status).toBe(200);
    expect((await phone.call('GET', '/v1/session')).status).toBe(401);
    // Another member's session is not found.
    expect((await owner.call('DELETE', `/v1/sessions/${laptop.reply.body.session_id}`)).status).toBe(404);
    const everywhere = await gil.call('DELETE', '/v1/sessions');
    expect(everywhere.body.ended_sessions).toBe(2);
    expect(everywhere.headers.get('set-cookie')).toMatch(/^humantask_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    expect((await laptop.call('GET', '/v1/session')).status).toBe(401);
  });

  it('keeps every secret out of answers and logs: the session cookie is HttpOnly, the key secret shown once', async () => {
    if (!server) return;
    const cookie = owner.reply?.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
    const created = await owner.call('POST', '/v1/api_keys', { json: { name: 'ci', mode: 'test', scopes: ['tasks:read'] } });
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^test_/);
    const listed = await owner.call('GET', '/v1/api_keys');
    expect(listed.text).not.toContain(secret);
    expect(listed.body.docs[0]).toMatchObject({
      name: 'ci',
      prefix: secret.slice(0, 13),
      created_by: { type: 'member', id: owner.memberId },
    });
    expect((await send(`${server.url}/v1/tasks`, 'GET', { headers: { authorization: basicAuth(secret) } })).status).toBe(200);
    expect(
      (
        await send(`${server.url}/v1/projects`, 'POST', {
          json: { type: 'categorization', name: 'k' },
          headers: { authorization: basicAuth(secret) },
        })
      ).status,
    ).toBe(403);
    // Revoked: at once.
    await owner.call('DELETE', `/v1/api_keys/${created.body.key.key_id}`);
    expect((await send(`${server.url}/v1/tasks`, 'GET', { headers: { authorization: basicAuth(secret) } })).status).toBe(401);
    const log = await activity('?target_type=api_key');
    expect(log.map((e) => e.action)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(JSON.stringify(log)).not.toContain(secret);
  });
});
