// The quality loop's model: the policy document and what the rules need from storage
// (server/store/quality.ts implements it). Imports nothing of the rules, so ports.ts can name it.
import type { Assignment } from '../workforce/model.ts';

export interface QualityPolicy {
  /** Distinct workers per live task before their answers are combined. */
  overlap: number;
  training: { required: number; pass_score: number; retry_after_s: number; max_tries: number; show_expected: boolean };
  evaluation: {
    rate_new: number;
    rate_trusted: number;
    trusted_after: number;
    window: number;
    min_scored: number;
    pause_below: number;
  };
  consensus: { threshold: number; max_extra: number };
  /** `min_seconds`: a number of seconds, or `auto` (a quarter of the project's median active time). */
  speed: { min_seconds: number | 'auto'; fast_count: number; of_last: number };
  calibration: { gate_score: number };
}

export interface QualityPolicyVersion {
  projectId: string;
  version: number;
  policy: QualityPolicy;
  createdAt: Date;
}

/** What the policy needs from storage (server/store/quality.ts). */
export interface QualityPolicyRepository {
  /** The latest version of the project's policy, or the one named; null when there is none. */
  policyVersion(projectId: string, version?: number): Promise<QualityPolicyVersion | null>;
  addPolicyVersion(version: QualityPolicyVersion): Promise<void>;
}

export interface WorkCounts {
  issued: number;
  submitted: number;
  skipped: number;
  released: number;
  expired: number;
  accepted: number;
  fixed: number;
  rejected: number;
  reviews: number;
}

export const noWork = (): WorkCounts => ({
  issued: 0,
  submitted: 0,
  skipped: 0,
  released: 0,
  expired: 0,
  accepted: 0,
  fixed: 0,
  rejected: 0,
  reviews: 0,
});

/** One project's figures, per account ('' for tasks without a project). */
export interface ProjectWorkFigures {
  /** The project's account: two accounts' projects of one name are two entries (the operator's workforce). */
  accountId: string;
  project: string;
  counts: WorkCounts;
  activeMs: number;
  /** The worker's training standing; absent before any training. */
  training?: TrainingProgress;
  /** The rolling accuracy as of `asOf`; absent while nothing is scored. */
  accuracy?: { value: number; scored: number; asOf: Date };
}

/** What the figures need from storage (server/store/quality.ts): aggregates over the worker's events in [since, until]. */
export interface WorkerStatsRepository {
  workerFigures(workerId: string, since: Date, until: Date): Promise<{ projects: ProjectWorkFigures[]; medianActiveMs: number | null }>;
  /**
   * The worker's latest `window` evaluation scores in the project ('scored' events before `until`,
   * none before their latest 'unpaused' event for it), newest first.
   */
  evaluationScores(workerId: string, accountId: string, project: string, until: Date, window: number): Promise<number[]>;
}

/** A worker's standing in a project (the contract's TrainingProgress `state`). */
export type QualificationState = 'training' | 'qualified' | 'waiting' | 'failed' | 'paused';

/**
 * Where a worker stands in a project's training, as the contract's TrainingProgress shows it (also
 * kept with a training answer's feedback, in this form).
 */
export interface TrainingProgress {
  state: QualificationState;
  scored: number;
  required: number;
  mean_score?: number;
  pass_score?: number;
  tries: number;
  max_tries: number;
  /** ISO 8601: when a waiting worker may try again. */
  retry_after?: string;
}

export interface Qualification {
  workerId: string;
  accountId: string;
  project: string;
  state: QualificationState;
  /** Training tries begun. */
  tries: number;
  tryStartedAt: Date | null;
  retryAfter: Date | null;
  trainingScore: number | null;
  lastGoodAt: Date | null;
  pausedAccuracy: number | null;
  /** The rolling accuracy counts evaluation scores from this time on (a lead's reset of a pause); null: all. */
  evaluationSince: Date | null;
  updatedAt: Date;
}

/** A training or evaluation task as the quality loop reads it (training_tasks). */
export interface QualityTask {
  id: string;
  type: string;
  params: Record<string, unknown>;
  expectedResponse: Record<string, unknown>;
  initialResponse: Record<string, unknown> | null;
}

/** What training, evaluation and pausing need from storage (server/store/qualification.ts). */
export interface QualificationRepository {
  get(workerId: string, accountId: string, project: string, options?: { forUpdate?: boolean }): Promise<Qualification | null>;
  /** Inserts or replaces the row. */
  put(q: Qualification): Promise<void>;
  /** The worker's rows in training or waiting (training may be served), oldest first. */
  inTraining(workerId: string): Promise<Qualification[]>;
  /** The worker of the operator's workforce with a standing in the account's project whose handle (`opw_` and these 24 hex) this is; null when none. */
  operatorWorkerOf(accountId: string, project: string, handle: string): Promise<string | null>;
  /** The worker's rows for these projects (each of an account). */
  forWorker(workerId: string, projects: readonly { accountId: string; project: string }[]): Promise<Qualification[]>;
  /** The account's live training tasks of the type, in creation order, at most `limit`. */
  trainingTasks(accountId: string, type: string, limit: number): Promise<QualityTask[]>;
  /** Whether the account has a live training task of the type. */
  hasTrainingTasks(accountId: string, type: string): Promise<boolean>;
  /**
   * What an evaluation in the place of live task `taskId` needs, in one statement: whether the
   * worker handed that task back before (it comes back to them as it was), whether one of their
   * evaluations stood in for it and how many evaluations (anyone's) do, one of the account's live evaluation tasks of the type
   * the worker was never given (oldest first; null when none is left), and the ids of the tasks
   * (any account or mode) just before and just after `taskId` among those whose ids carry the same
   * millisecond (where an evaluation shown in its place must sort).
   */
  evaluationFor(
    workerId: string,
    accountId: string,
    type: string,
    taskId: string,
  ): Promise<{
    handedBack: boolean;
    stoodInMine: boolean;
    stoodIn: number;
    task: QualityTask | null;
    before: string | null;
    after: string | null;
  }>;
  /** Whether a live task that one of the worker's evaluations issued since `since` stands in for is still open for attempts. */
  hasOpenStandIn(workerId: string, since: Date): Promise<boolean>;
  /**
   * The worker's first evaluation issued since `since` that was handed back (released, or its lease
   * lapsed) and not given again, in queue order of the live task it stands in for (only that
   * project's with `project`), with that task's place in the queue; null when none.
   */
  returnedEvaluation(
    workerId: string,
    project: string | undefined,
    since: Date,
  ): Promise<{ assignment: Assignment; priority: number; createdAt: Date } | null>;
  /** A training or evaluation task by id (live mode). */
  qualityTask(accountId: string, id: string): Promise<QualityTask | null>;
  /** Inserts an assignment of a training or evaluation task (with its `issued` event); false when the worker already holds one. */
  issue(a: Assignment): Promise<boolean>;
  /** The worker's latest scores of this purpose in the project, newest first, at most `limit`; training: since `since`. */
  scores(
    workerId: string,
    accountId: string,
    project: string,
    purpose: 'training' | 'evaluation',
    limit: number,
    since?: Date | null,
  ): Promise<number[]>;
  /** How many live attempts the worker submitted in the project, counted up to `atMost` (whether they are trusted). */
  liveSubmitted(workerId: string, accountId: string, project: string, atMost: number): Promise<number>;
  /** The training tasks the worker submitted in the project since `since` (the current try). */
  submittedTraining(workerId: string, accountId: string, project: string, since: Date): Promise<string[]>;
  /**
   * After a pause: the worker's live answers in the project submitted after `since` that are
   * still under review, or still waiting for the other answers of an overlapping task, go back to
   * the queue (the slot reopens for another worker; a review assignment held on them is
   * canceled); the worker's reserved redos there are freed. Answers the ids of the tasks reopened.
   */
  requeueSince(workerId: string, accountId: string, project: string, since: Date, now: Date): Promise<string[]>;
}

/** A calibration batch's score as recounted from the event log (store: batches.calibration_score). */
export interface CalibrationFigures {
  batch: string;
  status: 'staging' | 'in_progress' | 'completed';
  /** Attempts decided (reviewed or audited) so far. */
  reviewed: number;
  /** The mean score of the decided attempts; null before the first. */
  score: number | null;
}

/** Reviewed answers by outcome (reviews by workers and the customer's audits). */
export interface ReviewCounts {
  accepted: number;
  fixed: number;
  rejected: number;
}

export const noReviews = (): ReviewCounts => ({ accepted: 0, fixed: 0, rejected: 0 });

/** One worker's figures in a project, as counted from the event log. */
export interface WorkerProjectFigures {
  workerId: string;
  /** The worker belongs to the project's account (else: the operator's workforce). */
  own: boolean;
  submitted: number;
  activeMs: number;
  /** The worker's standing in the project now (worker_qualifications); null: none recorded. */
  state: QualificationState | null;
  /** The latest evaluation scores since the lead's last reset, newest first (at most the policy's window). */
  evaluationScores: number[];
  review: ReviewCounts;
  consensus: ConsensusFigures;
}

/** A worker's answers combined with others' in the period (the latest 'combined' event of each task). */
export interface ConsensusFigures {
  tasks: number;
  /** Answers whose score against the combined answer reached the consensus threshold. */
  agreed: number;
  /** The mean score against the combined answer; null without tasks. */
  score: number | null;
  /** The mean of each answer's mean score against the other answers; null without tasks. */
  agreement: number | null;
}

/** Agreement of combined tasks ('combined' events): overall and per field. */
export interface AgreementFigures {
  tasks: number;
  mean: number | null;
  byField: { field: string; tasks: number; mean: number }[];
}

/** What the calibration gate and the project's quality figures need from storage (server/store/quality.ts). */
export interface ProjectQualityRepository {
  /**
   * Recounts a calibration batch's score from the event log (the latest decision on each of its
   * attempts) and stores it on the batch, for the claim to read.
   */
  recountCalibration(accountId: string, batch: string): Promise<CalibrationFigures | null>;
  /** The project's calibration batches, newest first (at most `limit`). */
  calibrationBatches(accountId: string, mode: 'test' | 'live', project: string, limit: number): Promise<CalibrationFigures[]>;
  /** Agreement from the 'combined' events of the project's tasks in [since, until] (the latest per task). */
  agreement(accountId: string, project: string, since: Date, until: Date, maxFields: number): Promise<AgreementFigures>;
  /** Per worker who submitted in the project in [since, until]; evaluation scores are the latest `window`, up to `until`. */
  projectWorkers(
    accountId: string,
    project: string,
    since: Date,
    until: Date,
    window: number,
  ): Promise<{ workers: WorkerProjectFigures[]; review: ReviewCounts }>;
}
