// Idempotency-Key on creation: the key is claimed in the creating transaction (with the answer, or
// first as a placeholder), so that a concurrent request with the same key waits for that
// transaction and then replays its answer.
import type { Caller } from './model.ts';
import type { Repositories, SavedAnswer } from './ports.ts';

export interface IdempotencyInput {
  key: string;
  fingerprint: string;
  ttlMs: number;
  /** When the request came, on the server's clock: the key is kept `ttlMs` from then. */
  at: Date;
}

/** Another request holds this Idempotency-Key; the caller replays its saved answer. */
export class IdempotencyKeyBusy extends Error {}

/** The answer to save under the request's key (kept for the key's time to live). */
export function savedAnswer(caller: Caller, idem: IdempotencyInput, answer: { statusCode: number; body: string }): SavedAnswer {
  return {
    accountId: caller.account.accountId,
    key: idem.key,
    mode: caller.mode,
    fingerprint: idem.fingerprint,
    ...answer,
    createdAt: idem.at,
    expiresAt: new Date(idem.at.getTime() + idem.ttlMs),
  };
}

/**
 * Claims the key before the work is done (throws IdempotencyKeyBusy when it is taken); save the
 * answer with the result. (Task creation claims the key with its answer in one statement instead.)
 */
export async function claimIdempotencyKey(repos: Repositories, caller: Caller, idem: IdempotencyInput) {
  const placeholder = savedAnswer(caller, idem, { statusCode: 0, body: '' });
  if (!(await repos.idempotency.claim(placeholder))) throw new IdempotencyKeyBusy();
  return { save: (answer: { statusCode: number; body: string }) => repos.idempotency.update({ ...placeholder, ...answer }) };
}
