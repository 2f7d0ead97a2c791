// The outbox of callbacks: queued with the change that causes them, claimed by the dispatchers,
// and their delivery attempts.
import { and, asc, desc, eq, isNotNull } from 'drizzle-orm';
import type { ClaimedMessage, DeliveryAttempt, OutboxMessage, Repositories } from '../domain/ports.ts';
import { isRecord } from '../../shared/json.ts';
import type { Database, Execute } from './db.ts';
import type { SecretBox } from './secrets.ts';
import { rowCodec, statement } from './rows.ts';
import { workChannel, workPayload } from './notify.ts';
import { deliveryAttempts, outbox } from './schema.ts';

export const outboxRow = rowCodec<OutboxMessage>(outbox);
const attemptRow = rowCodec<DeliveryAttempt>(deliveryAttempts);

export function outboxRepository(db: Database, execute: Execute, secrets: SecretBox): Repositories['outbox'] {
  return {
    async add(message) {
      // With a nudge to the dispatchers, sent when the transaction commits.
      const values = outboxRow.values(message);
      const text = `WITH m AS (INSERT INTO outbox (${outboxRow.columnList}) VALUES (${outboxRow.placeholders(1)}))
        SELECT pg_notify('${workChannel}', $${values.push(workPayload('outbox'))})`;
      await execute(statement(text, values));
    },
    async page(accountId, mode, filters, limit, after) {
      const values: unknown[] = [accountId, mode];
      const add = (v: unknown) => `$${values.push(v)}`;
      // Each order walks an index of its own (schema/outbox.ts): outbox_failed for the failed ones,
      // outbox_pending for those still to deliver, outbox_account for the rest.
      const key = filters.state === 'failed' ? 'o.failed_at' : 'o.created_at';
      const where = ['o.account_id = $1', 'o.mode = $2'];
      if (filters.state === 'failed') where.push('o.failed_at IS NOT NULL');
      if (filters.state === 'pending') where.push('o.delivered_at IS NULL AND o.failed_at IS NULL');
      if (filters.state === 'delivered') where.push('o.delivered_at IS NOT NULL');
      if (filters.event) where.push(`o.event = ${add(filters.event)}`);
      if (after) where.push(`(${key}, o.id) < (${add(after.at.toISOString())}::timestamptz, ${add(after.id)})`);
      // The latest attempt as one JSON object keyed by column: read back by the attempts' own codec.
      const text = `SELECT ${outboxRow.qualified('o')}, (
          SELECT row_to_json(d) FROM delivery_attempts d
          WHERE d.account_id = o.account_id AND d.subject = o.subject AND d.message_id = o.id
          ORDER BY d.attempted_at DESC, d.id DESC LIMIT 1) AS last_attempt
        FROM outbox o
        WHERE ${where.join(' AND ')}
        ORDER BY ${key} DESC, o.id DESC LIMIT ${add(limit)}`;
      const rows = await execute<Record<string, unknown>>(statement(text, values));
      return rows.map((r) => ({
        message: outboxRow.fromRow(r),
        lastAttempt: isRecord(r.last_attempt) ? attemptRow.fromRow(r.last_attempt) : null,
      }));
    },
    async forSubject(accountId, subject) {
      return db
        .select()
        .from(outbox)
        .where(and(eq(outbox.accountId, accountId), eq(outbox.subject, subject)))
        .orderBy(asc(outbox.createdAt));
    },
    async failed(limit) {
      return db.select().from(outbox).where(isNotNull(outbox.failedAt)).orderBy(desc(outbox.failedAt)).limit(limit);
    },
    async claimDue(now, leaseUntil, limit) {
      // One statement: lease the due messages (skipping those another dispatcher is claiming)
      // and return them with their account's sending secrets.
      const text = `WITH due AS (
          SELECT id FROM outbox
          WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $1::timestamptz AND (lease_until IS NULL OR lease_until < $1::timestamptz)
          ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        UPDATE outbox o SET lease_until = $2::timestamptz FROM due, accounts a
        WHERE o.id = due.id AND a.account_id = o.account_id
        RETURNING ${outboxRow.qualified('o')}, a.callback_auth_key, a.signing_secret`;
      const rows = await execute<Record<string, unknown> & { callback_auth_key: string; signing_secret: string }>(
        statement(text, [now.toISOString(), leaseUntil.toISOString(), limit]),
      );
      // Opened message by message: secrets that cannot be opened fail their own message, not the claim.
      return rows.map((r): ClaimedMessage => {
        const message = outboxRow.fromRow(r);
        try {
          return { message, callbackAuthKey: secrets.open(r.callback_auth_key), signingSecret: secrets.open(r.signing_secret) };
        } catch (err) {
          return { message, unreadableSecrets: err instanceof Error ? err.message : String(err) };
        }
      });
    },
    async recordAttempt(message, attempt, callbackCompleted) {
      // One statement, only the changed columns: no read, no lost update of the task's other fields.
      const values: unknown[] = attemptRow.values(attempt);
      const add = (v: unknown) => `$${values.push(v)}`;
      const iso = (d: Date | null) => d?.toISOString() ?? null;
      const text = `WITH attempt AS (INSERT INTO delivery_attempts (${attemptRow.columnList}) VALUES (${attemptRow.placeholders(1)})),
        message AS (
          UPDATE outbox SET attempts = ${add(message.attempts)}, first_attempt_at = ${add(iso(message.firstAttemptAt))}::timestamptz,
            lease_until = NULL, next_attempt_at = ${add(iso(message.nextAttemptAt))}::timestamptz, delivered_at = ${add(iso(message.deliveredAt))}::timestamptz,
            failed_at = ${add(iso(message.failedAt))}::timestamptz
          WHERE id = ${add(message.id)})
        UPDATE tasks SET callback_completed = ${add(callbackCompleted)}::boolean
        WHERE ${add(callbackCompleted)}::boolean IS NOT NULL AND task_id = ${add(message.subject)} AND account_id = ${add(message.accountId)} AND mode = ${add(message.mode)}`;
      await execute(statement(text, values));
    },
    async attemptsFor(accountId, subject) {
      return db
        .select()
        .from(deliveryAttempts)
        .where(and(eq(deliveryAttempts.accountId, accountId), eq(deliveryAttempts.subject, subject)))
        .orderBy(asc(deliveryAttempts.attemptedAt), asc(deliveryAttempts.id));
    },
  };
}
