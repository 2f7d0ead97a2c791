// The storage of imports and exports (issue 36): job rows claimed with a lease (as the outbox's
// messages are), their files in pieces, the refused lines, and the keys of imported bodies.
import { and, asc, eq, gt, gte, inArray, sql } from 'drizzle-orm';
import type { ExportRecord, ImportRecord, TransferRepository } from '../domain/ports.ts';
import type { Database, Execute } from './db.ts';
import { workChannel, workPayload } from './notify.ts';
import { rowCodec, statement } from './rows.ts';
import { exportChunks, exportsTable, importChunks, importRefused, imports } from './schema.ts';

const importRow = rowCodec<ImportRecord>(imports);
const exportRow = rowCodec<ExportRecord>(exportsTable);

export function transferRepository(db: Database, execute: Execute): TransferRepository {
  /** Leases the oldest due job of `table` (`states`: those still to work on): one statement, SKIP LOCKED. */
  const claim = async <R>(
    table: 'imports' | 'exports',
    id: string,
    states: string[],
    codec: typeof importRow | typeof exportRow,
    now: Date,
    until: Date,
    token: string,
  ) => {
    const text = `WITH due AS (
        SELECT ${id} FROM ${table} WHERE state IN (${states.map((s) => `'${s}'`).join(', ')}) AND (lease_until IS NULL OR lease_until < $1::timestamptz)
        ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      UPDATE ${table} j SET lease_until = $2::timestamptz, lease_token = $3 FROM due WHERE j.${id} = due.${id}
      RETURNING ${codec.qualified('j')}`;
    const [row] = await execute(statement(text, [now.toISOString(), until.toISOString(), token]));
    return row ? (codec.fromRow(row) as R) : null;
  };
  return {
    async nudgeTransfers() {
      await execute(statement(`SELECT pg_notify('${workChannel}', $1)`, [workPayload('transfer')]));
    },
    async insertImport(record) {
      await db.insert(imports).values(record);
    },
    async getImport(accountId, mode, importId) {
      const [row] = await db
        .select()
        .from(imports)
        .where(and(eq(imports.importId, importId), eq(imports.accountId, accountId), eq(imports.mode, mode)));
      return (row as ImportRecord | undefined) ?? null;
    },
    async addImportChunk(importId, seq, data) {
      await db.insert(importChunks).values({ importId, seq, data });
    },
    async importChunk(importId, seq) {
      const [row] = await db
        .select({ data: importChunks.data })
        .from(importChunks)
        .where(and(eq(importChunks.importId, importId), eq(importChunks.seq, seq)));
      return row?.data ?? null;
    },
    claimImport: (now, until, token) =>
      claim<ImportRecord>('imports', 'import_id', ['receiving', 'fetching', 'queued', 'running'], importRow, now, until, token),
    async saveImportProgress(importId, token, progress, dropChunksBelow) {
      const rows = await db
        .update(imports)
        .set(progress)
        .where(and(eq(imports.importId, importId), eq(imports.leaseToken, token)))
        .returning({ id: imports.importId });
      if (rows.length === 0) return false;
      if (dropChunksBelow > 0)
        await db.delete(importChunks).where(and(eq(importChunks.importId, importId), sql`${importChunks.seq} < ${dropChunksBelow}`));
      return true;
    },
    async deleteImport(importId) {
      await db.delete(imports).where(eq(imports.importId, importId));
    },
    async addRefusedLines(importId, lines) {
      if (lines.length === 0) return;
      await db
        .insert(importRefused)
        .values(lines.map((l) => ({ importId, line: l.line, statusCode: l.statusCode, error: l.error, text: l.text })))
        .onConflictDoNothing();
    },
    async refusedLines(importId, after, limit) {
      return db
        .select({ line: importRefused.line, statusCode: importRefused.statusCode, error: importRefused.error, text: importRefused.text })
        .from(importRefused)
        .where(and(eq(importRefused.importId, importId), gt(importRefused.line, after)))
        .orderBy(asc(importRefused.line))
        .limit(limit);
    },
    async heldImportKeys(accountId, mode, keys) {
      const rows = await execute<{ key: string }>(
        statement(
          // One index probe per key, as heldUniqueIds (repositories.ts) does.
          `SELECT k.key FROM jsonb_array_elements_text($3::jsonb) AS k(key)
           CROSS JOIN LATERAL (SELECT 1 FROM import_keys WHERE account_id = $1 AND mode = $2 AND key = k.key LIMIT 1) AS held`,
          [accountId, mode, JSON.stringify(keys)],
        ),
      );
      return new Set(rows.map((r) => r.key));
    },
    async addImportKeys(accountId, mode, entries) {
      // One parameter for the group (as createMany writes its tasks), not four a row: building a
      // statement of 1,000 parameters cost the import more than running it.
      await execute(
        statement(
          `INSERT INTO import_keys (account_id, mode, key, task_id)
           SELECT $1, $2, k.key, k.task_id FROM jsonb_to_recordset($3::jsonb) AS k(key text, task_id text)`,
          [accountId, mode, JSON.stringify(entries.map((e) => ({ key: e.key, task_id: e.taskId })))],
        ),
      );
    },
    async insertExport(record) {
      await db.insert(exportsTable).values(record);
    },
    async getExport(accountId, mode, exportId) {
      const [row] = await db
        .select()
        .from(exportsTable)
        .where(and(eq(exportsTable.exportId, exportId), eq(exportsTable.accountId, accountId), eq(exportsTable.mode, mode)));
      return (row as ExportRecord | undefined) ?? null;
    },
    async findExport(exportId) {
      const [row] = await db.select().from(exportsTable).where(eq(exportsTable.exportId, exportId));
      return (row as ExportRecord | undefined) ?? null;
    },
    claimExport: (now, until, token) => claim<ExportRecord>('exports', 'export_id', ['queued', 'running'], exportRow, now, until, token),
    async saveExportProgress(exportId, token, progress) {
      const rows = await db
        .update(exportsTable)
        .set(progress)
        .where(and(eq(exportsTable.exportId, exportId), eq(exportsTable.leaseToken, token)))
        .returning({ id: exportsTable.exportId });
      return rows.length > 0;
    },
    async clearExportFile(exportId) {
      await db.delete(exportChunks).where(eq(exportChunks.exportId, exportId));
    },
    async addExportChunk(exportId, seq, data) {
      await db.insert(exportChunks).values({ exportId, seq, data });
    },
    async exportChunks(exportId, fromSeq, limit) {
      return db
        .select({ seq: exportChunks.seq, data: exportChunks.data })
        .from(exportChunks)
        .where(and(eq(exportChunks.exportId, exportId), gte(exportChunks.seq, fromSeq)))
        .orderBy(asc(exportChunks.seq))
        .limit(limit);
    },
    async expireExports(now) {
      const expired = await db
        .update(exportsTable)
        .set({ state: 'expired' })
        .where(and(eq(exportsTable.state, 'completed'), sql`${exportsTable.expiresAt} <= ${now.toISOString()}::timestamptz`))
        .returning({ id: exportsTable.exportId });
      if (expired.length > 0)
        await db.delete(exportChunks).where(
          inArray(
            exportChunks.exportId,
            expired.map((e) => e.id),
          ),
        );
      return expired.length;
    },
  };
}
