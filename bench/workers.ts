// The WORKERS case of `npm run bench` (issue 21, "every core"): `humantask serve` as an operator
// starts it, with WORKERS=1 and with WORKERS=2, each on a new database, under the same creation load
// (a new Idempotency-Key per request), driven in turn in interleaved slices. Besides the rates, where
// the CPU went while each was driven, from /proc (no profiler): the primary, each worker, PostgreSQL
// (every process of the cluster), this process (the load generator) and the rest of the machine.
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { machineTicks, postgresTicks, postmasterOf, statOf, ticks } from './cpu.ts';
import { cpus, loadavg } from 'node:os';
import { creationLoad, type TargetCheck } from './memory.ts';
import { serve } from '../test/support/process.ts';

/** CPU used during a measured run, in cores (CPU seconds per second of the run: 1 = one whole core). */
export interface CpuShares {
  seconds: number;
  /** The process that supervises (WORKERS ≥ 2; none with one process). */
  primary: number | null;
  /** Each server process that answers requests. */
  workers: number[];
  /** Every process of the PostgreSQL cluster (backends, writers, and those that ended). */
  postgres: number;
  /** This process: autocannon, the load generator. */
  loadGenerator: number;
  /** All CPUs of the machine together (from /proc/stat) ... */
  machine: number;
  /** ... of which not the above: other work on the machine. */
  others: number;
}

export interface WorkersRun {
  workers: number;
  /** Creations a second over all its slices: requests / seconds. */
  rps: number;
  /** Latency in ms: the median over its slices of each slice's p50 and p99. */
  latencyP50: number;
  latencyP99: number;
  requests: number;
  errors: number;
  non2xx: number;
  cpu: CpuShares | null;
  /** Per slice, the load generator's connections that each server process held a second into it (the primary's round robin). */
  connectionsPerWorker: number[][];
  /** Per slice, its creations a second (requests / seconds) ... */
  sliceRps: number[];
  /** ... and the server processes' CPU per creation in ms (all of them together). */
  sliceCpuMs: number[];
  /** The lowest and highest load average (1 min) at the starts and ends of its slices. */
  loadAverage: [number, number];
}

export interface WorkersResult {
  /** Measured seconds per server, in `slices` slices. */
  seconds: number;
  slices: number;
  connections: number;
  runs: WorkersRun[];
  /** WORKERS=2's rate / WORKERS=1's. */
  ratio: number;
  /**
   * The most that ratio can be on this machine, from WORKERS=1's CPU per creation: with every CPU
   * busy (server processes, PostgreSQL and the load generator sharing them) against the server
   * alone on one core: CPUs × server / (server + PostgreSQL + load generator). Null without /proc.
   */
  bound: number | null;
}

/** The target of issue 21. */
const RATIO_TARGET = 1.3;

/** How many established TCP connections to `port` each process holds (its sockets' inodes in /proc/net/tcp). */
function connectionsOf(pids: number[], port: number): number[] {
  const established = new Set<string>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // local address (hex ip:port), state 01 = ESTABLISHED, the inode is the 10th field.
    if (f.length > 9 && Number.parseInt(f[1]!.split(':')[1]!, 16) === port && f[3] === '01') established.add(f[9]!);
  }
  return pids.map((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
        try {
          return established.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
        } catch {
          return false;
        }
      }).length;
    } catch {
      return 0;
    }
  });
}

interface Snapshot {
  at: number;
  primary: number | null;
  workers: number[];
  postgres: number;
  self: number;
  machine: number;
}

function snapshot(primary: number | null, workers: number[], postmaster: number | null): Snapshot {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    primary: primary === null ? null : (statOf(primary)?.own ?? 0),
    workers: workers.map((pid) => statOf(pid)?.own ?? 0),
    postgres: postmaster === null ? 0 : postgresTicks(postmaster),
    self: ((usage.user + usage.system) / 1e6) * ticks(),
    machine: machineTicks(),
  };
}

/** Ticks spent between two snapshots, added over the slices of one server's load. */
interface Spent {
  ms: number;
  primary: number | null;
  workers: number[];
  postgres: number;
  self: number;
  machine: number;
}

function add(total: Spent | null, a: Snapshot, b: Snapshot): Spent {
  const d: Spent = {
    ms: b.at - a.at,
    primary: a.primary === null || b.primary === null ? null : b.primary - a.primary,
    workers: b.workers.map((t, i) => t - (a.workers[i] ?? 0)),
    postgres: b.postgres - a.postgres,
    self: b.self - a.self,
    machine: b.machine - a.machine,
  };
  if (!total) return d;
  return {
    ms: total.ms + d.ms,
    primary: total.primary === null || d.primary === null ? null : total.primary + d.primary,
    workers: total.workers.map((t, i) => t + (d.workers[i] ?? 0)),
    postgres: total.postgres + d.postgres,
    self: total.self + d.self,
    machine: total.machine + d.machine,
  };
}

function shares(spent: Spent): CpuShares {
  const seconds = spent.ms / 1000;
  const cores = (t: number) => Math.round((t / ticks() / seconds) * 100) / 100;
  const primary = spent.primary === null ? null : cores(spent.primary);
  const workers = spent.workers.map(cores);
  const postgres = cores(spent.postgres);
  const loadGenerator = cores(spent.self);
  const machine = cores(spent.machine);
  const ours = (primary ?? 0) + workers.reduce((x, y) => x + y, 0) + postgres + loadGenerator;
  return {
    seconds: Math.round(seconds * 10) / 10,
    primary,
    workers,
    postgres,
    loadGenerator,
    machine,
    others: Math.max(0, Math.round((machine - ours) * 100) / 100),
  };
}

/** `humantask serve` with `workers` processes on `databaseUrl`, and the creation load against it. */
async function start(workers: number, env: Record<string, string>, databaseUrl: string, connections: number) {
  const p = await serve({ ...env, DATABASE_URL: databaseUrl, WORKERS: String(workers) });
  const stop = async () => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return;
    const gone = once(p.child, 'exit');
    p.child.kill('SIGTERM');
    await gone;
  };
  const key = /live key: +(live_[0-9a-f]{32})/.exec(p.output())?.[1];
  if (!key) {
    await stop();
    throw new Error(`no development account in the start banner: ${p.output()}`);
  }
  const banner = /workers: \d+ processes \(([\d, ]+)\) behind this port/.exec(p.output());
  return {
    workers,
    url: p.url,
    workerPids: banner ? banner[1]!.split(', ').map(Number) : [p.child.pid!],
    primary: banner ? p.child.pid! : null,
    postmaster: await postmasterOf(databaseUrl).catch(() => null),
    stop,
    load: (seconds: number) => creationLoad(p.url, key, connections, seconds),
  };
}

/**
 * WORKERS=1 and WORKERS=2, each on a new database from `createDatabase`, both started, warmed up,
 * then driven in turn, one at a time: `slices` slices of `seconds / slices` each, in the order
 * 1 2 2 1 1 2 ... (so that a change in the machine's other load falls on both alike).
 */
export async function workersCase(
  createDatabase: () => Promise<string>,
  env: Record<string, string>,
  options: { seconds: number; warmup: number; connections: number; slices: number },
): Promise<WorkersResult> {
  const servers: Awaited<ReturnType<typeof start>>[] = [];
  try {
    for (const workers of [1, 2]) servers.push(await start(workers, env, await createDatabase(), options.connections));
    for (const s of servers) await s.load(options.warmup);
    const sliceSeconds = Math.max(1, Math.round(options.seconds / options.slices));
    const acc = servers.map(() => ({
      requests: 0,
      errors: 0,
      non2xx: 0,
      p50: [] as number[],
      p99: [] as number[],
      spent: null as Spent | null,
      connections: [] as number[][],
      sliceRps: [] as number[],
      sliceCpuMs: [] as number[],
      load: [] as number[],
    }));
    for (let slice = 0; slice < options.slices * 2; slice++) {
      // 0 1 1 0 0 1 1 0 ...
      const i = (slice + (slice >> 1)) % 2;
      const s = servers[i]!;
      const a = acc[i]!;
      a.load.push(loadavg()[0]!);
      const before = snapshot(s.primary, s.workerPids, s.postmaster);
      const counter = setTimeout(() => a.connections.push(connectionsOf(s.workerPids, Number(new URL(s.url).port))), 1000);
      const r = await s.load(sliceSeconds);
      clearTimeout(counter);
      const after = snapshot(s.primary, s.workerPids, s.postmaster);
      a.spent = add(a.spent, before, after);
      const serverTicks = after.workers.reduce((x, t, j) => x + t - (before.workers[j] ?? 0), 0);
      a.sliceCpuMs.push(Math.round(((serverTicks / ticks()) * 1000 * 100) / Math.max(1, r.requests.total)) / 100);
      a.requests += r.requests.total;
      a.sliceRps.push(Math.round(r.requests.total / r.duration));
      a.errors += r.errors + r.timeouts;
      a.non2xx += r.non2xx;
      a.p50.push(r.latency.p50);
      a.p99.push(r.latency.p99);
      a.load.push(loadavg()[0]!);
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)] ?? 0;
    const round2 = (x: number) => Math.round(x * 100) / 100;
    const runs: WorkersRun[] = servers.map((s, i) => {
      const a = acc[i]!;
      const cpu = a.spent ? shares(a.spent) : null;
      const run: WorkersRun = {
        workers: s.workers,
        rps: cpu ? Math.round(a.requests / cpu.seconds) : 0,
        latencyP50: median(a.p50),
        latencyP99: median(a.p99),
        requests: a.requests,
        errors: a.errors,
        non2xx: a.non2xx,
        cpu,
        connectionsPerWorker: a.connections,
        sliceRps: a.sliceRps,
        sliceCpuMs: a.sliceCpuMs,
        loadAverage: [round2(Math.min(...a.load)), round2(Math.max(...a.load))],
      };
      const c = run.cpu;
      console.log(
        `  ${`WORKERS=${s.workers}`.padEnd(9)} ${'create-idempotency-key'.padEnd(23)} ${run.rps} rps, p99 ${run.latencyP99} ms, ` +
          `${run.errors} errors, ${run.non2xx} non-2xx; cores: ${c?.primary == null ? '' : `primary ${c.primary}, `}` +
          `workers ${c?.workers.join(' + ')}, PostgreSQL ${c?.postgres}, ` +
          `load generator ${c?.loadGenerator}, others ${c?.others} (machine ${c?.machine}); load average ${run.loadAverage.join('–')}; ` +
          `slices: ${a.sliceRps.map((x, j) => `${x} rps, ${a.sliceCpuMs[j]} ms CPU each (${a.connections[j]?.join('+') ?? '?'} connections)`).join('; ')}`,
      );
      return run;
    });
    const [one, two] = runs as [WorkersRun, WorkersRun];
    const ratio = one.rps > 0 ? round2(two.rps / one.rps) : 0;
    const c = one.cpu;
    const spent = c ? c.workers[0]! + c.postgres + c.loadGenerator : 0;
    const bound = c && spent > 0 ? round2((Math.min(2, cpus().length) * c.workers[0]!) / spent) : null;
    console.log(`  WORKERS=2 / WORKERS=1: ${ratio} × (what the CPUs allow, from WORKERS=1's CPU per creation: ${bound ?? '?'} ×)`);
    return { seconds: sliceSeconds * options.slices, slices: options.slices, connections: options.connections, runs, ratio, bound };
  } finally {
    for (const s of servers) await s.stop();
  }
}

/** Issue 21's target: WORKERS=2 creates ≥ 1.3 × what WORKERS=1 creates, in the same run, without errors. */
export function workersCheck(w: WorkersResult): TargetCheck {
  const [one, two] = w.runs;
  const clean = w.runs.every((r) => r.errors === 0 && r.non2xx === 0);
  return {
    issue: 21,
    target: `WORKERS=2 creation with Idempotency-Key ≥ ${RATIO_TARGET} × WORKERS=1 (same run)`,
    measured: `${w.ratio} × (${two?.rps} against ${one?.rps} rps${clean ? '' : ', with errors'})`,
    met: w.ratio >= RATIO_TARGET && clean,
  };
}
