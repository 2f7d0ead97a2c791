// Imports and exports at scale (issue 36): `npm run bench:data [-- --lines N --db postgres|pglite|both]`.
//
// For each database: `humantask serve` (a child process) imports a file of N test-mode annotation
// tasks (default 10⁶), while a client reads a task list page 20 times a second; then exports them
// all as JSON Lines and as COCO. Measured: the import rate (tasks created a second, from the
// upload's end to the import's), the server's peak RSS during each phase (from /proc), the list
// request's p99 before and during the import, and each export's time. Targets (issue 36): import
// ≥ 5,000 tasks/s on PostgreSQL and ≥ 1,000/s on PGlite with RSS < 300 MB; the other requests
// within 2 × their usual p99; 10⁶ tasks exported as JSON Lines within 60 s and as COCO within
// 120 s, RSS < 300 MB. Writes bench/results/data-<date>.json.
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { basicAuth, freePort } from '../test/support/net.ts';
import { postgresAvailable, startCluster } from '../test/support/postgres.ts';
import { keysOf, onCleanup, rssMbOf, run, serveChild, sleep, spread, textTable, today } from './lib.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: { lines: { type: 'string', default: '1000000' }, db: { type: 'string', default: 'both' }, profile: { type: 'string' } },
});
const LINES = Number(args.lines);
const DBS = (args.db === 'both' ? ['postgres', 'pglite'] : [args.db]) as ('postgres' | 'pglite')[];

/** The file: N annotation tasks, each its own image (so that none is a duplicate of another). */
async function writeFile(file: string) {
  const out = createWriteStream(file);
  for (let i = 0; i < LINES; i++) {
    const line = `{"type":"annotation","callback_url":"https://example.com/cb","attachment":"https://example.com/images/${i}.jpg","objects_to_annotate":["car","truck"],"metadata":{"n":${i}}}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(r));
}

/** Peak RSS of a process while `during` runs (sampled every 100 ms). */
async function peakRss<T>(pid: number, during: () => Promise<T>): Promise<{ result: T; peakMb: number }> {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssMbOf(pid) ?? 0)), 100);
  try {
    const result = await during();
    return { result, peakMb: peak };
  } finally {
    clearInterval(timer);
  }
}

/** A list page every 50 ms until `stop`: the latencies in ms. */
function listLoad(url: string, key: string) {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await fetch(`${url}/v1/tasks?limit=10`, { headers: { authorization: basicAuth(key) } }).then((r) => r.arrayBuffer());
      times.push(performance.now() - t);
      await sleep(50);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return times;
    },
  };
}

const p99 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? 0) * 10) / 10;
};

async function poll(url: string, key: string, pathname: string, done: (b: any) => boolean) {
  for (;;) {
    const b = await (await fetch(`${url}${pathname}`, { headers: { authorization: basicAuth(key) } })).json();
    if (done(b)) return b;
    await sleep(200);
  }
}

async function exportTimed(url: string, key: string, pid: number, format: string) {
  const started = performance.now();
  const { result, peakMb } = await peakRss(pid, async () => {
    const asked = (await (
      await fetch(`${url}/v1/exports`, {
        method: 'POST',
        headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
        body: JSON.stringify({ format }),
      })
    ).json()) as any;
    return poll(url, key, `/v1/exports/${asked.export_id}`, (b) => b.state !== 'queued' && b.state !== 'running');
  });
  return {
    format,
    state: result.state,
    tasks: result.tasks_written,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    size_mb: Math.round((result.size_bytes ?? 0) / 1e5) / 10,
    peak_rss_mb: peakMb,
  };
}

async function benchOne(db: 'postgres' | 'pglite', file: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'humantask-bench-data-'));
  const cleanDir = onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  let env: Record<string, string> = { DATA_DIR: path.join(dir, 'data') };
  let stopCluster: (() => void) | null = null;
  if (db === 'postgres') {
    const cluster = await startCluster(await freePort());
    stopCluster = () => cluster.stop();
    env = { DATABASE_URL: await cluster.createDatabase() };
  }
  // One process (the import's rate is one process's); no callback leaves the machine.
  const server = await serveChild(
    {
      ...env,
      WORKERS: '1',
      LOG_LEVEL: 'warn',
      IMPORT_MAX_BYTES: String(4 * 1024 ** 3),
      REQUEST_TIMEOUT_MS: '3600000',
    },
    args.profile ? ['--cpu-prof', `--cpu-prof-dir=${args.profile}`] : [],
  );
  try {
    const key = keysOf(server.output()).test;
    // Warmed up first (the validator compiles each route's schemas on its first request): the usual
    // p99 is the settled server's, not its first requests'.
    const warm = listLoad(server.url, key);
    await sleep(3000);
    await warm.stop();
    const before = listLoad(server.url, key);
    await sleep(5000);
    const usual = await before.stop();
    const load = listLoad(server.url, key);
    const uploadStart = performance.now();
    const { result: imported, peakMb: importRss } = await peakRss(server.pid, async () => {
      const { createReadStream } = await import('node:fs');
      const { Readable } = await import('node:stream');
      const res = await fetch(`${server.url}/v1/imports`, {
        method: 'POST',
        headers: { authorization: basicAuth(key), 'content-type': 'application/x-ndjson', 'content-length': String(statSync(file).size) },
        body: Readable.toWeb(createReadStream(file)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      const posted = (await res.json()) as any;
      const uploaded = performance.now();
      const done = await poll(server.url, key, `/v1/imports/${posted.import_id}`, (b) =>
        ['completed', 'stopped', 'failed'].includes(b.state),
      );
      return { done, uploadSeconds: (uploaded - uploadStart) / 1000, importSeconds: (performance.now() - uploaded) / 1000 };
    });
    const during = await load.stop();
    const exports = [await exportTimed(server.url, key, server.pid, 'jsonl'), await exportTimed(server.url, key, server.pid, 'coco')];
    return {
      db,
      lines: LINES,
      import: {
        state: imported.done.state,
        created: imported.done.created,
        upload_seconds: Math.round(imported.uploadSeconds * 10) / 10,
        import_seconds: Math.round(imported.importSeconds * 10) / 10,
        tasks_per_second: Math.round(imported.done.created / imported.importSeconds),
        peak_rss_mb: importRss,
      },
      list_p99_ms: {
        usual: p99(usual),
        during_import: p99(during),
        ratio: Math.round((p99(during) / Math.max(0.1, p99(usual))) * 100) / 100,
        during: spread(during),
      },
      exports,
    };
  } finally {
    await server.stop();
    stopCluster?.();
    await cleanDir();
  }
}

run(async () => {
  if (DBS.includes('postgres') && !(await postgresAvailable())) throw new Error('PostgreSQL 15 binaries are needed for --db postgres');
  const dir = mkdtempSync(path.join(tmpdir(), 'humantask-bench-file-'));
  onCleanup(async () => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'tasks.jsonl');
  await writeFile(file);
  const results = [];
  for (const db of DBS) results.push(await benchOne(db, file));
  const report = {
    date: today(),
    machine: { cpus: cpus().length, load_before: loadavg() },
    file_mb: Math.round(statSync(file).size / 1e5) / 10,
    results,
  };
  console.log(
    textTable([
      ['db', 'tasks/s', 'import RSS MB', 'list p99 usual/during ms', 'jsonl s', 'coco s', 'export RSS MB'],
      ...results.map((r) => [
        r.db,
        String(r.import.tasks_per_second),
        String(r.import.peak_rss_mb),
        `${r.list_p99_ms.usual} / ${r.list_p99_ms.during_import}`,
        String(r.exports[0]!.seconds),
        String(r.exports[1]!.seconds),
        String(Math.max(...r.exports.map((e) => e.peak_rss_mb))),
      ]),
    ]),
  );
  mkdirSync(path.join(here, 'results'), { recursive: true });
  writeFileSync(path.join(here, 'results', `data-${today()}.json`), `${JSON.stringify(report, null, 2)}\n`);
  return 0;
});
