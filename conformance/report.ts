// The reports of a run: the summary printed at the end (a table per area, the failures, the
// skipped checks, coverage), JUnit XML for CI, and one self-contained HTML page (no scripts, no
// styles from elsewhere; every text escaped; its filters are CSS alone).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import junitModule, { type Builder } from 'junit-report-builder';
import type { ConformanceRun, CoverageEntry } from './runner.ts';
import type { CheckResult } from './types.ts';

// CommonJS whose module.exports is the builder itself, though its types say `export default`.
const junit = ((junitModule as unknown as { default?: Builder }).default ?? junitModule) as unknown as Builder;

interface AreaRow {
  area: string;
  passed: number;
  failed: number;
  skipped: number;
}

function areaRows(results: CheckResult[]): AreaRow[] {
  const rows = new Map<string, AreaRow>();
  for (const r of results) {
    const row = rows.get(r.check.area) ?? { area: r.check.area, passed: 0, failed: 0, skipped: 0 };
    row[r.outcome]++;
    rows.set(r.check.area, row);
  }
  return [...rows.values()];
}

/** A failure as the reports show it: what broke, where the rule comes from, and why. */
export function failureText(r: Extract<CheckResult, { outcome: 'failed' }>): string {
  return [
    `${r.check.id} (${r.generation} generation)`,
    `  seed: ${r.check.seed}`,
    `  rule: ${r.check.rule}`,
    ...r.message.split('\n').map((l) => `  ${l}`),
    // The request that was sent last, and its answer: what to repeat by hand.
    ...(r.requests?.length
      ? [
          '  last request:',
          ...r.requests
            .at(-1)!
            .split('\n')
            .map((l) => `    ${l}`),
        ]
      : []),
  ].join('\n');
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** The text printed at the end of a run. */
export function summaryText(run: ConformanceRun): string {
  const rows = areaRows(run.results);
  const total = rows.reduce(
    (t, r) => ({ area: 'total', passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }),
    { area: 'total', passed: 0, failed: 0, skipped: 0 },
  );
  const out: string[] = [];
  const failures = run.results.filter((r): r is Extract<CheckResult, { outcome: 'failed' }> => r.outcome === 'failed');
  if (failures.length) {
    out.push(`FAILURES (${failures.length})`, '');
    for (const f of failures) out.push(failureText(f), '');
  }
  const skipped = run.results.filter((r): r is Extract<CheckResult, { outcome: 'skipped' }> => r.outcome === 'skipped');
  if (skipped.length) {
    const byReason = new Map<string, string[]>();
    for (const s of skipped) byReason.set(s.reason, [...(byReason.get(s.reason) ?? []), `${s.check.id} (${s.generation})`]);
    out.push(`SKIPPED (${skipped.length})`);
    for (const [reason, ids] of byReason) out.push(`  ${reason}:`, ...ids.map((id) => `    ${id}`));
    out.push('');
  }
  out.push(
    table([
      ['area', 'passed', 'failed', 'skipped'],
      ...[...rows, total].map((r) => [r.area, String(r.passed), String(r.failed), String(r.skipped)]),
    ]),
  );
  out.push('');
  const shapeResults = run.results.length - run.checkRuns;
  out.push(
    `results: ${run.results.length} = ${run.checkRuns} checks run (the progress bar's total) + ${shapeResults} shape results (one per operation and status answered, and per broken rule)`,
  );
  out.push(`coverage: ${run.coverage.exercised} of ${run.coverage.documented} documented (operation, status) pairs exercised`);
  out.push(`${run.requests} requests in ${(run.ms / 1000).toFixed(1)} s; seed ${run.seed} (repeat with --seed ${run.seed})`);
  const { created } = run;
  if (created.cancelled !== undefined) {
    out.push(
      `cleanup: ${created.cancelled} of ${created.tasks} tasks created by the run cancelled, ${created.alreadyDone} had already ended${created.notCancelled?.length ? `; not cancelled: ${created.notCancelled.join(', ')}` : ''}`,
    );
  } else if (created.tasks > 0) {
    out.push(`the run created ${created.tasks} tasks in the accounts of the keys given and left them there (--cleanup cancels them)`);
  }
  out.push(run.passed ? 'PASSED' : `FAILED: ${failures.length} check(s)`);
  return out.join('\n');
}

/** JUnit XML: a test suite per generation and area, a test case per check. */
function junitXml(run: ConformanceRun): string {
  const builder = junit.newBuilder().name('humantask conformance');
  const suites = new Map<string, ReturnType<typeof builder.testSuite>>();
  for (const r of run.results) {
    const key = `${r.generation} / ${r.check.area}`;
    let suite = suites.get(key);
    if (!suite) {
      suite = builder
        .testSuite()
        .name(key)
        .property('seed', String(run.seed))
        .property('base_url', run.options.baseUrl)
        .property('profile', run.options.profile);
      suites.set(key, suite);
    }
    const tc = suite
      .testCase()
      .className(`${r.generation}.${r.check.area}`)
      .name(r.check.id)
      .time(r.ms / 1000)
      .property('seed_section', r.check.seed)
      .property('rule', r.check.rule);
    if (r.outcome === 'failed') tc.failure(`${r.check.rule} (seed: ${r.check.seed})\n${r.message}`, 'ConformanceFailure');
    if (r.outcome === 'skipped') tc.skipped().standardOutput(r.reason);
    if (r.notes.length) tc.standardOutput(r.notes.join('\n'));
  }
  return builder.build();
}

const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const style = `
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d2330;max-width:80rem}
h1{font-size:1.5rem;margin:0 0 .3rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #d5d9e0;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f1f3f6}td.n{text-align:right;font-variant-numeric:tabular-nums}
.passed{color:#17743a}.failed{color:#b3261e;font-weight:600}.skipped{color:#6b7280}
.verdict{font-size:1.2rem;font-weight:700}.no{background:#fdf1f0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f7f9;border:1px solid #e3e6ea;padding:.5rem;margin:.3rem 0;font-size:12.5px}
details{margin:.25rem 0}summary{cursor:pointer}.muted{color:#6b7280}
.filters{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin:.5rem 0;padding:.5rem;background:#f6f7f9;border:1px solid #e3e6ea}
.filters fieldset{border:0;margin:0;padding:0}.filters legend{font-weight:600;padding:0;float:left;margin-right:.5rem}
.filters label{margin-right:.6rem;white-space:nowrap}`;

/** A class name for an area (areas are free text). */
const areaClass = (areas: string[], area: string) => `a${areas.indexOf(area)}`;

/**
 * The filters of the "All checks" table, in CSS alone (the page has no scripts): radio buttons by
 * outcome and by area, each hiding the rows that do not match through `:has()`.
 */
function filterStyle(areas: string[]): string {
  const rules = ['passed', 'failed', 'skipped'].map((o) => `body:has(#show-${o}:checked) tr.r:not(.${o}-row){display:none}`);
  for (const area of areas) {
    const c = areaClass(areas, area);
    rules.push(`body:has(#area-${c}:checked) tr.r:not(.${c}){display:none}`);
  }
  return rules.join('\n');
}

/**
 * One self-contained HTML page: summary, failures, every result, skipped checks, coverage. Written
 * as polyglot markup (void elements closed), so an XML parser can check it too.
 */
function htmlReport(run: ConformanceRun): string {
  const rows = areaRows(run.results);
  const failures = run.results.filter((r): r is Extract<CheckResult, { outcome: 'failed' }> => r.outcome === 'failed');
  const skipped = run.results.filter((r): r is Extract<CheckResult, { outcome: 'skipped' }> => r.outcome === 'skipped');
  const o = run.options;
  const parts: string[] = [];
  parts.push(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"/><title>humantask conformance: ${esc(run.passed ? 'passed' : 'failed')}</title>`,
  );
  const areas = rows.map((r) => r.area);
  parts.push(
    `<meta name="viewport" content="width=device-width, initial-scale=1"/><style>${style}\n${filterStyle(areas)}</style></head><body>`,
  );
  parts.push(`<h1>humantask conformance report</h1>`);
  parts.push(`<p class="verdict ${run.passed ? 'passed' : 'failed'}">${run.passed ? 'PASSED' : `FAILED: ${failures.length} check(s)`}</p>`);
  parts.push(
    `<p>Server <code>${esc(o.baseUrl)}</code>, generations ${esc(o.generations.join(', '))}, profile ${esc(o.profile)}, seed <code>${esc(run.seed)}</code> (repeat with <code>--seed ${esc(run.seed)}</code>), ${esc(run.requests)} requests, ${esc((run.ms / 1000).toFixed(1))} s, started ${esc(run.startedAt.toISOString())}.</p>`,
  );

  parts.push(`<h2>Summary by area</h2><table><tr><th>area</th><th>passed</th><th>failed</th><th>skipped</th></tr>`);
  for (const r of rows)
    parts.push(
      `<tr><td>${esc(r.area)}</td><td class="n passed">${r.passed}</td><td class="n${r.failed ? ' failed' : ''}">${r.failed}</td><td class="n skipped">${r.skipped}</td></tr>`,
    );
  parts.push(
    `</table><p>Coverage: ${run.coverage.exercised} of ${run.coverage.documented} documented (operation, status) pairs exercised (<a href="#coverage">table</a>).</p>`,
  );

  if (failures.length) {
    parts.push(`<h2 id="failures">Failures (${failures.length})</h2>`);
    for (const f of failures) {
      parts.push(
        `<h3 class="failed">${esc(f.check.id)} <span class="muted">(${esc(f.generation)} generation, ${esc(f.check.area)})</span></h3>`,
      );
      parts.push(`<p><b>Seed:</b> ${esc(f.check.seed)}<br/><b>Rule:</b> ${esc(f.check.rule)}</p><pre>${esc(f.message)}</pre>`);
      if (f.requests?.length)
        parts.push(
          `<details open="open"><summary>the last ${f.requests.length === 1 ? 'request' : `${f.requests.length} requests`} sent, with the answers</summary>${f.requests.map((r) => `<pre>${esc(r)}</pre>`).join('')}</details>`,
        );
      if (f.details !== undefined)
        parts.push(
          `<details><summary>details</summary><pre>${esc(typeof f.details === 'string' ? f.details : JSON.stringify(f.details, null, 2))}</pre></details>`,
        );
    }
  }

  // Failed rows only when the run failed (a passing run's table is thousands of rows long).
  const shown = failures.length ? 'failed' : 'all';
  const radio = (name: string, id: string, label: string, checked: boolean) =>
    `<label><input type="radio" name="${name}" id="${id}"${checked ? ' checked="checked"' : ''}/> ${esc(label)}</label>`;
  parts.push(
    `<h2 id="all">All checks (${run.results.length})</h2><div class="filters"><fieldset><legend>Show</legend>${['all', 'failed', 'skipped', 'passed'].map((o) => radio('outcome', `show-${o}`, o, o === shown)).join('')}</fieldset>` +
      `<fieldset><legend>Area</legend>${radio('area', 'area-all', 'every area', true)}${areas.map((a) => radio('area', `area-${areaClass(areas, a)}`, a, false)).join('')}</fieldset></div>`,
  );
  parts.push(`<table><tr><th>check</th><th>generation</th><th>area</th><th>outcome</th><th>ms</th><th>seed section and rule</th></tr>`);
  for (const r of run.results) {
    const extra =
      r.outcome === 'skipped'
        ? `<br/><span class="muted">${esc(r.reason)}</span>`
        : r.notes.length
          ? `<br/><span class="muted">${esc(r.notes.join('; '))}</span>`
          : '';
    parts.push(
      `<tr class="r ${r.outcome}-row ${areaClass(areas, r.check.area)}"><td>${esc(r.check.id)}</td><td>${esc(r.generation)}</td><td>${esc(r.check.area)}</td><td class="${r.outcome}">${r.outcome}</td><td class="n">${r.ms}</td><td>${esc(r.check.seed)}<br/>${esc(r.check.rule)}${extra}</td></tr>`,
    );
  }
  parts.push(`</table>`);

  if (skipped.length) {
    parts.push(`<h2>Skipped (${skipped.length})</h2><ul>`);
    for (const s of skipped) parts.push(`<li>${esc(s.check.id)} (${esc(s.generation)}): ${esc(s.reason)}</li>`);
    parts.push(`</ul>`);
  }

  parts.push(`<h2 id="coverage">Coverage of the contract's (operation, status) pairs</h2>`);
  parts.push(
    `<p>Each documented response of each operation, and how many answers of the run had it. Rows marked <b>no</b> were not exercised; undocumented statuses the run saw are listed too (they are also shape failures).</p>`,
  );
  parts.push(
    `<table><tr><th>generation</th><th>operation</th><th>method and path</th><th>status</th><th>exercised</th><th>answers</th></tr>`,
  );
  for (const e of run.coverage.entries) parts.push(coverageRow(e));
  parts.push(`</table></body></html>`);
  return parts.join('\n');
}

function coverageRow(e: CoverageEntry): string {
  const exercised = !e.documented ? 'undocumented' : e.count > 0 ? 'yes' : 'no';
  return `<tr${e.count === 0 || !e.documented ? ' class="no"' : ''}><td>${esc(e.generation)}</td><td>${esc(e.operationId)}</td><td><code>${esc(e.method)} ${esc(e.path)}</code></td><td>${esc(e.status)}</td><td class="${e.documented && e.count > 0 ? 'passed' : 'failed'}">${exercised}</td><td class="n">${e.count}</td></tr>`;
}

/** Writes report.xml (JUnit), report.html and report.json into `dir`; returns their paths. */
export function writeReports(run: ConformanceRun, dir: string): { xml: string; html: string; json: string } {
  mkdirSync(dir, { recursive: true });
  const files = { xml: path.join(dir, 'report.xml'), html: path.join(dir, 'report.html'), json: path.join(dir, 'report.json') };
  writeFileSync(files.xml, junitXml(run));
  writeFileSync(files.html, htmlReport(run));
  const json = {
    passed: run.passed,
    seed: run.seed,
    options: { ...run.options, key: '(hidden)', otherKey: run.options.otherKey && '(hidden)', liveKey: run.options.liveKey && '(hidden)' },
    startedAt: run.startedAt,
    ms: run.ms,
    requests: run.requests,
    results: run.results.map(({ check, ...r }) => ({
      id: check.id,
      area: check.area,
      seed: check.seed,
      rule: check.rule,
      kind: check.kind,
      ...r,
    })),
    coverage: run.coverage,
  };
  writeFileSync(files.json, JSON.stringify(json, null, 2));
  return files;
}
