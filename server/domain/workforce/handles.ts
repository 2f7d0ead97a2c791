// The names a workforce's people and workforces go by where the global worker id must not show
// (decision 0013). A customer sees one of the operator's workers only by an opaque handle, stable
// per account and worker, that tells nothing else; a worker names the workforce they log in to by
// its id (`operator`, or `wkf_` and a hash of an account's id and mode, which it does not reveal).
import { createHash } from 'node:crypto';
import type { Mode } from '../model.ts';

const hex24 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/**
 * One of the operator's workers as account `accountId` sees it: `opw_` + 24 hex (the SQL of
 * store/schema.ts's worker_qualifications_handle index computes the same).
 */
export const operatorWorkerHandle = (accountId: string, workerId: string) => `opw_${hex24(`${accountId}\n${workerId}`)}`;

/** A worker as the customer of `accountId` sees it: its own worker by id, the operator's by handle. */
export const workerSeenBy = (accountId: string, worker: { workerId: string; accountId: string | null }) =>
  worker.accountId === accountId ? worker.workerId : operatorWorkerHandle(accountId, worker.workerId);

/** A workforce: an account's own in one mode, or the operator's (accountId null, live). */
export interface Workforce {
  accountId: string | null;
  mode: Mode;
}

export const operatorWorkforce: Workforce = { accountId: null, mode: 'live' };

/** The id a worker names their workforce by at log-in: `operator`, or `wkf_` + 24 hex. */
export const workforceIdOf = (w: Workforce) => (w.accountId === null ? 'operator' : `wkf_${hex24(`workforce\n${w.accountId}\n${w.mode}`)}`);
