// Idempotency-Key on creation requests: a request whose key was seen gets the saved answer again
// (status and body byte for byte, `Idempotent-Replayed: true`) and creates nothing. The key is
// claimed where the answer is written, so a request costs no extra round trip for it.
import type { RequestHandler, Response } from 'express';
import { wallClock, type Clock } from '../domain/clock.ts';
import { sha256 } from '../domain/ids.ts';
import type { Caller } from '../domain/model.ts';
import { savedAnswer, type IdempotencyInput } from '../domain/idempotency.ts';
import type { SavedAnswer, UnitOfWork } from '../domain/ports.ts';
import { HttpError } from './errors.ts';

export type IdempotencyContext = IdempotencyInput;

const validKey = /^[\x21-\x7E]{1,255}$/;

/** JSON with object keys sorted, so that key order does not change the fingerprint. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonical(value[i]);
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    out += `${i > 0 ? ',' : ''}${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`;
  }
  return `${out}}`;
}

function fingerprintOf(method: string, path: string, body: unknown): string {
  return sha256(`${method}\n${path}\n${canonical(body)}`);
}

export function replay(res: Response, saved: SavedAnswer) {
  res.setHeader('Idempotent-Replayed', 'true');
  res.status(saved.statusCode).type('application/json').send(saved.body);
}

/** The answer saved for a key (of the caller's mode: keys are per mode), checked against this request: the same request, or 409. */
function matchingAnswer(saved: SavedAnswer, fingerprint: string): SavedAnswer {
  if (saved.fingerprint !== fingerprint) {
    throw new HttpError(409, 'The Idempotency-Key was already used for a different request.');
  }
  return saved;
}

/**
 * Before a creation handler: checks the key and notes it for the handler, which claims it in the
 * creating statement (or finds it held, and replays what was answered under it). `now` is the clock
 * that the key's retention is reckoned by.
 */
export function idempotency(ttlMs: number, isCreation: (path: string) => boolean, now: Clock = wallClock): RequestHandler {
  return (req, res, next) => {
    const key = req.get('Idempotency-Key');
    if (key === undefined || req.method !== 'POST' || !isCreation(req.path)) return next();
    if (!validKey.test(key)) return next(new HttpError(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters.'));
    const fingerprint = fingerprintOf(req.method, req.baseUrl + req.path, req.body);
    res.locals.idempotency = { key, fingerprint, ttlMs, at: now() } satisfies IdempotencyContext;
    next();
  };
}

/**
 * An error answer of a request with a key (after authentication; not 401/429/5xx) is saved under
 * the key. If the key was used before, that request's answer is replayed instead (true: answered).
 */
export function saveErrorAnswer(uow: UnitOfWork) {
  return async (res: Response, statusCode: number, body: string): Promise<boolean> => {
    const { idempotency: idem, caller } = res.locals;
    if (!idem || ![400, 402, 404, 409].includes(statusCode)) return false;
    if (await uow.idempotency.claim(savedAnswer(caller, idem, { statusCode, body }))) return false;
    replay(res, await concurrentAnswer(uow, caller, idem));
    return true;
  };
}

/**
 * The key is held by an earlier or concurrent request with the same key (the rules threw
 * IdempotencyKeyBusy): what that request answered, to be replayed.
 */
export async function concurrentAnswer(uow: UnitOfWork, caller: Caller, idem: IdempotencyContext): Promise<SavedAnswer> {
  const saved = await uow.idempotency.find(caller.account.accountId, caller.mode, idem.key);
  if (!saved || saved.statusCode === 0) {
    throw new HttpError(429, 'A request with this Idempotency-Key is still in progress; retry after 1 second.', { 'Retry-After': '1' });
  }
  return matchingAnswer(saved, idem.fingerprint);
}

/** How long a key is held for a request still running (a crash frees it after that). */
const inProgressMs = 60_000;

/**
 * Idempotency-Key on creations whose handler does not claim the key itself (projects, batches):
 * the key is claimed before the handler runs, and the answer is saved under it before it is sent.
 * A 5xx frees the key. A crash between the creation and the saving leaves the key held for a minute;
 * a retry after that meets the created object's name (409), never a second object.
 */
export function idempotentCreation(uow: UnitOfWork, ttlMs: number, paths: ReadonlySet<string>, now: Clock = wallClock): RequestHandler {
  return async (req, res, next) => {
    const key = req.get('Idempotency-Key');
    if (key === undefined || req.method !== 'POST' || !paths.has(req.path)) return next();
    try {
      if (!validKey.test(key)) throw new HttpError(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
      const { caller } = res.locals;
      const idem: IdempotencyContext = { key, fingerprint: fingerprintOf(req.method, req.baseUrl + req.path, req.body), ttlMs, at: now() };
      const placeholder = savedAnswer(caller, { ...idem, ttlMs: Math.min(ttlMs, inProgressMs) }, { statusCode: 0, body: '' });
      if (!(await uow.idempotency.claim(placeholder))) return replay(res, await concurrentAnswer(uow, caller, idem));
      const send = res.send.bind(res);
      res.send = (body?: unknown) => {
        const status = res.statusCode;
        const saving =
          status >= 500 || typeof body !== 'string'
            ? uow.idempotency.release(caller.account.accountId, caller.mode, key)
            : uow.idempotency.update({ ...placeholder, statusCode: status, body, expiresAt: new Date(idem.at.getTime() + ttlMs) });
        saving.then(
          () => send(body),
          () => send(body),
        );
        return res;
      };
      next();
    } catch (err) {
      next(err);
    }
  };
}
