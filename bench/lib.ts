// Shared by bench/scale.ts and bench/soak.ts: cleanup on every way out, `humantask serve` children,
// a loopback callback receiver, a seeded random source and small statistics.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { serve, type ServeProcess } from '../test/support/process.ts';

// ---- cleanup -----------------------------------------------------------------------------------

type Stop = () => Promise<void> | void;
const stops: { stop: Stop; sync?: () => void }[] = [];

/**
 * Registers something to undo at the end (last in, first out). `sync` is the fallback for a hard
 * exit (an uncaught error, process.exit): it must not wait for anything.
 */
export function onCleanup(stop: Stop, sync?: () => void): () => void {
  const entry = sync ? { stop, sync } : { stop };
  stops.push(entry);
  return () => {
    const i = stops.indexOf(entry);
    if (i >= 0) stops.splice(i, 1);
  };
}

async function cleanup(): Promise<void> {
  while (stops.length > 0) {
    const entry = stops.pop()!;
    await Promise.resolve()
      .then(entry.stop)
      .catch((err) => console.error('cleanup:', err));
  }
}

process.on('exit', () => {
  for (const entry of stops.reverse()) {
    try {
      entry.sync?.();
    } catch {
      // the last resort: nothing more to do
    }
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** Runs `main`, cleans up whatever happened, and exits with its code (1 on an error). */
export function run(main: () => Promise<number>): void {
  main().then(
    async (code) => {
      await cleanup();
      process.exit(code);
    },
    async (err) => {
      console.error(err);
      if (lastOutput) console.error(`\nthe last server's output ended with:\n${lastOutput().slice(-3000)}`);
      await cleanup();
      process.exit(1);
    },
  );
}

// ---- `humantask serve` children ----------------------------------------------------------------

export interface Served extends ServeProcess {
  pid: number;
  /** SIGTERM (graceful: in-flight requests finish, the store is closed), SIGKILL after 20 s. */
  stop(): Promise<void>;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** `humantask serve` as a child process (test/support/process.ts), killed with the bench if need be. */
let lastOutput: (() => string) | null = null;

export async function serveChild(env: Record<string, string>, nodeArgs: string[] = []): Promise<Served> {
  const p = await serve(env, nodeArgs);
  lastOutput = p.output;
  const { child } = p;
  const forget = onCleanup(
    () => stopChild(child, 'SIGTERM'),
    () => {
      if (!exited(child)) child.kill('SIGKILL');
    },
  );
  child.once('exit', forget);
  return {
    ...p,
    pid: child.pid!,
    stop: () => stopChild(child, 'SIGTERM'),
    kill: () => stopChild(child, 'SIGKILL'),
  };
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (exited(child)) return;
  const gone = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await gone;
  clearTimeout(timer);
}

export const keysOf = (output: string) => ({
  test: /test key: +(test_[0-9a-f]{32})/.exec(output)?.[1] ?? '',
  live: /live key: +(live_[0-9a-f]{32})/.exec(output)?.[1] ?? '',
});

/** Resident set size of a process in MB (Linux /proc), or null. */
export function rssMbOf(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

// ---- the callback receiver ---------------------------------------------------------------------

export interface Receiver {
  url: string;
  /** POSTs per task id. */
  posts: Map<string, number>;
  /** When each task's POSTs arrived (performance.now()). */
  arrivals: Map<string, number[]>;
  total: number;
  /** Most POSTs open at once (arrived, not yet answered). */
  peakConcurrent: number;
  firstAt: number | null;
  lastAt: number | null;
  /** Resolves when `ids` have all been received at least once (or rejects after `timeoutMs`). */
  waitFor(ids: Iterable<string>, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** node:http on 127.0.0.1, answering 200 to every POST (after `delayMs`), counting by task_id. */
export async function startReceiver(delayMs = 0): Promise<Receiver> {
  let open = 0;
  const r = {
    posts: new Map<string, number>(),
    arrivals: new Map<string, number[]>(),
    total: 0,
    peakConcurrent: 0,
    firstAt: null as number | null,
    lastAt: null as number | null,
  };
  const server: Server = createServer((req, res) => {
    open++;
    r.peakConcurrent = Math.max(r.peakConcurrent, open);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      r.firstAt ??= now;
      r.lastAt = now;
      r.total++;
      try {
        const id = (JSON.parse(Buffer.concat(chunks).toString()) as { task_id?: string }).task_id ?? '?';
        r.posts.set(id, (r.posts.get(id) ?? 0) + 1);
        r.arrivals.set(id, [...(r.arrivals.get(id) ?? []), now]);
      } catch {
        r.posts.set('?', (r.posts.get('?') ?? 0) + 1);
      }
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
    res.on('close', () => open--);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const forget = onCleanup(close);
  return Object.assign(r, {
    url: `http://127.0.0.1:${port}/callbacks`,
    async waitFor(ids: Iterable<string>, timeoutMs: number) {
      const wanted = [...ids];
      const deadline = Date.now() + timeoutMs;
      while (wanted.some((id) => !r.posts.has(id))) {
        if (Date.now() > deadline)
          throw new Error(`callbacks missing after ${timeoutMs} ms: ${wanted.filter((id) => !r.posts.has(id)).length} of ${wanted.length}`);
        await sleep(50);
      }
    },
    async close() {
      forget();
      await close();
    },
  });
}

// ---- small things ------------------------------------------------------------------------------

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** mulberry32: a small seeded random source in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Spread {
  n: number;
  median: number;
  min: number;
  p90: number;
  max: number;
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

export function spread(samples: number[]): Spread {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  const mid = s.length % 2 === 1 ? s[(s.length - 1) / 2]! : ((s[s.length / 2 - 1] ?? NaN) + (s[s.length / 2] ?? NaN)) / 2;
  return { n: s.length, median: round(mid), min: round(s[0] ?? NaN), p90: round(at(0.9)), max: round(s.at(-1) ?? NaN) };
}

/** A plain-text table, columns padded to their widest cell. */
export function textTable(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export const today = () => new Date().toISOString().slice(0, 10);
