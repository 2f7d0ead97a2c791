// The outbox of callbacks and their delivery attempts.
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { customerJson, ts } from './columns.ts';
import { accounts } from './tasks.ts';

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
    // The callbacks given up on, per account and mode, by when (the overview counts them, the
    // account's list of failed ones walks them).
    index('outbox_failed').on(t.accountId, t.mode, t.failedAt).where(sql`${t.failedAt} is not null`),
    // The account's list of callbacks, the newest first: all of them, and those still to deliver.
    index('outbox_account').on(t.accountId, t.mode, t.createdAt, t.id),
    index('outbox_pending').on(t.accountId, t.mode, t.createdAt, t.id).where(sql`${t.deliveredAt} is null and ${t.failedAt} is null`),
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
