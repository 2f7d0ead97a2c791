// What the operability endpoints ask of the database: is it reachable with every migration applied
// (readiness), and how many callbacks wait to be sent (outbox depth, for the metrics).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Store } from './db.ts';

const journal = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations', 'meta', '_journal.json');
const expectedMigrations = (JSON.parse(readFileSync(journal, 'utf8')) as { entries: unknown[] }).entries.length;

export type Readiness = { ready: true } | { ready: false; reason: string };

/** One query: the database answers, and it holds the migrations this code was built with. */
export async function readiness(store: Store): Promise<Readiness> {
  try {
    const [row] = await store.execute<{ applied: number }>({
      name: 'readiness',
      text: 'select count(*)::int as applied from drizzle.__drizzle_migrations',
      values: [],
    });
    const applied = Number(row?.applied ?? 0);
    if (applied < expectedMigrations) return { ready: false, reason: `${applied} of ${expectedMigrations} migrations applied` };
    return { ready: true };
  } catch (err) {
    return { ready: false, reason: `the database does not answer: ${(err as Error).message}` };
  }
}

/** Counted up to this many: a scrape stays cheap whatever the backlog (the gauge then reads the cap). */
const outboxDepthCap = 100_000;

/** Callbacks neither delivered nor failed for good (through the partial index `outbox_due`). */
export async function outboxDepth(store: Store): Promise<number> {
  const [row] = await store.execute<{ depth: number }>({
    name: 'outbox_depth',
    text: `select count(*)::int as depth from (select 1 from outbox where delivered_at is null and failed_at is null limit ${outboxDepthCap}) pending`,
    values: [],
  });
  return Number(row?.depth ?? 0);
}
