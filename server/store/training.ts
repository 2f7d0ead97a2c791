// Training and evaluation tasks.
import { and, count, eq, gte, inArray, lte, type SQL } from 'drizzle-orm';
import type { Repositories } from '../domain/ports.ts';
import type { Database } from './db.ts';
import { trainingTasks } from './schema.ts';
import { descNullsLast } from './rows.ts';

export function trainingRepository(db: Database): Repositories['training'] {
  return {
    async insert(task) {
      await db.insert(trainingTasks).values(task);
    },
    async insertPromoted(task) {
      // The partial unique index (source_task_id, kind) makes a second promotion a no-op, even when two race.
      const [inserted] = await db.insert(trainingTasks).values(task).onConflictDoNothing().returning();
      if (inserted) return inserted;
      const [earlier] = await db
        .select()
        .from(trainingTasks)
        .where(and(eq(trainingTasks.sourceTaskId, task.sourceTaskId), eq(trainingTasks.kind, task.kind)));
      if (!earlier) throw new Error(`training task promoted from ${task.sourceTaskId} neither inserted nor found`);
      return earlier;
    },
    async get(accountId, mode, kind, id) {
      const rows = await db
        .select()
        .from(trainingTasks)
        .where(
          and(eq(trainingTasks.id, id), eq(trainingTasks.accountId, accountId), eq(trainingTasks.mode, mode), eq(trainingTasks.kind, kind)),
        );
      return rows[0] ?? null;
    },
    async list(accountId, mode, kind, f, page) {
      const where: SQL[] = [eq(trainingTasks.accountId, accountId), eq(trainingTasks.mode, mode), eq(trainingTasks.kind, kind)];
      if (f.types?.length) where.push(inArray(trainingTasks.type, f.types));
      if (f.startTime) where.push(gte(trainingTasks.createdAt, f.startTime));
      if (f.endTime) where.push(lte(trainingTasks.createdAt, f.endTime));
      const [rows, totals] = await Promise.all([
        db
          .select()
          .from(trainingTasks)
          .where(and(...where))
          .orderBy(descNullsLast(trainingTasks.createdAt), descNullsLast(trainingTasks.id))
          .limit(page.limit + 1)
          .offset(page.offset),
        db
          .select({ n: count() })
          .from(trainingTasks)
          .where(and(...where)),
      ]);
      return { tasks: rows, total: Number(totals[0]?.n ?? 0) };
    },
  };
}
