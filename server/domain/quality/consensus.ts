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
// agreement, method, outcome). Weights are equal: each worker's answer counts once.
import type { Json, Task } from '../model.ts';
import type { Repositories } from '../ports.ts';
import type { Answer, Assignment, TaskWork, WorkEvent } from '../workforce/model.ts';
import { combineAnswers } from './combine.ts';
import { isScoredType } from './score.ts';
import { defaultQualityPolicy } from './policy.ts';

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

/** The consensus settings of the project's policy in force (the defaults without one). */
async function consensusPolicy(repos: Repositories, accountId: string, project: string | null) {
  const found = project === null ? null : await repos.projects.get(accountId, 'live', project);
  const stored = found ? await repos.quality.policyVersion(found.projectId) : null;
  return {
    overlap: stored?.policy.overlap ?? defaultQualityPolicy.overlap,
    ...defaultQualityPolicy.consensus,
    ...(stored?.policy.consensus ?? {}),
  };
}

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
  const policy = await consensusPolicy(repos, work.accountId, work.project);
  const answers = attempts.map((x) => x.response as Json);
  // A type without a scorer (none today) cannot be combined: its answers go to review.
  const combined = isScoredType(task.type) ? combineAnswers(task.type, task.params, answers, { check }) : null;
  const agreement = combined?.agreement ?? 0;
  const extra = Math.max(0, work.needed - policy.overlap);
  const outcome: OverlapOutcome['next'] =
    work.calibration || !combined ? 'review' : agreement >= policy.threshold ? 'completed' : extra < policy.max_extra ? 'extra' : 'review';
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
