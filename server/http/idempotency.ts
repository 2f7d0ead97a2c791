// Idempotency-Key, in one place. Which requests take a key is the contract's to say (operations
// with `x-retry: {repeat: key}`); the key is checked and the request fingerprinted before anything
// runs (`idempotency`); the answer is kept under the key and a request with a key already answered
// gets that answer again (status and body byte for byte, `Idempotent-Replayed: true`) and does
// nothing. The key is claimed one of two ways: in the creating statement, with the answer (task and
// training creation, domain/idempotency.ts: no extra round trip, never a task without its answer),
// or held around the operation (`underKey`: projects, batches, a worker's submit). An error answer
// is kept by the error mapper (`saveErrorAnswer`), the same for both.
import type { RequestHandler, Response } from 'express';
import { wallClock, type Clock } from '../domain/clock.ts';
import { sha256 } from '../domain/ids.ts';
import type { Caller, Mode } from '../domain/model.ts';
import type { IdempotencyInput } from '../domain/idempotency.ts';
import type { SavedAnswer, UnitOfWork } from '../domain/ports.ts';
import { HttpError } from './errors.ts';

export interface IdempotencyContext extends IdempotencyInput {
  /** Where an operation holding the key keeps it (`underKey`); else the caller's account and mode. */
  owner?: KeyOwner;
}

/** Where a key is kept: keys are per account and mode, a worker's apart from everyone else's. */
export interface KeyOwner {
  accountId: string;
  mode: Mode;
  /** The key as stored (a worker's is prefixed with the worker). */
  key: string;
}

/** The owner of a customer's key: the account and mode of the API key (or session) used. */
export const ownerOf = (caller: Caller, idem: IdempotencyInput): KeyOwner => ({
  accountId: caller.account.accountId,
  mode: caller.mode,
  key: idem.key,
});

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
    out += `${i > 0 ? ',' : ''}${JSON.stringify(k)}:${canonical(Reflect.get(value, k))}`;
  }
  return `${out}}`;
}

/**
 * Before the operation: checks the key of a request that takes one (`takesKey`, from the contract)
 * and notes it with the request's fingerprint for the operation. `now` is the clock that the key's
 * retention is reckoned by.
 */
export function idempotency(ttlMs: number, takesKey: (method: string, path: string) => boolean, now: Clock = wallClock): RequestHandler {
  return (req, res, next) => {
    const key = req.get('Idempotency-Key');
    if (key === undefined || !takesKey(req.method, req.path)) return next();
    if (!validKey.test(key)) return next(new HttpError(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters.'));
    const fingerprint = sha256(`${req.method}\n${req.baseUrl + req.path}\n${canonical(req.body)}`);
    res.locals.idempotency = { key, fingerprint, ttlMs, at: now() } satisfies IdempotencyContext;
    next();
  };
}

export function replay(res: Response, saved: SavedAnswer) {
  res.setHeader('Idempotent-Replayed', 'true');
  res.status(saved.statusCode).type('application/json').send(saved.body);
}

/**
 * The key is held by an earlier or concurrent request: what that request answered, to be replayed
 * (409 when it was a different request, 429 while it still runs).
 */
export async function concurrentAnswer(uow: UnitOfWork, owner: KeyOwner, idem: IdempotencyInput): Promise<SavedAnswer> {
  const saved = await uow.idempotency.find(owner.accountId, owner.mode, owner.key);
  if (!saved || saved.statusCode === 0) {
    throw new HttpError(
      429,
      'A request with this Idempotency-Key is still in progress; retry after 1 second.',
      { 'Retry-After': '1' },
      'rate_limited',
    );
  }
  if (saved.fingerprint !== idem.fingerprint) {
    throw new HttpError(409, 'The Idempotency-Key was already used for a different request.', {}, 'idempotency_mismatch');
  }
  return saved;
}

/** How long a key is held for a request still running (a crash frees it after that). */
const inProgressMs = 60_000;

/** An answer saved under a key, sent again as it was. */
export class Replay {
  constructor(readonly saved: SavedAnswer) {}
}

/**
 * Runs an operation that does not claim the key in its own statement under its request's key: the
 * key is held (a placeholder) while it runs and then keeps its answer, as the client gets it (the
 * JSON of what `run` answers). A request whose key is held gets that answer replayed instead. When
 * the operation fails the key is freed, and the error mapper keeps the error answer if it is one
 * to keep. An operation that records an activity runs in its request's transaction (activity.ts),
 * so its key, its work and its answer commit together. Otherwise a crash between the work and the
 * keeping leaves the key held for a minute; a retry after that meets what the work did (a worker's
 * submit: the assignment is submitted, 409), never the work done twice.
 */
export async function underKey<T>(
  uow: UnitOfWork,
  idem: IdempotencyContext | undefined,
  ownerOfKey: (idem: IdempotencyInput) => KeyOwner,
  run: () => Promise<T>,
): Promise<T | Replay> {
  if (!idem) return run();
  const owner = ownerOfKey(idem);
  idem.owner = owner;
  const placeholder: SavedAnswer = {
    ...owner,
    fingerprint: idem.fingerprint,
    statusCode: 0,
    body: '',
    createdAt: idem.at,
    expiresAt: new Date(idem.at.getTime() + Math.min(idem.ttlMs, inProgressMs)),
  };
  if (!(await uow.idempotency.claim(placeholder))) return new Replay(await concurrentAnswer(uow, owner, idem));
  let answer: T;
  try {
    answer = await run();
  } catch (err) {
    await uow.idempotency.release(owner.accountId, owner.mode, owner.key);
    throw err;
  }
  const expiresAt = new Date(idem.at.getTime() + idem.ttlMs);
  await uow.idempotency.update({ ...placeholder, statusCode: 200, body: JSON.stringify(answer), expiresAt });
  return answer;
}

/**
 * The error mapper's: an error answer of a request with a key (a refusal: 400, 402, 404, 409; not
 * 401, 429 or 5xx) is kept under the key. If the key was answered meanwhile, that answer is
 * replayed instead (true: answered).
 */
export function saveErrorAnswer(uow: UnitOfWork) {
  return async (res: Response, statusCode: number, body: string): Promise<boolean> => {
    const idem: IdempotencyContext | undefined = res.locals.idempotency;
    const caller: Caller | undefined = res.locals.caller;
    const owner = idem?.owner ?? (idem && caller ? ownerOf(caller, idem) : undefined);
    if (!idem || !owner || ![400, 402, 404, 409].includes(statusCode)) return false;
    const saved: SavedAnswer = {
      ...owner,
      fingerprint: idem.fingerprint,
      statusCode,
      body,
      createdAt: idem.at,
      expiresAt: new Date(idem.at.getTime() + idem.ttlMs),
    };
    if (await uow.idempotency.claim(saved)) return false;
    replay(res, await concurrentAnswer(uow, owner, idem));
    return true;
  };
}
