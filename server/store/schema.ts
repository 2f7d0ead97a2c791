// The database schema (drizzle-orm, PostgreSQL dialect: the same SQL runs on PGlite and PostgreSQL).
// Migrations in ./migrations are generated from this file by `npm run db:generate`.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  json,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { ResultFilesRecord, TaskAudit } from '../domain/model.ts';
import type { ImportSettings } from '../domain/ports.ts';
import type { QualificationState } from '../domain/quality/model.ts';
import type {
  Answer,
  AssignmentPurpose,
  AssignmentRole,
  AssignmentStatus,
  Draft,
  FeedbackItem,
  ReviewResult,
  WorkStage,
} from '../domain/workforce/model.ts';

const ts = (name: string) => timestamp(name, { precision: 3, withTimezone: true, mode: 'date' });

/**
 * What a customer sent and gets back (task parameters, metadata, a callback's body) is `json`, not
 * `jsonb`: `json` keeps the text as written, so object keys come back in the customer's order
 * (`jsonb` sorts them by length). Nothing queries inside these columns.
 */
const customerJson = <T>(name: string) => json(name).$type<T>();

/** A task's reviews: JSON with snake_case keys and ISO times in the row (as ever), Dates in the domain. */
const auditsJson = customType<{ data: TaskAudit[]; driverData: string }>({
  dataType: () => 'jsonb',
  toDriver: (list) =>
    JSON.stringify(
      list.map((a) => ({
        audited_by: a.auditedBy,
        audited_at: a.auditedAt.toISOString(),
        audit_time_secs: a.auditTimeSecs,
        audit_result: a.result,
        audit_source: a.source,
        ...(a.comments !== undefined ? { comments: a.comments } : {}),
      })),
    ),
  fromDriver: (value: unknown) =>
    (typeof value === 'string' ? JSON.parse(value) : value).map((a: Record<string, unknown>) => ({
      auditedBy: a.audited_by,
      auditedAt: new Date(a.audited_at as string),
      auditTimeSecs: a.audit_time_secs,
      result: a.audit_result,
      source: a.audit_source,
      ...(a.comments !== undefined ? { comments: a.comments } : {}),
    })),
});

/**
 * A draft of live work: JSON the server never looks into, kept as its text. As jsonb, every
 * heartbeat made the database parse up to a megabyte of JSON and every read print it again (on
 * the embedded database, on the server's own thread).
 */
const draftText = customType<{ data: Draft; driverData: string }>({
  dataType: () => 'text',
  toDriver: (draft) => JSON.stringify(draft),
  fromDriver: (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as Draft,
});

export const accounts = pgTable('accounts', {
  accountId: text('account_id').primaryKey(),
  name: text('name').notNull().unique(),
  // API keys are random 128-bit secrets, so a plain SHA-256 is a sound way to keep only their hash.
  testKeyHash: text('test_key_hash').notNull().unique(),
  liveKeyHash: text('live_key_hash').notNull().unique(),
  // Sent with every callback and used to sign it, so they are kept, sealed with AES-256-GCM under a
  // key outside the database (store/secrets.ts): `sealed:v1:` + base64url(iv | tag | ciphertext).
  callbackAuthKey: text('callback_auth_key').notNull(),
  signingSecret: text('signing_secret').notNull(),
  defaultCallbackUrl: text('default_callback_url'),
  /** Task types switched off for this account (all are enabled by default). */
  disabledTypes: jsonb('disabled_types').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
  testCompletionDelayMs: integer('test_completion_delay_ms').notNull().default(0),
  createdAt: ts('created_at').notNull(),
});

/**
 * Live requests counted per account, spread over a few rows (shards) so that concurrent requests
 * of one account do not queue for one row lock; the count is their sum.
 */
export const liveRequestCounts = pgTable(
  'live_request_counts',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    shard: integer('shard').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.shard] })],
);

export const tasks = pgTable(
  'tasks',
  {
    taskId: text('task_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** The generation whose endpoint created the task (its callbacks show the task that way). */
    generation: text('generation').$type<'current' | 'legacy'>().notNull(),
    type: text('type').notNull(),
    status: text('status').$type<'pending' | 'completed' | 'canceled' | 'error'>().notNull(),
    instruction: text('instruction'),
    params: customerJson<Record<string, unknown>>('params').notNull(),
    response: jsonb('response').$type<Record<string, unknown>>(),
    callbackUrl: text('callback_url'),
    callbackCompleted: boolean('callback_completed'),
    urgency: text('urgency').notNull().default('day'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    completedAt: ts('completed_at'),
    customerReviewStatus: text('customer_review_status'),
    timesRedone: integer('times_redone').notNull().default(0),
    metadata: customerJson<Record<string, unknown>>('metadata').notNull(),
    project: text('project'),
    batch: text('batch'),
    projectParamVersion: integer('project_param_version'),
    audits: auditsJson('audits').notNull(),
    uniqueId: text('unique_id'),
    tags: jsonb('tags').$type<string[]>(),
    clearUniqueIdOnError: boolean('clear_unique_id_on_error').notNull().default(false),
    /** Test mode with a completion delay: when the synthetic completion is due. */
    testCompleteAt: ts('test_complete_at'),
    /** Live mode: when the attachments are to be fetched (a lease while a checker holds it). */
    attachmentCheckAt: ts('attachment_check_at'),
    /** Where the response's files are (decision record 24), set once they are written; null when inline. */
    resultFiles: jsonb('result_files').$type<ResultFilesRecord>(),
  },
  (t) => [
    // unique_id is unique per account and mode while it is set.
    uniqueIndex('tasks_unique_id').on(t.accountId, t.mode, t.uniqueId).where(sql`${t.uniqueId} is not null`),
    // Keyset pagination: list pages stay cheap however deep.
    index('tasks_list').on(t.accountId, t.mode, t.createdAt.desc(), t.taskId.desc()),
    // A page of one project or batch, and the counts of the filters task_counts does not keep:
    // each reads only the matching tasks, however many the account holds.
    index('tasks_list_project')
      .on(t.accountId, t.mode, t.project, t.createdAt.desc(), t.taskId.desc())
      .where(sql`${t.project} is not null`),
    index('tasks_list_batch').on(t.accountId, t.mode, t.batch, t.createdAt.desc(), t.taskId.desc()).where(sql`${t.batch} is not null`),
    index('tasks_completed_at').on(t.accountId, t.mode, t.completedAt).where(sql`${t.completedAt} is not null`),
    index('tasks_updated_at').on(t.accountId, t.mode, t.updatedAt),
    index('tasks_customer_review_status')
      .on(t.accountId, t.mode, t.customerReviewStatus, t.createdAt.desc(), t.taskId.desc())
      .where(sql`${t.customerReviewStatus} is not null`),
    index('tasks_test_due').on(t.testCompleteAt).where(sql`${t.testCompleteAt} is not null`),
    index('tasks_attachment_check_due').on(t.attachmentCheckAt).where(sql`${t.attachmentCheckAt} is not null`),
  ],
);

/**
 * One row per tag of a task, in the order of a task list: a page filtered by a tag reads the first
 * rows of that tag (task_tags_list) and the tasks they name, however many tasks carry it, and the
 * total of a tag filter the counters do not keep counts that tag's rows. Kept by row triggers on
 * `tasks` (the hand-written block of its migration), so every change of a task's tags, whoever
 * makes it, changes these rows in the same transaction. No foreign key: the triggers keep it, and
 * a key would make every tagged insert check `tasks` again.
 */
export const taskTags = pgTable(
  'task_tags',
  {
    accountId: text('account_id').notNull(),
    mode: text('mode').notNull(),
    tag: text('tag').notNull(),
    createdAt: ts('created_at').notNull(),
    taskId: text('task_id').notNull(),
  },
  (t) => [uniqueIndex('task_tags_list').on(t.accountId, t.mode, t.tag, t.createdAt.desc(), t.taskId.desc())],
);

/**
 * The tasks counted by account, mode, status and type, for exact list totals without counting
 * rows: scope 0 counts every task, scope 1 the tasks of `project`, scope 2 the tasks of `batch`
 * (with their project, '' for none), scope 3 the tasks carrying `tag` ('' where a scope does not
 * use the column). Kept by triggers on `tasks` (statement triggers for updates and deletes, see the
 * hand-written block of migration 0008; a row trigger for a created task, migration 0016), so every change of a task counts in its
 * own transaction whoever makes it. Each count is spread over a few shards (by the connection that
 * writes) so that concurrent writers seldom wait for one row; a total is the sum of its rows.
 */
export const taskCounts = pgTable(
  'task_counts',
  {
    accountId: text('account_id').notNull(),
    mode: text('mode').notNull(),
    scope: smallint('scope').notNull(),
    batch: text('batch').notNull(),
    project: text('project').notNull(),
    tag: text('tag').notNull(),
    status: text('status').notNull(),
    type: text('type').notNull(),
    shard: smallint('shard').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.mode, t.scope, t.batch, t.project, t.tag, t.status, t.type, t.shard] })],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    key: text('key').notNull(),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** SHA-256 of method, path and the canonical JSON of the parsed body. */
    fingerprint: text('fingerprint').notNull(),
    statusCode: integer('status_code').notNull(),
    /** The answer exactly as it was sent, replayed byte for byte. */
    body: text('body').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  // Per mode, as everything an API key makes: a key used in test mode is free in live mode.
  (t) => [primaryKey({ columns: [t.accountId, t.mode, t.key] }), index('idempotency_keys_expiry').on(t.expiresAt)],
);

export const projects = pgTable(
  'projects',
  {
    projectId: text('project_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    rapid: boolean('rapid').notNull().default(false),
    studio: boolean('studio').notNull().default(false),
    /** Archived: takes no new task or batch; left out of `GET /v1/projects?archived=false`. */
    archived: boolean('archived').notNull().default(false),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('projects_name').on(t.accountId, t.mode, t.name)],
);

export const projectParamVersions = pgTable(
  'project_param_versions',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.projectId),
    version: integer('version').notNull(),
    params: customerJson<Record<string, unknown>>('params').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.version] })],
);

export const projectOntologyVersions = pgTable(
  'project_ontology_versions',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.projectId),
    version: integer('version').notNull(),
    name: text('name'),
    ontology: jsonb('ontology').$type<unknown[]>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.version] })],
);

export const batches = pgTable(
  'batches',
  {
    batchId: text('batch_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    name: text('name').notNull(),
    project: text('project').notNull(),
    status: text('status').$type<'staging' | 'in_progress' | 'completed'>().notNull(),
    callback: text('callback'),
    metadata: customerJson<Record<string, unknown>>('metadata').notNull(),
    calibrationBatch: boolean('calibration_batch').notNull().default(false),
    selfLabelBatch: boolean('self_label_batch').notNull().default(false),
    archived: boolean('archived').notNull().default(false),
    createdAt: ts('created_at').notNull(),
    completedAt: ts('completed_at'),
    /**
     * When one of its tasks was last audited: the latest `audited_at` of their audit records, kept
     * by a row trigger on `tasks` (the hand-written block of migration 0024), so every audit,
     * whoever adds it (the customer's, a review's), moves it in its own transaction.
     */
    auditedAt: ts('audited_at'),
    /**
     * A calibration batch's calibration score so far (domain/quality/calibration.ts): the mean over
     * its decided attempts, recounted from work_events after each review or audit of its tasks;
     * null before the first. The claim reads it to open the project's production batches.
     */
    calibrationScore: doublePrecision('calibration_score'),
    calibrationReviewed: integer('calibration_reviewed').notNull().default(0),
  },
  (t) => [uniqueIndex('batches_name').on(t.accountId, t.mode, t.name), index('batches_list').on(t.accountId, t.mode, t.createdAt.desc())],
);

/**
 * A project's quality policy versions (domain/quality/policy.ts), versioned as its parameters are:
 * 0, 1, 2, ... one more with every PUT. The policy is stored whole, every default filled in, so a
 * version reads the same whatever later releases change the defaults to.
 */
export const qualityPolicies = pgTable(
  'quality_policies',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.projectId),
    version: integer('version').notNull(),
    policy: jsonb('policy').$type<Record<string, unknown>>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.version] })],
);

/** Training and evaluation tasks: their own id space, never in the task list, no callbacks. */
export const trainingTasks = pgTable(
  'training_tasks',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    kind: text('kind').$type<'training' | 'evaluation'>().notNull(),
    type: text('type').notNull(),
    params: customerJson<Record<string, unknown>>('params').notNull(),
    expectedResponse: jsonb('expected_response').$type<Record<string, unknown>>().notNull(),
    initialResponse: jsonb('initial_response').$type<Record<string, unknown>>(),
    createdAt: ts('created_at').notNull(),
    /** The audited task it was promoted from (POST /v1/task/{taskId}/promote); null when created directly. */
    sourceTaskId: text('source_task_id'),
  },
  (t) => [
    index('training_tasks_list').on(t.accountId, t.mode, t.kind, t.createdAt.desc(), t.id.desc()),
    // Promotion is idempotent: one training and one evaluation task per source task.
    uniqueIndex('training_tasks_source').on(t.sourceTaskId, t.kind).where(sql`${t.sourceTaskId} is not null`),
  ],
);

/**
 * Callbacks to send, written in the same transaction as the change they report (outbox). The
 * delivery side (dispatcher, retries) reads them.
 */
export const outbox = pgTable(
  'outbox',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    event: text('event').$type<'task_completed' | 'attachment_error' | 'batch_completed'>().notNull(),
    /** The task id, or the batch name. */
    subject: text('subject').notNull(),
    url: text('url').notNull(),
    payload: customerJson<Record<string, unknown>>('payload').notNull(),
    createdAt: ts('created_at').notNull(),
    nextAttemptAt: ts('next_attempt_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    firstAttemptAt: ts('first_attempt_at'),
    /** A dispatcher holds the message until then; another may take it over afterwards. */
    leaseUntil: ts('lease_until'),
    deliveredAt: ts('delivered_at'),
    failedAt: ts('failed_at'),
  },
  (t) => [
    index('outbox_due').on(t.nextAttemptAt).where(sql`${t.deliveredAt} is null and ${t.failedAt} is null`),
    index('outbox_subject').on(t.accountId, t.subject),
  ],
);

/** Every delivery attempt, for the customer's and the operator's eyes. */
export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    id: text('id').primaryKey(),
    messageId: text('message_id')
      .notNull()
      .references(() => outbox.id),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    subject: text('subject').notNull(),
    url: text('url').notNull(),
    attemptedAt: ts('attempted_at').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
  },
  (t) => [index('delivery_attempts_subject').on(t.accountId, t.subject, t.attemptedAt)],
);

// The workforce (live mode): who may work on what, the work open on each live task, the assignments
// handed to workers (leases with a fencing token) and an append-only log of what happened.
// Every column naming a worker references workers (no ON DELETE action: the database refuses to
// delete a worker with history). Workers are never deleted: `humantask workers remove` and
// DELETE /v1/workforce/workers/{workerId} set status `removed` and keep the record, so the
// assignments, reviews and events of a removed worker keep pointing at it. Staffing's subject lists
// are arrays (ids, `operator`, `account`): putStaffing checks them, no foreign key can.

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

// ---- Bulk work (issue 36): imports and exports, each a job row with its state and progress. ----

const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

/**
 * An import (POST /v1/imports): its file is kept in import_chunks until read; a server process
 * takes it with a lease (lease_until, fenced by lease_token: each group of lines is written only
 * while the lease is its own) and moves `bytes_read`/`next_line` in the transaction that writes the
 * group's tasks, so a crash resumes exactly after the last group written.
 */
export const imports = pgTable(
  'imports',
  {
    importId: text('import_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** receiving (its upload is arriving: not shown), fetching, queued, running, completed, stopped, failed. */
    state: text('state').notNull(),
    format: text('format').$type<'jsonl' | 'csv'>().notNull(),
    /** The file's settings: type, project, batch, params, attachment_column, source_url, the CSV header once read. */
    settings: jsonb('settings').$type<ImportSettings>().notNull(),
    maxRefusedShare: doublePrecision('max_refused_share').notNull(),
    bytesTotal: bigint('bytes_total', { mode: 'number' }).notNull().default(0),
    bytesRead: bigint('bytes_read', { mode: 'number' }).notNull().default(0),
    /** The number of the next line to read (from 1). */
    nextLine: bigint('next_line', { mode: 'number' }).notNull().default(1),
    linesRead: bigint('lines_read', { mode: 'number' }).notNull().default(0),
    created: bigint('created', { mode: 'number' }).notNull().default(0),
    duplicates: bigint('duplicates', { mode: 'number' }).notNull().default(0),
    refused: bigint('refused', { mode: 'number' }).notNull().default(0),
    /** The batches its tasks joined: completed (if done) once, when the import ends. */
    batches: jsonb('batches').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    error: text('error'),
    leaseUntil: ts('lease_until'),
    leaseToken: text('lease_token'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('imports_due').on(t.leaseUntil).where(sql`${t.state} in ('receiving', 'fetching', 'queued', 'running')`),
    index('imports_account').on(t.accountId, t.mode, t.createdAt),
  ],
);

/** An import's file, in pieces of a fixed size (IMPORT_CHUNK_BYTES but the last), deleted once read. */
export const importChunks = pgTable(
  'import_chunks',
  {
    importId: text('import_id')
      .notNull()
      .references(() => imports.importId, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.importId, t.seq] })],
);

/** The refused lines of an import: number, error, and the line itself (for the file to fix and import again). */
export const importRefused = pgTable(
  'import_refused',
  {
    importId: text('import_id')
      .notNull()
      .references(() => imports.importId, { onDelete: 'cascade' }),
    line: bigint('line', { mode: 'number' }).notNull(),
    statusCode: integer('status_code').notNull(),
    error: text('error').notNull(),
    /** The line as it was (null for one over the size limit, which is not kept). */
    text: text('text'),
  },
  (t) => [primaryKey({ columns: [t.importId, t.line] })],
);

/**
 * The creation bodies imported without a unique_id (their SHA-256 with the type): a body imported
 * again is a duplicate, not a second task. Per account and mode, as unique_id is.
 */
export const importKeys = pgTable(
  'import_keys',
  {
    accountId: text('account_id').notNull(),
    mode: text('mode').notNull(),
    key: text('key').notNull(),
    taskId: text('task_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.mode, t.key] })],
);

/** An export (POST /v1/exports): written by one server process under a lease, kept in export_chunks. */
export const exportsTable = pgTable(
  'exports',
  {
    exportId: text('export_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** queued, running, completed, failed, expired. */
    state: text('state').notNull(),
    format: text('format').notNull(),
    view: text('view').$type<'current' | 'legacy'>().notNull(),
    /** The list filters as the query gave them (shown back), and as the store reads them. */
    filterQuery: jsonb('filter_query').$type<Record<string, string>>().notNull(),
    filters: jsonb('filters').$type<Record<string, unknown>>().notNull(),
    options: jsonb('options').$type<Record<string, unknown>>().notNull(),
    tasksTotal: bigint('tasks_total', { mode: 'number' }).notNull().default(0),
    tasksWritten: bigint('tasks_written', { mode: 'number' }).notNull().default(0),
    skipped: jsonb('skipped').$type<{ reason: string; count: number }[]>().notNull().default(sql`'[]'::jsonb`),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    error: text('error'),
    leaseUntil: ts('lease_until'),
    leaseToken: text('lease_token'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    finishedAt: ts('finished_at'),
    /** When the file is deleted (EXPORT_RETENTION_SECONDS after it was written). */
    expiresAt: ts('expires_at'),
  },
  (t) => [
    index('exports_due').on(t.leaseUntil).where(sql`${t.state} in ('queued', 'running')`),
    index('exports_expiry').on(t.expiresAt).where(sql`${t.state} = 'completed'`),
  ],
);

/** An export's gzip file, in pieces in order. */
export const exportChunks = pgTable(
  'export_chunks',
  {
    exportId: text('export_id')
      .notNull()
      .references(() => exportsTable.exportId, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.exportId, t.seq] })],
);

/**
 * An account's connection to one of its buckets, per mode (issue 37): `s3://<bucket>` (an
 * S3-compatible endpoint) or `gs://<bucket>` (Google Cloud Storage through its S3 interoperability).
 * The secret access key is stored sealed (store/secrets.ts) and never returned.
 */
export const storageConnections = pgTable(
  'storage_connections',
  {
    connectionId: text('connection_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** s3 or gcs: the scheme of its attachments' URLs (s3:// or gs://). */
    provider: text('provider').$type<'s3' | 'gcs'>().notNull(),
    bucket: text('bucket').notNull(),
    endpoint: text('endpoint').notNull(),
    region: text('region').notNull(),
    pathStyle: boolean('path_style').notNull(),
    accessKeyId: text('access_key_id').notNull(),
    /** Sealed (sealed:v1:...). */
    secretAccessKey: text('secret_access_key').notNull(),
    /** proxy (files pass through the server's media route) or presigned (the route hands out a short-lived link). */
    media: text('media').$type<'proxy' | 'presigned'>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('storage_connections_bucket').on(t.accountId, t.mode, t.provider, t.bucket)],
);

// ---- Customer identity (issue 34): members, their sessions and links, single sign-on, scoped API
// keys and the activity log. Secrets are hashed (passwords with scrypt, session and key secrets with
// SHA-256) or sealed (TOTP seeds, the OIDC client secret, PKCE verifiers: store/secrets.ts). ----

/** An account's log-in rules and single sign-on provider; a row once one of them is set (defaults otherwise). */
export const accountIdentity = pgTable('account_identity', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.accountId),
  requireTotp: boolean('require_totp').notNull().default(false),
  passwordLogin: boolean('password_login').notNull().default(true),
  ssoIssuer: text('sso_issuer'),
  ssoClientId: text('sso_client_id'),
  /** Sealed. */
  ssoClientSecret: text('sso_client_secret'),
  ssoAllowedDomains: jsonb('sso_allowed_domains').$type<string[]>(),
  ssoDefaultRole: text('sso_default_role'),
  ssoEnabled: boolean('sso_enabled').notNull().default(false),
  ssoUpdatedAt: ts('sso_updated_at'),
  /** The last use of the account's two keys of old (accounts.test_key_hash, live_key_hash), written at most once a minute. */
  testKeyUsedAt: ts('test_key_used_at'),
  liveKeyUsedAt: ts('live_key_used_at'),
});

/** A person of an account. */
export const members = pgTable(
  'members',
  {
    memberId: text('member_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    email: text('email').notNull(),
    displayName: text('display_name'),
    role: text('role').$type<'owner' | 'admin' | 'manager' | 'reviewer' | 'viewer'>().notNull(),
    status: text('status').$type<'invited' | 'active' | 'removed'>().notNull(),
    /** scrypt, as workers' (domain/workforce/passwords.ts); null: none set. */
    passwordHash: text('password_hash'),
    /** Sealed base32 TOTP secrets: the confirmed one, and one being set up. */
    totpSecret: text('totp_secret'),
    totpPending: text('totp_pending'),
    /** The last TOTP time step accepted: a code is good once. */
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    /** `issuer|sub` of the OpenID Connect subject that logs in as this member. */
    ssoSubject: text('sso_subject'),
    createdAt: ts('created_at').notNull(),
    lastLoginAt: ts('last_login_at'),
  },
  (t) => [
    uniqueIndex('members_email_live').on(t.accountId, sql`lower(${t.email})`).where(sql`${t.status} <> 'removed'`),
    uniqueIndex('members_sso_subject').on(t.accountId, t.ssoSubject).where(sql`${t.ssoSubject} is not null`),
    index('members_account').on(t.accountId, t.createdAt),
  ],
);

/** A member's console sessions: only the SHA-256 of each (256-bit random) secret is kept. */
export const memberSessions = pgTable(
  'member_sessions',
  {
    sessionId: text('session_id').primaryKey(),
    memberId: text('member_id')
      .notNull()
      .references(() => members.memberId),
    accountId: text('account_id').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    via: text('via').$type<'password' | 'sso'>().notNull(),
    createdAt: ts('created_at').notNull(),
    /** Moved by each use (sliding), never past absolute_expires_at. */
    expiresAt: ts('expires_at').notNull(),
    absoluteExpiresAt: ts('absolute_expires_at').notNull(),
    lastUsedAt: ts('last_used_at'),
    endedAt: ts('ended_at'),
    address: text('address'),
    userAgent: text('user_agent'),
  },
  (t) => [index('member_sessions_member').on(t.memberId, t.createdAt)],
);

/** Invitation and password links: signed (their token is an HMAC of this row), expiring, single use. */
export const memberLinks = pgTable(
  'member_links',
  {
    linkId: text('link_id').primaryKey(),
    accountId: text('account_id').notNull(),
    memberId: text('member_id')
      .notNull()
      .references(() => members.memberId),
    purpose: text('purpose').$type<'invitation' | 'password'>().notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    /** A newer link of the member replaced it, or the member was removed. */
    voidedAt: ts('voided_at'),
  },
  (t) => [index('member_links_member').on(t.memberId, t.purpose)],
);

/** Single sign-on log-ins under way: what the callback checks (state, nonce) and needs (the PKCE verifier, sealed). */
export const ssoLogins = pgTable('sso_logins', {
  /** The SHA-256 of the browser's `humantask_sso` cookie. */
  loginId: text('login_id').primaryKey(),
  accountId: text('account_id').notNull(),
  state: text('state').notNull(),
  nonce: text('nonce').notNull(),
  codeVerifier: text('code_verifier').notNull(),
  createdAt: ts('created_at').notNull(),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
});

/** Named, scoped API keys of one mode (the account's two keys of old stay in `accounts`). */
export const apiKeys = pgTable(
  'api_keys',
  {
    keyId: text('key_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    name: text('name').notNull(),
    scopes: text('scopes').array().notNull(),
    /** SHA-256 of the 128-bit random secret, as the keys of old. */
    keyHash: text('key_hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    /** The activity log's actor who made it. */
    createdBy: jsonb('created_by').$type<{ type: string; id?: string; name?: string }>(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [index('api_keys_account').on(t.accountId, t.createdAt)],
);

/** The activity log: append-only, but for the retention sweep. */
export const activity = pgTable(
  'activity',
  {
    activityId: text('activity_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    at: ts('at').notNull(),
    action: text('action').notNull(),
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id'),
    actorName: text('actor_name'),
    targetType: text('target_type').notNull(),
    targetId: text('target_id'),
    mode: text('mode').$type<'test' | 'live'>(),
    address: text('address'),
    requestId: text('request_id'),
    details: jsonb('details').$type<Record<string, unknown>>(),
  },
  (t) => [index('activity_account').on(t.accountId, t.at.desc(), t.activityId.desc()), index('activity_at').on(t.at)],
);
