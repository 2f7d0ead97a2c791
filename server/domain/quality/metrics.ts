// A project's quality figures (GET /v1/projects/{projectName}/quality), counted from the work event
// log at each request over a bounded period, so that every figure can be reproduced from the
// events: agreement from the 'combined' events (consensus.ts; per worker from the answers each
// lists), accuracy from the 'scored' evaluation events (since the worker's latest 'unpaused' reset),
// review outcomes from 'reviewed' (a reviewer) and 'audited' (the customer) events, and the
// calibration score of each calibration batch (domain/quality/calibration.ts). A worker's state is
// their standing in the project now (worker_qualifications), not a count.
import type { Caller } from '../model.ts';
import type { UnitOfWork } from '../ports.ts';
import { maxCalibrationBatches, passesGate } from './calibration.ts';
import {
  type AgreementFigures,
  type CalibrationFigures,
  noReviews,
  type QualificationState,
  type ReviewCounts,
  type WorkerProjectFigures,
} from './model.ts';
import { getQualityPolicy } from './policy.ts';
import { statsSince } from './stats.ts';

export interface WorkerQuality extends WorkerProjectFigures {
  /** Their standing; `qualified` for a worker with none recorded (work from before the quality loop). */
  state: QualificationState;
  /** The mean of the latest evaluation scores; null while none. */
  accuracy: number | null;
}

export interface ProjectQuality {
  project: string;
  type: string;
  since: Date;
  asOf: Date;
  policyVersion: number | null;
  agreement: AgreementFigures;
  /** The most active first (by submissions), at most `maxWorkers`. */
  workers: WorkerQuality[];
  workersTotal: number;
  review: ReviewCounts;
  calibration: (CalibrationFigures & { passed: boolean })[];
}

const maxWorkers = 100;
const maxFields = 1000;
const round = (x: number) => Math.round(x * 1e6) / 1e6;
const roundOrNull = (x: number | null) => (x === null ? null : round(x));
const mean = (xs: number[]) => (xs.length === 0 ? null : round(xs.reduce((a, b) => a + b, 0) / xs.length));

export async function projectQuality(
  uow: UnitOfWork,
  caller: Caller,
  projectName: string,
  since: Date | undefined,
  now: Date,
): Promise<ProjectQuality> {
  const from = statsSince(since, now);
  const { project, version, policy } = await getQualityPolicy(uow, caller, projectName);
  const accountId = caller.account.accountId;
  // Test mode has no workers: its figures are empty (its calibration batches are listed as they are).
  const live = caller.mode === 'live';
  const [agreement, people, calibration] = await Promise.all([
    live ? uow.quality.agreement(accountId, project.name, from, now, maxFields) : { tasks: 0, mean: null, byField: [] },
    live ? uow.quality.projectWorkers(accountId, project.name, from, now, policy.evaluation.window) : { workers: [], review: noReviews() },
    uow.quality.calibrationBatches(accountId, caller.mode, project.name, maxCalibrationBatches),
  ]);
  const workers = people.workers
    .map((w) => ({
      ...w,
      state: w.state ?? 'qualified',
      accuracy: mean(w.evaluationScores),
      consensus: { ...w.consensus, score: roundOrNull(w.consensus.score), agreement: roundOrNull(w.consensus.agreement) },
    }))
    .sort((a, b) => b.submitted - a.submitted || (a.workerId < b.workerId ? -1 : 1));
  return {
    project: project.name,
    type: project.type,
    since: from,
    asOf: now,
    policyVersion: version,
    agreement: { ...agreement, mean: agreement.mean === null ? null : round(agreement.mean) },
    workers: workers.slice(0, maxWorkers),
    workersTotal: workers.length,
    review: people.review,
    calibration: calibration.map((c) => ({ ...c, passed: passesGate(c, policy.calibration.gate_score) })),
  };
}
