// Authentication of the worker API (/worker/v1): `Authorization: Bearer <token>`, a worker's
// session or API token. An account's API key (HTTP Basic) is not a worker token: 401. Unknown
// tokens count towards the per-address limit of failed authentications, as unknown API keys do.
import type { RequestHandler } from 'express';
import { wallClock, type Clock } from '../../domain/clock.ts';
import { checkToken, principalOf, type IdentitySettings, type IdentityStore } from '../../domain/workforce/identity.ts';
import type { AuthFailureLimit } from '../auth.ts';
import { authFailureLimit } from '../auth.ts';
import { HttpError } from '../errors.ts';
import { bearerChallenge } from './errors.ts';

/** Operations that need no token: logging in (its failures count in the login handler). */
const open = new Set(['POST /v1/session']);
/**
 * The media route (media.ts): opened by the assignment's lease token in the query, since `<img>`
 * and `<video>` send no header; a token that opens nothing counts as a failed authentication
 * (worker-app.ts). Its rate-limit bucket is the assignment's.
 */
const mediaRoute = /^\/v1\/assignments\/([^/]+)\/media$/;

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

/** Answers 429 when this address failed too often (shared with the other APIs' key checks). */
function refuseBlockedAddress(failures: AuthFailureLimit, address: string): void {
  const wait = failures.retryAfter(address);
  if (wait > 0)
    throw new HttpError(
      429,
      `Too many failed authentications from this address; retry after ${wait} second${wait === 1 ? '' : 's'}.`,
      { 'Retry-After': String(wait) },
      'rate_limited',
    );
}

export function authenticateWorker(
  store: IdentityStore,
  settings: IdentitySettings,
  failures: AuthFailureLimit = authFailureLimit(0, 0),
  now: Clock = wallClock,
): RequestHandler {
  return async (req, res, next) => {
    try {
      const address = req.socket.remoteAddress ?? '';
      refuseBlockedAddress(failures, address);
      if (open.has(`${req.method} ${req.path}`)) {
        // The rate limit's bucket of anonymous log-ins: per address.
        res.locals.keyHash = `worker-login:${address}`;
        return next();
      }
      const media = req.method === 'GET' ? mediaRoute.exec(req.path) : null;
      if (media) {
        res.locals.keyHash = `worker-media:${media[1]}`;
        return next();
      }
      const token = bearerTokenOf(req.rawHeaders);
      if (!token) throw unauthenticated();
      const checked = await checkToken(store, token, settings, now());
      if (!checked.ok) {
        failures.failed(address);
        if (checked.reason === 'session_expired') throw unauthenticated('The session has expired; log in again.', 'session_expired');
        if (checked.reason === 'worker_removed')
          throw unauthenticated('This worker was removed; its tokens no longer work.', 'worker_removed');
        throw unauthenticated();
      }
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
