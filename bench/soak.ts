// Soak under kill -9: `npm run soak [-- --seconds N --db postgres|pglite|both --seed N --clients N --kills N]`
// (see bench/README.md).
//
// 16 clients create test-mode tasks (each with an Idempotency-Key, a callback to a loopback
// receiver and an identifying metadata.soak_id) against `humantask serve` (a child process) while
// the server is killed with SIGKILL at seeded moments and restarted on the same database and port.
// A client repeats a creation with the same key until it is answered 2xx (connection errors and
// 5xx while the server is down are expected). At the end, straight from the database: every
// acknowledged creation is there exactly once, and every completed task's callback is delivered or
// still scheduled. Exits non-zero otherwise. Writes bench/results/soak-<date>.json.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { basicAuth, freePort } from '../test/support/net.ts';
import { postgresAvailable, startCluster, type Cluster } from '../test/support/postgres.ts';
import {
  keysOf,
  onCleanup,
  rssMbOf,
  run,
  seeded,
  serveChild,
  sleep,
  spread,
  startReceiver,
  textTable,
  today,
  type Served,
  type Spread,
} from './lib.ts';
import { writeScaleAndSoakPage } from './report.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    db: { type: 'string', default: 'both' },
    seed: { type: 'string', default: '1' },
    clients: { type: 'string', default: '16' },
    kills: { type: 'string' },
  },
});
const SECONDS = Number(args.seconds);
const CLIENTS = Number(args.clients);
const SEED = Number(args.seed);
const KILLS = args.kills !== undefined ? Number(args.kills) : Math.max(3, Math.floor(SECONDS / 15));
const DBS: ('postgres' | 'pglite')[] =
  args.db === 'both' ? ['postgres', 'pglite'] : args.db === 'postgres' || args.db === 'pglite' ? [args.db] : [];
if (DBS.length === 0 || !(SECONDS > 0) || !(CLIENTS > 0) || !(KILLS >= 0)) {
  console.error('usage: soak [--seconds N] [--db postgres|pglite|both] [--seed N] [--clients N] [--kills N]');
  process.exit(2);
}
/** After a kill, the restart waits up to this long (seeded), so that clients meet a dead port. */
const MAX_DOWN_MS = 1000;
/** The server runs at least this long between two kills. */
const MIN_UP_MS = 2000;
/** A message the killed process held is taken over after its lease: short here, 60 s by default. */
const LEASE_MS = 5000;
/** After the creations: how long callbacks may take to arrive before the database is checked. */
const DRAIN_MS = 60_000;

const task = { instruction: 'Pick one', attachment_type: 'text', attachment: 'My invoice is wrong.', categories: ['billing', 'support'] };

interface DbResult {
  db: 'postgres' | 'pglite';
  seconds: number;
  clients: number;
  kills: { atSeconds: number; inFlight: number; downMs: number; restartMs: number; samePort: boolean }[];
  requests: {
    sent: number;
    connectionErrors: number;
    status5xx: number;
    status429: number;
    replayed: number;
    unexpected: { status: number; body: string }[];
  };
  creationMs: Spread;
  acknowledged: number;
  present: number;
  duplicates: number;
  lost: number;
  wrongTaskId: number;
  unacknowledgedInDb: number;
  callbacks: {
    completedTasks: number;
    delivered: number;
    stillScheduled: number;
    failed: number;
    missing: number;
    receivedDistinct: number;
    /** Tasks whose callback arrived more than once (at least once delivery: a kill between send and record). */
    receivedTwice: number;
    /**
     * Of those, the ones whose database holds as many successful attempts as arrivals: the dispatcher
     * sent a message again although its delivery was recorded (a bug). The others lost the record of
     * the first POST with a kill (at least once delivery, expected).
     */
    twiceRecorded: number;
    /** Up to 10 of them: arrivals (s since the start), the kills, and the attempts the database recorded. */
    twiceRecordedSamples: { taskId: string; arrivalsSeconds: number[]; attempts: unknown[] }[];
  };
  serverRssMbMax: number | null;
  ok: boolean;
}

async function soak(db: 'postgres' | 'pglite', cluster: Cluster | null): Promise<DbResult> {
  const random = seeded(SEED * 7919 + (db === 'postgres' ? 1 : 2));
  const runId = randomUUID();
  const receiver = await startReceiver();
  let store: Record<string, string>;
  let dataDir = '';
  if (db === 'postgres') {
    store = { DATABASE_URL: await cluster!.createDatabase() };
  } else {
    dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-soak-pglite-'));
    onCleanup(
      () => rmSync(dataDir, { recursive: true, force: true }),
      () => rmSync(dataDir, { recursive: true, force: true }),
    );
    store = { DATA_DIR: dataDir };
  }
  const env = {
    ...store,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_BURST: '0',
    DELIVERY_POLL_MS: '50',
    DELIVERY_LEASE_MS: String(LEASE_MS),
    ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
    ATTACHMENT_CHECK_POLL_MS: '0',
  };

  let server: Served = await serveChild(env);
  const port = new URL(server.url).port;
  const state = { url: server.url };
  const keys = keysOf(server.output());
  const authorization = basicAuth(keys.test);

  let rssMax: number | null = null;
  const rssTimer = setInterval(() => {
    const rss = rssMbOf(server.pid);
    if (rss !== null) rssMax = Math.max(rssMax ?? 0, rss);
  }, 1000);

  const acked = new Map<string, string>();
  const requests = {
    sent: 0,
    connectionErrors: 0,
    status5xx: 0,
    status429: 0,
    replayed: 0,
    unexpected: [] as { status: number; body: string }[],
  };
  const latencies: number[] = [];
  let inFlight = 0;
  const t0 = performance.now();
  const wallT0 = Date.now();
  const end = t0 + SECONDS * 1000;

  async function client(c: number) {
    for (let n = 0; performance.now() < end; n++) {
      const soakId = `${c}-${n}`;
      const key = randomUUID();
      const body = JSON.stringify({ ...task, callback_url: receiver.url, metadata: { soak_run: runId, soak_id: soakId } });
      const started = performance.now();
      let backoff = 20;
      for (;;) {
        requests.sent++;
        inFlight++;
        try {
          const res = await fetch(`${state.url}/v1/task/categorization`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json', 'idempotency-key': key },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          const text = await res.text();
          if (res.ok) {
            acked.set(soakId, (JSON.parse(text) as { task_id: string }).task_id);
            if (res.headers.get('idempotent-replayed') === 'true') requests.replayed++;
            break;
          }
          if (res.status >= 500) requests.status5xx++;
          else if (res.status === 429) requests.status429++;
          else {
            // Not an outage: a wrong answer. Recorded, and this creation is given up.
            requests.unexpected.push({ status: res.status, body: text.slice(0, 300) });
            break;
          }
        } catch {
          requests.connectionErrors++;
        } finally {
          inFlight--;
        }
        await sleep(backoff);
        backoff = Math.min(500, backoff * 2);
      }
      latencies.push(performance.now() - started);
    }
  }

  // Kill moments: one in each of KILLS equal slices of 5 %..85 % of the run, seeded.
  const killAt = Array.from({ length: KILLS }, (_, i) => {
    const slice = (0.8 * SECONDS * 1000) / KILLS;
    return 0.05 * SECONDS * 1000 + i * slice + (0.15 + 0.7 * random()) * slice;
  });
  const kills: DbResult['kills'] = [];
  async function killer() {
    let upSince = t0;
    for (const at of killAt) {
      // The server serves at least MIN_UP_MS between kills (a slow restart may push a kill later).
      const wait = Math.max(t0 + at, upSince + MIN_UP_MS) - performance.now();
      if (wait > 0) await sleep(wait);
      const flying = inFlight;
      const killedAt = performance.now();
      await server.kill();
      await sleep(Math.round(random() * MAX_DOWN_MS));
      const restartAt = performance.now();
      let samePort = true;
      try {
        server = await serveChild({ ...env, PORT: port });
      } catch (err) {
        console.error(`  restart on port ${port} failed (${String(err).slice(0, 200)}); on a new port`);
        samePort = false;
        server = await serveChild({ ...env, PORT: '0' });
        state.url = server.url;
      }
      const up = performance.now();
      upSince = up;
      kills.push({
        atSeconds: round((killedAt - t0) / 1000, 2),
        inFlight: flying,
        downMs: Math.round(up - killedAt),
        restartMs: Math.round(up - restartAt),
        samePort,
      });
      console.log(
        `  ${db}: SIGKILL at ${((killedAt - t0) / 1000).toFixed(1)} s (${flying} requests in flight), up again after ${Math.round(up - killedAt)} ms`,
      );
    }
  }

  const progress = setInterval(
    () => process.stdout.write(`  ${db}: ${Math.round((performance.now() - t0) / 1000)} s, ${acked.size} acknowledged\n`),
    15_000,
  );
  await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), killer()]);
  clearInterval(progress);
  const elapsed = (performance.now() - t0) / 1000;

  // Test mode completes every task at once: each acknowledged task has a callback queued.
  const ackedIds = new Set(acked.values());
  try {
    await receiver.waitFor(ackedIds, DRAIN_MS);
  } catch (err) {
    console.log(`  ${db}: ${(err as Error).message} (still scheduled ones are checked below)`);
  }
  clearInterval(rssTimer);
  await server.stop();

  // The database itself, with the server stopped (PGlite is single-process).
  const query = await openQuery(db, store);
  let rows: { task_id: string; status: string; soak_id: string }[];
  let outboxRows: { subject: string; event: string; delivered: boolean; failed: boolean; next_attempt_at: unknown }[];
  let attemptRows: { subject: string; attempted_at: unknown; status_code: number | null; error: string | null; duration_ms: number }[];
  try {
    rows = await query(`select task_id, status, metadata->>'soak_id' as soak_id from tasks where metadata->>'soak_run' = $1`, [runId]);
    outboxRows = await query(
      `select subject, event, delivered_at is not null as delivered, failed_at is not null as failed, next_attempt_at from outbox where url = $1`,
      [receiver.url],
    );
    attemptRows = await query(
      `select subject, attempted_at, status_code, error, duration_ms from delivery_attempts where url = $1 order by attempted_at`,
      [receiver.url],
    );
  } finally {
    await query.close();
  }
  await receiver.close();

  const bySoakId = new Map<string, string[]>();
  for (const r of rows) bySoakId.set(r.soak_id, [...(bySoakId.get(r.soak_id) ?? []), r.task_id]);
  let present = 0,
    duplicates = 0,
    lost = 0,
    wrongTaskId = 0;
  for (const [soakId, taskId] of acked) {
    const found = bySoakId.get(soakId) ?? [];
    if (found.length === 0) lost++;
    else present++;
    if (found.length > 1) duplicates += found.length - 1;
    if (found.length > 0 && !found.includes(taskId)) wrongTaskId++;
  }
  const unacknowledgedInDb = [...bySoakId.keys()].filter((s) => !acked.has(s)).length;

  const completed = rows.filter((r) => ackedIds.has(r.task_id) && (r.status === 'completed' || r.status === 'error'));
  const attemptsOf = new Map<string, { atSeconds: unknown; status: number | null; error: string | null; durationMs: number }[]>();
  for (const a of attemptRows) {
    const at = a.attempted_at instanceof Date ? round((a.attempted_at.getTime() - wallT0) / 1000, 3) : a.attempted_at;
    attemptsOf.set(a.subject, [
      ...(attemptsOf.get(a.subject) ?? []),
      { atSeconds: at, status: a.status_code, error: a.error, durationMs: a.duration_ms },
    ]);
  }
  const messagesOf = new Map<string, typeof outboxRows>();
  for (const m of outboxRows) messagesOf.set(m.subject, [...(messagesOf.get(m.subject) ?? []), m]);
  const callbacks = {
    completedTasks: completed.length,
    delivered: 0,
    stillScheduled: 0,
    failed: 0,
    missing: 0,
    receivedDistinct: 0,
    receivedTwice: 0,
    twiceRecorded: 0,
    twiceRecordedSamples: [] as DbResult['callbacks']['twiceRecordedSamples'],
  };
  for (const t of completed) {
    const messages = (messagesOf.get(t.task_id) ?? []).filter((m) => m.event !== 'batch_completed');
    if (messages.length === 0) callbacks.missing++;
    else if (messages.some((m) => m.delivered)) callbacks.delivered++;
    else if (messages.some((m) => m.failed)) callbacks.failed++;
    else callbacks.stillScheduled++;
    const received = receiver.posts.get(t.task_id) ?? 0;
    if (received > 0) callbacks.receivedDistinct++;
    if (received > 1) {
      callbacks.receivedTwice++;
      const attempts = attemptsOf.get(t.task_id) ?? [];
      if (attempts.filter((a) => a.status !== null && a.status >= 200 && a.status < 300).length >= received) {
        callbacks.twiceRecorded++;
        if (callbacks.twiceRecordedSamples.length < 10) {
          const arrivalsSeconds = (receiver.arrivals.get(t.task_id) ?? []).map((x) => round((x - t0) / 1000, 3));
          callbacks.twiceRecordedSamples.push({ taskId: t.task_id, arrivalsSeconds, attempts });
        }
      }
    }
  }

  const result: DbResult = {
    db,
    seconds: round(elapsed),
    clients: CLIENTS,
    kills,
    requests,
    creationMs: spread(latencies),
    acknowledged: acked.size,
    present,
    duplicates,
    lost,
    wrongTaskId,
    unacknowledgedInDb,
    callbacks,
    serverRssMbMax: rssMax,
    ok: false,
  };
  result.ok =
    lost === 0 &&
    duplicates === 0 &&
    wrongTaskId === 0 &&
    requests.unexpected.length === 0 &&
    kills.length >= Math.min(3, KILLS) &&
    callbacks.missing === 0 &&
    callbacks.failed === 0 &&
    callbacks.completedTasks === acked.size;
  return result;
}

type Query = (<T>(sql: string, params: unknown[]) => Promise<T[]>) & { close(): Promise<void> };

async function openQuery(db: 'postgres' | 'pglite', store: Record<string, string>): Promise<Query> {
  if (db === 'postgres') {
    const client = new pg.Client({ connectionString: store.DATABASE_URL });
    await client.connect();
    return Object.assign(async <T>(sql: string, params: unknown[]) => (await client.query(sql, params)).rows as T[], {
      close: () => client.end(),
    });
  }
  const lite = new PGlite(store.DATA_DIR!);
  return Object.assign(async <T>(sql: string, params: unknown[]) => (await lite.query<T>(sql, params)).rows, { close: () => lite.close() });
}

function round(x: number, digits = 1): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

async function main(): Promise<number> {
  const started = Date.now();
  console.log(`humantask soak: ${CLIENTS} clients, ${SECONDS} s per database (${DBS.join(', ')}), ${KILLS} SIGKILLs each, seed ${SEED}`);
  let cluster: Cluster | null = null;
  if (DBS.includes('postgres')) {
    if (!postgresAvailable()) throw new Error('PostgreSQL 15 binaries not found (PG_BIN, default /usr/lib/postgresql/15/bin)');
    const c = await startCluster(await freePort());
    onCleanup(
      () => c.stop(),
      () => c.stop(),
    );
    cluster = c;
  }
  const results: DbResult[] = [];
  for (const db of DBS) {
    console.log(`${db}:`);
    results.push(await soak(db, cluster));
  }

  const report = {
    date: new Date().toISOString(),
    settings: {
      seconds: SECONDS,
      clients: CLIENTS,
      kills: KILLS,
      seed: SEED,
      leaseMs: LEASE_MS,
      maxDownMs: MAX_DOWN_MS,
      drainMs: DRAIN_MS,
    },
    environment: {
      node: process.version,
      cpu: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}`,
      memoryGb: Math.round(totalmem() / 1024 ** 3),
    },
    results,
    wallSeconds: Math.round((Date.now() - started) / 1000),
  };
  mkdirSync(path.join(here, 'results'), { recursive: true });
  const file = path.join(here, 'results', `soak-${today()}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  writeScaleAndSoakPage();

  console.log(
    '\n' +
      textTable([
        [
          'database',
          'kills',
          'acknowledged',
          'present',
          'duplicates',
          'lost',
          'conn. errors / 5xx',
          'replayed',
          'callbacks delivered / scheduled / failed / missing',
          'creation p50 / max ms',
        ],
        ...results.map((r) => [
          r.db,
          String(r.kills.length),
          String(r.acknowledged),
          String(r.present),
          String(r.duplicates),
          String(r.lost),
          `${r.requests.connectionErrors} / ${r.requests.status5xx}`,
          String(r.requests.replayed),
          `${r.callbacks.delivered} / ${r.callbacks.stillScheduled} / ${r.callbacks.failed} / ${r.callbacks.missing}`,
          `${r.creationMs.median} / ${r.creationMs.max}`,
        ]),
      ]) +
      '\n',
  );
  for (const r of results) {
    console.log(
      `${r.db}: acknowledged ${r.acknowledged}, present ${r.present}, duplicates ${r.duplicates}${r.lost ? `, LOST ${r.lost}` : ''}${r.wrongTaskId ? `, ${r.wrongTaskId} with another task id` : ''}`,
    );
    console.log(
      `${r.db}: callbacks of ${r.callbacks.completedTasks} completed tasks: ${r.callbacks.delivered} delivered, ${r.callbacks.stillScheduled} still scheduled, ${r.callbacks.failed} failed, ${r.callbacks.missing} missing (${r.callbacks.receivedTwice} received twice, the first POST's record lost with a kill: at least once; ${r.callbacks.twiceRecorded} sent again although recorded as delivered)`,
    );
    if (r.requests.unexpected.length)
      console.log(`${r.db}: ${r.requests.unexpected.length} unexpected answers, e.g. ${JSON.stringify(r.requests.unexpected[0])}`);
    console.log(`${r.db}: ${r.ok ? 'OK' : 'FAILED'}`);
  }
  console.log(`\nwrote ${path.relative(root, file)} and docs/internal/performance-scale.md (${report.wallSeconds} s)`);
  return results.every((r) => r.ok) ? 0 : 1;
}

run(main);
