// Members' console sessions (issue 34): log-in with a password (and TOTP), or through single sign-on
// (sso.ts); a 256-bit secret in an HttpOnly cookie, only its SHA-256 stored; an idle lifetime renewed
// by use and an absolute one; a CSRF token derived from the secret.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256 } from '../ids.ts';
import { recordActivity, type NewActivity, type RequestOrigin } from './activity.ts';
import type { Account } from '../model.ts';
import type { Repositories, UnitOfWork } from '../ports.ts';
import { acceptTotp } from './members.ts';
import type { AccountIdentityRecord, MemberRecord, MemberSessionRecord } from './model.ts';
import { checkMemberPassword, type PasswordRules } from './passwords.ts';

export interface SessionSettings extends PasswordRules {
  /** A session lapses after this long without use (MEMBER_SESSION_IDLE_SECONDS). */
  idleMs: number;
  /** ... and this long after log-in, however used (MEMBER_SESSION_MAX_SECONDS). */
  maxMs: number;
}

const newSessionId = () => 'mss_' + randomBytes(12).toString('hex');
const newSecret = () => 'hms_' + randomBytes(32).toString('base64url');
export const hashSessionSecret = (secret: string) => sha256(secret);

/** The session's CSRF token: an HMAC of the cookie's secret (nothing stored; a stolen token alone opens nothing). */
export const csrfTokenOf = (secret: string) => createHmac('sha256', secret).update('humantask csrf').digest('base64url');

export function csrfMatches(secret: string, token: string | undefined): boolean {
  if (!token) return false;
  const expected = Buffer.from(csrfTokenOf(secret));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export interface SessionGrant {
  secret: string;
  session: MemberSessionRecord;
  member: MemberRecord;
}

export interface ClientInfo {
  address?: string | undefined;
  userAgent?: string | undefined;
}

/** Starts a session for a member (who logged in one way or another), in the caller's transaction. */
export async function startSession(
  repos: Repositories,
  member: MemberRecord,
  via: 'password' | 'sso',
  client: ClientInfo,
  settings: SessionSettings,
  now: Date,
): Promise<SessionGrant> {
  const secret = newSecret();
  const absoluteExpiresAt = new Date(now.getTime() + settings.maxMs);
  const session: MemberSessionRecord = {
    sessionId: newSessionId(),
    memberId: member.memberId,
    accountId: member.accountId,
    tokenHash: hashSessionSecret(secret),
    via,
    createdAt: now,
    expiresAt: new Date(Math.min(now.getTime() + settings.idleMs, absoluteExpiresAt.getTime())),
    absoluteExpiresAt,
    lastUsedAt: now,
    endedAt: null,
    address: client.address?.slice(0, 64) ?? null,
    userAgent: client.userAgent?.slice(0, 256) ?? null,
  };
  await repos.memberSessions.insert(session);
  const loggedIn: MemberRecord = { ...member, lastLoginAt: now };
  await repos.members.update(loggedIn);
  return { secret, session, member: loggedIn };
}

/** The activity entry of a log-in: the member, their new session. */
export const sessionCreated = (grant: SessionGrant, now: Date, origin?: RequestOrigin): NewActivity => ({
  accountId: grant.member.accountId,
  action: 'session.created',
  actor: { type: 'member', id: grant.member.memberId, name: grant.member.email },
  target: { type: 'session', id: grant.session.sessionId },
  at: now,
  origin,
  details: { via: grant.session.via },
});

export type LoginOutcome =
  | { ok: true; grant: SessionGrant; account: Account; rules: AccountIdentityRecord }
  | { ok: false; reason: 'failed' | 'totp_required' | 'totp_invalid' | 'password_login_disabled' };

/**
 * A password log-in: a session, or why not. An unknown account or address, a wrong password, a
 * member who is not active or has no password are all 'failed', and cost one password check each.
 */
export async function passwordLogin(
  uow: UnitOfWork,
  input: { account: string; email: string; password: string; totpCode?: string | undefined },
  client: ClientInfo & { origin?: RequestOrigin },
  settings: SessionSettings,
  now: Date,
): Promise<LoginOutcome> {
  const account = await uow.accounts.findByName(input.account);
  const member = account ? await uow.members.findByEmail(account.accountId, input.email) : null;
  const passwordOk = await checkMemberPassword(input.password, member?.passwordHash ?? null, settings);
  if (!account || !member || !passwordOk || member.status !== 'active') return { ok: false, reason: 'failed' };
  const rules = await uow.accountIdentity.get(account.accountId);
  if (!rules.passwordLogin) return { ok: false, reason: 'password_login_disabled' };
  return uow.transaction(async (repos): Promise<LoginOutcome> => {
    let current = (await repos.members.get(account.accountId, member.memberId, { forUpdate: true })) ?? member;
    if (current.totpSecret) {
      if (!input.totpCode) return { ok: false, reason: 'totp_required' };
      const step = acceptTotp(current, input.totpCode, now);
      if (step === null) return { ok: false, reason: 'totp_invalid' };
      current = { ...current, totpLastStep: step };
    }
    const grant = await startSession(repos, current, 'password', client, settings, now);
    await recordActivity(repos, sessionCreated(grant, now, client.origin));
    return { ok: true, grant, account, rules };
  });
}

export type SessionCheck =
  | { ok: true; session: MemberSessionRecord; member: MemberRecord; secret: string }
  | { ok: false; reason: 'unknown' | 'expired' };

/** The session of a cookie's secret; renewed by use (written at most once a minute). */
export async function checkSession(uow: UnitOfWork, secret: string, settings: SessionSettings, now: Date): Promise<SessionCheck> {
  const found = await uow.memberSessions.findByTokenHash(hashSessionSecret(secret));
  if (!found || found.session.endedAt || found.member.status !== 'active') return { ok: false, reason: 'unknown' };
  const { session, member } = found;
  if (session.expiresAt.getTime() <= now.getTime() || session.absoluteExpiresAt.getTime() <= now.getTime())
    return { ok: false, reason: 'expired' };
  const touchEveryMs = Math.min(60_000, settings.idleMs / 20);
  if (!session.lastUsedAt || now.getTime() - session.lastUsedAt.getTime() >= touchEveryMs) {
    const expiresAt = new Date(Math.min(now.getTime() + settings.idleMs, session.absoluteExpiresAt.getTime()));
    await uow.memberSessions.touch(session.sessionId, now, expiresAt);
    session.lastUsedAt = now;
    session.expiresAt = expiresAt;
  }
  return { ok: true, session, member, secret };
}
