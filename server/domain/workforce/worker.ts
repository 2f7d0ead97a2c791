// Who a request of the worker API (/worker/v1) comes from, after session or token auth. Shared by the
// identity part (workers, credentials, sessions) and the work loop (queue, leases, review, redo).
import type { Mode } from '../model.ts';

export type WorkerRole = 'labeler' | 'reviewer' | 'lead';
export type WorkerStatus = 'active' | 'paused' | 'removed';

export interface WorkerPrincipal {
  workerId: string;
  /** The account whose own workforce this worker belongs to; null for the operator's workforce,
   * which serves every account's live tasks unless a project is staffed otherwise. */
  accountId: string | null;
  /**
   * The mode of the key that made the worker (the operator's workforce: live). A test-mode worker
   * does test-mode work only: none waits for a person, so its queue is empty (decision 0013).
   */
  mode: Mode;
  roles: readonly WorkerRole[];
  /** Served calibration batches (`calibration_batch: true`). */
  calibrator: boolean;
  status: WorkerStatus;
}
