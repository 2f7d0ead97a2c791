// Saved answers of requests with an Idempotency-Key: claimed with the creation, found by a retry.
import { and, eq, lt, lte } from 'drizzle-orm';
import type { Repositories, SavedAnswer } from '../domain/ports.ts';
import type { Database, Execute } from './db.ts';
import { rowCodec, statement } from './rows.ts';
import { idempotencyKeys } from './schema.ts';

export const answerRow = rowCodec<SavedAnswer>(idempotencyKeys);

export function idempotencyRepository(db: Database, execute: Execute): Repositories['idempotency'] {
  return {
    async find(accountId, mode, key) {
      const text = `SELECT ${answerRow.columnList} FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3`;
      const [row] = await execute(statement(text, [accountId, mode, key]));
      return row ? answerRow.fromRow(row) : null;
    },
    async claim(answer: SavedAnswer) {
      // An expired claim is taken over.
      const rows = await db
        .insert(idempotencyKeys)
        .values(answer)
        .onConflictDoUpdate({
          target: [idempotencyKeys.accountId, idempotencyKeys.mode, idempotencyKeys.key],
          set: {
            fingerprint: answer.fingerprint,
            statusCode: answer.statusCode,
            body: answer.body,
            createdAt: answer.createdAt,
            expiresAt: answer.expiresAt,
          },
          setWhere: lte(idempotencyKeys.expiresAt, answer.createdAt),
        })
        .returning({ key: idempotencyKeys.key });
      return rows.length === 1;
    },
    async update(answer: SavedAnswer) {
      await db
        .update(idempotencyKeys)
        .set({ statusCode: answer.statusCode, body: answer.body, fingerprint: answer.fingerprint, expiresAt: answer.expiresAt })
        .where(
          and(eq(idempotencyKeys.accountId, answer.accountId), eq(idempotencyKeys.mode, answer.mode), eq(idempotencyKeys.key, answer.key)),
        );
    },
    async release(accountId, mode, key) {
      await db
        .delete(idempotencyKeys)
        .where(
          and(
            eq(idempotencyKeys.accountId, accountId),
            eq(idempotencyKeys.mode, mode),
            eq(idempotencyKeys.key, key),
            eq(idempotencyKeys.statusCode, 0),
          ),
        );
    },
    async deleteExpired(now: Date) {
      const rows = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).returning({ key: idempotencyKeys.key });
      return rows.length;
    },
  };
}
