// Where a creation's CPU time goes: `npm run bench:profile [-- --seconds N --target postgres|pglite|ceiling|all]`.
// Runs `humantask serve` (on a throwaway PostgreSQL 15 database, or embedded PGlite), or the stack
// ceiling (bench/server.ts with STACK_CEILING=true on PostgreSQL: handlers that do nothing after validation), under V8's
// sampling profiler (`node --cpu-prof`), drives it with the bench's creation case
// (POST /v1/task/categorization with a new Idempotency-Key per request, 32 connections), stops it
// gracefully so the profile is written, and turns the profile into
//   - bench/results/profile-<date>-<target>.json: CPU time per component and per request,
//   - docs/internal/creation-profile-<target>.svg: a flame graph (hover a frame for its time),
//   - docs/internal/performance-profile.md: the table of both, with the flame graphs linked.
// The flame graph is drawn here (folded stacks → SVG, as Brendan Gregg's flamegraph.pl draws them):
// the npm `flamegraph` package (last published 2015) and 0x (HTML, not SVG) were considered.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { basicAuth, freePort } from '../test/support/net.ts';
import { postgresAvailable, startCluster } from '../test/support/postgres.ts';
import { keysOf, onCleanup, run, serveChild, today } from './lib.ts';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.join(here, '..');

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, target: { type: 'string', default: 'all' } },
});
const SECONDS = Number(values.seconds);
type Target = 'postgres' | 'pglite' | 'ceiling';
const targets: readonly Target[] = values.target === 'all' ? ['postgres', 'ceiling', 'pglite'] : [values.target as Target];

const body = JSON.stringify({
  callback_url: 'https://example.com/cb',
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
});

// ---- the V8 profile ----------------------------------------------------------------------------

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The component a frame belongs to, by where its code lives. Order matters: first match wins. */
const components: [string, (f: CallFrame) => boolean][] = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['express-openapi-validator + ajv', (f) => /node_modules\/(express-openapi-validator|ajv|ajv-formats)\//.test(f.url)],
  [
    'express + body parsing',
    (f) => /node_modules\/(express|router|body-parser|raw-body|qs|iconv-lite|type-is|finalhandler|send|serve-static)\//.test(f.url),
  ],
  ['pg driver', (f) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-.*)\//.test(f.url)],
  ['PGlite (WASM)', (f) => /node_modules\/@electric-sql\//.test(f.url) || f.url.startsWith('wasm://')],
  ['drizzle-orm', (f) => /node_modules\/drizzle-orm\//.test(f.url)],
  ['pino (logging)', (f) => /node_modules\/(pino|sonic-boom|thread-stream)/.test(f.url)],
  ['other dependencies', (f) => f.url.includes('/node_modules/')],
  ['ours: server/http', (f) => f.url.includes('/server/http/') || /\/server\/(app|validator-routes|admin|metrics)\.ts/.test(f.url)],
  ['ours: server/store', (f) => f.url.includes('/server/store/')],
  ['ours: server/domain', (f) => f.url.includes('/server/domain/')],
  ['ours: other', (f) => f.url.includes('/server/')],
  // The write system call of a socket or file (native, no script URL). On a busy machine most of its
  // samples are the wait to run again after the write woke the reader (PostgreSQL's backend, the load
  // generator): the sampler counts wall time, /proc counts only the CPU.
  ['node: write system calls', (f) => f.url === '' && /^write(v|Buffer|Utf8String|Latin1String|AsciiString)$/.test(f.functionName)],
  ['node: net, http, streams', (f) => /^node:(net|_http|http|stream|internal\/(streams|http|net|stream_base))/.test(f.url)],
  ['node: other', (f) => f.url.startsWith('node:') || f.functionName === '(program)' || f.url === ''],
];

const componentOf = (f: CallFrame) => components.find(([, test]) => test(f))?.[0] ?? 'node: other';

/** Self time per node id, in microseconds, from the samples and their time deltas. */
function selfTimes(p: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; the time a sample stands for is the next delta.
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + Math.max(0, dt));
  }
  return self;
}

/**
 * The profile cut down to the measured load. The server is left idle for a second before and after
 * the load (see profileOne), so the load is the busy stretch between two quiet ones (100 ms bins
 * with under 5 % busy samples) whose length is closest to the load's; startup and warm-up are left out.
 */
function loadWindow(p: CpuProfile, seconds: number): CpuProfile {
  const idle = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const at: number[] = [];
  let t = 0;
  for (const dt of p.timeDeltas) {
    t += dt;
    at.push(t);
  }
  const bin = 100_000;
  const bins = Math.ceil((at.at(-1) ?? 0) / bin) + 1;
  const busy = new Array<number>(bins).fill(0);
  const all = new Array<number>(bins).fill(0);
  p.samples.forEach((id, i) => {
    const b = Math.floor(at[i]! / bin);
    all[b]! += 1;
    if (!idle.has(id)) busy[b]! += 1;
  });
  const quiet = busy.map((n, b) => n <= 0.05 * all[b]!);
  // Busy stretches: runs of bins not interrupted by 5 or more quiet bins in a row.
  const stretches: [number, number][] = [];
  let start = -1;
  let quietRun = 0;
  for (let b = 0; b < bins; b++) {
    if (!quiet[b]) {
      if (start < 0) start = b;
      quietRun = 0;
    } else if (start >= 0 && ++quietRun >= 5) {
      stretches.push([start, b - quietRun + 1]);
      start = -1;
    }
  }
  if (start >= 0) stretches.push([start, bins]);
  const target = (seconds * 1e6) / bin;
  const best = stretches.sort((x, y) => Math.abs(x[1] - x[0] - target) - Math.abs(y[1] - y[0] - target))[0];
  if (!best) throw new Error('no busy stretch in the profile');
  const keep = p.samples.map((_, i) => at[i]! >= best[0] * bin && at[i]! < best[1] * bin);
  return {
    ...p,
    samples: p.samples.filter((_, i) => keep[i]),
    timeDeltas: p.timeDeltas.filter((_, i) => keep[i]),
  };
}

const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/node_modules\//, '').replace(/^file:\/\/.*?\/(server|bench)\//, '$1/');

const frameName = (f: CallFrame) => `${f.functionName || '(anonymous)'}${f.url ? ` ${shortUrl(f.url)}:${f.lineNumber + 1}` : ''}`;

/** The functions with the most self time (idle left out), merged by name, with their main caller. */
function topFunctions(p: CpuProfile, n: number): { name: string; component: string; us: number; calledFrom: string }[] {
  const self = selfTimes(p);
  const parent = new Map<number, ProfileNode>();
  for (const node of p.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const out = new Map<string, { name: string; component: string; us: number; callers: Map<string, number> }>();
  for (const node of p.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0 || node.callFrame.functionName === '(idle)') continue;
    const name = frameName(node.callFrame);
    const entry = out.get(name) ?? { name, component: componentOf(node.callFrame), us: 0, callers: new Map() };
    entry.us += us;
    const caller = parent.get(node.id);
    const callerName = caller ? frameName(caller.callFrame) : '';
    entry.callers.set(callerName, (entry.callers.get(callerName) ?? 0) + us);
    out.set(name, entry);
  }
  return [...out.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, n)
    .map(({ callers, ...f }) => ({ ...f, calledFrom: [...callers.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '' }));
}

function byComponent(p: CpuProfile): Map<string, number> {
  const self = selfTimes(p);
  const out = new Map<string, number>();
  for (const node of p.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us > 0) out.set(componentOf(node.callFrame), (out.get(componentOf(node.callFrame)) ?? 0) + us);
  }
  return out;
}

// ---- the flame graph ---------------------------------------------------------------------------

interface Frame {
  name: string;
  component: string;
  total: number;
  children: Map<string, Frame>;
}

/** The profile as a tree of frames merged by name (the same function called from the same stack). */
function frameTree(p: CpuProfile): Frame {
  const self = selfTimes(p);
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const rootNode = p.nodes[0]!;
  const build = (node: ProfileNode, into: Frame) => {
    const f = node.callFrame;
    if (f.functionName === '(idle)') return 0;
    const name = frameName(f);
    let frame = into.children.get(name);
    if (!frame) {
      frame = { name, component: componentOf(f), total: 0, children: new Map() };
      into.children.set(name, frame);
    }
    let total = self.get(node.id) ?? 0;
    for (const child of node.children ?? []) total += build(nodes.get(child)!, frame);
    frame.total += total;
    return total;
  };
  const tree: Frame = { name: 'all (idle left out)', component: 'node: other', total: 0, children: new Map() };
  for (const child of rootNode.children ?? []) tree.total += build(nodes.get(child)!, tree);
  return tree;
}

const palette: Record<string, string> = {
  'garbage collection': '#b0b0b0',
  'express-openapi-validator + ajv': '#e8a33d',
  'express + body parsing': '#f0c060',
  'pg driver': '#6fa8dc',
  'PGlite (WASM)': '#6fa8dc',
  'drizzle-orm': '#9fc5e8',
  'pino (logging)': '#d5a6bd',
  'other dependencies': '#ead1dc',
  'ours: server/http': '#e06666',
  'ours: server/store': '#cc4125',
  'ours: server/domain': '#a61c00',
  'ours: other': '#ea9999',
  'node: net, http, streams': '#93c47d',
  'node: write system calls': '#d9ead3',
  'node: other': '#b6d7a8',
};

const escapeXml = (s: string) => s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);

/** An SVG flame graph: the root at the bottom, a frame's width its total time, children above it. */
function flameGraph(tree: Frame, title: string, perRequest: number): string {
  const width = 1200;
  const rowHeight = 16;
  const minWidth = 0.3;
  let depth = 0;
  const rects: string[] = [];
  const scale = (width - 20) / tree.total;
  const place = (frame: Frame, x: number, level: number) => {
    const w = frame.total * scale;
    if (w < minWidth) return;
    depth = Math.max(depth, level);
    const us = (frame.total / perRequest).toFixed(1);
    const pct = ((frame.total / tree.total) * 100).toFixed(1);
    const label = w > 40 ? escapeXml(frame.name.slice(0, Math.floor(w / 6.5))) : '';
    rects.push(
      `<g><title>${escapeXml(frame.name)}: ${us} µs a request, ${pct} % (${frame.component})</title>` +
        `<rect x="${(10 + x).toFixed(2)}" y="LEVEL${level}" width="${w.toFixed(2)}" height="${rowHeight - 1}" fill="${palette[frame.component] ?? '#ccc'}" rx="2"/>` +
        (label ? `<text x="${(13 + x).toFixed(2)}" y="LEVEL${level}T">${label}</text>` : '') +
        '</g>',
    );
    let cx = x;
    for (const child of [...frame.children.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      place(child, cx, level + 1);
      cx += child.total * scale;
    }
  };
  place(tree, 0, 0);
  const legendRows = Math.ceil(Object.keys(palette).length / 4);
  const top = 40 + legendRows * 18;
  const height = top + (depth + 1) * rowHeight + 10;
  const yOf = (level: number) => top + (depth - level) * rowHeight;
  const body = rects.join('\n').replace(/y="LEVEL(\d+)(T?)"/g, (_, l, t) => `y="${yOf(Number(l)) + (t ? 11 : 0)}"`);
  const legend = Object.entries(palette)
    .map(([name, color], i) => {
      const x = 10 + (i % 4) * 295;
      const y = 30 + Math.floor(i / 4) * 18;
      return `<rect x="${x}" y="${y}" width="12" height="12" fill="${color}"/><text x="${x + 16}" y="${y + 10}">${escapeXml(name)}</text>`;
    })
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Verdana, sans-serif" font-size="11">
<rect width="100%" height="100%" fill="#fdfdf7"/>
<text x="10" y="18" font-size="14">${escapeXml(title)}</text>
${legend}
${body}
</svg>
`;
}

// ---- the run -----------------------------------------------------------------------------------

interface ProfileResult {
  target: Target;
  seconds: number;
  requests: number;
  rps: number;
  /** Busy CPU time of the server's main thread (idle left out), per request, in µs. */
  busyUsPerRequest: number;
  components: { component: string; usPerRequest: number; share: number }[];
  /** The functions with the most self time. */
  functions: { name: string; component: string; usPerRequest: number; calledFrom: string }[];
  /** The machine's 1-minute load average when the load began and when it ended (other work inflates every µs). */
  loadAverage: [number, number];
}

/** The stack ceiling (bench/server.ts, as bench/run.ts starts it) under the profiler. */
async function ceilingChild(env: Record<string, string>, nodeArgs: string[]): Promise<{ url: string; key: string; stop(): Promise<void> }> {
  const child = fork(path.join(here, 'server.ts'), [], {
    env: { ...process.env, RATE_LIMIT_BURST: '0', DELIVERY_POLL_MS: '0', ATTACHMENT_CHECK_POLL_MS: '0', ...env, STACK_CEILING: 'true' },
    execArgv: nodeArgs,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.send({ stop: true });
    await exited;
  };
  onCleanup(stop, () => child.kill('SIGKILL'));
  const [ready] = (await once(child, 'message')) as [{ url: string; account: { live_key: string } }];
  return { url: ready.url, key: ready.account.live_key, stop };
}

async function profileOne(target: Target, databaseUrl: string | null): Promise<ProfileResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'humantask-prof-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const env = {
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: path.join(dir, 'data') }),
  };
  // Through tsx rather than the bundle bin/humantask.js runs otherwise: the frames then name our
  // TypeScript files, which is how the components below are told apart.
  const nodeArgs = ['--import', 'tsx', '--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200'];
  const server =
    target === 'ceiling'
      ? await ceilingChild(env, nodeArgs)
      : await serveChild(env, nodeArgs).then((s) => ({ url: s.url, key: keysOf(s.output()).live, stop: s.stop }));
  const { key } = server;
  const headers = { authorization: basicAuth(key), 'content-type': 'application/json' };
  const options = {
    url: server.url,
    connections: 32,
    requests: [
      {
        method: 'POST' as const,
        path: '/v1/task/categorization',
        headers,
        body,
        setupRequest: (req: object) => ({ ...req, headers: { ...headers, 'idempotency-key': randomUUID() } }),
      },
    ],
  };
  process.stdout.write(`  ${target}: warm-up, then ${SECONDS} s of creation under the profiler ... `);
  await autocannon({ ...options, duration: 3 });
  // Quiet seconds around the load mark it in the profile (loadWindow).
  await sleep(1000);
  const started = Date.now();
  const loadBefore = loadavg()[0]!;
  const r = await autocannon({ ...options, duration: SECONDS });
  const elapsed = (Date.now() - started) / 1000;
  const loadAverage: [number, number] = [Math.round(loadBefore * 10) / 10, Math.round(loadavg()[0]! * 10) / 10];
  await sleep(1000);
  await server.stop();
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (!file) throw new Error('the server wrote no CPU profile');
  const profile = loadWindow(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, elapsed);
  const requests = r.requests.total;
  const times = byComponent(profile);
  times.delete('idle');
  const busy = [...times.values()].reduce((a, b) => a + b, 0);
  const result: ProfileResult = {
    target,
    seconds: SECONDS,
    requests: r.requests.total,
    rps: Math.round(r.requests.total / elapsed),
    busyUsPerRequest: Math.round(busy / requests),
    components: [...times.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([component, us]) => ({
        component,
        usPerRequest: Math.round((us / requests) * 10) / 10,
        share: Math.round((us / busy) * 1000) / 10,
      })),
    functions: topFunctions(profile, 30).map(({ us, ...f }) => ({ ...f, usPerRequest: Math.round((us / requests) * 10) / 10 })),
    loadAverage,
  };
  console.log(`${result.rps} rps, ${result.busyUsPerRequest} µs of busy CPU a request`);
  const tree = frameTree(profile);
  const svg = flameGraph(
    tree,
    `${target === 'ceiling' ? 'the stack ceiling (handlers that do nothing after validation), creation with Idempotency-Key on PostgreSQL 15' : `humantask creation with Idempotency-Key on ${target === 'postgres' ? 'PostgreSQL 15' : 'PGlite'}`}: ${result.busyUsPerRequest} µs of the server's CPU a request (${today()})`,
    requests,
  );
  writeFileSync(path.join(root, 'docs', 'internal', `creation-profile-${target}.svg`), svg);
  return result;
}

function page(results: ProfileResult[]): string {
  const rows = new Set(results.flatMap((r) => r.components.map((c) => c.component)));
  const cell = (r: ProfileResult, name: string) => {
    const c = r.components.find((x) => x.component === name);
    return c ? `${c.usPerRequest} µs (${c.share} %)` : '–';
  };
  return `# Where a creation's CPU time goes

<!-- Written by \`npm run bench:profile\` (bench/profile.ts); do not edit by hand. -->

\`npm run bench:profile\`, ${today()}: ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}, Node ${process.version}.
The reference server under \`--cpu-prof\` (a sample every 200 µs) while autocannon creates categorization tasks with a
new \`Idempotency-Key\` each (live key, 32 connections, ${SECONDS} s after a 3 s warm-up). Time is the server
process's main thread, idle left out, divided by the requests served. The database's own CPU (PostgreSQL
is another process) is not in these figures; PGlite's is (it runs in the server's thread, as WASM).
The profiler itself slows the server (the requests a second here are below the bench's). \`ceiling\` is
the stack ceiling of \`npm run bench\`: the same server on PostgreSQL whose handlers answer at once after
validation (authentication, parsers, Idempotency-Key check, contract validation and the JSON answer).
The machine's load average (1 minute) while each ran: ${results.map((r) => `${r.target} ${r.loadAverage[0]}–${r.loadAverage[1]}`).join(', ')}
(on 2 CPUs: above 2, other work shared them, which makes every µs larger; compare shares and ratios).

| component | ${results.map((r) => `${r.target} (${r.rps} rps)`).join(' | ')} |
|---|${results.map(() => '---:').join('|')}|
${[...rows].map((name) => `| ${name} | ${results.map((r) => cell(r, name)).join(' | ')} |`).join('\n')}
| **busy CPU a request** | ${results.map((r) => `**${r.busyUsPerRequest} µs**`).join(' | ')} |

Flame graphs (open the SVG in a browser and hover a frame for its time a request):
${results.map((r) => `- [${r.target}](creation-profile-${r.target}.svg)`).join('\n')}

A creation with \`Idempotency-Key\` (live key, no project or batch) is two statements on either database:
the key lookup (a read), then one statement that claims the key with the answer, inserts the task and
its work row, counts the live request and nudges the work queue (\`NOTIFY\`); a trigger keeps the list
counters (\`task_counts\`) in it. One commit a creation. Both statements are prepared once per
connection by name, on PGlite too (\`server/store/pglite-prepared.ts\`: one call into the WebAssembly
backend per execution, where \`query()\` made six and parsed and planned the text each time).

Removed since the first profile of 2026-11-25, each measured as the server's CPU time a creation
(\`/proc\`, 3,000–4,000 creations, 16 connections, load average 14–25): PGlite re-parsing every
statement (creation statement 1,472 → 750 µs, key lookup with the count 738 → 358 µs, in-process);
the live-request count written by the key lookup, a second write and commit per creation (the lookup
is now a read: 77 µs on PGlite); together PGlite 2,970 → 1,747 µs a creation. On PostgreSQL the server
process stayed at 1,065 µs and PostgreSQL's own processes at 780 → 763 µs. Earlier that day:
express-openapi-validator's route lookup tried every route of the generation on every request
(\`lookupRoute\`: 110 µs of 3,261 µs, 3.4 %); \`server/validator-routes.ts\` hands it only the routes that can match.

Removed later on 2026-11-25 (measured as the server's CPU a request from \`/proc\`, runs of 10 s taken in
turn with the code before, quiet machine): the copy of the body that the validator fills in made by
\`structuredClone\` (now a JSON copy, \`cloneJson\`), the Idempotency-Key fingerprint's canonical JSON built
with arrays and joins, a \`$ref\` split and walked again at every lookup (\`contract.resolve\` keeps what
each reference names), an array's item schemas gathered again for every array of a body, the
storable-text check naming every place in the body before finding nothing, and a \`new URL\` for every
callback or attachment URL whose host is plainly a DNS name. Stack ceiling 456 → 410 µs (−10 %), creation
on PostgreSQL 614 → 576 µs (−6 %), PGlite 1,479 → 1,444 µs; in \`npm run bench\`: creation 1,619 → 1,761
rps, the ceiling 2,431 → 2,887, PGlite 784 → 817.

"node: write system calls" is what was most of "node: other": \`writev\` (the pg driver's Bind, Describe,
Execute and Sync of a statement, corked into one write) and the answer's write (on PGlite, with no
database socket, that alone: 217 µs a request). The sampler counts
wall time, and a write to a loopback socket wakes the process that reads it (PostgreSQL's backend, the
load generator), which on a busy machine often runs before the server does again: the wait is counted
in the write. The server's CPU from \`/proc\` a creation is well below its busy time here (720–800 µs
at load average 10–17, against 1,296–1,385 µs busy in the profiles). The rest of "node: other" is the microtask queue's
own work (\`runMicrotasks\`), V8 outside any function (\`(program)\`), \`emit\` and \`nextTick\`.

PostgreSQL's side, from \`/proc\` (every process of the cluster, 2026-11-25, load average 16–24):
the backends running the statements 440–860 µs a creation with 16 connections, 320–570 µs with one
(runs taken in turn): a third or more goes with concurrency (not split further; likely the waits
for the counter rows and for the account row that the foreign keys lock, and their wake-ups: dropping
the three foreign keys to \`accounts\` a creation checks showed no difference beyond the noise); the backend that LISTENs for work nudges 28–62 µs
(one NOTIFY a live creation). The key lookup alone: 15 µs in the
backend and 30 µs in the server's driver (serial, 5,000 lookups): a cache of accounts would save
under 5 % of a creation on either side. Removed: the list counters' statement-level trigger for a
created task (transition table, GROUP BY, sort for one row), now a row-level trigger that writes the
one counter row of a task without project, batch or tags directly (backend CPU a task insert, serial,
110–120 → 93–97 µs; migration 0016).
`;
}

run(async () => {
  const results: ProfileResult[] = [];
  for (const target of targets) {
    if (target !== 'pglite') {
      if (!postgresAvailable()) throw new Error('needs the PostgreSQL 15 binaries (PG_BIN)');
      const cluster = await startCluster(await freePort());
      onCleanup(
        () => cluster.stop(),
        () => cluster.stop(),
      );
      results.push(await profileOne(target, await cluster.createDatabase()));
      cluster.stop();
    } else {
      results.push(await profileOne('pglite', null));
    }
  }
  mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(path.join(root, 'bench', 'results', `profile-${today()}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(root, 'docs', 'internal', 'performance-profile.md'), page(results));
  console.log(`wrote bench/results/profile-${today()}.json and docs/internal/performance-profile.md`);
  return 0;
});
