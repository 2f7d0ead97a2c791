// Projects with their parameter and ontology versions, and batches with their counts.
import { and, asc, count, eq, gte, inArray, lte, type SQL } from 'drizzle-orm';
import type { Repositories } from '../domain/ports.ts';
import type { Database, Execute } from './db.ts';
import { statement } from './rows.ts';
import { batches, projectOntologyVersions, projectParamVersions, projects } from './schema.ts';
import { descNullsLast } from './rows.ts';

export function projectRepository(db: Database): Repositories['projects'] {
  return {
    async insert(project) {
      const rows = await db.insert(projects).values(project).onConflictDoNothing().returning({ id: projects.projectId });
      return rows.length === 1;
    },
    async get(accountId, mode, name, options) {
      const q = db
        .select()
        .from(projects)
        .where(and(eq(projects.accountId, accountId), eq(projects.mode, mode), eq(projects.name, name)));
      const rows = options?.forUpdate ? await q.for('update') : await q;
      return rows[0] ?? null;
    },
    async list(accountId, mode, filters) {
      const where: SQL[] = [eq(projects.accountId, accountId), eq(projects.mode, mode)];
      if (filters?.archived !== undefined) where.push(eq(projects.archived, filters.archived));
      return db
        .select()
        .from(projects)
        .where(and(...where))
        .orderBy(asc(projects.createdAt), asc(projects.name));
    },
    async update(project) {
      await db.update(projects).set(project).where(eq(projects.projectId, project.projectId));
    },
    async paramVersions(projectIds) {
      if (projectIds.length === 0) return [];
      return db
        .select()
        .from(projectParamVersions)
        .where(inArray(projectParamVersions.projectId, projectIds))
        .orderBy(asc(projectParamVersions.version));
    },
    async ontologyVersions(projectIds) {
      if (projectIds.length === 0) return [];
      return db
        .select()
        .from(projectOntologyVersions)
        .where(inArray(projectOntologyVersions.projectId, projectIds))
        .orderBy(asc(projectOntologyVersions.version));
    },
    async addParamVersion(version) {
      await db.insert(projectParamVersions).values(version);
    },
    async addOntologyVersion(version) {
      await db.insert(projectOntologyVersions).values(version);
    },
  };
}

export function batchRepository(db: Database, execute: Execute): Repositories['batches'] {
  return {
    async insert(batch) {
      const rows = await db.insert(batches).values(batch).onConflictDoNothing().returning({ id: batches.batchId });
      return rows.length === 1;
    },
    async update(batch) {
      // The calibration score is the quality loop's (store/quality.ts recounts it): never written back from a batch read earlier.
      // audited_at likewise is kept by a trigger on tasks (migration 0024).
      const {
        calibrationScore: _score,
        calibrationReviewed: _reviewed,
        auditedAt: _audited,
        ...columns
      } = batch as typeof batch & {
        calibrationScore?: unknown;
        calibrationReviewed?: unknown;
      };
      await db.update(batches).set(columns).where(eq(batches.batchId, batch.batchId));
    },
    async get(accountId, mode, name, options) {
      const q = db
        .select()
        .from(batches)
        .where(and(eq(batches.accountId, accountId), eq(batches.mode, mode), eq(batches.name, name)));
      const rows = options?.forUpdate ? await q.for('update') : await q;
      return rows[0] ?? null;
    },
    async list(accountId, mode, f, page) {
      const where: SQL[] = [eq(batches.accountId, accountId), eq(batches.mode, mode)];
      if (f.projects?.length) where.push(inArray(batches.project, f.projects));
      if (f.statuses?.length) where.push(inArray(batches.status, f.statuses));
      if (f.startTime) where.push(gte(batches.createdAt, f.startTime));
      if (f.endTime) where.push(lte(batches.createdAt, f.endTime));
      if (f.completedAfter) where.push(gte(batches.completedAt, f.completedAfter));
      if (f.completedBefore) where.push(lte(batches.completedAt, f.completedBefore));
      if (f.auditedAfter) where.push(gte(batches.auditedAt, f.auditedAfter));
      if (f.auditedBefore) where.push(lte(batches.auditedAt, f.auditedBefore));
      if (f.excludeArchived) where.push(eq(batches.archived, false));
      const [rows, totals] = await Promise.all([
        db
          .select()
          .from(batches)
          .where(and(...where))
          .orderBy(descNullsLast(batches.createdAt), asc(batches.name))
          .limit(page.limit + 1)
          .offset(page.offset),
        db
          .select({ n: count() })
          .from(batches)
          .where(and(...where)),
      ]);
      return { batches: rows, total: Number(totals[0]?.n ?? 0) };
    },
    async taskCounts(accountId, mode, name) {
      // Kept by task_counts (scope 2: the batch's tasks), not counted.
      const counts = { pending: 0, completed: 0, canceled: 0, error: 0 };
      const rows = await execute<{ status: keyof typeof counts; n: number | string }>(
        statement(
          `SELECT status, sum(count) AS n FROM task_counts WHERE account_id = $1 AND mode = $2 AND scope = 2 AND batch = $3 GROUP BY status`,
          [accountId, mode, name],
        ),
      );
      for (const r of rows) counts[r.status] = Number(r.n);
      return counts;
    },
    async hasCompletedCalibration(accountId, mode, project) {
      const rows = await db
        .select({ id: batches.batchId })
        .from(batches)
        .where(
          and(
            eq(batches.accountId, accountId),
            eq(batches.mode, mode),
            eq(batches.project, project),
            eq(batches.calibrationBatch, true),
            eq(batches.status, 'completed'),
          ),
        )
        .limit(1);
      return rows.length > 0;
    },
  };
}
