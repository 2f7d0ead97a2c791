// The members the suite makes (issue 34, tag Identity), through the API only, as a person would:
// invited with the main key, the invitation accepted through the link the server shows when it
// mails nothing (run the suite against a server without SMTP_URL), logged in with POST /v1/session.
// Their passwords are random (nobody who reads this code can log in as one), and the run removes
// the members it invited when it ends (runner.ts). The runner calls the operations that only a
// member's session may call with the check's member (`CheckContext.member`); personalize
// (fixtures.ts) fills the fields of Identity requests that name what only the server hands out
// (tokens of links, a member's credentials, TOTP codes) from here.
import { randomBytes } from 'node:crypto';
import { TOTP, URI } from 'otpauth';
import { expectStatus, expectThat, type CheckContext, type MemberSession, type SuiteMember } from './types.ts';

/** A new password of 30 characters. */
const newPassword = () => `suite-${randomBytes(18).toString('base64url')}`;

/** The token of an invitation or password link: the part after `#token=`. */
function linkToken(url: unknown, what: string): string {
  expectThat(
    typeof url === 'string',
    `the ${what} link is shown when the server mails nothing: run the suite against a server without SMTP_URL`,
    url,
  );
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token');
  expectThat(token, `the ${what} link ends in #token=...`, url);
  return token;
}

/** A person invited with the main key (scope admin): the member, still `invited`, and its invitation's token. */
export async function invite(ctx: CheckContext, role = 'viewer'): Promise<{ memberId: string; email: string; token: string }> {
  const email = `${ctx.unique(role)}@example.com`.toLowerCase();
  const invited = await ctx.call('POST', '/v1/members', { key: 'main', json: { email, role } });
  expectStatus(invited, 200, `inviting a ${role} with the main key (scope admin)`);
  return { memberId: String(invited.body?.member?.member_id), email, token: linkToken(invited.body?.invitation?.url, 'invitation') };
}

/** Logs a member in (POST /v1/session, no key): a new session of the member. */
export async function logIn(
  ctx: CheckContext,
  credentials: { account: string; email: string; password: string; totp_code?: string },
): Promise<MemberSession> {
  const { account, email, password, totp_code } = credentials;
  const json = { account, email, password, ...(totp_code === undefined ? {} : { totp_code }) };
  const login = await ctx.call('POST', '/v1/session', { key: 'none', json });
  expectStatus(login, 200, `logging ${credentials.email} in`);
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('humantask_session='))
    ?.split(';')[0];
  expectThat(cookie, 'the log-in sets the humantask_session cookie', Object.fromEntries(login.headers));
  return { cookie, csrfToken: String(login.body?.csrf_token), sessionId: String(login.body?.session_id) };
}

/** A member with `role`: invited, the invitation accepted with a random password, logged in. */
export async function makeMember(ctx: CheckContext, role = 'viewer'): Promise<SuiteMember> {
  const { memberId, email, token } = await invite(ctx, role);
  const password = newPassword();
  const accepted = await ctx.call('POST', '/v1/invitations/accept', { key: 'none', json: { token, password } });
  expectStatus(accepted, 200, 'accepting the invitation');
  const account = String(accepted.body?.account);
  return { memberId, email, password, account, role, session: await logIn(ctx, { account, email, password }) };
}

/** With `--profile mock`: the contract's example member, with a session the mock takes (it checks only that there is one). */
export function mockMember(): SuiteMember {
  return {
    memberId: 'mbr_65f1c0a2b3c4d5e6f7a8b901',
    email: 'ana@example.com',
    password: 'correct-horse-battery-staple',
    account: 'acme',
    role: 'viewer',
    session: { cookie: 'humantask_session=conformance-mock', csrfToken: 'conformance-mock', sessionId: 'mss_65f1c0a2b3c4d5e6f7a8b901' },
  };
}

/** A password link (POST /v1/members/{memberId}/password_reset, main key) of a new member who accepted its invitation: its token. */
async function passwordLinkToken(ctx: CheckContext): Promise<string> {
  const { memberId, token } = await invite(ctx);
  expectStatus(
    await ctx.call('POST', '/v1/invitations/accept', { key: 'none', json: { token, password: newPassword() } }),
    200,
    'accepting the invitation',
  );
  const link = await ctx.call('POST', `/v1/members/${memberId}/password_reset`, { key: 'main' });
  expectStatus(link, 200, "asking for a member's password link with the main key");
  return linkToken(link.body?.url, 'password');
}

/** The session's credentials, as a request names them. */
const withSession = (session: MemberSession) => ({
  key: 'none' as const,
  headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken },
});

/** Begins a TOTP set-up of the session's member (POST /v1/me/totp): its authenticator, as the otpauth URI describes it. */
async function beginTotp(ctx: CheckContext, session: MemberSession): Promise<TOTP> {
  const begun = await ctx.call('POST', '/v1/me/totp', withSession(session));
  expectStatus(begun, 200, 'beginning a TOTP set-up');
  const authenticator = URI.parse(String(begun.body?.otpauth_uri));
  expectThat(authenticator instanceof TOTP, 'the set-up answers a TOTP otpauth:// URI', begun.body);
  return authenticator;
}

/** Turns TOTP on for the session's member (begun, then confirmed with a current code): its authenticator. */
async function turnOnTotp(ctx: CheckContext, session: MemberSession): Promise<TOTP> {
  const authenticator = await beginTotp(ctx, session);
  const confirmed = await ctx.call('PUT', '/v1/me/totp', { ...withSession(session), json: { code: authenticator.generate() } });
  expectStatus(confirmed, 200, 'confirming the TOTP set-up with a current code');
  return authenticator;
}

/**
 * The code of the step after the current one: a code is taken once, and one step of drift is
 * allowed (the contract's totp_code), so it works right after the current one was used.
 */
const nextCode = (authenticator: TOTP) => authenticator.generate({ timestamp: Date.now() + authenticator.period * 1000 });

/**
 * The fields of an Identity request that name what only the server hands out, made real: the token
 * of an invitation or a password link, a member's credentials, a current TOTP code. A request that
 * changes the member's password or second factor gets a fresh member: each finds the member as its
 * example does. Other operations' bodies come back as they are.
 */
export async function realIdentityFields(
  ctx: CheckContext,
  operationId: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const given = (field: string) => typeof body[field] === 'string';
  switch (operationId) {
    case 'loginMember': {
      if (given('totp_code')) {
        // A member of its own: the check's member logs in without a code.
        const { account, email, password, session } = await makeMember(ctx);
        const authenticator = await turnOnTotp(ctx, session);
        return { ...body, account, email, password, totp_code: nextCode(authenticator) };
      }
      const { account, email, password } = await ctx.member();
      return { ...body, account, email, password };
    }
    case 'acceptInvitation':
      return given('token') ? { ...body, token: (await invite(ctx)).token } : body;
    case 'completePasswordReset':
      return given('token') ? { ...body, token: await passwordLinkToken(ctx) } : body;
    case 'setMemberPassword':
      return given('current_password') ? { ...body, current_password: (await ctx.member({ fresh: true })).password } : body;
    case 'confirmTotpEnrollment':
      if (!given('code')) return body;
      return { ...body, code: (await beginTotp(ctx, (await ctx.member({ fresh: true })).session)).generate() };
    case 'deleteOwnTotp':
      if (!given('code')) return body;
      return { ...body, code: nextCode(await turnOnTotp(ctx, (await ctx.member({ fresh: true })).session)) };
    default:
      return body;
  }
}
