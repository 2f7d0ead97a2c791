// The quality loop on the wire: a project's quality policy (current generation) and a worker's own
// figures (worker API).
import type { components as Current } from '../../../generated/current.ts';
import type { components as Workforce } from '../../../generated/workforce.ts';
import type { PolicyInForce } from '../../domain/quality/policy.ts';
import type { ProjectWorkFigures } from '../../domain/quality/model.ts';
import type { WorkerStats } from '../../domain/quality/stats.ts';

export function qualityPolicyView(p: PolicyInForce): Current['schemas']['QualityPolicy'] {
  return {
    project: p.project.name,
    version: p.version,
    ...(p.createdAt ? { created_at: p.createdAt.toISOString() } : {}),
    ...p.policy,
  };
}

const projectStatsView = (p: ProjectWorkFigures): Workforce['schemas']['WorkerProjectStats'] => ({
  project: p.project,
  counts: p.counts,
  active_ms: p.activeMs,
});

export function workerStatsView(s: WorkerStats): Workforce['schemas']['WorkerStats'] {
  return {
    since: s.since.toISOString(),
    as_of: s.asOf.toISOString(),
    counts: s.counts,
    active_ms: s.activeMs,
    ...(s.medianActiveMs !== null ? { median_active_ms: s.medianActiveMs } : {}),
    projects: s.projects.map(projectStatsView),
  };
}
