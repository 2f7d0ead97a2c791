// The calibration gate (issue 19). A calibration batch's attempts are all reviewed; each decision
// on an attempt is written to the work event log with its score (a reviewer's 'reviewed', a
// customer's 'audited'): accepted 1, fixed the attempt's score against the fix by the type's
// scorer, rejected 0. The batch's calibration score is the mean over its attempts of the latest
// decision on each, recounted from the log after every decision and kept on the batch, where the
// claim reads it: the project's production batches are dispatched once one of its calibration
// batches has completed with a score at or above the policy's `calibration.gate_score`.
// A calibration batch that completes below the gate leaves production held until the customer
// acts: a new calibration batch that passes, or a lower gate (PUT quality_policy).
import type { Batch, Repositories, UnitOfWork } from '../ports.ts';
import type { Caller, Task } from '../model.ts';
import { type Answer, adoptedAttempt, type ReviewResult } from '../workforce/model.ts';
import type { CalibrationFigures } from './model.ts';
import { getQualityPolicy } from './policy.ts';
import { isScoredType, scoreAnswers } from './score.ts';

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** The score a decision gives an attempt: accepted 1, rejected 0, fixed its agreement with the fix. */
export function decisionScore(task: Task, result: ReviewResult, attempt: Answer | null, fix: Answer | null): number {
  if (result === 'accepted') return 1;
  if (result === 'rejected' || !attempt || !fix || !isScoredType(task.type)) return 0;
  return round(scoreAnswers(task.type, task.params, attempt, fix).score);
}

/** After a decision on a task's attempt: the calibration score of its batch, recounted (nothing for a production task). */
export async function decisionRecorded(repos: Repositories, work: { calibration: boolean; accountId: string; batch: string | null }) {
  if (work.calibration && work.batch !== null) await repos.quality.recountCalibration(work.accountId, work.batch);
}

/**
 * A customer's audit of a live task, written to the event log on the answer it judged (the attempt
 * whose answer the customer received, adoptedAttempt): accepted scores 1, or the fix's score when a
 * reviewer had fixed it (the customer confirms the fix); rejected scores 0. Runs in the audit's transaction, before a
 * rejection reopens the task.
 */
export async function recordCustomerAudit(repos: Repositories, caller: Caller, task: Task, accepted: boolean, now: Date) {
  const work = await repos.work.getTaskWork(task.taskId);
  if (!work) return;
  const adopted = adoptedAttempt(await repos.work.forTask(task.taskId));
  const score = !accepted ? 0 : adopted?.status === 'fixed' ? decisionScore(task, 'fixed', adopted.response, task.response) : 1;
  await repos.work.addEvents([
    {
      at: now,
      accountId: caller.account.accountId,
      workerId: adopted?.workerId ?? null,
      assignmentId: adopted?.assignmentId ?? null,
      taskId: task.taskId,
      kind: 'audited',
      data: { result: accepted ? 'accepted' : 'rejected', by: 'customer', score },
    },
  ]);
  await decisionRecorded(repos, work);
}

/** Whether a calibration batch opens the gate: completed, with a score at or above the gate. */
export const passesGate = (c: Pick<CalibrationFigures, 'status' | 'score'>, gate: number) =>
  c.status === 'completed' && (c.score ?? 0) >= gate;

/** The most calibration batches a project's figures list (newest first). */
export const maxCalibrationBatches = 100;

/**
 * Why a production batch of a live project is not dispatched, or null when it is: the project has
 * calibration batches and none of them passed the gate. The message names the batches' state and
 * what the customer can do.
 */
export async function calibrationHold(uow: UnitOfWork, caller: Caller, batch: Batch): Promise<string | null> {
  if (caller.mode !== 'live' || batch.calibrationBatch) return null;
  const calibration = await uow.quality.calibrationBatches(caller.account.accountId, caller.mode, batch.project, maxCalibrationBatches);
  if (calibration.length === 0) return null;
  const { policy } = await getQualityPolicy(uow, caller, batch.project);
  const gate = policy.calibration.gate_score;
  if (calibration.some((c) => passesGate(c, gate))) return null;
  const latest = calibration[0]!;
  const score =
    latest.score === null ? 'no reviewed attempt yet' : `calibration score ${latest.score} over ${latest.reviewed} reviewed attempts`;
  const state =
    latest.status === 'completed'
      ? `completed with ${score}, below the gate ${gate}: add a new calibration batch or lower calibration.gate_score in the project's quality policy`
      : `is ${latest.status} (${score}); the gate is ${gate}`;
  return `Held by the calibration gate: calibration batch "${latest.batch}" of project "${batch.project}" ${state}.`;
}
