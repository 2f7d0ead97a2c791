// The workers repository (domain/workforce/identity.ts): workers, password hashes, tokens.
import { and, desc, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Workforce } from '../domain/workforce/handles.ts';
import { EmailTaken, type TokenKind, type WorkerRecord, type WorkerRepository } from '../domain/workforce/identity.ts';
import type { Database } from './db.ts';
import { isUniqueViolation } from './errors.ts';
import { workerCredentials, workers, workerTokens } from './schema.ts';

/** A token that still works: not revoked, not lapsed. */
const live = (now: Date) => and(isNull(workerTokens.revokedAt), or(isNull(workerTokens.expiresAt), gt(workerTokens.expiresAt, now)));

/** The workers of one workforce: an account's own in one mode, or the operator's. */
const ofWorkforce = (w: Workforce) =>
  and(w.accountId === null ? isNull(workers.accountId) : eq(workers.accountId, w.accountId), eq(workers.mode, w.mode));

/** The workers that are not removed with this address, whatever its letter case (the index workers_email). */
const withAddress = (email: string) => and(sql`lower(${workers.email}) = lower(${email})`, sql`${workers.status} <> 'removed'`);

export function workerRepository(db: Database): WorkerRepository {
  return {
    async insert(worker: WorkerRecord, passwordHash: string | null) {
      try {
        await db.insert(workers).values(worker);
      } catch (err) {
        if (isUniqueViolation(err, 'workers_email_workforce')) throw new EmailTaken();
        throw err;
      }
      if (passwordHash) await db.insert(workerCredentials).values({ workerId: worker.workerId, passwordHash, updatedAt: worker.createdAt });
    },
    async get(workerId, options) {
      const query = db.select().from(workers).where(eq(workers.workerId, workerId));
      const [row] = options?.forUpdate ? await query.for('update') : await query;
      return row ?? null;
    },
    async withEmail(email, limit) {
      return db
        .select({ worker: workers, passwordHash: workerCredentials.passwordHash })
        .from(workers)
        .leftJoin(workerCredentials, eq(workerCredentials.workerId, workers.workerId))
        .where(withAddress(email))
        .orderBy(
          sql`${workers.accountId} IS NULL DESC`,
          sql`${workers.lastSeenAt} DESC NULLS LAST`,
          desc(workers.createdAt),
          desc(workers.workerId),
        )
        .limit(limit);
    },
    async findInWorkforce(workforce, email) {
      const [row] = await db
        .select({ worker: workers, passwordHash: workerCredentials.passwordHash })
        .from(workers)
        .leftJoin(workerCredentials, eq(workerCredentials.workerId, workers.workerId))
        .where(and(withAddress(email), ofWorkforce(workforce)));
      return row ?? null;
    },
    async list(workforce, { status, limit, after }) {
      return db
        .select()
        .from(workers)
        .where(
          and(
            ofWorkforce(workforce),
            status ? eq(workers.status, status) : undefined,
            after
              ? or(
                  lt(workers.createdAt, after.createdAt),
                  and(eq(workers.createdAt, after.createdAt), lt(workers.workerId, after.workerId)),
                )
              : undefined,
          ),
        )
        .orderBy(desc(workers.createdAt), desc(workers.workerId))
        .limit(limit);
    },
    async update(worker) {
      const { workerId, ...rest } = worker;
      await db.update(workers).set(rest).where(eq(workers.workerId, workerId));
    },
    async setPassword(workerId, passwordHash) {
      const updatedAt = new Date();
      await db
        .insert(workerCredentials)
        .values({ workerId, passwordHash, updatedAt })
        .onConflictDoUpdate({ target: workerCredentials.workerId, set: { passwordHash, updatedAt } });
    },
    async insertToken(token) {
      await db.insert(workerTokens).values(token);
    },
    async findToken(tokenHash) {
      const [row] = await db
        .select({ token: workerTokens, worker: workers })
        .from(workerTokens)
        .innerJoin(workers, eq(workers.workerId, workerTokens.workerId))
        .where(eq(workerTokens.tokenHash, tokenHash));
      return row ?? null;
    },
    async touchToken(tokenId, workerId, usedAt, expiresAt) {
      await db.update(workerTokens).set({ lastUsedAt: usedAt, expiresAt }).where(eq(workerTokens.tokenId, tokenId));
      await db.update(workers).set({ lastSeenAt: usedAt }).where(eq(workers.workerId, workerId));
    },
    async revokeToken(workerId, tokenId, kind: TokenKind, now) {
      const rows = await db
        .update(workerTokens)
        .set({ revokedAt: now })
        .where(and(eq(workerTokens.tokenId, tokenId), eq(workerTokens.workerId, workerId), eq(workerTokens.kind, kind), live(now)))
        .returning({ tokenId: workerTokens.tokenId });
      return rows.length > 0;
    },
    async revokeAllTokens(workerId, now) {
      const rows = await db
        .update(workerTokens)
        .set({ revokedAt: now })
        .where(and(eq(workerTokens.workerId, workerId), live(now)))
        .returning({ tokenId: workerTokens.tokenId });
      return rows.length;
    },
    async revokeSessionsBeyond(workerId, keep, now) {
      const beyond = db
        .select({ tokenId: workerTokens.tokenId })
        .from(workerTokens)
        .where(and(eq(workerTokens.workerId, workerId), eq(workerTokens.kind, 'session'), live(now)))
        .orderBy(desc(workerTokens.createdAt), desc(workerTokens.tokenId))
        .offset(keep);
      const rows = await db
        .update(workerTokens)
        .set({ revokedAt: now })
        .where(inArray(workerTokens.tokenId, beyond))
        .returning({ tokenId: workerTokens.tokenId });
      return rows.length;
    },
    async liveApiTokens(workerId, now) {
      return db
        .select()
        .from(workerTokens)
        .where(and(eq(workerTokens.workerId, workerId), eq(workerTokens.kind, 'api'), live(now)))
        .orderBy(desc(workerTokens.createdAt), desc(workerTokens.tokenId));
    },
  };
}
