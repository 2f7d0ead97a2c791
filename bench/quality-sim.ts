// The simulated workforce of test/server/quality-simulation.test.ts, run on its own to draw its
// chart: docs/quality-simulation.svg (embedded in docs/quality.md). Per worker: the accuracy the
// simulation knows (its live answers scored against the truth), the accuracy the server measured
// by hidden evaluation (GET /v1/projects/{projectName}/quality), and its agreement with the other
// workers of the same tasks; paused workers marked. A reference server on in-memory PGlite in this
// process, delivery to a loopback receiver.
//
//   node --import tsx bench/quality-sim.ts [--seed 19] [--tasks 200]
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { readConfig } from '../server/config.ts';
import { startServer } from '../server/main.ts';
import { simulateWorkforce, simulationPolicy, simulationRandom, type SimulationResult } from '../test/support/simulation.ts';
import { run, textTable } from './lib.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const chartFile = path.join(here, '..', 'docs', 'quality-simulation.svg');
const { values: args } = parseArgs({ options: { seed: { type: 'string', default: '19' }, tasks: { type: 'string', default: '200' } } });
const seed = Number(args.seed);

const f2 = (x: number | null | undefined) => (x === null || x === undefined ? '' : x.toFixed(2));

/** A worker's row: what the simulation knows and what the server's figures say. */
function rows(result: SimulationResult) {
  const figures = new Map<string, { state: string; accuracy?: number }>(
    result.figures.workers.map((w: { worker: string }) => [w.worker, w]),
  );
  return result.workers.map((w) => ({
    name: w.name,
    care: w.care,
    known: w.trueAccuracy,
    measured: figures.get(w.workerId)?.accuracy ?? null,
    agreement: w.agreement,
    paused: figures.get(w.workerId)?.state === 'paused',
    live: w.live.length,
    evaluated: w.evaluationScores.length,
  }));
}

type Row = ReturnType<typeof rows>[number];

const series = [
  { key: 'known', label: 'accuracy the simulation knows (live answers vs the truth)', color: '#336791' },
  { key: 'measured', label: 'accuracy measured by hidden evaluation (the project figures)', color: '#2a9d8f' },
  { key: 'agreement', label: 'agreement with the other answers of the same tasks', color: '#e9c46a' },
] as const;

/** Grouped bars by hand: three per worker on a 0–1 scale, the pause mark dashed, paused workers in red. */
function chart(data: Row[], result: SimulationResult): string {
  const left = 44;
  const top = 88;
  const plotH = 220;
  const groupW = 38;
  const barW = 9;
  const width = left + groupW * data.length + 20;
  const height = top + plotH + 58;
  const y = (v: number) => top + plotH - v * plotH;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11" role="img" aria-label="Accuracy and agreement per simulated worker">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="16" font-size="13" fill="#222">A simulated workforce: ${result.workers.length} workers, ${result.tasks.length} tasks, overlap ${simulationPolicy.overlap}, 10 % hidden evaluation (seed ${seed})</text>`,
    `<text x="${left}" y="32" fill="#222">Mean score against the truth: completed answers ${f2(result.completedMean)}, single answers ${f2(result.singleMean)}</text>`,
  ];
  series.forEach((s, i) => {
    const x = left + (i % 2) * 390;
    const ly = 50 + Math.floor(i / 2) * 15;
    out.push(`<rect x="${x}" y="${ly - 9}" width="10" height="10" fill="${s.color}"/>`);
    out.push(`<text x="${x + 14}" y="${ly}" fill="#222">${s.label}</text>`);
  });
  out.push(`<text x="${left + 390}" y="65" fill="#c0392b">red name: paused by the server</text>`);
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(`<line x1="${left}" y1="${y(v)}" x2="${width - 20}" y2="${y(v)}" stroke="#e0e0e0"/>`);
    out.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#444">${v}</text>`);
  }
  const mark = simulationPolicy.evaluation.pause_below;
  out.push(`<line x1="${left}" y1="${y(mark)}" x2="${width - 20}" y2="${y(mark)}" stroke="#c0392b" stroke-dasharray="4 3"/>`);
  out.push(`<text x="${width - 22}" y="${y(mark) - 4}" text-anchor="end" fill="#c0392b">pause below ${mark}</text>`);
  data.forEach((r, i) => {
    const gx = left + i * groupW + 5;
    series.forEach((s, k) => {
      const v = r[s.key];
      if (v === null) return;
      out.push(
        `<rect x="${gx + k * barW}" y="${Math.min(y(v), top + plotH - 1).toFixed(1)}" width="${barW - 1}" height="${Math.max(1, v * plotH).toFixed(1)}" fill="${s.color}"><title>${r.name} ${s.key} ${f2(v)}</title></rect>`,
      );
    });
    const color = r.paused ? '#c0392b' : '#222';
    out.push(`<text x="${gx + 13}" y="${top + plotH + 14}" text-anchor="middle" fill="${color}">${r.name}</text>`);
    out.push(`<text x="${gx + 13}" y="${top + plotH + 27}" text-anchor="middle" fill="#777">${r.care}</text>`);
  });
  out.push(
    `<text x="${left}" y="${top + plotH + 46}" fill="#777">under each name: the worker's care (the chance it draws an object of the truth); w: careful, s: slackers (careful only in training)</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

run(async () => {
  const server = await startServer(
    {
      ...readConfig({
        RATE_LIMIT_BURST: '0',
        AUTH_FAILURE_BURST: '0',
        DELIVERY_POLL_MS: '50',
        ATTACHMENT_CHECK_POLL_MS: '0',
        WORK_SWEEP_POLL_MS: '0',
        WORKER_PASSWORD_COST: '10',
        ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
      }),
      port: 0,
      host: '127.0.0.1',
      dataDir: 'memory://',
      databaseUrl: undefined,
    },
    pino({ level: 'silent' }),
    { random: simulationRandom(seed) },
  );
  try {
    const result = await simulateWorkforce(server, { seed, tasks: Number(args.tasks) });
    const data = rows(result);
    console.log(
      textTable([
        ['worker', 'care', 'known', 'measured', 'agreement', 'paused', 'live', 'evaluated'],
        ...data.map((r) => [
          r.name,
          String(r.care),
          f2(r.known),
          f2(r.measured),
          f2(r.agreement),
          r.paused ? 'yes' : '',
          String(r.live),
          String(r.evaluated),
        ]),
      ]),
    );
    console.log(
      `completed ${f2(result.completedMean)} vs single ${f2(result.singleMean)}; agreement ${f2(result.figures.agreement.mean)} over ${result.figures.agreement.tasks} tasks; ` +
        `${result.reviews} reviews, ${result.rounds} rounds, ${result.workerRequests} worker requests; ms ${JSON.stringify(result.ms)}`,
    );
    writeFileSync(chartFile, chart(data, result));
    console.log(`wrote ${path.relative(process.cwd(), chartFile)}`);
    return 0;
  } finally {
    await server.close();
  }
});
