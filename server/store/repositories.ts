// The storage side of domain/ports.ts, in drizzle-orm: the same queries on PGlite and PostgreSQL.
import { and, asc, count, desc, eq, gte, inArray, isNotNull, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { AccountRecord, PageRequest, Repositories, SavedAnswer, TaskFilters, UnitOfWork } from '../domain/ports.ts';
import { UniqueIdTaken } from '../domain/ports.ts';
import type { Mode, Task } from '../domain/model.ts';
import type { Database, Store } from './db.ts';
import { accounts, batches, deliveryAttempts, idempotencyKeys, outbox, projectOntologyVersions, projectParamVersions, projects, tasks, trainingTasks } from './schema.ts';

const isUniqueViolation = (err: unknown, constraint: string): boolean => {
  for (let e: any = err; e; e = e.cause) {
    if (e.code === '23505' && (e.constraint === constraint || String(e.message).includes(constraint))) return true;
  }
  return false;
};

function taskConditions(accountId: string, mode: Mode, f: TaskFilters): SQL[] {
  const c: SQL[] = [eq(tasks.accountId, accountId), eq(tasks.mode, mode)];
  if (f.startTime) c.push(gte(tasks.createdAt, f.startTime));
  if (f.endTime) c.push(lte(tasks.createdAt, f.endTime));
  if (f.statuses) c.push(inArray(tasks.status, f.statuses));
  if (f.type) c.push(eq(tasks.type, f.type));
  if (f.project) c.push(eq(tasks.project, f.project));
  if (f.batch) c.push(eq(tasks.batch, f.batch));
  if (f.uniqueId) c.push(eq(tasks.uniqueId, f.uniqueId));
  if (f.tags?.length) c.push(sql`${tasks.tags} @> ${JSON.stringify(f.tags)}::jsonb`);
  if (f.customerReviewStatus) c.push(eq(tasks.customerReviewStatus, f.customerReviewStatus));
  if (f.completedAfter) c.push(gte(tasks.completedAt, f.completedAfter));
  if (f.completedBefore) c.push(lte(tasks.completedAt, f.completedBefore));
  if (f.updatedAfter) c.push(gte(tasks.updatedAt, f.updatedAfter));
  if (f.updatedBefore) c.push(lte(tasks.updatedAt, f.updatedBefore));
  return c;
}

function repositories(db: Database): Repositories {
  return {
    tasks: {
      async insert(task: Task) {
        try {
          await db.insert(tasks).values(task);
        } catch (err) {
          if (isUniqueViolation(err, 'tasks_unique_id')) throw new UniqueIdTaken();
          throw err;
        }
      },
      async update(task: Task) {
        try {
          await db.update(tasks).set(task).where(eq(tasks.taskId, task.taskId));
        } catch (err) {
          if (isUniqueViolation(err, 'tasks_unique_id')) throw new UniqueIdTaken();
          throw err;
        }
      },
      async get(accountId, mode, taskId, options) {
        const q = db
          .select()
          .from(tasks)
          .where(and(eq(tasks.taskId, taskId), eq(tasks.accountId, accountId), eq(tasks.mode, mode)));
        const rows = options?.forUpdate ? await q.for('update') : await q;
        return (rows[0] as Task | undefined) ?? null;
      },
      async findByUniqueId(accountId, mode, uniqueId) {
        const rows = await db
          .select()
          .from(tasks)
          .where(and(eq(tasks.accountId, accountId), eq(tasks.mode, mode), eq(tasks.uniqueId, uniqueId)));
        return (rows[0] as Task | undefined) ?? null;
      },
      async list(accountId, mode, filters, page: PageRequest) {
        const where = taskConditions(accountId, mode, filters);
        const pageWhere = [...where];
        if ('after' in page && page.after) {
          const { createdAt, taskId } = page.after;
          pageWhere.push(or(lt(tasks.createdAt, createdAt), and(eq(tasks.createdAt, createdAt), lt(tasks.taskId, taskId)))!);
        }
        let q = db
          .select()
          .from(tasks)
          .where(and(...pageWhere))
          .orderBy(desc(tasks.createdAt), desc(tasks.taskId))
          .limit(page.limit + 1)
          .$dynamic();
        if ('offset' in page) q = q.offset(page.offset);
        const [rows, totals] = await Promise.all([q, db.select({ n: count() }).from(tasks).where(and(...where))]);
        return { tasks: rows as Task[], total: Number(totals[0]?.n ?? 0) };
      },
      async claimAttachmentChecks(now, leaseUntil, limit) {
        const due = db
          .select({ id: tasks.taskId })
          .from(tasks)
          .where(and(isNotNull(tasks.attachmentCheckAt), lte(tasks.attachmentCheckAt, now)))
          .orderBy(asc(tasks.attachmentCheckAt))
          .limit(limit)
          .for('update', { skipLocked: true });
        return (await db.update(tasks).set({ attachmentCheckAt: leaseUntil }).where(inArray(tasks.taskId, due)).returning()) as Task[];
      },
      async dueTestTaskIds(now: Date, limit: number) {
        return db
          .select({ taskId: tasks.taskId, accountId: tasks.accountId, mode: tasks.mode })
          .from(tasks)
          .where(and(isNotNull(tasks.testCompleteAt), lte(tasks.testCompleteAt, now)))
          .orderBy(asc(tasks.testCompleteAt))
          .limit(limit);
      },
    },
    idempotency: {
      async find(accountId, key) {
        const rows = await db
          .select()
          .from(idempotencyKeys)
          .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
        return (rows[0] as SavedAnswer | undefined) ?? null;
      },
      async claim(answer: SavedAnswer) {
        const rows = await db
          .insert(idempotencyKeys)
          .values(answer)
          .onConflictDoNothing()
          .returning({ key: idempotencyKeys.key });
        return rows.length === 1;
      },
      async update(answer: SavedAnswer) {
        await db
          .update(idempotencyKeys)
          .set({ statusCode: answer.statusCode, body: answer.body, fingerprint: answer.fingerprint })
          .where(and(eq(idempotencyKeys.accountId, answer.accountId), eq(idempotencyKeys.key, answer.key)));
      },
      async deleteExpired(now: Date) {
        const rows = await db
          .delete(idempotencyKeys)
          .where(lt(idempotencyKeys.expiresAt, now))
          .returning({ key: idempotencyKeys.key });
        return rows.length;
      },
    },
    projects: {
      async insert(project) {
        const rows = await db.insert(projects).values(project).onConflictDoNothing().returning({ id: projects.projectId });
        return rows.length === 1;
      },
      async get(accountId, mode, name, options) {
        const q = db.select().from(projects).where(and(eq(projects.accountId, accountId), eq(projects.mode, mode), eq(projects.name, name)));
        const rows = options?.forUpdate ? await q.for('update') : await q;
        return rows[0] ?? null;
      },
      async list(accountId, mode) {
        return db
          .select()
          .from(projects)
          .where(and(eq(projects.accountId, accountId), eq(projects.mode, mode)))
          .orderBy(asc(projects.createdAt), asc(projects.name));
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
    },
    batches: {
      async insert(batch) {
        const rows = await db.insert(batches).values(batch).onConflictDoNothing().returning({ id: batches.batchId });
        return rows.length === 1;
      },
      async update(batch) {
        await db.update(batches).set(batch).where(eq(batches.batchId, batch.batchId));
      },
      async get(accountId, mode, name, options) {
        const q = db.select().from(batches).where(and(eq(batches.accountId, accountId), eq(batches.mode, mode), eq(batches.name, name)));
        const rows = options?.forUpdate ? await q.for('update') : await q;
        return rows[0] ?? null;
      },
      async list(accountId, mode, f, page) {
        const where: SQL[] = [eq(batches.accountId, accountId), eq(batches.mode, mode)];
        if (f.project) where.push(eq(batches.project, f.project));
        if (f.status) where.push(eq(batches.status, f.status));
        if (f.startTime) where.push(gte(batches.createdAt, f.startTime));
        if (f.endTime) where.push(lte(batches.createdAt, f.endTime));
        const [rows, totals] = await Promise.all([
          db.select().from(batches).where(and(...where)).orderBy(desc(batches.createdAt), asc(batches.name)).limit(page.limit + 1).offset(page.offset),
          db.select({ n: count() }).from(batches).where(and(...where)),
        ]);
        return { batches: rows, total: Number(totals[0]?.n ?? 0) };
      },
      async taskCounts(accountId, mode, name) {
        const rows = await db
          .select({ status: tasks.status, n: count() })
          .from(tasks)
          .where(and(eq(tasks.accountId, accountId), eq(tasks.mode, mode), eq(tasks.batch, name)))
          .groupBy(tasks.status);
        const counts = { pending: 0, completed: 0, canceled: 0, error: 0 };
        for (const r of rows) counts[r.status] = Number(r.n);
        return counts;
      },
      async hasCompletedCalibration(accountId, mode, project) {
        const rows = await db
          .select({ id: batches.batchId })
          .from(batches)
          .where(and(eq(batches.accountId, accountId), eq(batches.mode, mode), eq(batches.project, project), eq(batches.calibrationBatch, true), eq(batches.status, 'completed')))
          .limit(1);
        return rows.length > 0;
      },
    },
    training: {
      async insert(task) {
        await db.insert(trainingTasks).values(task);
      },
      async get(accountId, mode, kind, id) {
        const rows = await db
          .select()
          .from(trainingTasks)
          .where(and(eq(trainingTasks.id, id), eq(trainingTasks.accountId, accountId), eq(trainingTasks.mode, mode), eq(trainingTasks.kind, kind)));
        return rows[0] ?? null;
      },
      async list(accountId, mode, kind, f, page) {
        const where: SQL[] = [eq(trainingTasks.accountId, accountId), eq(trainingTasks.mode, mode), eq(trainingTasks.kind, kind)];
        if (f.type) where.push(eq(trainingTasks.type, f.type));
        if (f.startTime) where.push(gte(trainingTasks.createdAt, f.startTime));
        if (f.endTime) where.push(lte(trainingTasks.createdAt, f.endTime));
        const [rows, totals] = await Promise.all([
          db.select().from(trainingTasks).where(and(...where)).orderBy(desc(trainingTasks.createdAt), desc(trainingTasks.id)).limit(page.limit + 1).offset(page.offset),
          db.select({ n: count() }).from(trainingTasks).where(and(...where)),
        ]);
        return { tasks: rows, total: Number(totals[0]?.n ?? 0) };
      },
    },
    outbox: {
      async add(message) {
        await db.insert(outbox).values(message);
      },
      async forSubject(accountId, subject) {
        return db.select().from(outbox).where(and(eq(outbox.accountId, accountId), eq(outbox.subject, subject))).orderBy(asc(outbox.createdAt));
      },
      async failed(limit) {
        return db.select().from(outbox).where(isNotNull(outbox.failedAt)).orderBy(desc(outbox.failedAt)).limit(limit);
      },
      async claimDue(now, leaseUntil, limit) {
        const due = db
          .select({ id: outbox.id })
          .from(outbox)
          .where(
            and(
              isNull(outbox.deliveredAt),
              isNull(outbox.failedAt),
              lte(outbox.nextAttemptAt, now),
              or(isNull(outbox.leaseUntil), lt(outbox.leaseUntil, now)),
            ),
          )
          .orderBy(asc(outbox.nextAttemptAt))
          .limit(limit)
          .for('update', { skipLocked: true });
        return db.update(outbox).set({ leaseUntil }).where(inArray(outbox.id, due)).returning();
      },
      async recordAttempt(message, attempt) {
        await db.insert(deliveryAttempts).values(attempt);
        await db.update(outbox).set(message).where(eq(outbox.id, message.id));
      },
      async attemptsFor(accountId, subject) {
        return db
          .select()
          .from(deliveryAttempts)
          .where(and(eq(deliveryAttempts.accountId, accountId), eq(deliveryAttempts.subject, subject)))
          .orderBy(asc(deliveryAttempts.attemptedAt), asc(deliveryAttempts.id));
      },
    },
    accounts: {
      async findById(accountId: string) {
        const rows = await db.select().from(accounts).where(eq(accounts.accountId, accountId));
        return rows[0] ?? null;
      },
      async findByKeyHash(keyHash: string) {
        const rows = await db
          .select()
          .from(accounts)
          .where(or(eq(accounts.testKeyHash, keyHash), eq(accounts.liveKeyHash, keyHash)));
        const row = rows[0];
        if (!row) return null;
        const { testKeyHash, liveKeyHash, ...account } = row;
        return { account, mode: testKeyHash === keyHash ? 'test' : 'live' };
      },
      async findByName(name: string) {
        const rows = await db.select().from(accounts).where(eq(accounts.name, name));
        return rows[0] ?? null;
      },
      async insert(account: AccountRecord) {
        await db.insert(accounts).values(account);
      },
      async update(account: AccountRecord) {
        await db.update(accounts).set(account).where(eq(accounts.accountId, account.accountId));
      },
      async list() {
        return db.select().from(accounts).orderBy(asc(accounts.createdAt));
      },
      async count() {
        const rows = await db.select({ n: count() }).from(accounts);
        return Number(rows[0]?.n ?? 0);
      },
      async countLiveRequest(accountId: string) {
        await db
          .update(accounts)
          .set({ liveRequestCount: sql`${accounts.liveRequestCount} + 1` })
          .where(eq(accounts.accountId, accountId));
      },
    },
  };
}

export function unitOfWork(store: Store): UnitOfWork {
  return {
    ...repositories(store.db),
    transaction: (work) => store.db.transaction((tx) => work(repositories(tx as unknown as Database))),
  };
}

