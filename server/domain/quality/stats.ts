// A worker's own figures (GET /worker/v1/stats), counted from the work event log at each request so
// that every figure can be reproduced from the events: what happened to their assignments, the
// outcomes of their reviewed answers, the reviews they decided, and active time.
import { invalid } from '../errors.ts';
import type { UnitOfWork } from '../ports.ts';
import type { WorkerPrincipal } from '../workforce/worker.ts';
import { noWork, type ProjectWorkFigures, type WorkCounts } from './model.ts';

export interface WorkerStats {
  since: Date;
  asOf: Date;
  counts: WorkCounts;
  activeMs: number;
  medianActiveMs: number | null;
  /** The most active projects first (by assignments issued), at most `maxProjects`. */
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
  const ranked = [...projects].sort((a, b) => b.counts.issued - a.counts.issued || a.project.localeCompare(b.project));
  return { since: from, asOf: now, counts, activeMs, medianActiveMs, projects: ranked.slice(0, maxProjects) };
}
