// Opens the store: embedded PGlite by default, PostgreSQL when a connection string is given. Both
// go through drizzle-orm with the same schema, queries and migrations.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { listenPostgres, type ListenHandlers, type Unlisten } from './notify.ts';
import { withStatementName } from './errors.ts';
import { imageCache, type ImageCache } from './image-cache.ts';
import { lockDataDir } from './lock.ts';
import { connectionTurns, preparedExecutor } from './pglite-prepared.ts';
import * as schema from './schema.ts';
import { loadSecretsKey, type KeySettings, type SecretBox } from './secrets.ts';

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

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
  /** Calls `onPayload` for each NOTIFY on `channel` (after the sender's commit); see notify.ts. */
  listen(channel: string, handlers: ListenHandlers): Promise<Unlisten>;
  /** Seals and opens the account secrets stored (see secrets.ts). */
  secrets: SecretBox;
  /** PostgreSQL's connection pool usage (for the metrics); none on the embedded database. */
  pool?: () => { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export interface StoreOptions extends KeySettings {
  databaseUrl?: string | undefined;
  /**
   * A migrated database image (see `writeMemoryImage`) that an in-memory DATA_DIR starts from, instead
   * of laying out and migrating its own once per process: the tests make one for the whole run.
   */
  memoryImage?: string | undefined;
  /** The folder that keeps the image of a new, migrated embedded database between processes (image-cache.ts); null: none. */
  imageCache?: string | null | undefined;
  /** Where a problem that does not stop the start is told (default: stderr). */
  warn?: (message: string) => void;
}

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

// bigint columns come back as strings from pg; the schema maps the ones we use to numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export async function openStore(options: StoreOptions): Promise<Store> {
  const warn = options.warn ?? ((m: string) => console.warn(`warning: ${m}`));
  let store: Omit<Store, 'secrets'>;
  if (options.databaseUrl) {
    // No JIT: the server's statements are short, and a plan whose rows are guessed high (a tag
    // known only when the statement runs) spent 1.2 s compiling a 20 ms page at 10⁶ tasks.
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10, options: '-c jit=off' });
    const db = drizzlePg(pool, { schema });
    await migrateExclusively(pool);
    const execute: Execute = <R>(st: Statement) =>
      withStatementName(st.name, async () => (await pool.query({ name: st.name, text: st.text, values: st.values })).rows as R[]);
    const { databaseUrl } = options;
    const listen: Store['listen'] = (channel, handlers) => listenPostgres(databaseUrl, channel, handlers);
    const usage = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    store = { db: db as unknown as Database, kind: 'postgres', execute, listen, pool: usage, close: () => pool.end() };
  } else if (options.dataDir === 'memory://') {
    const pglite = await import('@electric-sql/pglite');
    const { PGlite } = pglite;
    const image = options.memoryImage
      ? new Blob([readFileSync(options.memoryImage)])
      : await migratedImage(PGlite, cacheIn(options.imageCache, PGlite));
    const client = new PGlite({ startParams: pgliteStartParams(PGlite), loadDataDir: image });
    // Nothing is left to apply (the image has every migration): drizzle only reads its journal.
    store = pgliteStore(client, await migrated(client), pglite);
  } else {
    // The folder and its files are its owner's only (the WAL holds everything the service stores).
    process.umask(0o077);
    if (existsSync(options.dataDir)) {
      const mode = statSync(options.dataDir).mode & 0o777;
      if (mode & 0o077)
        warn(
          `DATA_DIR ${path.resolve(options.dataDir)} has mode ${mode.toString(8)}: other local users may read the database (chmod 700 it)`,
        );
    } else mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const lock = lockDataDir(options.dataDir);
    try {
      const dir = path.resolve(options.dataDir);
      const pglite = await import('@electric-sql/pglite');
      const { PGlite } = pglite;
      const cache = cacheIn(options.imageCache, PGlite);
      const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
      // A new folder is laid out from the kept image of a migrated database when there is one.
      const image = fresh ? (cache?.file() ?? null) : null;
      if (fresh && image) await unpackInto(dir, image);
      else if (fresh) await initdbApart({ dir });
      const client = new PGlite(dir, { startParams: pgliteStartParams(PGlite) });
      const db = await migrated(client);
      // Kept before anything is stored in it (the sealed secrets' check below, the accounts later).
      if (fresh && !image && cache) await cache.write(await client.dumpDataDir('none'));
      const s = pgliteStore(client, db, pglite);
      ownerOnly(options.dataDir);
      store = { ...s, close: () => s.close().finally(() => lock.release()) };
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  try {
    return { ...store, secrets: await sealedSecrets(store, options, warn) };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * drizzle's migrator takes no lock: processes starting at once on one database (WORKERS, several
 * machines) would each create its table and apply the same migrations. They take turns under an
 * advisory lock; whoever comes second finds nothing left to do.
 */
async function migrateExclusively(pool: pg.Pool) {
  const client = await pool.connect();
  let failed = true;
  try {
    await client.query(`SELECT pg_advisory_lock(hashtext('humantask migrations'))`);
    await migratePg(drizzlePg(client, { schema }), { migrationsFolder });
    await client.query(`SELECT pg_advisory_unlock(hashtext('humantask migrations'))`);
    failed = false;
  } finally {
    // A connection that failed is closed, and its lock goes with it.
    client.release(failed);
  }
}

/**
 * PGlite's start settings: its defaults, with shared_buffers at 16 MB instead of 128 MB (an
 * embedded database of one process; the operating system's page cache holds the files as well).
 * PGlite is loaded only when it is used: with DATABASE_URL the process holds none of it.
 */
const pgliteStartParams = (pglite: typeof PGlite) => [...pglite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/**
 * Lays out a new database in a child process: in `dir`, or as a tar image (written to `image`).
 * PGlite runs initdb in a second PGlite and a WebAssembly initdb of its own, and the process keeps
 * that memory afterwards (about 500 MB of the 0.9 GB a fresh DATA_DIR used to hold right after
 * start); a child gives it back when it exits.
 */
async function initdbApart(target: { dir: string; from?: string } | { image: string }): Promise<void> {
  // With `from` (the kept image of a migrated database), the folder is unpacked from it instead:
  // apart too, since unpacking grows the WebAssembly memory as initdb does.
  const code = `const { PGlite } = await import(process.argv[1]);
    const [dir, image, from] = process.argv.slice(2);
    const load = from ? { loadDataDir: new Blob([(await import('node:fs')).readFileSync(from)]) } : {};
    const db = dir ? new PGlite(dir, load) : new PGlite();
    await db.waitReady;
    if (image) (await import('node:fs')).writeFileSync(image, Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer()));
    await db.close();`;
  const args = 'dir' in target ? [target.dir, '', target.from ?? ''] : ['', target.image];
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, import.meta.resolve('@electric-sql/pglite'), ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [exitCode] = (await once(child, 'exit')) as [number | null];
  if (exitCode !== 0) throw new Error(`could not lay out a new database (initdb exited with ${exitCode}): ${stderr.trim()}`);
}

/**
 * Lays out the new folder `dir` from a kept image: unpacked beside it (apart: unpacking grows the
 * WebAssembly memory as initdb does), then moved in, never over what the folder already holds (its
 * lock file: an image kept from another folder holds that folder's).
 */
async function unpackInto(dir: string, image: string): Promise<void> {
  const beside = mkdtempSync(path.join(path.dirname(dir), '.humantask-layout-'));
  try {
    await initdbApart({ dir: beside, from: image });
    for (const entry of readdirSync(beside))
      if (!existsSync(path.join(dir, entry))) renameSync(path.join(beside, entry), path.join(dir, entry));
  } finally {
    rmSync(beside, { recursive: true, force: true });
  }
}

let databaseImage: Promise<Blob> | undefined;

/**
 * The image of a new, migrated database, made once per process: every in-memory database (the
 * tests open many) starts from a copy instead of running initdb and the migrations again.
 */
function migratedImage(pglite: typeof PGlite, cache: ImageCache | null = null): Promise<Blob> {
  databaseImage ??= (async () => {
    const kept = cache?.file();
    if (kept) return new Blob([readFileSync(kept)]);
    const dir = mkdtempSync(path.join(tmpdir(), 'humantask-initdb-'));
    try {
      const image = path.join(dir, 'pgdata.tar');
      await initdbApart({ image });
      const client = new pglite({ startParams: pgliteStartParams(pglite), loadDataDir: new Blob([readFileSync(image)]) });
      try {
        await migrated(client);
        const image = await client.dumpDataDir('none');
        await cache?.write(image);
        return image;
      } finally {
        await client.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  databaseImage.catch(() => (databaseImage = undefined));
  return databaseImage;
}

/** Writes the image of a new, migrated in-memory database to `file` (a tar, for `memoryImage`). */
export async function writeMemoryImage(file: string, cacheFolder: string | null = null): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  writeFileSync(file, Buffer.from(await (await migratedImage(PGlite, cacheIn(cacheFolder, PGlite))).arrayBuffer()));
}

/** The kept images of this PGlite and these migrations in `folder` (none without a folder). */
const cacheIn = (folder: string | null | undefined, pglite: typeof PGlite) =>
  folder ? imageCache(folder, migrationsFolder, pgliteStartParams(pglite)) : null;

/**
 * PGlite lays out a new database from its archive with mode 0666 whatever the umask (the files it
 * makes later follow the umask): the files are made the owner's only once it is open.
 */
function ownerOnly(dir: string) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) ownerOnly(p);
    else if (entry.isFile() && (statSync(p).mode & 0o077) !== 0) chmodSync(p, 0o600);
  }
}

async function migrated(client: PGlite) {
  const [{ drizzle }, { migrate }] = await Promise.all([import('drizzle-orm/pglite'), import('drizzle-orm/pglite/migrator')]);
  const db = drizzle(client, { schema });
  await migrate(db, { migrationsFolder });
  return db;
}

function pgliteStore(client: PGlite, db: PgliteDatabase<Schema>, pglite: typeof import('@electric-sql/pglite')): Omit<Store, 'secrets'> {
  // Each statement parsed and planned once (see pglite-prepared.ts), as pg's named statements are,
  // and never inside a transaction that is open: both take a turn on the connection.
  const turn = connectionTurns();
  const prepared = preparedExecutor(client, pglite);
  const execute: Execute = (st) => turn(() => prepared(st));
  const transactional: PgliteDatabase<Schema> = Object.create(db, {
    transaction: { value: (...args: Parameters<typeof db.transaction>) => turn(() => db.transaction(...args)) },
  });
  // One process, one connection: a NOTIFY reaches the listener of the same client.
  const listen: Store['listen'] = (channel, handlers) => client.listen(channel, handlers.onPayload);
  return { db: transactional as unknown as Database, kind: 'pglite', execute, listen, close: () => client.close() };
}

/**
 * The key of the account secrets, checked against a sealed secret of the database (a wrong or
 * missing key stops the start); secrets stored before sealing existed are sealed now.
 */
async function sealedSecrets(store: Omit<Store, 'secrets'>, options: StoreOptions, warn: (m: string) => void): Promise<SecretBox> {
  const [sample] = await store.execute<{ secret: string }>({
    name: 'sealed_secret_sample',
    text: `SELECT signing_secret AS secret FROM accounts WHERE signing_secret LIKE 'sealed:v1:%' LIMIT 1`,
    values: [],
  });
  const box = loadSecretsKey(options, () => !sample, warn);
  // A key for this process only (an in-memory DATA_DIR): nothing stored before may depend on it.
  if (box.ephemeral) return box;
  if (sample) box.open(sample.secret);
  const plain = await store.execute<{ account_id: string; callback_auth_key: string; signing_secret: string }>({
    name: 'plain_secrets',
    text: `SELECT account_id, callback_auth_key, signing_secret FROM accounts WHERE callback_auth_key NOT LIKE 'sealed:v1:%' OR signing_secret NOT LIKE 'sealed:v1:%'`,
    values: [],
  });
  for (const row of plain) {
    await store.execute({
      name: 'seal_secrets',
      text: 'UPDATE accounts SET callback_auth_key = $2, signing_secret = $3 WHERE account_id = $1',
      values: [row.account_id, box.seal(row.callback_auth_key), box.seal(row.signing_secret)],
    });
  }
  if (plain.length > 0) warn(`sealed the secrets of ${plain.length} account(s) stored in plain text (key: ${box.source})`);
  return box;
}
