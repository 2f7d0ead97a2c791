// The quality loop's model: the policy document and what the rules need from storage
// (server/store/quality.ts implements it). Imports nothing of the rules, so ports.ts can name it.

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

/** One project's figures ('' for tasks without a project). */
export interface ProjectWorkFigures {
  project: string;
  counts: WorkCounts;
  activeMs: number;
}

/** What the figures need from storage (server/store/quality.ts): aggregates over the worker's events in [since, until]. */
export interface WorkerStatsRepository {
  workerFigures(workerId: string, since: Date, until: Date): Promise<{ projects: ProjectWorkFigures[]; medianActiveMs: number | null }>;
}
