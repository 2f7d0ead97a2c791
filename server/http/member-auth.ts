// Members' sessions on the API (issue 34): the `humantask_session` cookie instead of an API key. The
// session decides the account; the `Humantask-Mode` header the mode (test when absent); every
// state-changing request also carries the session's CSRF token (`X-CSRF-Token`), so that a page of
// another site that makes the browser send the cookie changes nothing. Cookies are set HttpOnly,
// SameSite (Strict for the session, Lax for a single sign-on attempt, which a provider's redirect
// brings back) and Secure when the server is reached over TLS.
import type { Request, Response } from 'express';
import { csrfMatches, checkSession, type SessionSettings } from '../domain/identity/sessions.ts';
import type { Clock } from '../domain/clock.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import { HttpError, authChallenge } from './errors.ts';

export const sessionCookieName = 'humantask_session';
export const ssoCookieName = 'humantask_sso';

/** A cookie of the request's Cookie header, or undefined. */
export function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** Whether the server is reached over TLS: its public URL is https, or this connection is. */
export const overTls = (req: Request, publicUrl: string) => publicUrl.startsWith('https:') || req.secure;

export function setCookie(
  name: string,
  value: string,
  options: { path: string; maxAgeSeconds: number; sameSite: 'Strict' | 'Lax'; secure: boolean },
): string {
  return [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    'HttpOnly',
    `SameSite=${options.sameSite}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

export const clearCookie = (name: string, path: string, secure: boolean) =>
  setCookie(name, '', { path, maxAgeSeconds: 0, sameSite: 'Strict', secure });

const unsafe = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface MemberAuthDeps {
  uow: UnitOfWork;
  settings: SessionSettings;
  now: Clock;
}

/**
 * Authenticates a request by its session cookie: sets caller, principal and the rate limit's key,
 * or throws 401 (no such session), 403 (no CSRF token on a change) or 400 (a mode that is neither).
 */
export async function authenticateSession(deps: MemberAuthDeps, req: Request, res: Response, secret: string): Promise<boolean> {
  const now = deps.now();
  const checked = await checkSession(deps.uow, secret, deps.settings, now);
  if (!checked.ok) {
    if (checked.reason === 'expired')
      throw new HttpError(401, 'The session has lapsed; log in again (POST /v1/session).', authChallenge, 'session_expired');
    return false;
  }
  const { session, member } = checked;
  if (unsafe.has(req.method) && !csrfMatches(secret, req.get('x-csrf-token')))
    throw new HttpError(
      403,
      "A request made with the session cookie that changes something needs the session's CSRF token in the X-CSRF-Token header.",
      {},
      'csrf_token_missing',
    );
  const modeHeader = req.get('humantask-mode');
  if (modeHeader !== undefined && modeHeader !== 'test' && modeHeader !== 'live')
    throw new HttpError(400, `Humantask-Mode must be test or live, not "${modeHeader.slice(0, 20)}".`);
  const mode = modeHeader === 'live' ? 'live' : 'test';
  const [account, rules] = await Promise.all([
    deps.uow.accounts.findById(session.accountId),
    deps.uow.accountIdentity.get(session.accountId),
  ]);
  if (!account) return false;
  const { liveRequestCount: _count, testKeyHash: _t, liveKeyHash: _l, ...plain } = account;
  res.locals.caller = { account: plain, mode };
  res.locals.principal = {
    kind: 'member',
    memberId: member.memberId,
    email: member.email,
    role: member.role,
    sessionId: session.sessionId,
    secret,
    secondFactorSetupRequired: rules.requireTotp && session.via === 'password' && !member.totpSecret,
  };
  res.locals.keyHash = `member:${session.sessionId}`;
  res.locals.requester.mode = mode;
  // A live request is counted whoever makes it.
  if (mode === 'live') await deps.uow.accounts.countLiveRequest(account.accountId);
  return true;
}
