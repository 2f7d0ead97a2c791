// The memory case of `npm run bench` (issue 21): `humantask serve` as an operator starts it (one
// process, WORKERS=1), on PostgreSQL and on embedded PGlite in a new folder. Its resident set
// (VmRSS) when idle after start, then every second under creation with Idempotency-Key.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { basicAuth } from '../test/support/net.ts';
import { serve } from '../test/support/process.ts';

export interface MemoryResult {
  target: 'postgres' | 'pglite';
  /** RSS in MB after start, idle for `idleSeconds`. */
  idleMb?: number;
  idleSeconds?: number;
  /** Seconds of creation load. */
  seconds: number;
  /** RSS in MB, one sample per second under load. */
  samples: number[];
  /** The highest sample. */
  peakMb?: number;
  /** Peak of the last half minus peak of the first half, in MB: what a leak would show. */
  growthMb: number;
  /** Median creations per second under that load (the same run: whether a change costs speed). */
  rps?: number;
  errors?: number;
  /** Results files before 2026-11-25: the peak of the last half (the server forked by bench/server.ts). */
  endMb?: number;
}

/** The targets of issue 21, in MB. */
const memoryTargets = { pgliteIdleMb: 250, pglitePeakMb: 350, postgresPeakMb: 250 };

/** The resident set of a process in MB (Linux: /proc; elsewhere `ps`). */
function rssOf(pid: number): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return NaN;
  }
}

export function peakOf(m: MemoryResult): number {
  return m.peakMb ?? m.endMb ?? Math.max(0, ...m.samples);
}

const body = JSON.stringify({
  callback_url: 'https://example.com/cb',
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
});

/** Creation with Idempotency-Key (a new key per request, so every request creates a task) for `seconds`. */
export function creationLoad(url: string, key: string, connections: number, seconds: number) {
  const headers = { authorization: basicAuth(key), 'content-type': 'application/json' };
  return autocannon({
    url,
    connections,
    timeout: 10,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/task/categorization',
        headers,
        body,
        setupRequest: (req) => ({ ...req, headers: { ...headers, 'idempotency-key': randomUUID() } }),
      },
    ],
  });
}

/**
 * Starts `humantask serve` with `env` (DATABASE_URL or DATA_DIR and the bench settings), waits
 * `idleSeconds`, reads its RSS, then drives creation for `seconds` with `connections`.
 */
export async function memoryCase(
  target: 'postgres' | 'pglite',
  env: Record<string, string>,
  options: { seconds: number; idleSeconds?: number; connections?: number },
): Promise<MemoryResult> {
  const idleSeconds = options.idleSeconds ?? 5;
  process.stdout.write(`  ${target.padEnd(9)} ${'memory'.padEnd(23)} `);
  const p = await serve({ ...env, WORKERS: '1' });
  const pid = p.child.pid!;
  try {
    const key = /live key: +(live_[0-9a-f]{32})/.exec(p.output())?.[1];
    if (!key) throw new Error(`no development account in the start banner: ${p.output()}`);
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const idleMb = rssOf(pid);
    const samples: number[] = [];
    const sampler = setInterval(() => samples.push(rssOf(pid)), 1000);
    const r = await creationLoad(p.url, key, options.connections ?? 32, options.seconds);
    clearInterval(sampler);
    samples.push(rssOf(pid));
    const middle = Math.floor(samples.length / 2);
    const peakMb = Math.max(0, ...samples);
    const growthMb = Math.round((Math.max(0, ...samples.slice(middle)) - Math.max(0, ...samples.slice(0, middle))) * 10) / 10;
    const result: MemoryResult = {
      target,
      idleMb,
      idleSeconds,
      seconds: options.seconds,
      samples,
      peakMb,
      growthMb,
      rps: r.requests.p50,
      errors: r.errors + r.timeouts + r.non2xx,
    };
    console.log(`idle ${idleMb} MB, peak ${peakMb} MB under ${options.seconds} s of creation (${result.rps} rps, ${result.errors} errors)`);
    return result;
  } finally {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      const gone = once(p.child, 'exit');
      p.child.kill('SIGTERM');
      await gone;
    }
  }
}

/** A target of `npm run bench`, marked met or not (bench/run.ts has them all). */
export interface TargetCheck {
  /** The issue that set the target (8: "Benchmarks and soak", 21: "Scale"). */
  issue: number;
  target: string;
  measured: string;
  met: boolean;
}

/**
 * The memory targets against the results that have the numbers they need: issue 21's (which made
 * issue 8's "server RSS ≤ 250 MB" one per process and added PGlite's own) and issue 8's "flat".
 */
export function memoryChecks(memory: MemoryResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const lite = memory.find((m) => m.target === 'pglite');
  const pg = memory.find((m) => m.target === 'postgres');
  if (lite?.idleMb != null)
    checks.push({
      issue: 21,
      target: `PGlite: idle RSS after start ≤ ${memoryTargets.pgliteIdleMb} MB`,
      measured: `${lite.idleMb} MB`,
      met: lite.idleMb <= memoryTargets.pgliteIdleMb,
    });
  if (lite)
    checks.push({
      issue: 21,
      target: `PGlite: RSS under ${lite.seconds} s of creation ≤ ${memoryTargets.pglitePeakMb} MB (peak)`,
      measured: `${peakOf(lite)} MB`,
      met: peakOf(lite) <= memoryTargets.pglitePeakMb,
    });
  if (pg) {
    checks.push({
      issue: 21,
      target: `PostgreSQL: server RSS under ${pg.seconds} s of creation ≤ ${memoryTargets.postgresPeakMb} MB (peak, per process)`,
      measured: `${peakOf(pg)} MB`,
      met: peakOf(pg) <= memoryTargets.postgresPeakMb,
    });
    // Flat: the peaks of the two halves within 5 % of each other.
    checks.push({
      issue: 8,
      target: `PostgreSQL: server RSS flat under creation (peak of the last ${pg.seconds / 2} s ≤ 1.05 × peak of the first)`,
      measured: `${pg.growthMb >= 0 ? '+' : ''}${pg.growthMb} MB`,
      met: pg.growthMb <= peakOf(pg) * 0.05,
    });
  }
  return checks;
}
