// Overlap and consensus in the work loop: a live task of a project whose quality policy asks for
// `overlap` N > 1 is attempted by N distinct workers (task_work.needed, one slot each; the claim
// never hands a worker a task it already attempted). When the N-th answer is in, the answers are
// combined (combine.ts) and their agreement decides:
//   agreement ≥ consensus.threshold      the combined answer completes the task (its `response`)
//   below, fewer than max_extra added    one more worker is added (needed + 1, one slot), and the
//                                        combination is made again with its answer
//   below, no more extra workers         the task goes to review: the reviewer gets the medoid
//                                        attempt (the one closest to the others) with the others
//                                        beside it, and accepts, fixes or rejects it as any review
// Calibration batches are always reviewed, so their tasks go to review after combining. Every
// combination writes a `combined` work event (project, type, agreement, workers, per-field
// agreement, method, outcome, the threshold, and per answer its worker, weight, score against the
// combined answer and mean score against the other answers: the per-worker figures count them).
//
// Each answer is weighted by its worker's rolling evaluation accuracy p in the project (the mean
// of their latest `evaluation.window` scores since a lead's last reset, once they have at least
// `evaluation.min_scored` of them; before that the default p = 0.75): weight ln(p / (1 − p)), the
// log-odds of a worker right with probability p, which is the weighted majority vote that best
// recovers the truth from independent voters. p is capped at 0.99 (weight 4.6), and the weight
// has a floor of 0.1 (p ≈ 0.525 and below), so no worker weighs nothing or less. Workers of equal
// accuracy weigh the same: a plain majority. The weights drive every combiner (votes, cluster
// majorities, weighted means, the medoid's rank); the agreement compared with the threshold is
// unweighted.
import type { Json, Task } from '../model.ts';
import type { Repositories } from '../ports.ts';
import type { Answer, Assignment, TaskWork, WorkEvent } from '../workforce/model.ts';
import { combineAnswers } from './combine.ts';
import type { QualityPolicy } from './model.ts';
import { isScoredType } from './score.ts';
import { defaultQualityPolicy, projectPolicy } from './policy.ts';

/** The accuracy of a worker without enough evaluation scores, the cap of an accuracy, and the floor of a weight. */
const weighting = { defaultAccuracy: 0.75, maxAccuracy: 0.99, floor: 0.1 };

/** The weight of an answer by its worker's rolling evaluation accuracy (null: not enough scores yet). */
export function accuracyWeight(accuracy: number | null): number {
  const p = Math.min(accuracy ?? weighting.defaultAccuracy, weighting.maxAccuracy);
  return p <= 0.5 ? weighting.floor : Math.max(weighting.floor, Math.log(p / (1 - p)));
}

/** A worker's rolling evaluation accuracy in the project (since a lead's reset), or null with fewer than min_scored scores. */
async function rollingAccuracy(repos: Repositories, accountId: string, project: string, workerId: string, policy: QualityPolicy) {
  const q = await repos.qualification.get(workerId, accountId, project);
  const e = policy.evaluation;
  const scores = await repos.qualification.scores(workerId, accountId, project, 'evaluation', e.window, q?.evaluationSince ?? null);
  return scores.length < e.min_scored ? null : scores.reduce((s, x) => s + x, 0) / scores.length;
}

/** What happens after an overlapping attempt was submitted. */
export type OverlapOutcome =
  /** More answers are to come. */
  | { next: 'waiting' }
  /** The answers agree: this answer completes the task. */
  | { next: 'completed'; response: Answer }
  /** They disagree: one more worker was added (the work row is updated). */
  | { next: 'extra' }
  /** They disagree and no worker may be added (or the batch is a calibration batch): review this attempt. */
  | { next: 'review'; reviewed: Assignment };

/** The project's policy in force (the defaults without one). */
async function policyOf(repos: Repositories, accountId: string, project: string | null): Promise<QualityPolicy> {
  const found = project === null ? null : await repos.projects.get(accountId, 'live', project);
  return found ? projectPolicy(repos, found) : structuredClone(defaultQualityPolicy);
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** Whether a submitted attempt takes part in overlap: an attempt (not a redo) of a task that needs several. */
export const overlapping = (work: TaskWork, a: Assignment): boolean => a.role === 'attempt' && work.needed > 1;

/**
 * Decides what an overlapping attempt's submit leads to, inside the submit's transaction (the task
 * and its work row are locked, so the last two submits of a task settle it once). `submitted` is
 * the attempt being submitted, not yet stored; `check` is the contract's response schema check.
 * Adds the `combined` event to `events` when the answers were combined.
 */
export async function settleOverlap(
  repos: Repositories,
  task: Task,
  work: TaskWork,
  submitted: Assignment,
  check: (response: Json) => string | null,
  events: WorkEvent[],
  now: Date,
): Promise<OverlapOutcome> {
  const attempts = [
    ...(await repos.work.forTask(task.taskId)).filter(
      (x) => x.role === 'attempt' && x.status === 'submitted' && x.response !== null && x.assignmentId !== submitted.assignmentId,
    ),
    submitted,
  ];
  if (attempts.length < work.needed) return { next: 'waiting' };
  const policy = await policyOf(repos, work.accountId, work.project);
  const answers = attempts.map((x) => x.response as Json);
  const weights: number[] = [];
  for (const a of attempts)
    weights.push(
      accuracyWeight(work.project === null ? null : await rollingAccuracy(repos, work.accountId, work.project, a.workerId, policy)),
    );
  // A type without a scorer (none today) cannot be combined: its answers go to review.
  const combined = isScoredType(task.type) ? combineAnswers(task.type, task.params, answers, { check, weights }) : null;
  const agreement = combined?.agreement ?? 0;
  const { threshold, max_extra } = policy.consensus;
  const extra = Math.max(0, work.needed - policy.overlap);
  const outcome: OverlapOutcome['next'] =
    work.calibration || !combined ? 'review' : agreement >= threshold ? 'completed' : extra < max_extra ? 'extra' : 'review';
  events.push({
    at: now,
    accountId: work.accountId,
    workerId: null,
    assignmentId: null,
    taskId: task.taskId,
    kind: 'combined',
    data: {
      project: work.project ?? '',
      type: task.type,
      agreement,
      workers: attempts.length,
      ...(combined?.fields ? { fields: combined.fields } : {}),
      ...(combined ? { method: combined.method } : {}),
      outcome,
      threshold,
      ...(combined
        ? {
            answers: attempts.map((a, i) => ({
              assignment_id: a.assignmentId,
              worker_id: a.workerId,
              weight: round(weights[i] as number),
              score: round(combined.scores[i] as number),
              agreement: round(combined.peers[i] as number),
            })),
          }
        : {}),
    },
  });
  if (outcome === 'completed' && combined) return { next: 'completed', response: combined.answer };
  if (outcome === 'extra') {
    Object.assign(work, { needed: work.needed + 1, openSlots: work.openSlots + 1 });
    await repos.work.updateTaskWork(work);
    return { next: 'extra' };
  }
  return { next: 'review', reviewed: attempts[combined?.medoid ?? 0] as Assignment };
}
