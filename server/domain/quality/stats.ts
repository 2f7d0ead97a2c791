// A worker's own figures (GET /worker/v1/stats), counted from the work event log at each request so
// that every figure can be reproduced from the events: what happened to their assignments, the
// outcomes of their reviewed answers, the reviews they decided, and active time.
import { invalid } from '../errors.ts';
import type { UnitOfWork } from '../ports.ts';
import type { WorkerPrincipal } from '../workforce/worker.ts';
import { noWork, type ProjectWorkFigures, type WorkCounts } from './model.ts';
import { projectPolicy } from './policy.ts';
import { trainingProgress } from './qualification.ts';

export interface WorkerStats {
  workerId: string;
  since: Date;
  asOf: Date;
  counts: WorkCounts;
  activeMs: number;
  medianActiveMs: number | null;
  /** The most active projects first (by assignments issued), at most `maxProjects`; one entry per account and project. */
  projects: ProjectWorkFigures[];
}

const DAY_MS = 86_400_000;
/** The default period, and the longest: the figures are counted at each request, so the period is bounded. */
const statsPeriod = { defaultDays: 30, maxDays: 366 };
const maxProjects = 100;

/** The start of the period: `since` (no later than now, at most 366 days back) or 30 days back. */
export function statsSince(since: Date | undefined, now: Date): Date {
  if (!since) return new Date(now.getTime() - statsPeriod.defaultDays * DAY_MS);
  if (since.getTime() > now.getTime()) throw invalid(`since is ${since.toISOString()}: in the future.`);
  if (now.getTime() - since.getTime() > statsPeriod.maxDays * DAY_MS)
    throw invalid(`since is ${since.toISOString()}: at most ${statsPeriod.maxDays} days back.`);
  return since;
}

export async function workerStats(uow: UnitOfWork, worker: WorkerPrincipal, since: Date | undefined, now: Date): Promise<WorkerStats> {
  const from = statsSince(since, now);
  const { projects, medianActiveMs } = await uow.quality.workerFigures(worker.workerId, from, now);
  const counts = noWork();
  let activeMs = 0;
  for (const p of projects) {
    for (const key of Object.keys(counts) as (keyof WorkCounts)[]) counts[key] += p.counts[key];
    activeMs += p.activeMs;
  }
  const ranked = [...projects].sort(
    (a, b) => b.counts.issued - a.counts.issued || a.project.localeCompare(b.project) || a.accountId.localeCompare(b.accountId),
  );
  const shown = ranked.slice(0, maxProjects);
  await addStandings(uow, worker.workerId, shown, now);
  return { workerId: worker.workerId, since: from, asOf: now, counts, activeMs, medianActiveMs, projects: shown };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * Each project's training standing and rolling accuracy (worker_qualifications; the 'scored'
 * evaluation events), in the entry's account. The accuracy counts the scores given before the
 * start of the current UTC day: a figure that moved right after a submit would tell an evaluation
 * task from a live one.
 */
async function addStandings(uow: UnitOfWork, workerId: string, projects: ProjectWorkFigures[], now: Date): Promise<void> {
  const rows = await uow.qualification.forWorker(
    workerId,
    projects.filter((p) => p.project !== ''),
  );
  const asOf = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
  for (const figures of projects) {
    const q = rows.find((r) => r.accountId === figures.accountId && r.project === figures.project);
    const project = q ? await uow.projects.get(q.accountId, 'live', q.project) : null;
    if (!q || !project) continue;
    const policy = await projectPolicy(uow, project);
    const training = await trainingProgress(uow, q, project, policy);
    if (training) figures.training = training;
    const scores = await uow.quality.evaluationScores(
      workerId,
      q.accountId,
      q.project,
      new Date(asOf.getTime() - 1),
      policy.evaluation.window,
    );
    if (scores.length > 0)
      figures.accuracy = { value: round(scores.reduce((s, x) => s + x, 0) / scores.length), scored: scores.length, asOf };
  }
}
