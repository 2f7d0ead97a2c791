// The mutation score of a run, from its JSON report: `node --import tsx test/mutation/score.ts
// [reports/mutation/mutation.json]` (npm run mutation:score). For a sample (MUTATION_SAMPLE), the
// estimate counts the drawn mutants only, with a 95 % interval: the sample is one of syntax nodes
// (a node's mutants come together), so the interval is the ratio estimator's over nodes. Prints
// the score by file and by mutator, then every survivor, as Markdown (docs/conformance.md).
import { readFileSync } from 'node:fs';
// @ts-expect-error plain JavaScript module without declarations (Stryker loads it too)
import { drawn, sampleOptions } from './sample.mjs';

type Status = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';
interface Location {
  start: { line: number; column: number };
  end: { line: number; column: number };
}
interface Mutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  location: Location;
  status: Status;
  statusReason?: string;
}
interface Report {
  files: Record<string, { source: string; mutants: Mutant[] }>;
}

const reportFile = process.argv[2] ?? 'reports/mutation/mutation.json';
const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
const sample = sampleOptions() as { rate: number; seed: string } | null;

interface Row {
  file: string;
  mutant: Mutant;
}
const rows: Row[] = Object.entries(report.files).flatMap(([file, f]) => f.mutants.map((mutant) => ({ file, mutant })));
const detected = (s: Status) => s === 'Killed' || s === 'Timeout';
/** Stryker's score counts these; static mutants (ignoreStatic), ignored and invalid ones are out. */
const valid = (s: Status) => detected(s) || s === 'Survived' || s === 'NoCoverage';

const counted = sample ? rows.filter((r) => drawn(r.file, r.mutant.location, sample)) : rows;
const extras = sample ? rows.filter((r) => r.mutant.status !== 'Ignored' && !drawn(r.file, r.mutant.location, sample)).length : 0;
const pending = counted.filter((r) => r.mutant.status === 'Pending');
/** Mutants a `// Stryker disable` comment marks as equivalent (its reason says why no client can tell). */
const markedEquivalent = counted.filter((r) => r.mutant.status === 'Ignored' && !/static|not drawn/i.test(r.mutant.statusReason ?? ''));
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** Score and, for a sample, the 95 % interval of the ratio estimator over drawn nodes. */
function score(rs: Row[]) {
  const nodes = new Map<string, { y: number; m: number }>();
  for (const { file, mutant } of rs) {
    if (!valid(mutant.status)) continue;
    const l = mutant.location;
    const key = `${file}:${l.start.line}:${l.start.column}-${l.end.line}:${l.end.column}`;
    const node = nodes.get(key) ?? { y: 0, m: 0 };
    node.m += 1;
    if (detected(mutant.status)) node.y += 1;
    nodes.set(key, node);
  }
  const list = [...nodes.values()];
  const y = list.reduce((a, n) => a + n.y, 0);
  const m = list.reduce((a, n) => a + n.m, 0);
  const r = m ? y / m : NaN;
  let half = 0;
  if (sample && list.length > 1) {
    const n = list.length;
    const variance = ((1 - sample.rate) * n * list.reduce((a, c) => a + (c.y - r * c.m) ** 2, 0)) / ((n - 1) * m * m);
    half = 1.96 * Math.sqrt(variance);
  }
  return { killed: y, valid: m, score: r, half };
}

function statusCounts(rs: Row[]) {
  const counts: Partial<Record<Status, number>> = {};
  for (const { mutant } of rs) counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
  return counts;
}

function table(title: string, key: (r: Row) => string) {
  const groups = new Map<string, Row[]>();
  for (const r of counted) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  console.log(`\n| ${title} | valid | killed or timed out | survived | no coverage | score |\n|---|---|---|---|---|---|`);
  for (const [name, rs] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const s = score(rs);
    if (!s.valid) continue;
    const c = statusCounts(rs);
    console.log(`| ${name} | ${s.valid} | ${s.killed} | ${c.Survived ?? 0} | ${c.NoCoverage ?? 0} | ${pct(s.score)} |`);
  }
}

const total = score(counted);
console.log(`# Mutation score: ${reportFile}\n`);
console.log(
  sample
    ? `Sample: MUTATION_SAMPLE=${sample.rate}, MUTATION_SEED=${sample.seed}; ${counted.length} drawn mutants (${extras} more were tested as nodes inside drawn ones, not counted).`
    : `Whole run: ${rows.length} mutants.`,
);
console.log(`Statuses: ${JSON.stringify(statusCounts(counted))}`);
if (pending.length) console.log(`**Not finished:** ${pending.length} drawn mutants have no result.`);
if (markedEquivalent.length) {
  const all = score([
    ...counted.filter((r) => valid(r.mutant.status)),
    ...markedEquivalent.map((r) => ({ ...r, mutant: { ...r.mutant, status: 'Survived' as Status } })),
  ]);
  console.log(
    `${markedEquivalent.length} drawn mutants are marked equivalent by a \`// Stryker disable\` comment (reasons below) and not counted; counted as survivors, the score would be ${pct(all.score)}.`,
  );
}
console.log(
  `\n**Score: ${pct(total.score)}** (${total.killed} of ${total.valid} valid mutants killed or timed out)${sample ? `, 95 % interval ${pct(total.score - total.half)} to ${pct(total.score + total.half)}` : ''}.`,
);
table('file', (r) => r.file);
table('mutator', (r) => r.mutant.mutatorName);

console.log('\n## Survivors and mutants no check reaches\n');
for (const { file, mutant } of counted) {
  if (mutant.status !== 'Survived' && mutant.status !== 'NoCoverage') continue;
  const source = report.files[file]!.source.split('\n')[mutant.location.start.line - 1]!.trim();
  console.log(
    `- ${mutant.status === 'NoCoverage' ? 'no coverage' : 'survived'} ${file}:${mutant.location.start.line} ${mutant.mutatorName}: \`${source.slice(0, 100)}\` → \`${(mutant.replacement ?? '').replace(/\s+/g, ' ').slice(0, 80)}\``,
  );
}
if (markedEquivalent.length) {
  console.log('\n## Marked equivalent (not counted)\n');
  for (const { file, mutant } of markedEquivalent)
    console.log(`- ${file}:${mutant.location.start.line} ${mutant.mutatorName}: ${mutant.statusReason}`);
}
