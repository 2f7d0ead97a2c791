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

type Schemas = Current['schemas'];

export function qualityPolicyView(p: PolicyInForce): Current['schemas']['QualityPolicy'] {
  return {
    project: p.project.name,
    version: p.version,
    ...(p.createdAt ? { created_at: p.createdAt.toISOString() } : {}),
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
  ...(p.training ? { training: p.training as Workforce['schemas']['TrainingProgress'] } : {}),
  ...(p.accuracy ? { accuracy: { value: p.accuracy.value, scored: p.accuracy.scored, as_of: p.accuracy.asOf.toISOString() } } : {}),
});

export function workerStatsView(s: WorkerStats): Workforce['schemas']['WorkerStats'] {
  return {
    since: s.since.toISOString(),
    as_of: s.asOf.toISOString(),
    counts: s.counts,
    active_ms: s.activeMs,
    ...(s.medianActiveMs !== null ? { median_active_ms: s.medianActiveMs } : {}),
    projects: s.projects.map((p) => projectStatsView(s.workerId, p)),
  };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

function reviewView(r: ReviewCounts): Schemas['ReviewOutcomes'] {
  const reviewed = r.accepted + r.fixed + r.rejected;
  return { reviewed, ...r, ...(reviewed > 0 ? { reject_rate: round(r.rejected / reviewed) } : {}) };
}

export function projectQualityView(accountId: string, q: ProjectQuality): Schemas['ProjectQuality'] {
  return {
    project: q.project,
    type: q.type as Schemas['TaskType'],
    since: q.since.toISOString(),
    as_of: q.asOf.toISOString(),
    policy_version: q.policyVersion,
    agreement: {
      tasks: q.agreement.tasks,
      ...(q.agreement.mean !== null ? { mean: q.agreement.mean } : {}),
      by_field: q.agreement.byField.map((f) => ({ field: f.field, tasks: f.tasks, mean: round(f.mean) })),
    },
    workers: q.workers.map((w) => ({
      worker: workerHandle(accountId, w.workerId, w.own),
      state: w.state,
      submitted: w.submitted,
      active_ms: w.activeMs,
      ...(w.accuracy !== null ? { accuracy: w.accuracy, evaluation_scored: w.evaluationScores.length } : {}),
      ...(w.consensus.agreement !== null ? { agreement: w.consensus.agreement } : {}),
      ...(w.consensus.tasks > 0 && w.consensus.score !== null
        ? {
            consensus: {
              tasks: w.consensus.tasks,
              agreed: w.consensus.agreed,
              agreed_rate: round(w.consensus.agreed / w.consensus.tasks),
              mean_score: w.consensus.score,
            },
          }
        : {}),
      review: reviewView(w.review),
    })),
    workers_total: q.workersTotal,
    review: reviewView(q.review),
    calibration: q.calibration.map((c) => ({
      batch: c.batch,
      status: c.status,
      reviewed: c.reviewed,
      ...(c.score !== null ? { score: c.score } : {}),
      passed: c.passed,
    })),
  };
}
