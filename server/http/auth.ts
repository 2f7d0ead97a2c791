// HTTP Basic authentication (the API key is the user name, the password is empty) and the per-key
// rate limit. The key decides the account and the mode.
import type { RequestHandler } from 'express';
import { hashKey } from '../domain/accounts.ts';
import type { Caller } from '../domain/model.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import { HttpError, authChallenge } from './errors.ts';

export function authenticate(uow: UnitOfWork): RequestHandler {
  return async (req, res, next) => {
    try {
      const header = req.headers.authorization ?? '';
      const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
      const key = m ? Buffer.from(m[1]!, 'base64').toString('utf8').replace(/:.*$/s, '') : '';
      const keyHash = key ? hashKey(key) : '';
      const found = key ? await uow.accounts.authenticate(keyHash) : null;
      if (!found) {
        throw new HttpError(401, 'A valid API key is required (HTTP Basic, the key as user name, empty password).', authChallenge);
      }
      res.locals.caller = found satisfies Caller;
      res.locals.keyHash = keyHash;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Token bucket per API key: `burst` requests at once, refilled at `perSecond`. */
export function rateLimit(perSecond: number, burst: number): RequestHandler {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return (req, res, next) => {
    if (burst <= 0) return next();
    const key = res.locals.keyHash;
    const now = Date.now();
    const b = buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    buckets.set(key, b);
    if (b.tokens < 1) {
      const wait = Math.max(1, Math.ceil((1 - b.tokens) / perSecond));
      return next(new HttpError(429, `Too many requests; retry after ${wait} second${wait === 1 ? '' : 's'}.`, { 'Retry-After': String(wait) }));
    }
    b.tokens -= 1;
    next();
  };
}
