// docs/internal/performance-scale.md from the latest bench/results/scale-*.json and soak-*.json. Written by
// bench/scale.ts and bench/soak.ts after each run (each keeps the other's latest section), so that
// `npm run bench`, which rewrites docs/internal/performance.md, never loses them; that page links here.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const resultsDir = path.join(here, 'results');

function latest(prefix: string): { file: string; data: any } | null {
  // A run of another size (`scale-<date>-<n>-tasks.json`) is a comparison, not the page's run.
  const files = readdirSync(resultsDir)
    .filter((f) => f.startsWith(`${prefix}-`) && f.endsWith('.json') && !f.endsWith('-tasks.json'))
    .sort();
  const file = files.at(-1);
  return file ? { file: `bench/results/${file}`, data: JSON.parse(readFileSync(path.join(resultsDir, file), 'utf8')) } : null;
}

const md = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
const head = (cells: string[]) => `${md(cells)}\n${md(cells.map(() => '---'))}`;

function deliverySection(r: any): string {
  const d = r.delivery;
  return `Delivery: ${d.tasks} test-mode tasks completed while delivery was off (${d.queued} callbacks queued), then a server with
\`DELIVERY_POLL_MS=${d.pollMs}\` and \`DELIVERY_CONCURRENCY=${d.concurrencyCap}\` sent them to a loopback receiver.

${head(['receiver answers 200 after', 'callbacks', 'all arrived after s', 'callbacks/s', 'first to last s', 'all recorded delivered after s', 'peak POSTs open at once', 'received twice'])}
${[d, r.capCheck]
  .filter(Boolean)
  .map((x: any) =>
    md([
      `${x.receiverDelayMs} ms`,
      x.tasks,
      x.secondsToAll,
      `**${x.callbacksPerSecond}**`,
      x.firstToLastSeconds,
      x.secondsToAllRecorded,
      x.peakConcurrent,
      x.duplicates,
    ]),
  )
  .join('\n')}

Times run from the moment the server could deliver (its start banner, or the first arrival if earlier).
`;
}

/** The load average when the run started and ended, when the results carry it. */
function loadSentence(r: any): string {
  const l = r.environment.loadAverage;
  return l ? ` (load average ${l.start.join(', ')} at the start, ${l.end.join(', ')} at the end)` : '';
}

/** Where the pages of the small account (the 10³ side of each comparison) come from. */
function smallSentence(r: any): string {
  if (!r.small) return '';
  const n = Number(r.small.tasks).toLocaleString('en');
  return r.small.lists
    ? `A second account of ${n} tasks (${Number(r.load.smallLiveTasks).toLocaleString('en')} live with the API's; the same mix), loaded and timed in the same run: its pages are listed below the targets. `
    : `The same pages at ${n} tasks: from an earlier run (\`${r.small.from}\`). `;
}

function smallTable(r: any): string {
  if (!r.small?.lists) return '';
  return `
Pages of the small account (${Number(r.load.smallLiveTasks).toLocaleString('en')} live tasks), timed in the same rounds:

${head(['list (limit 100)', 'total', 'median ms', 'server ms (median)', 'SQL ms'])}
${r.small.lists.map((l: any) => md([l.case, l.total, l.ms.median, l.serverMs?.median ?? '', l.explain.executionMs])).join('\n')}
`;
}

function scaleSection(file: string, r: any): string {
  const first = r.lists[0];
  const d = r.delivery;
  return `## Scale: ${Number(r.settings.tasks).toLocaleString('en')} tasks in one account

\`npm run bench:scale\`, ${r.date.slice(0, 10)}: ${r.environment.cpu}, ${r.environment.memoryGb} GB, Node ${r.environment.node}${loadSentence(r)},
PostgreSQL ${r.environment.postgres} (${r.environment.postgresSettings}). Raw numbers and the query plans:
[\`${file}\`](../../${file}). ${Number(r.load.liveTasks).toLocaleString('en')} live tasks (table ${r.load.tableMb} MB, indexes ${r.load.indexesMb} MB${r.load.taskTagsMb !== undefined ? `, task_tags with its index ${r.load.taskTagsMb} MB` : ''}),
loaded in ${r.load.insertSeconds} s plus ${r.load.vacuumAnalyzeSeconds} s \`VACUUM ANALYZE\`. ${smallSentence(r)}Each list case is one client's
\`GET\` over loopback, ${r.settings.warmup} warm-up + ${r.settings.samples} timed, all cases interleaved ("server ms": the server's
own time from its access log); "× small": its server ms over the same page's in the small account; "SQL" is \`EXPLAIN ANALYZE\` of the
server's own statements for that page (Execution Time; "count" is the count of all matches for \`total\`,
"page" the rows of the page: the actual time of the plan's first Aggregate and Limit nodes).

${head(['list (limit 100)', 'total', 'median ms', 'min', 'p90', 'max', 'server ms (median)', '× first page', '× small', 'SQL ms', 'of which count', 'page'])}
${r.lists
  .map((l: any) =>
    md([
      l.case,
      l.total,
      l.ms.median,
      l.ms.min,
      l.ms.p90,
      l.ms.max,
      l.serverMs?.median ?? '',
      l === first ? '' : (r.ratios[l.case] ?? ''),
      r.versusSmall?.[l.case] ?? '',
      l.explain.executionMs,
      l.explain.countMs ?? '',
      l.explain.pageMs ?? '',
    ]),
  )
  .join('\n')}

${d ? deliverySection(r) : 'Delivery: not run (`--deliveries 0`).\n'}
${head(['target', 'measured', 'met'])}
${r.targets.map((t: any) => md([t.target, t.measured, t.met ? 'yes' : '**no**'])).join('\n')}
${smallTable(r)}
How \`total\` and the pages are found: \`total\` is a sum of counter rows (\`task_counts\`, kept by triggers on
\`tasks\` in the transaction of each change) for status, type, project, batch, one tag and their combinations;
other filters count their matches through an index that reads only those. A page is read from an index in
the list's order (\`tasks_list\`, or that of its project or batch); with a tag filter from \`task_tags\`
(one row per tag of a task, kept by triggers on \`tasks\`; of several tags the rarest), each row's task
fetched by its key. See [bench/README.md](../../bench/README.md) (issue 21).
`;
}

function soakSection(file: string, r: any): string {
  const s = r.settings;
  return `## Soak: creation with Idempotency-Key under \`kill -9\`

\`npm run soak\`, ${r.date.slice(0, 10)}: ${s.clients} clients for ${s.seconds} s per database, ${s.kills} SIGKILLs of \`humantask serve\` at
seeded moments (seed ${s.seed}), each followed by a restart on the same database and port; test-mode tasks with a
callback to a loopback receiver (\`DELIVERY_LEASE_MS=${s.leaseMs}\`). Raw numbers: [\`${file}\`](../../${file}).

${head(['database', 'kills', 'acknowledged', 'present', 'duplicates', 'lost', 'connection errors / 5xx while down', 'replayed', 'callbacks delivered / still scheduled / failed / missing', 'received twice (sent again after a recorded delivery)', 'creation ms p50 / p90 / max', 'server RSS max MB', 'result'])}
${r.results
  .map((x: any) =>
    md([
      x.db,
      x.kills.length,
      x.acknowledged,
      x.present,
      x.duplicates,
      x.lost,
      `${x.requests.connectionErrors} / ${x.requests.status5xx}`,
      x.requests.replayed,
      `${x.callbacks.delivered} / ${x.callbacks.stillScheduled} / ${x.callbacks.failed} / ${x.callbacks.missing}`,
      `${x.callbacks.receivedTwice} (${x.callbacks.twiceRecorded ?? '?'})`,
      `${x.creationMs.median} / ${x.creationMs.p90} / ${x.creationMs.max}`,
      x.serverRssMbMax ?? '',
      x.ok ? 'ok' : '**failed**',
    ]),
  )
  .join('\n')}
`;
}

/** Rewrites docs/internal/performance-scale.md from the latest results of both. */
export function writeScaleAndSoakPage(): void {
  const scale = latest('scale');
  const soak = latest('soak');
  const page = `# Performance at scale and under kill -9

Written by \`bench/scale.ts\` and \`bench/soak.ts\` from their latest results (what they do: [bench/README.md](../../bench/README.md)).
Throughput and latency of single requests: [performance.md](performance.md).

${scale ? scaleSection(scale.file, scale.data) : '## Scale\n\nNot run yet (`npm run bench:scale`).\n'}
${soak ? soakSection(soak.file, soak.data) : '## Soak\n\nNot run yet (`npm run soak`).\n'}`;
  writeFileSync(path.join(root, 'docs', 'internal', 'performance-scale.md'), page);
}
