// Bulk work (issue 36): imports and exports, each a job row with its state and progress.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { ImportSettings } from '../../domain/ports.ts';
import { ts } from './columns.ts';
import { accounts } from './tasks.ts';

const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

/**
 * An import (POST /v1/imports): its file is kept in import_chunks until read; a server process
 * takes it with a lease (lease_until, fenced by lease_token: each group of lines is written only
 * while the lease is its own) and moves `bytes_read`/`next_line` in the transaction that writes the
 * group's tasks, so a crash resumes exactly after the last group written.
 */
export const imports = pgTable(
  'imports',
  {
    importId: text('import_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** receiving (its upload is arriving: not shown), fetching, queued, running, completed, stopped, failed. */
    state: text('state').notNull(),
    format: text('format').$type<'jsonl' | 'csv'>().notNull(),
    /** The file's settings: type, project, batch, params, attachment_column, source_url, the CSV header once read. */
    settings: jsonb('settings').$type<ImportSettings>().notNull(),
    maxRefusedShare: doublePrecision('max_refused_share').notNull(),
    bytesTotal: bigint('bytes_total', { mode: 'number' }).notNull().default(0),
    bytesRead: bigint('bytes_read', { mode: 'number' }).notNull().default(0),
    /** The number of the next line to read (from 1). */
    nextLine: bigint('next_line', { mode: 'number' }).notNull().default(1),
    linesRead: bigint('lines_read', { mode: 'number' }).notNull().default(0),
    created: bigint('created', { mode: 'number' }).notNull().default(0),
    duplicates: bigint('duplicates', { mode: 'number' }).notNull().default(0),
    refused: bigint('refused', { mode: 'number' }).notNull().default(0),
    /** The batches its tasks joined: completed (if done) once, when the import ends. */
    batches: jsonb('batches').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    error: text('error'),
    leaseUntil: ts('lease_until'),
    leaseToken: text('lease_token'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('imports_due').on(t.leaseUntil).where(sql`${t.state} in ('receiving', 'fetching', 'queued', 'running')`),
    index('imports_account').on(t.accountId, t.mode, t.createdAt),
  ],
);

/** An import's file, in pieces of a fixed size (IMPORT_CHUNK_BYTES but the last), deleted once read. */
export const importChunks = pgTable(
  'import_chunks',
  {
    importId: text('import_id')
      .notNull()
      .references(() => imports.importId, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.importId, t.seq] })],
);

/** The refused lines of an import: number, error, and the line itself (for the file to fix and import again). */
export const importRefused = pgTable(
  'import_refused',
  {
    importId: text('import_id')
      .notNull()
      .references(() => imports.importId, { onDelete: 'cascade' }),
    line: bigint('line', { mode: 'number' }).notNull(),
    statusCode: integer('status_code').notNull(),
    error: text('error').notNull(),
    /** The line as it was (null for one over the size limit, which is not kept). */
    text: text('text'),
  },
  (t) => [primaryKey({ columns: [t.importId, t.line] })],
);

/**
 * The creation bodies imported without a unique_id (their SHA-256 with the type): a body imported
 * again is a duplicate, not a second task. Per account and mode, as unique_id is.
 */
export const importKeys = pgTable(
  'import_keys',
  {
    accountId: text('account_id').notNull(),
    mode: text('mode').notNull(),
    key: text('key').notNull(),
    taskId: text('task_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.mode, t.key] })],
);

/** An export (POST /v1/exports): written by one server process under a lease, kept in export_chunks. */
export const exportsTable = pgTable(
  'exports',
  {
    exportId: text('export_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** queued, running, completed, failed, expired. */
    state: text('state').notNull(),
    format: text('format').notNull(),
    view: text('view').$type<'current' | 'legacy'>().notNull(),
    /** The list filters as the query gave them (shown back), and as the store reads them. */
    filterQuery: jsonb('filter_query').$type<Record<string, string>>().notNull(),
    filters: jsonb('filters').$type<Record<string, unknown>>().notNull(),
    options: jsonb('options').$type<Record<string, unknown>>().notNull(),
    tasksTotal: bigint('tasks_total', { mode: 'number' }).notNull().default(0),
    tasksWritten: bigint('tasks_written', { mode: 'number' }).notNull().default(0),
    skipped: jsonb('skipped').$type<{ reason: string; count: number }[]>().notNull().default(sql`'[]'::jsonb`),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    error: text('error'),
    leaseUntil: ts('lease_until'),
    leaseToken: text('lease_token'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    finishedAt: ts('finished_at'),
    /** When the file is deleted (EXPORT_RETENTION_SECONDS after it was written). */
    expiresAt: ts('expires_at'),
  },
  (t) => [
    index('exports_due').on(t.leaseUntil).where(sql`${t.state} in ('queued', 'running')`),
    index('exports_expiry').on(t.expiresAt).where(sql`${t.state} = 'completed'`),
  ],
);

/** An export's gzip file, in pieces in order. */
export const exportChunks = pgTable(
  'export_chunks',
  {
    exportId: text('export_id')
      .notNull()
      .references(() => exportsTable.exportId, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.exportId, t.seq] })],
);

/**
 * An account's connection to one of its buckets, per mode (issue 37): `s3://<bucket>` (an
 * S3-compatible endpoint) or `gs://<bucket>` (Google Cloud Storage through its S3 interoperability).
 * The secret access key is stored sealed (store/secrets.ts) and never returned.
 */
export const storageConnections = pgTable(
  'storage_connections',
  {
    connectionId: text('connection_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    /** s3 or gcs: the scheme of its attachments' URLs (s3:// or gs://). */
    provider: text('provider').$type<'s3' | 'gcs'>().notNull(),
    bucket: text('bucket').notNull(),
    endpoint: text('endpoint').notNull(),
    region: text('region').notNull(),
    pathStyle: boolean('path_style').notNull(),
    accessKeyId: text('access_key_id').notNull(),
    /** Sealed (sealed:v1:...). */
    secretAccessKey: text('secret_access_key').notNull(),
    /** proxy (files pass through the server's media route) or presigned (the route hands out a short-lived link). */
    media: text('media').$type<'proxy' | 'presigned'>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('storage_connections_bucket').on(t.accountId, t.mode, t.provider, t.bucket)],
);
