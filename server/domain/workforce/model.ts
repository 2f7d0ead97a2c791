// The work loop's model: staffing, the work open on a live task, assignments with leases, and what
// the rules need from storage (server/store/work.ts implements it).
import type { Json, Mode } from '../model.ts';
import type { WorkerPrincipal } from './worker.ts';

export type AssignmentRole = 'attempt' | 'review' | 'redo';
/** What an assignment works on: a live task, or a training or hidden evaluation task (domain/quality/qualification.ts). */
export type AssignmentPurpose = 'live' | 'training' | 'evaluation';
export type AssignmentStatus = 'active' | 'submitted' | 'accepted' | 'fixed' | 'rejected' | 'expired' | 'released' | 'skipped' | 'canceled';
export type ReviewResult = 'accepted' | 'fixed' | 'rejected';
export type WorkStage = 'attempt' | 'review' | 'done' | 'canceled';

/**
 * A worker's answer: a JSON object, the response of the task's type (one of the contract's
 * `<Type>Response` schemas). Submit and fix store one only after it passed the type's response
 * schema and the task's params (answers.ts, checkedResponse); it then becomes the task's `response`.
 */
export interface Answer {
  [key: string]: unknown;
}

/** Whether a value received as an answer is a JSON object (what every `<Type>Response` is). */
export const isAnswer = (value: unknown): value is Answer => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Work in progress saved by heartbeats: any JSON object the labeling app chooses, stored as it is. */
export interface Draft {
  [key: string]: unknown;
}

/** The kind of mistake a feedback item names. */
export type FeedbackCategory =
  | 'missing'
  | 'extra'
  | 'wrong_label'
  | 'wrong_geometry'
  | 'wrong_attribute'
  | 'wrong_text'
  | 'instructions'
  | 'other';

/**
 * What a feedback item is about: an annotation (`region_id`), a field, a frame range (inclusive), or
 * nothing (the whole answer). Kept in the contract's spelling: items are stored as JSON as given.
 */
export interface FeedbackScope {
  region_id?: string;
  field?: string;
  frames?: { start: number; end: number };
}

/** One remark of a rejecting review (or of a customer's rejecting audit), for the worker who redoes the task. */
export interface FeedbackItem {
  scope?: FeedbackScope;
  category: FeedbackCategory;
  text: string;
}

export interface Assignment {
  assignmentId: string;
  taskId: string;
  accountId: string;
  workerId: string;
  role: AssignmentRole;
  status: AssignmentStatus;
  leaseToken: string;
  issuedAt: Date;
  leaseExpiresAt: Date;
  hardDeadline: Date;
  heartbeatAt: Date | null;
  submittedAt: Date | null;
  endedAt: Date | null;
  /** Work that was reviewed: when the review (or the customer's rejection) decided it. */
  reviewedAt: Date | null;
  activeMs: number;
  draft: Draft | null;
  response: Answer | null;
  parentAssignmentId: string | null;
  reviewResult: ReviewResult | null;
  feedback: FeedbackItem[] | null;
  skipReason: string | null;
  purpose: AssignmentPurpose;
  /** Training and evaluation: the training task worked on, its project and (evaluation) the batch it is shown in. */
  qualityTaskId: string | null;
  qualityProject: string | null;
  qualityBatch: string | null;
  /** Training and evaluation, once submitted: the score against the expected answer. */
  score: number | null;
  /** Training, once submitted: the feedback shown (the contract's TrainingFeedback). */
  trainingFeedback: Record<string, unknown> | null;
  /**
   * A hidden evaluation: the live task whose place it took in the worker's queue (shown with its
   * time, project, batch and instruction); null otherwise, and for evaluations issued before it was kept.
   */
  standsFor: string | null;
}

/**
 * The attempt whose answer is the task's result (the one the customer received), among a task's
 * assignments in the order they were issued: the last one a review adopted (accepted or fixed; with
 * several attempts, the one the reviewer picked), else the latest answer still standing. Null: none.
 */
export function adoptedAttempt(assignments: readonly Assignment[]): Assignment | null {
  const answers = assignments.filter((x) => x.role !== 'review' && x.response !== null && x.status !== 'rejected');
  return answers.filter((x) => x.status === 'accepted' || x.status === 'fixed').at(-1) ?? answers.at(-1) ?? null;
}

export interface TaskWork {
  taskId: string;
  accountId: string;
  project: string | null;
  batch: string | null;
  stage: WorkStage;
  needed: number;
  openSlots: number;
  priority: number;
  availableAt: Date;
  calibration: boolean;
  reservedFor: string | null;
  reservedUntil: Date | null;
  parentAssignmentId: string | null;
  createdAt: Date;
}

/**
 * Who may work on a project (batch '') or on one batch of it. Subjects: worker ids, `operator` (the
 * operator's whole workforce), `account` (all the account's own workers); null: the default
 * (attempts: the account's own workers and the operator's; reviews: the same).
 */
export interface Staffing {
  accountId: string;
  mode: Mode;
  project: string;
  batch: string;
  attemptSubjects: string[] | null;
  reviewSubjects: string[] | null;
  reviewFirst: number;
  reviewRate: number;
  updatedAt: Date;
}

export interface Lease {
  leaseMs: number;
  hardCapMs: number;
}

export interface ClaimRequest {
  worker: WorkerPrincipal;
  role: 'attempt' | 'review';
  project?: string | undefined;
  assignmentId: string;
  leaseToken: string;
  now: Date;
  lease: Lease;
  /** Only a redo reserved for this worker. */
  reservedOnly?: boolean;
  /**
   * Pass over the live tasks this worker's hidden evaluations issued since then stand in for (their
   * place in the worker's queue went to the evaluation); absent once the worker has nothing else to do.
   */
  passOverStandInsSince?: Date | undefined;
}

export type WorkEventKind =
  | 'issued'
  | 'heartbeat'
  | 'submitted'
  | 'skipped'
  | 'released'
  | 'expired'
  | 'reviewed'
  | 'redo_created'
  | 'canceled'
  | 'completed'
  /** A customer's audit of a live task (domain/quality/calibration.ts): data {result, by: 'customer', score}. */
  | 'audited'
  /** Quality loop (issue 19), per the shared agreement: a training or evaluation submission scored (q-train). */
  | 'scored'
  /** A worker paused for a project by the evaluation rules (q-train). */
  | 'paused'
  /** A task's overlapping answers combined (q-consensus). */
  | 'combined'
  /** A lead returned a worker paused for a project, or out of training tries, to work: data {project, from, by}. */
  | 'unpaused';

export interface WorkEvent {
  at: Date;
  accountId: string;
  workerId: string | null;
  assignmentId: string | null;
  taskId: string | null;
  kind: WorkEventKind;
  data: Json | null;
}

export interface WorkRepository {
  /** Claims one eligible task for the worker in one statement (slot taken and assignment written together). */
  claim(request: ClaimRequest): Promise<Assignment | null>;
  /** Renews a live lease (up to its hard deadline), saves the draft, adds active time (at most the time since the last beat); null when the lease is not held. */
  heartbeat(input: {
    assignmentId: string;
    workerId: string;
    leaseToken: string;
    draft?: Draft | undefined;
    activeMs?: number | undefined;
    now: Date;
    leaseMs: number;
  }): Promise<Assignment | null>;
  /** Ends a held lease without work (skipped or released): the slot goes back. Null when the lease is not held. */
  giveBack(input: {
    assignmentId: string;
    workerId: string;
    leaseToken: string;
    status: 'skipped' | 'released';
    reason?: string | undefined;
    activeMs?: number | undefined;
    now: Date;
  }): Promise<Assignment | null>;
  /** The worker's active assignment (one at most). */
  activeFor(workerId: string): Promise<Assignment | null>;
  /** Expires up to `limit` lapsed leases and returns their slots; answers how many. */
  expireLapsed(now: Date, limit: number): Promise<number>;
  /**
   * Ends every assignment the worker holds (released, `data.by` the reason), as the worker is paused
   * or removed: the slots go back to the queue; answers how many.
   */
  releaseAllHeld(workerId: string, by: 'paused' | 'removed', now: Date): Promise<number>;
  /** The assignment, if it is this worker's (any worker's when workerId is null); with forUpdate, locked. */
  get(assignmentId: string, workerId: string | null, options?: { forUpdate?: boolean }): Promise<Assignment | null>;
  update(assignment: Assignment): Promise<void>;
  /** The task's work row (no lock). */
  getTaskWork(taskId: string): Promise<TaskWork | null>;
  /** The task's work row, locked. */
  lockTaskWork(taskId: string): Promise<TaskWork | null>;
  updateTaskWork(work: TaskWork): Promise<void>;
  /** Ends the task's work (canceled or in error): open assignments are canceled, and every draft of the task dropped. */
  closeTask(taskId: string, now: Date): Promise<void>;
  /** Drops the drafts of the task's ended assignments (the task completed: none will be used again). */
  dropDrafts(taskId: string): Promise<void>;
  /** A task's assignments, oldest first. */
  forTask(taskId: string): Promise<Assignment[]>;
  /** A worker's assignments, newest first (keyset by issued_at, assignment_id), without their drafts (`draft` null). */
  forWorker(
    workerId: string,
    filters: { statuses?: AssignmentStatus[] },
    page: { limit: number; before?: { issuedAt: Date; assignmentId: string } | null },
  ): Promise<Assignment[]>;
  /** How many attempts the worker has submitted on a project's tasks (for review sampling). */
  submittedCount(workerId: string, accountId: string, project: string | null): Promise<number>;
  /** The live staffing that applies to a task of this project and batch (the batch's row, else the project's). */
  staffingFor(accountId: string, project: string, batch: string | null): Promise<Staffing | null>;
  getStaffing(accountId: string, mode: Mode, project: string, batch: string): Promise<Staffing | null>;
  putStaffing(staffing: Staffing): Promise<void>;
  addEvents(events: WorkEvent[]): Promise<void>;
}
