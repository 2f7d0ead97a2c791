// Opens the store: embedded PGlite by default, PostgreSQL when a connection string is given. Both
// go through drizzle-orm with the same schema, queries and migrations.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import * as schema from './schema.ts';

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction: the same query interface as the database. */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * One SQL statement with `$1`-style parameters. The hot paths (authentication, creation, reading a
 * task, a list page) run as such single statements, prepared once per connection on PostgreSQL, so
 * that a request costs one round trip and no query building.
 */
export interface Statement {
  /** The prepared statement's name: the same name always goes with the same text. */
  name: string;
  text: string;
  values: unknown[];
}

export type Execute = <R = Record<string, unknown>>(statement: Statement) => Promise<R[]>;

export interface Store {
  db: Database;
  kind: 'pglite' | 'postgres';
  /** Runs one statement outside any transaction (it is a transaction of its own). */
  execute: Execute;
  /** PostgreSQL's connection pool usage (for the metrics); none on the embedded database. */
  pool?: () => { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

// bigint columns come back as strings from pg; the schema maps the ones we use to numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export async function openStore(options: { databaseUrl?: string | undefined; dataDir: string }): Promise<Store> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    const db = drizzlePg(pool, { schema });
    await migratePg(db, { migrationsFolder });
    const execute: Execute = async <R,>(st: Statement) => (await pool.query({ name: st.name, text: st.text, values: st.values })).rows as R[];
    const usage = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    return { db: db as unknown as Database, kind: 'postgres', execute, pool: usage, close: () => pool.end() };
  }
  const inMemory = options.dataDir === 'memory://';
  if (!inMemory) mkdirSync(options.dataDir, { recursive: true });
  const client = inMemory ? new PGlite() : new PGlite(path.resolve(options.dataDir));
  const db = drizzlePglite(client, { schema });
  await migratePglite(db, { migrationsFolder });
  const execute: Execute = async <R,>(st: Statement) => (await client.query<R>(st.text, st.values)).rows;
  return { db: db as unknown as Database, kind: 'pglite', execute, close: () => client.close() };
}
