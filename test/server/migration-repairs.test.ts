// Issue 32, item 21 (and item 1's backfill): migration 0024 on a database written before it. Training
// and evaluation creation used to store a numeric string past the contract's bounds as that number
// ("min_width": "99999999", "increment_seconds": "0.5"), after which the account's training list
// answered 500 on every call; the migration brings each such number to the nearest value allowed, and
// gives the batches audited before it their audited_at. The database is made as an older server left
// it (the migrations before 0024, then its rows written as that server wrote them), and the current
// server is started on it. PGlite (a data folder) and PostgreSQL.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { readConfig } from '../../server/config.ts';
import { hashKey } from '../../server/domain/accounts.ts';
import { startServer, type RunningServer } from '../../server/main.ts';
import { clusterAt, dropDatabase } from '../support/postgres.ts';
import { client, databases, hasPostgres } from '../support/server.ts';

const migrations = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'server', 'store', 'migrations');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The migrations folder as it was before this one: its files, the journal cut before 0024. */
function migrationsBefore(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'humantask-migrations-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'meta'));
  for (const f of readdirSync(migrations)) if (f.endsWith('.sql')) copyFileSync(path.join(migrations, f), path.join(dir, f));
  const journal = JSON.parse(readFileSync(path.join(migrations, 'meta', '_journal.json'), 'utf8'));
  const at = journal.entries.findIndex((e: { tag: string }) => e.tag.endsWith('_customer_order_archives_audits'));
  expect(at).toBeGreaterThan(0);
  writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
  return dir;
}

const testKey = 'test_migration_0020_key_0123456789';
const trainingRows = [
  {
    id: '65f1c0a2b3c4d5e6f7a8c101',
    type: 'imageannotation',
    params: {
      attachment: 'https://example.com/a.jpg',
      geometries: {
        box: { objects_to_annotate: ['car'], min_width: 99999999, min_height: 30 },
        polygon: { objects_to_annotate: ['road'], max_vertices: 5000 },
      },
    },
    expected: { annotations: [] },
  },
  {
    id: '65f1c0a2b3c4d5e6f7a8c102',
    type: 'textcollection',
    params: {
      attachments: [{ type: 'audio', content: 'https://example.com/a.mp3' }],
      fields: [
        { type: 'time_range', field_id: 'ad', title: 'Where?', default_seconds: [0, 100000], increment_seconds: 0.5 },
        { type: 'datetime', field_id: 'day', title: 'When?', include: ['year'], defaults: { year: 20000 } },
        { type: 'number', field_id: 'n', title: 'How many?', use_slider: true, min: 0, max: 10, step: 0 },
      ],
    },
    expected: { annotations: { ad: { from_seconds: 0, to_seconds: 30 } } },
  },
  {
    id: '65f1c0a2b3c4d5e6f7a8c103',
    type: 'imageannotation',
    params: { attachment: 'https://example.com/b.jpg', geometries: { box: { objects_to_annotate: ['car'], min_width: 30 } } },
    expected: { annotations: [] },
  },
];

/** The rows an older server wrote: an account, its training tasks (two out of bounds), a batch with an audited task. */
function olderRows(): { text: string; values: unknown[] }[] {
  const at = '2026-11-21T10:00:00.000Z';
  return [
    {
      text: `INSERT INTO accounts (account_id, name, test_key_hash, live_key_hash, callback_auth_key, signing_secret, created_at)
        VALUES ('acc_0020', 'migration-0020', $1, $2, 'plain-callback-key', 'plain-signing-secret', $3)`,
      values: [hashKey(testKey), hashKey(`${testKey}_live`), at],
    },
    ...trainingRows.map((r) => ({
      text: `INSERT INTO training_tasks (id, account_id, mode, kind, type, params, expected_response, created_at)
        VALUES ($1, 'acc_0020', 'test', 'training', $2, $3::jsonb, $4::jsonb, $5)`,
      values: [r.id, r.type, JSON.stringify(r.params), JSON.stringify(r.expected), at],
    })),
    {
      text: `INSERT INTO projects (project_id, account_id, mode, name, type, created_at) VALUES ('prj_0020', 'acc_0020', 'test', 'p', 'categorization', $1)`,
      values: [at],
    },
    {
      text: `INSERT INTO batches (batch_id, account_id, mode, name, project, status, metadata, created_at, completed_at)
        VALUES ('bat_0020', 'acc_0020', 'test', 'audited', 'p', 'completed', '{}'::jsonb, $1, $1)`,
      values: [at],
    },
    {
      text: `INSERT INTO tasks (task_id, account_id, mode, generation, type, status, params, callback_url, created_at, updated_at, completed_at,
          customer_review_status, metadata, project, batch, audits)
        VALUES ('65f1c0a2b3c4d5e6f7a8b901', 'acc_0020', 'test', 'current', 'categorization', 'completed',
          '{"attachment_type": "text", "attachment": "x", "categories": ["a"]}'::jsonb, 'https://example.com/cb', $1, $1, $1, 'accepted', '{}'::jsonb,
          'p', 'audited', $2::jsonb)`,
      values: [
        at,
        JSON.stringify([
          {
            audited_by: 'acc_0020',
            audited_at: '2026-11-22T09:00:00.000Z',
            audit_time_secs: 0,
            audit_result: 'accepted',
            audit_source: 'customer',
          },
        ]),
      ],
    },
  ];
}

/** A database migrated to just before 0020 with the older rows: a data folder (PGlite) or a URL (PostgreSQL). */
async function olderDatabase(db: 'pglite' | 'postgres'): Promise<{ dataDir: string; databaseUrl?: string }> {
  const folder = migrationsBefore();
  if (db === 'postgres') {
    const databaseUrl = await clusterAt(inject('postgresUrl')).createDatabase();
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    try {
      const { drizzle } = await import('drizzle-orm/node-postgres');
      const { migrate } = await import('drizzle-orm/node-postgres/migrator');
      await migrate(drizzle(pool), { migrationsFolder: folder });
      for (const row of olderRows()) await pool.query(row.text, row.values);
    } finally {
      await pool.end();
    }
    return { dataDir: 'memory://', databaseUrl };
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-0020-'));
  dirs.push(dataDir);
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = new PGlite(dataDir);
  try {
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(drizzle(pglite), { migrationsFolder: folder });
    for (const row of olderRows()) await pglite.query(row.text, row.values);
  } finally {
    await pglite.close();
  }
  return { dataDir };
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('migration 0020 on %s', (db) => {
  let server: RunningServer | undefined;
  let databaseUrl: string | undefined;
  afterAll(async () => {
    await server?.close();
    if (databaseUrl) await dropDatabase(databaseUrl);
  });

  it('training tasks stored out of bounds are brought within them (the list answers again); audited batches get audited_at', async () => {
    const older = await olderDatabase(db);
    databaseUrl = older.databaseUrl;
    server = await startServer(
      {
        ...readConfig({
          RATE_LIMIT_BURST: '0',
          AUTH_FAILURE_BURST: '0',
          DELIVERY_POLL_MS: '0',
          ATTACHMENT_CHECK_POLL_MS: '0',
          SECRETS_KEY: 'ab'.repeat(32),
        }),
        port: 0,
        host: '127.0.0.1',
        dataDir: older.dataDir,
        databaseUrl: older.databaseUrl,
      },
      pino({ level: 'silent' }),
    );
    const call = client(server, 'current', testKey);
    const list = await call('GET', '/v1/training_tasks');
    expect(list.status, list.text).toBe(200);
    const byId = new Map(list.body.docs.map((t: { id: string }) => [t.id, t]));
    expect(byId.size).toBe(3);
    const [wide, form, within] = trainingRows.map((r) => byId.get(r.id) as { params: any });
    expect(wide!.params.geometries).toEqual({
      box: { objects_to_annotate: ['car'], min_width: 65535, min_height: 30 },
      polygon: { objects_to_annotate: ['road'], max_vertices: 1000 },
    });
    expect(form!.params.fields).toEqual([
      { type: 'time_range', field_id: 'ad', title: 'Where?', default_seconds: [0, 86400], increment_seconds: 1 },
      { type: 'datetime', field_id: 'day', title: 'When?', include: ['year'], defaults: { year: 9999 } },
      { type: 'number', field_id: 'n', title: 'How many?', use_slider: true, min: 0, max: 10 },
    ]);
    expect(within!.params).toEqual(trainingRows[2]!.params);
    // Each one reads on its own too, in the other generation as well.
    const one = await client(server, 'legacy', testKey)('GET', `/v1/training_tasks/${trainingRows[1]!.id}`);
    expect(one.status, one.text).toBe(200);

    const batch = await call('GET', '/v1/batches/audited');
    expect(batch.status, batch.text).toBe(200);
    expect(batch.body.audited_at).toBe('2026-11-22T09:00:00.000Z');
    expect((await call('GET', '/v1/batches?audited_after=2026-11-22')).body.docs.map((b: { name: string }) => b.name)).toEqual(['audited']);
  });
});
