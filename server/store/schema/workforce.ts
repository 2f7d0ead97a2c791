// The workforce (live mode): who may work on what, the work open on each live task, the assignments
// handed to workers (leases with a fencing token) and an append-only log of what happened.
// Every column naming a worker references workers (no ON DELETE action: the database refuses to
// delete a worker with history). Workers are never deleted: `humantask workers remove` and
// DELETE /v1/workforce/workers/{workerId} set status `removed` and keep the record, so the
// assignments, reviews and events of a removed worker keep pointing at it. Staffing's subject lists
// are arrays (ids, `operator`, `account`): putStaffing checks them, no foreign key can.
import { sql } from 'drizzle-orm';
import { bigint, boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { QualificationState } from '../../domain/quality/model.ts';
import type {
  Answer,
  AssignmentPurpose,
  AssignmentRole,
  AssignmentStatus,
  FeedbackItem,
  ReviewResult,
  WorkStage,
} from '../../domain/workforce/model.ts';
import { draftText, ts } from './columns.ts';
import { accounts, tasks } from './tasks.ts';

/**
 * Staffing of a project (batch '') or of one of its batches: who may attempt and who may review,
 * and how much review is sampled. A batch's row wins over its project's; no row: the account's own
 * workers and the operator's workforce may attempt, nothing is reviewed.
 */
export const staffing = pgTable(
  'staffing',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    /** Only live staffing hands out work; a test-mode key sets (and sees) its own. */
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    project: text('project').notNull(),
    /** '' for the project's own row. */
    batch: text('batch').notNull().default(''),
    /** Worker ids, `operator` (the operator's whole workforce) or `account` (all the account's own workers); null: the default. */
    attemptSubjects: text('attempt_subjects').array(),
    reviewSubjects: text('review_subjects').array(),
    /** Every submit of a worker's first N tasks in the project is reviewed ... */
    reviewFirst: integer('review_first').notNull().default(0),
    /** ... then this share of them (0..1). */
    reviewRate: doublePrecision('review_rate').notNull().default(0),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.mode, t.project, t.batch] })],
);

/** One row per live task while people work on it (and after, stage done or canceled). */
export const taskWork = pgTable(
  'task_work',
  {
    taskId: text('task_id')
      .primaryKey()
      .references(() => tasks.taskId, { onDelete: 'cascade' }),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    project: text('project'),
    batch: text('batch'),
    stage: text('stage').$type<WorkStage>().notNull(),
    /** Attempts the task needs (its overlap). */
    needed: integer('needed').notNull().default(1),
    /** Assignments the current stage may still hand out: decremented by the claim itself. */
    openSlots: integer('open_slots').notNull(),
    /** urgency: immediate 3, day 2 (and every newer-generation task), week 1. */
    priority: integer('priority').notNull(),
    availableAt: ts('available_at').notNull(),
    calibration: boolean('calibration').notNull().default(false),
    /** A redo goes to this worker first, until reserved_until. */
    reservedFor: text('reserved_for').references(() => workers.workerId),
    reservedUntil: ts('reserved_until'),
    /** The assignment the stage works on: the submit under review, or the rejected work to redo. */
    parentAssignmentId: text('parent_assignment_id'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    index('task_work_claim')
      .on(t.priority.desc(), t.createdAt, t.taskId)
      .where(sql`${t.stage} in ('attempt', 'review') and ${t.openSlots} > 0`),
    index('task_work_claim_account')
      .on(t.accountId, t.priority.desc(), t.createdAt, t.taskId)
      .where(sql`${t.stage} in ('attempt', 'review') and ${t.openSlots} > 0`),
    // Redos waiting for their author (taken before anything else).
    index('task_work_reserved').on(t.reservedFor).where(sql`${t.reservedFor} is not null and ${t.openSlots} > 0`),
  ],
);

export const assignments = pgTable(
  'assignments',
  {
    assignmentId: text('assignment_id').primaryKey(),
    /**
     * The live task; for a training assignment the training task's id; for a hidden evaluation
     * the id it is shown under (drawn as a live task's id is). Hence no foreign key to tasks.
     */
    taskId: text('task_id').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    workerId: text('worker_id')
      .notNull()
      .references(() => workers.workerId),
    role: text('role').$type<AssignmentRole>().notNull(),
    status: text('status').$type<AssignmentStatus>().notNull(),
    /** Fencing token: every heartbeat and submit carries it, so a stale tab cannot act on reassigned work. */
    leaseToken: text('lease_token').notNull(),
    issuedAt: ts('issued_at').notNull(),
    leaseExpiresAt: ts('lease_expires_at').notNull(),
    /** Heartbeats renew the lease up to here. */
    hardDeadline: ts('hard_deadline').notNull(),
    heartbeatAt: ts('heartbeat_at'),
    submittedAt: ts('submitted_at'),
    endedAt: ts('ended_at'),
    /** Work that was reviewed (accepted, fixed, rejected by a reviewer or rejected by the customer): when that was decided. */
    reviewedAt: ts('reviewed_at'),
    /** Active time the worker's client measured (never more than the time since issue). */
    activeMs: bigint('active_ms', { mode: 'number' }).notNull().default(0),
    draft: draftText('draft'),
    /** Checked against the type's response schema and the task's params before it is stored. */
    response: jsonb('response').$type<Answer>(),
    /** A review: the submit it reviews; a redo: the rejected work. */
    parentAssignmentId: text('parent_assignment_id'),
    /** A review's decision. */
    reviewResult: text('review_result').$type<ReviewResult>(),
    /** Feedback items of a rejecting review (on the review, the rejected work and its redo). */
    feedback: jsonb('feedback').$type<FeedbackItem[]>(),
    skipReason: text('skip_reason'),
    /** live, or a training or hidden evaluation task of the quality loop (domain/quality/qualification.ts). */
    purpose: text('purpose').$type<AssignmentPurpose>().notNull().default('live'),
    /** Training and evaluation: the training_tasks row worked on. */
    qualityTaskId: text('quality_task_id'),
    /** Training and evaluation: the project (of account_id, live mode) it serves, and the batch an evaluation is shown in. */
    qualityProject: text('quality_project'),
    qualityBatch: text('quality_batch'),
    /** Training and evaluation, once submitted: the score against the expected answer. */
    score: doublePrecision('score'),
    /** Training, once submitted: the feedback shown (the contract's TrainingFeedback, as JSON). */
    trainingFeedback: jsonb('training_feedback').$type<Record<string, unknown>>(),
    /**
     * A hidden evaluation: the live task whose place it takes in the worker's queue (its time, project,
     * batch and instruction are shown); the claim passes that task over for this worker while they have
     * other work (domain/quality/qualification.ts).
     */
    standsFor: text('stands_for'),
  },
  (t) => [
    // A worker never holds two attempts of one task (a lapsed or released one may be taken up again) ...
    uniqueIndex('assignments_one_attempt')
      .on(t.taskId, t.workerId)
      .where(sql`${t.role} = 'attempt' and ${t.status} not in ('expired', 'released') and ${t.purpose} = 'live'`),
    // A worker's scores in a project, newest first (rolling accuracy, training tries).
    index('assignments_scores')
      .on(t.workerId, t.accountId, t.qualityProject, t.purpose, t.submittedAt.desc())
      .where(sql`${t.purpose} <> 'live'`),
    // ... and holds one active assignment at a time (asking again resumes it).
    uniqueIndex('assignments_one_active').on(t.workerId).where(sql`${t.status} = 'active'`),
    index('assignments_task').on(t.taskId),
    index('assignments_worker').on(t.workerId, t.issuedAt.desc()),
    index('assignments_lease').on(t.leaseExpiresAt).where(sql`${t.status} = 'active'`),
    // The drafts a worker's ended assignments still keep (one at most; see store/work.ts, dropOlderDrafts).
    index('assignments_ended_drafts').on(t.workerId).where(sql`${t.draft} is not null and ${t.status} <> 'active'`),
    // The live task an evaluation stands in for (the claim passes it over for that worker) ...
    index('assignments_stand_in').on(t.standsFor, t.workerId).where(sql`${t.standsFor} is not null`),
    // ... and a worker's recent evaluations (their live tasks still open; those handed back, offered again).
    index('assignments_stand_in_worker').on(t.workerId, t.issuedAt).where(sql`${t.standsFor} is not null`),
  ],
);

/** Append-only: every step of the work, the source of all workforce metrics. */
export const workEvents = pgTable(
  'work_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: ts('at').notNull(),
    accountId: text('account_id').notNull(),
    workerId: text('worker_id').references(() => workers.workerId),
    assignmentId: text('assignment_id'),
    taskId: text('task_id'),
    kind: text('kind').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>(),
  },
  (t) => [index('work_events_task').on(t.taskId, t.at), index('work_events_worker').on(t.workerId, t.at)],
);

// ---- Worker identity (issue 18): workers, their password hashes, sessions and API tokens. ----

/** A worker: of an account's own workforce, or of the operator's (account_id null). */
export const workers = pgTable(
  'workers',
  {
    workerId: text('worker_id').primaryKey(),
    accountId: text('account_id').references(() => accounts.accountId),
    /**
     * The mode of the key that made the worker: an account's test key makes test-mode workers,
     * who do test-mode work only (none waits for a person), its live key live ones; the operator's
     * workforce is live. A key sees and manages only its own mode's workers (decision 0013).
     */
    mode: text('mode').$type<'test' | 'live'>().notNull().default('live'),
    email: text('email').notNull(),
    displayName: text('display_name').notNull(),
    status: text('status').$type<'active' | 'paused' | 'removed'>().notNull(),
    roles: text('roles').array().$type<('labeler' | 'reviewer' | 'lead')[]>().notNull(),
    calibrator: boolean('calibrator').notNull().default(false),
    createdAt: ts('created_at').notNull(),
    lastSeenAt: ts('last_seen_at'),
  },
  (t) => [
    // An address is one worker per workforce (an account's, per mode; the operator's), among the
    // workers that are not removed, whatever the letter case: never across workforces, so that no
    // workforce learns of, or blocks, an address another one uses (decision 0013).
    uniqueIndex('workers_email_workforce')
      .on(sql`coalesce(${t.accountId}, '')`, t.mode, sql`lower(${t.email})`)
      .where(sql`${t.status} <> 'removed'`),
    // Log-in: the workers of every workforce with the address.
    index('workers_email').on(sql`lower(${t.email})`).where(sql`${t.status} <> 'removed'`),
    index('workers_account').on(t.accountId, t.mode, t.createdAt, t.workerId),
  ],
);

/** A worker's password, as a scrypt hash with its parameters (domain/workforce/passwords.ts). */
export const workerCredentials = pgTable('worker_credentials', {
  workerId: text('worker_id')
    .primaryKey()
    .references(() => workers.workerId),
  passwordHash: text('password_hash').notNull(),
  updatedAt: ts('updated_at').notNull(),
});

/** Sessions and API tokens: only the SHA-256 of each (256-bit random) secret is kept. */
export const workerTokens = pgTable(
  'worker_tokens',
  {
    tokenId: text('token_id').primaryKey(),
    workerId: text('worker_id')
      .notNull()
      .references(() => workers.workerId),
    kind: text('kind').$type<'session' | 'api'>().notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    name: text('name'),
    createdAt: ts('created_at').notNull(),
    /** A session: moved by each use (sliding); an API token: its expiry, if any. */
    expiresAt: ts('expires_at'),
    /** A session's end however it is used. */
    absoluteExpiresAt: ts('absolute_expires_at'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('worker_tokens_worker').on(t.workerId, t.kind, t.createdAt)],
);

/**
 * A worker's standing in one project of the quality loop (domain/quality/qualification.ts):
 * training tries, qualification, pause. One row from the worker's first claim on the project.
 */
export const workerQualifications = pgTable(
  'worker_qualifications',
  {
    workerId: text('worker_id')
      .notNull()
      .references(() => workers.workerId),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    /** The project's name (live mode). */
    project: text('project').notNull(),
    state: text('state').$type<QualificationState>().notNull(),
    /** Training tries begun. */
    tries: integer('tries').notNull().default(0),
    tryStartedAt: ts('try_started_at'),
    /** While waiting: when the next try may begin. */
    retryAfter: ts('retry_after'),
    /** The mean score of the last finished try. */
    trainingScore: doublePrecision('training_score'),
    /** The last time the rolling evaluation accuracy was at or above the pause mark (or qualification). */
    lastGoodAt: ts('last_good_at'),
    /** The accuracy that paused the worker. */
    pausedAccuracy: doublePrecision('paused_accuracy'),
    /** Evaluation scores count from this time (a lead's reset of a pause); null: all of them. */
    evaluationSince: ts('evaluation_since'),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workerId, t.accountId, t.project] }),
    /**
     * A worker of the operator's workforce as the account sees it: the opaque handle
     * (`opw_` + these 24 hex; server/http/views/assignments.ts workerHandle), so that a lead can
     * name them to reset their standing in a project (ids are `acct_`/`wkr_` and hex: no backslash
     * for 'escape' to read).
     */
    index('worker_qualifications_handle').on(
      t.accountId,
      t.project,
      sql`substr(encode(sha256(decode(${t.accountId} || chr(10) || ${t.workerId}, 'escape')), 'hex'), 1, 24)`,
    ),
  ],
);
