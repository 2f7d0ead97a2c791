// The quality loop on the wire: a project's quality policy (current generation) and a worker's own
// figures (worker API).
import type { components as Current } from '../../../generated/current.ts';
import type { components as Workforce } from '../../../generated/workforce.ts';
import type { PolicyInForce } from '../../domain/quality/policy.ts';
import type { ProjectQuality } from '../../domain/quality/metrics.ts';
import type { ProjectWorkFigures, ReviewCounts } from '../../domain/quality/model.ts';
import type { WorkerStats } from '../../domain/quality/stats.ts';
import { sha256 } from '../../domain/ids.ts';
import { workerHandle } from './assignments.ts';
import { stored } from './stored.ts';

type Schemas = Current['schemas'];

export function qualityPolicyView(p: PolicyInForce): Current['schemas']['QualityPolicy'] {
  return {
    project: p.project.name,
    version: p.version,
    created_at: p.createdAt ? p.createdAt.toISOString() : undefined,
    ...p.policy,
  };
}

/**
 * An account as one worker sees it: an opaque handle, stable per worker and account, that tells two
 * accounts' projects of one name apart and nothing else (a worker never sees an account's id or name).
 */
const accountHandle = (workerId: string, accountId: string) => `acw_${sha256(`${workerId}\n${accountId}`).slice(0, 24)}`;

const projectStatsView = (workerId: string, p: ProjectWorkFigures): Workforce['schemas']['WorkerProjectStats'] => ({
  project: p.project,
  account: accountHandle(workerId, p.accountId),
  counts: p.counts,
  active_ms: p.activeMs,
  training: p.training,
  accuracy: p.accuracy ? { value: p.accuracy.value, scored: p.accuracy.scored, as_of: p.accuracy.asOf.toISOString() } : undefined,
});

export function workerStatsView(s: WorkerStats): Workforce['schemas']['WorkerStats'] {
  return {
    since: s.since.toISOString(),
    as_of: s.asOf.toISOString(),
    counts: s.counts,
    active_ms: s.activeMs,
    median_active_ms: s.medianActiveMs ?? undefined,
    projects: s.projects.map((p) => projectStatsView(s.workerId, p)),
  };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

function reviewView(r: ReviewCounts): Schemas['ReviewOutcomes'] {
  const reviewed = r.accepted + r.fixed + r.rejected;
  return { reviewed, ...r, reject_rate: reviewed > 0 ? round(r.rejected / reviewed) : undefined };
}

export function projectQualityView(accountId: string, q: ProjectQuality): Schemas['ProjectQuality'] {
  return {
    project: q.project,
    type: stored<Schemas['TaskType']>(q.type),
    since: q.since.toISOString(),
    as_of: q.asOf.toISOString(),
    policy_version: q.policyVersion,
    agreement: {
      tasks: q.agreement.tasks,
      mean: q.agreement.mean ?? undefined,
      by_field: q.agreement.byField.map((f): Schemas['ProjectQuality']['agreement']['by_field'][number] => ({
        field: f.field,
        tasks: f.tasks,
        mean: round(f.mean),
      })),
    },
    workers: q.workers.map((w): Schemas['ProjectQuality']['workers'][number] => ({
      worker: workerHandle(accountId, w.workerId, w.own),
      state: w.state,
      submitted: w.submitted,
      active_ms: w.activeMs,
      accuracy: w.accuracy ?? undefined,
      evaluation_scored: w.accuracy !== null ? w.evaluationScores.length : undefined,
      agreement: w.consensus.agreement ?? undefined,
      consensus:
        w.consensus.tasks > 0 && w.consensus.score !== null
          ? {
              tasks: w.consensus.tasks,
              agreed: w.consensus.agreed,
              agreed_rate: round(w.consensus.agreed / w.consensus.tasks),
              mean_score: w.consensus.score,
            }
          : undefined,
      review: reviewView(w.review),
    })),
    workers_total: q.workersTotal,
    review: reviewView(q.review),
    calibration: q.calibration.map((c): Schemas['ProjectQuality']['calibration'][number] => ({
      batch: c.batch,
      status: c.status,
      reviewed: c.reviewed,
      score: c.score ?? undefined,
      passed: c.passed,
    })),
  };
}
