// Authentication of the worker API (/worker/v1): `Authorization: Bearer <token>`, a worker's
// session or API token. An account's API key (HTTP Basic) is not a worker token: 401. Unknown
// tokens count towards the per-address limit of failed authentications, as unknown API keys do;
// log-ins are counted before their password is checked (loginLimits).
import type { RequestHandler } from 'express';
import { wallClock, type Clock } from '../../domain/clock.ts';
import { sha256 } from '../../domain/ids.ts';
import { checkToken, principalOf, type IdentitySettings, type IdentityStore } from '../../domain/workforce/identity.ts';
import type { HashGate } from '../../domain/workforce/passwords.ts';
import type { AuthFailureLimit, FailureLimit } from '../auth.ts';
import { authFailureLimit } from '../auth.ts';
import type { ClientAddress } from '../client-address.ts';
import { HttpError } from '../errors.ts';
import { passwordHashing } from '../hashing.ts';
import { bearerChallenge } from './errors.ts';

/** Operations that need no token: logging in (its failures count in loginLimits). */
const open = new Set(['POST /v1/session']);
/**
 * The media route (media.ts): opened by the assignment's lease token in the query, since `<img>`
 * and `<video>` send no header; a token that opens nothing counts as a failed authentication
 * (worker-app.ts). Its rate-limit bucket is the assignment's.
 */
const mediaRoute = /^\/v1\/assignments\/([^/]+)\/media$/;

const peerAddress: ClientAddress = (req) => req.socket.remoteAddress ?? '';

/**
 * The Bearer token of a request, or null. Refused like API keys are: a second Authorization header
 * (a proxy may have read the other one), anything but Bearer.
 */
function bearerTokenOf(rawHeaders: string[]): string | null {
  const at = rawHeaders.flatMap((h, i) => (i % 2 === 0 && h.toLowerCase() === 'authorization' ? [i] : []));
  if (at.length !== 1) return null;
  const m = /^Bearer\s+([A-Za-z0-9_-]{1,200})\s*$/i.exec(rawHeaders[at[0]! + 1]!);
  return m ? m[1]! : null;
}

export const unauthenticated = (
  message = 'A valid worker token is required (Authorization Bearer, a session or API token).',
  code = 'unauthenticated',
) => new HttpError(401, message, bearerChallenge, code);

const tooMany = (what: string, wait: number) =>
  new HttpError(
    429,
    `Too many ${what}; retry after ${wait} second${wait === 1 ? '' : 's'}.`,
    { 'Retry-After': String(wait) },
    'rate_limited',
  );

export function authenticateWorker(
  store: IdentityStore,
  settings: IdentitySettings,
  failures: AuthFailureLimit = authFailureLimit(0, 0),
  now: Clock = wallClock,
  clientAddress: ClientAddress = peerAddress,
): RequestHandler {
  return async (req, res, next) => {
    try {
      const address = clientAddress(req);
      if (open.has(`${req.method} ${req.path}`)) {
        const wait = failures.retryAfter(address);
        if (wait > 0) throw tooMany('failed authentications from this address', wait);
        // The rate limit's bucket of anonymous log-ins: per address.
        res.locals.keyHash = `worker-login:${address}`;
        return next();
      }
      const media = req.method === 'GET' ? mediaRoute.exec(req.path) : null;
      if (media) {
        // Its credential, a lease token, is checked by the route: a blocked address is refused first.
        const wait = failures.retryAfter(address);
        if (wait > 0) throw tooMany('failed authentications from this address', wait);
        res.locals.keyHash = `worker-media:${media[1]}`;
        return next();
      }
      const token = bearerTokenOf(req.rawHeaders);
      // A blocked address: 429 before any lookup, unless the token worked before.
      const credential = token ? `worker-token:${sha256(token)}` : undefined;
      const wait = failures.retryAfter(address, credential);
      if (wait > 0) throw tooMany('failed authentications from this address', wait);
      if (!token || !credential) throw unauthenticated();
      const checked = await checkToken(store, token, settings, now());
      if (!checked.ok) {
        failures.disproven(credential);
        const over = await failures.failed(address);
        if (over > 0) throw tooMany('failed authentications from this address', over);
        if (checked.reason === 'session_expired') throw unauthenticated('The session has expired; log in again.', 'session_expired');
        if (checked.reason === 'worker_removed')
          throw unauthenticated('This worker was removed; its tokens no longer work.', 'worker_removed');
        throw unauthenticated();
      }
      failures.proven(credential);
      res.locals.worker = principalOf(checked.worker);
      res.locals.workerToken = { tokenId: checked.token.tokenId, kind: checked.token.kind };
      // One rate-limit bucket per worker, whichever of their tokens is used.
      res.locals.keyHash = `worker:${checked.worker.workerId}`;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * The limits of a log-in (`POST /v1/session`, after its body was checked against the contract):
 * the attempt is counted as a failure of its client address and of its e-mail address before its
 * password is checked, so that an attempt over either limit is refused (429) without hashing
 * anything; then it waits for its turn at the password hashing (passwordHashing). An answer other
 * than 401 gives both counts back: only a wrong password (or address) is a failure.
 */
export function loginLimits(
  failures: AuthFailureLimit,
  emails: FailureLimit,
  gate: HashGate,
  clientAddress: ClientAddress = peerAddress,
): RequestHandler {
  const hashing = passwordHashing(gate, (req) => {
    const email = String(req.body?.email ?? '').toLowerCase();
    return [`address:${clientAddress(req)}`, `email:${email}`];
  });
  return async (req, res, next) => {
    if (req.method !== 'POST' || req.path !== '/v1/session') return next();
    try {
      const address = clientAddress(req);
      const email = String(req.body?.email ?? '').toLowerCase();
      const blocked = failures.retryAfter(address);
      if (blocked > 0) throw tooMany('failed authentications from this address', blocked);
      const locked = emails.retryAfter(email);
      if (locked > 0) throw tooMany('failed log-ins for this e-mail address', locked);
      const overAddress = await failures.failed(address);
      if (overAddress > 0) throw tooMany('failed authentications from this address', overAddress);
      const overEmail = await emails.failed(email);
      if (overEmail > 0) {
        await failures.forgive(address);
        throw tooMany('failed log-ins for this e-mail address', overEmail);
      }
      // Counted: unless the answer says the password (or address) was wrong, the counts go back.
      res.once('finish', () => {
        if (res.statusCode === 401) return;
        void failures.forgive(address).catch(() => undefined);
        void emails.forgive(email).catch(() => undefined);
      });
      hashing(req, res, next);
    } catch (err) {
      next(err);
    }
  };
}
