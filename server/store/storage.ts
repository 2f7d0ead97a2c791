// The accounts' storage connections (issue 37): one row per bucket, account and mode, its secret
// key sealed with the server's secrets key (store/secrets.ts) and opened only for signing.
import { and, asc, eq, or } from 'drizzle-orm';
import type { Mode } from '../domain/model.ts';
import type { StorageConnection, StorageRepository } from '../domain/ports.ts';
import type { Database } from './db.ts';
import type { SecretBox } from './secrets.ts';
import { storageConnections } from './schema.ts';

type Row = typeof storageConnections.$inferSelect;

const shown = ({ secretAccessKey: _secret, ...row }: Row): StorageConnection => row;

export function storageRepository(db: Database, secrets: SecretBox): StorageRepository {
  const of = (accountId: string, mode: Mode) => and(eq(storageConnections.accountId, accountId), eq(storageConnections.mode, mode));
  return {
    async insert(connection, secretAccessKey) {
      const rows = await db
        .insert(storageConnections)
        .values({ ...connection, secretAccessKey: secrets.seal(secretAccessKey) })
        .onConflictDoNothing()
        .returning({ id: storageConnections.connectionId });
      return rows.length === 1;
    },
    async list(accountId, mode) {
      const rows = await db
        .select()
        .from(storageConnections)
        .where(of(accountId, mode))
        .orderBy(asc(storageConnections.createdAt), asc(storageConnections.connectionId));
      return rows.map(shown);
    },
    async get(accountId, mode, connectionId) {
      const [row] = await db
        .select()
        .from(storageConnections)
        .where(and(of(accountId, mode), eq(storageConnections.connectionId, connectionId)));
      return row ? shown(row) : null;
    },
    async forBucket(accountId, mode, provider, bucket) {
      const [row] = await db
        .select()
        .from(storageConnections)
        .where(and(of(accountId, mode), eq(storageConnections.provider, provider), eq(storageConnections.bucket, bucket)));
      return row ? { ...shown(row), secretAccessKey: secrets.open(row.secretAccessKey) } : null;
    },
    async unconnected(accountId, mode, buckets) {
      if (buckets.length === 0) return [];
      const rows = await db
        .select({ provider: storageConnections.provider, bucket: storageConnections.bucket })
        .from(storageConnections)
        .where(
          and(
            of(accountId, mode),
            or(...buckets.map((b) => and(eq(storageConnections.provider, b.provider), eq(storageConnections.bucket, b.bucket)))),
          ),
        );
      const known = new Set(rows.map((r) => `${r.provider}/${r.bucket}`));
      return buckets.filter((b) => !known.has(`${b.provider}/${b.bucket}`));
    },
    async delete(accountId, mode, connectionId) {
      const [row] = await db
        .delete(storageConnections)
        .where(and(of(accountId, mode), eq(storageConnections.connectionId, connectionId)))
        .returning();
      return row ? shown(row) : null;
    },
  };
}
