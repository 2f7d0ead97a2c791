// HTTP Basic authentication (the API key is the user name, the password is empty) and the per-key
// rate limit. The key decides the account and the mode.
import type { RequestHandler } from 'express';
import { hashKey } from '../domain/accounts.ts';
import type { Caller } from '../domain/model.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import { HttpError, authChallenge } from './errors.ts';

/**
 * The API key of a request, or null. Refused: a second Authorization header (Node keeps only the
 * first, and a proxy may have read the other one), a non-empty password (it would be ignored, so a
 * secret put there by mistake must not silently authenticate), anything but Basic.
 */
function apiKeyOf(rawHeaders: string[]): string | null {
  const values = rawHeaders.filter((_, i) => i % 2 === 0 && rawHeaders[i]!.toLowerCase() === 'authorization').length;
  if (values !== 1) return null;
  const header = rawHeaders[rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'authorization') + 1]!;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return decoded || null;
  return colon === decoded.length - 1 && colon > 0 ? decoded.slice(0, colon) : null;
}

/**
 * Unknown keys per client address, in memory (a token bucket each): a blocked address is answered
 * 429 before any database lookup. Only a failure that cost a lookup counts (a request without a key,
 * or with a malformed header, costs nothing); a successful authentication does not refill the bucket.
 */
export function authFailureLimit(perSecond: number, burst: number, maxAddresses = 100_000) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const level = (address: string, now: number) => {
    const b = buckets.get(address);
    if (!b) return burst;
    return Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
  };
  return {
    /** Seconds to wait before this address may try again, or 0. */
    retryAfter(address: string): number {
      if (burst <= 0) return 0;
      const tokens = level(address, Date.now());
      return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond));
    },
    failed(address: string) {
      if (burst <= 0) return;
      const now = Date.now();
      const tokens = level(address, now) - 1;
      buckets.delete(address); // re-inserted last: the map's order is the least recently failed first
      buckets.set(address, { tokens, at: now });
      // Bounded memory under a spread-out attack: the address that failed longest ago is forgotten.
      if (buckets.size > maxAddresses) buckets.delete(buckets.keys().next().value!);
    },
  };
}

export type AuthFailureLimit = ReturnType<typeof authFailureLimit>;

export function authenticate(uow: UnitOfWork, failures: AuthFailureLimit = authFailureLimit(0, 0)): RequestHandler {
  return async (req, res, next) => {
    try {
      const address = req.socket.remoteAddress ?? '';
      const wait = failures.retryAfter(address);
      if (wait > 0) {
        throw new HttpError(429, `Too many failed authentications from this address; retry after ${wait} second${wait === 1 ? '' : 's'}.`, { 'Retry-After': String(wait) });
      }
      const key = apiKeyOf(req.rawHeaders);
      const keyHash = key ? hashKey(key) : '';
      const found = key ? await uow.accounts.authenticate(keyHash) : null;
      if (!found) {
        if (key) failures.failed(address);
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
