// Idempotency-Key on creation requests: a request whose key was seen gets the saved answer again
// (status and body byte for byte, `Idempotent-Replayed: true`) and creates nothing.
import type { RequestHandler, Response } from 'express';
import { sha256 } from '../domain/ids.ts';
import type { Caller } from '../domain/model.ts';
import type { SavedAnswer, UnitOfWork } from '../domain/ports.ts';
import { HttpError } from './errors.ts';

export interface IdempotencyContext {
  key: string;
  fingerprint: string;
  ttlMs: number;
}

const validKey = /^[\x21-\x7E]{1,255}$/;

/** JSON with object keys sorted, so that key order does not change the fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function fingerprintOf(method: string, path: string, body: unknown): string {
  return sha256(`${method}\n${path}\n${canonical(body)}`);
}

export function replay(res: Response, saved: SavedAnswer) {
  res.setHeader('Idempotent-Replayed', 'true');
  res.status(saved.statusCode).type('application/json').send(saved.body);
}

/** The answer saved for a key, checked against this request: same mode, same request, or 409. */
export function matchingAnswer(saved: SavedAnswer, caller: Caller, fingerprint: string): SavedAnswer {
  if (saved.mode !== caller.mode || saved.fingerprint !== fingerprint) {
    throw new HttpError(409, 'The Idempotency-Key was already used for a different request.');
  }
  return saved;
}

/** Before the creation handler: replay a saved answer, or note the key for the handler. */
export function idempotency(uow: UnitOfWork, ttlMs: number, isCreation: (path: string) => boolean): RequestHandler {
  return async (req, res, next) => {
    try {
      const key = req.get('Idempotency-Key');
      if (key === undefined || req.method !== 'POST' || !isCreation(req.path)) return next();
      if (!validKey.test(key)) throw new HttpError(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
      const caller = res.locals.caller as Caller;
      const fingerprint = fingerprintOf(req.method, req.baseUrl + req.path, req.body);
      const saved = await uow.idempotency.find(caller.account.accountId, key);
      if (saved && saved.expiresAt > new Date()) return replay(res, matchingAnswer(saved, caller, fingerprint));
      if (saved) await uow.idempotency.deleteExpired(new Date());
      res.locals.idempotency = { key, fingerprint, ttlMs } satisfies IdempotencyContext;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Saves an error answer under the request's key (answers after authentication, not 401/429/5xx). */
export function saveErrorAnswer(uow: UnitOfWork) {
  return async (res: Response, statusCode: number, body: string) => {
    const idem = res.locals.idempotency as IdempotencyContext | undefined;
    if (!idem || ![400, 402, 404, 409].includes(statusCode)) return;
    const caller = res.locals.caller as Caller;
    const now = new Date();
    await uow.idempotency.claim({
      accountId: caller.account.accountId,
      key: idem.key,
      mode: caller.mode,
      fingerprint: idem.fingerprint,
      statusCode,
      body,
      createdAt: now,
      expiresAt: new Date(now.getTime() + idem.ttlMs),
    });
  };
}

/**
 * The creation lost the race for its key to a concurrent request with the same key (the rules
 * throw IdempotencyKeyBusy): answer what that request answered.
 */
export async function replayConcurrentAnswer(uow: UnitOfWork, res: Response, idem: IdempotencyContext): Promise<void> {
  const caller = res.locals.caller as Caller;
  const saved = await uow.idempotency.find(caller.account.accountId, idem.key);
  if (!saved || saved.statusCode === 0) {
    throw new HttpError(429, 'A request with this Idempotency-Key is still in progress; retry after 1 second.', { 'Retry-After': '1' });
  }
  replay(res, matchingAnswer(saved, caller, idem.fingerprint));
}
