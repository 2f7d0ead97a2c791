// Authentication of the worker API (/worker/v1): `Authorization: Bearer <token>`, a worker's
// session or API token. An account's API key (HTTP Basic) is not a worker token: 401.
import type { RequestHandler } from 'express';
import { HttpError } from '../errors.ts';
import { bearerChallenge } from './errors.ts';

/** Operations that need no token: logging in. */
const open = new Set(['POST /v1/session']);

/**
 * The Bearer token of a request, or null. Refused like API keys are: a second Authorization header
 * (a proxy may have read the other one), anything but Bearer.
 */
export function bearerTokenOf(rawHeaders: string[]): string | null {
  const at = rawHeaders.flatMap((h, i) => (i % 2 === 0 && h.toLowerCase() === 'authorization' ? [i] : []));
  if (at.length !== 1) return null;
  const m = /^Bearer\s+([A-Za-z0-9_-]{1,200})\s*$/i.exec(rawHeaders[at[0]! + 1]!);
  return m ? m[1]! : null;
}

export const unauthenticated = () =>
  new HttpError(401, 'A valid worker token is required (Authorization Bearer, a session or API token).', bearerChallenge, 'unauthenticated');

/** Until worker identity lands: a request without a Bearer token is refused; the operations answer 501. */
export function authenticateWorker(): RequestHandler {
  return (req, res, next) => {
    if (open.has(`${req.method} ${req.path}`)) return next();
    const token = bearerTokenOf(req.rawHeaders);
    if (!token) return next(unauthenticated());
    res.locals.keyHash = `worker-token:${token}`;
    next();
  };
}
