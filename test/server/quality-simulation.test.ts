// A simulated workforce (issue 19) on loopback, on PGlite and PostgreSQL: 20 scripted workers of
// known care (test/support/simulation.ts) work 200 live imageannotation tasks with overlap 3,
// training and 10 % hidden evaluation, through the worker API of a real server, while a real
// receiver takes the callbacks. At the end the slackers are paused and no careful worker is, the
// completed answers beat the single ones against the truth, and the project's figures are the
// ones the simulation counts itself from what it submitted and the scorer.
//
// Boxes rather than categories: the scorer and combiner cost little for a few boxes, and graded
// answers give consensus something to average (with categories the combined answer is one of the
// answers). Deterministic: the workers take turns in a scripted order, their answers and the
// server's evaluation draws are seeded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { simulateWorkforce, simulationPolicy, simulationRandom, type SimulationResult } from '../support/simulation.ts';

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('a simulated workforce on %s', (db) => {
  let server: TestServer;
  let run: SimulationResult;

  beforeAll(async () => {
    server = await startTestServer(
      db,
      { DELIVERY_POLL_MS: '50', ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', WORK_SWEEP_POLL_MS: '0' },
      undefined,
      { random: simulationRandom(19) },
    );
    run = await simulateWorkforce(server, { seed: 19 });
  }, 400_000);
  afterAll(async () => {
    await server?.close();
  });

  it('pauses the slackers and no careful worker', () => {
    const byId = new Map(run.figures.workers.map((w: { worker: string }) => [w.worker, w]));
    for (const w of run.workers) {
      const figures = byId.get(w.workerId) as { state: string };
      expect(figures, w.name).toBeDefined();
      expect(figures.state, `${w.name} (care ${w.care})`).toBe(w.slacker ? 'paused' : 'qualified');
    }
    // They were caught by hidden evaluation, not by training (which they passed, being careful there).
    for (const w of run.workers.filter((x) => x.slacker)) {
      expect(mean(w.trainingScores)).toBeGreaterThanOrEqual(simulationPolicy.training.pass_score);
      expect(w.evaluationScores.length).toBeGreaterThanOrEqual(simulationPolicy.evaluation.min_scored);
    }
  });

  it('completes every task, and the completed answers score higher against the truth than the single answers', () => {
    expect(run.tasks).toHaveLength(200);
    for (const t of run.tasks) expect(t.answers.length, t.taskId).toBeGreaterThanOrEqual(simulationPolicy.overlap);
    expect(run.callbacks).toBeGreaterThanOrEqual(200);
    expect(run.completedMean).toBeGreaterThan(run.singleMean);
    // And by a margin: consensus drops the slackers' made-up boxes and averages the careful edges.
    expect(run.completedMean - run.singleMean).toBeGreaterThan(0.05);
  });

  it('shows in the project figures what the simulation knows: accuracy per worker, agreement, counts', () => {
    const { figures } = run;
    expect(figures.project).toBe('sim');
    expect(figures.workers_total).toBe(20);
    const byId = new Map(figures.workers.map((w: { worker: string }) => [w.worker, w]));
    for (const w of run.workers) {
      const f = byId.get(w.workerId) as { submitted: number; accuracy?: number; evaluation_scored?: number };
      // Live answers and evaluation answers (training ones are not work of the project).
      expect(f.submitted, w.name).toBe(w.live.length + w.evaluationScores.length);
      const window = w.evaluationScores.slice(-simulationPolicy.evaluation.window);
      if (window.length === 0) expect(f.accuracy, w.name).toBeUndefined();
      else {
        expect(f.evaluation_scored, w.name).toBe(window.length);
        expect(f.accuracy, w.name).toBeCloseTo(mean(window), 5);
      }
    }
    expect(figures.agreement.tasks).toBe(200);
    expect(figures.agreement.mean).toBeCloseTo(mean(run.tasks.map((t) => t.agreement)), 5);
    expect(figures.review.reviewed).toBe(run.reviews);
    expect(figures.review.accepted).toBe(run.reviews);
  });
});
