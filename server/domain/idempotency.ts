// Idempotency-Key on creation: the key is claimed first in the creating transaction, so that a
// concurrent request with the same key waits for that transaction and then replays its answer.
import type { Caller } from './model.ts';
import type { Repositories, SavedAnswer } from './ports.ts';

export interface IdempotencyInput {
  key: string;
  fingerprint: string;
  ttlMs: number;
}

/** Another request holds this Idempotency-Key; the caller replays its saved answer. */
export class IdempotencyKeyBusy extends Error {}

/** Claims the key (throws IdempotencyKeyBusy when it is taken); save the answer with the result. */
export async function claimIdempotencyKey(repos: Repositories, caller: Caller, idem: IdempotencyInput, now: Date) {
  const placeholder: SavedAnswer = {
    accountId: caller.account.accountId,
    key: idem.key,
    mode: caller.mode,
    fingerprint: idem.fingerprint,
    statusCode: 0,
    body: '',
    createdAt: now,
    expiresAt: new Date(now.getTime() + idem.ttlMs),
  };
  if (!(await repos.idempotency.claim(placeholder))) throw new IdempotencyKeyBusy();
  return { save: (answer: { statusCode: number; body: string }) => repos.idempotency.update({ ...placeholder, ...answer }) };
}
