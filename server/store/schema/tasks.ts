// Accounts and their tasks: the task rows, their tags, the list counters and saved answers of
// requests with an Idempotency-Key.
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, smallint, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { ResultFilesRecord } from '../../domain/model.ts';
import { auditsJson, customerJson, ts } from './columns.ts';

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
