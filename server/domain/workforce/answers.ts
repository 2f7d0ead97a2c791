// Answers of live work: a worker submits an answer on a held lease, checked like test mode's
// synthetic answers, and the task completes in the same transaction, or goes to review (accept,
// fix, reject → redo); a customer's rejecting audit opens a redo too. Each operation is one
// transaction. The lease itself (claim, heartbeat, give back) is in work.ts.
import { checkAnswer } from '../../../shared/answer-rules.ts';
import { taskSettled } from '../batches.ts';
import { invalid, notFound } from '../errors.ts';
import type { Caller, Json, Task, TaskAudit } from '../model.ts';
import { queueTaskCallback } from '../outbox.ts';
import { overlapping, settleOverlap } from '../quality/consensus.ts';
import { decisionRecorded, decisionScore } from '../quality/calibration.ts';
import { submitQualityAnswer } from '../quality/qualification.ts';
import type { Repositories, UnitOfWork } from '../ports.ts';
import { adoptedAttempt, isAnswer, type Answer, type Assignment, type FeedbackItem, type ReviewResult, type TaskWork } from './model.ts';
import type { WorkerPrincipal } from './worker.ts';
import { workerSeenBy } from './handles.ts';
import { assertWorking, event, held, heldAssignment, heldTask, measured, type WorkSettings } from './work.ts';

/** How many times reviewers may reject a task's work (REVIEW_MAX_REJECTIONS). */
const maxRejections = (settings: Pick<WorkSettings, 'maxRejections'>) => settings.maxRejections ?? 2;

/** How many times reviewers rejected the work of a task (its assignments, oldest first). */
const rejections = (assignments: readonly Assignment[]) =>
  assignments.filter((x) => x.role === 'review' && x.reviewResult === 'rejected').length;

/** Whether a review of a task with these assignments is final: reviewers rejected its work as often as they may. */
export const finalReview = (assignments: readonly Assignment[], settings: Pick<WorkSettings, 'maxRejections'>) =>
  rejections(assignments) >= maxRejections(settings);

/** The operator's name on audits made by its reviewers (the contract's `audit_source`). */
const OPERATOR_AUDIT_SOURCE = 'humantask';

/**
 * Checks an answer against the task type's response schema (the contract, through the HTTP layer):
 * a message naming the problem, or null.
 */
export type ResponseSchemaCheck = (type: string, response: Json) => string | null;

/**
 * The answer as the task stores it, checked against the type's response schema and the task's
 * params: a 400-kind error naming the rule, nothing stored.
 */
function checkedResponse(task: Task, response: unknown, activeMs: number, checkSchema: ResponseSchemaCheck): Answer {
  if (!isAnswer(response)) throw invalid(`response must be a JSON object: the ${task.type} response.`);
  // datacollection: the time is measured (active time, review excluded), never taken from the client.
  const stored: Answer = task.type === 'datacollection' ? { ...response, time_spent_in_seconds: Math.round(activeMs / 1000) } : response;
  const schemaProblem = checkSchema(task.type, stored);
  if (schemaProblem) throw invalid(`response does not match the ${task.type} response schema: ${schemaProblem}`);
  const [problem] = checkAnswer(task, stored);
  if (problem) throw invalid(problem);
  return stored;
}

export interface SubmitInput {
  leaseToken: string;
  /** The answer as received; checked (and typed) by checkedResponse. */
  response: unknown;
  activeMs?: number | undefined;
}

export interface SubmitOutcome {
  assignment: Assignment;
  /** What happens next: the task completed, the answer waits for a review, or (overlap) for other workers' answers. */
  next: 'completed' | 'review' | 'waiting';
}

/**
 * Submits an attempt (or redo): checked, stored, then either reviewed (sampled per staffing; always
 * for calibration batches and for a redo of a reviewer's rejection) or adopted at once: the task
 * completes in this transaction with its callback queued. An attempt of a task that needs several
 * workers (overlap) waits for the others; the last one combines them (quality/consensus.ts).
 */
export async function submitAssignment(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  assignmentId: string,
  input: SubmitInput,
  checkSchema: ResponseSchemaCheck,
  now: Date,
  random: () => number = Math.random,
): Promise<SubmitOutcome> {
  assertWorking(worker);
  return uow.transaction(async (repos) => {
    const mine = await heldAssignment(repos, worker, assignmentId, input.leaseToken, now);
    if (mine.purpose !== 'live') {
      // Training or hidden evaluation: scored, no customer task touched (domain/quality/qualification.ts).
      const activeMs = measured(mine, input.activeMs, now);
      const check = (task: Task) => checkedResponse(task, input.response, activeMs, checkSchema);
      return { assignment: await submitQualityAnswer(repos, mine, activeMs, check, now), next: 'completed' as const };
    }
    const { a, task, work } = await heldTask(repos, mine);
    if (a.role === 'review') throw invalid(`Assignment ${assignmentId} is a review: send the decision to the review operation.`);
    const activeMs = measured(a, input.activeMs, now);
    const response = checkedResponse(task, input.response, activeMs, checkSchema);
    const submitted: Assignment = { ...a, status: 'submitted', response, activeMs, submittedAt: now, endedAt: now, draft: null };
    const events = [event(a, 'submitted', now, { active_ms: activeMs })];
    // Overlap (domain/quality/consensus.ts): the answers are combined once all are in.
    const overlap = overlapping(work, submitted)
      ? await settleOverlap(repos, task, work, submitted, (r) => checkSchema(task.type, r), events, now)
      : null;
    const next = overlap
      ? overlap.next === 'extra'
        ? 'waiting'
        : overlap.next
      : (await needsReview(repos, work, submitted, random))
        ? 'review'
        : 'completed';
    await repos.work.update(submitted);
    if (next === 'review') {
      const reviewed = overlap?.next === 'review' ? overlap.reviewed.assignmentId : a.assignmentId;
      Object.assign(work, { stage: 'review', openSlots: 1, parentAssignmentId: reviewed, reservedFor: null, reservedUntil: null });
      await repos.work.updateTaskWork(work);
    } else if (next === 'completed') {
      await adopt(repos, task, work, submitted, overlap?.next === 'completed' ? overlap.response : response, null, now);
      events.push(event(a, 'completed', now));
    }
    await repos.work.addEvents(events);
    return { assignment: submitted, next };
  });
}

/** Review sampling: calibration and redos of a review's rejection always; else a worker's first N, then a rate. */
async function needsReview(repos: Repositories, work: TaskWork, a: Assignment, random: () => number): Promise<boolean> {
  if (work.calibration) return true;
  if (a.role === 'redo' && a.parentAssignmentId) {
    const parent = await repos.work.get(a.parentAssignmentId, null);
    if (parent?.status === 'rejected' && parent.role !== 'review') {
      // A reviewer rejected the work being redone (not the customer): the redo is reviewed too.
      const reviews = (await repos.work.forTask(a.taskId)).filter(
        (r) => r.role === 'review' && r.parentAssignmentId === parent.assignmentId && r.reviewResult === 'rejected',
      );
      if (reviews.length > 0) return true;
    }
  }
  if (work.project === null) return false;
  const staffing = await repos.work.staffingFor(work.accountId, work.project, work.batch);
  if (!staffing || (staffing.reviewFirst <= 0 && staffing.reviewRate <= 0)) return false;
  const done = await repos.work.submittedCount(a.workerId, work.accountId, work.project);
  if (done < staffing.reviewFirst) return true;
  return random() < staffing.reviewRate;
}

/**
 * Makes an answer the task's result: response, completed (completed_at kept after a redo, whose
 * times_redone grows), updated_at, an audit when a review decided, the callback queued.
 */
async function adopt(
  repos: Repositories,
  task: Task,
  work: TaskWork,
  adopted: Assignment,
  response: Answer,
  audit: TaskAudit | null,
  now: Date,
) {
  const first = task.completedAt === null;
  task.response = response;
  task.status = 'completed';
  task.updatedAt = now;
  if (first) task.completedAt = now;
  if (adopted.role === 'redo') task.timesRedone += 1;
  task.customerReviewStatus = task.customerReviewStatus === 'rejected' ? 'fixed' : 'pending';
  if (audit) task.audits = [...task.audits, audit];
  await repos.tasks.update(task);
  await queueTaskCallback(repos, task, now);
  if (first) await taskSettled(repos, task, now);
  Object.assign(work, { stage: 'done', openSlots: 0, parentAssignmentId: null, reservedFor: null, reservedUntil: null });
  await repos.work.updateTaskWork(work);
  // Done: no draft of the task will be used again (the contract's AssignmentDraft).
  await repos.work.dropDrafts(task.taskId);
}

export interface ReviewInput {
  leaseToken: string;
  result: ReviewResult;
  /** With `fixed`: the corrected answer as received, checked as a submit is. */
  response?: unknown;
  /** With `rejected`: what is wrong (regions, fields, frames). */
  feedback?: FeedbackItem[] | undefined;
  activeMs?: number | undefined;
  /**
   * The attempt decided about, by its number (1 = the first) among those under review when several
   * workers attempted the task (attemptsUnderReview); without it, the one the review was given.
   */
  attempt?: number | undefined;
}

/**
 * The answers a review of a task several workers attempted (overlap) weighs, in the order they were
 * issued: every attempt or redo with an answer still standing (a rejected attempt gives way to its
 * redo), and the one reviewed. None for a task of one worker.
 */
export async function attemptsUnderReview(repos: Pick<Repositories, 'work'>, taskId: string, reviewedId: string): Promise<Assignment[]> {
  if (((await repos.work.getTaskWork(taskId))?.needed ?? 1) <= 1) return [];
  return (await repos.work.forTask(taskId)).filter(
    (x) => x.role !== 'review' && x.response !== null && (x.status !== 'rejected' || x.assignmentId === reviewedId),
  );
}

/** The attempt a decision is about: the one given to review, or the reviewer's pick among several (400 past the last). */
async function decidedAttempt(repos: Repositories, given: Assignment, attempt: number | undefined): Promise<Assignment> {
  if (attempt === undefined) return given;
  const standing = await attemptsUnderReview(repos, given.taskId, given.assignmentId);
  const listed = standing.length > 1 ? standing : [given];
  const picked = listed[attempt - 1];
  if (!picked)
    throw invalid(
      `attempt ${attempt} is not one of the ${listed.length === 1 ? 'answer' : `${listed.length} attempts`} under review (1 to ${listed.length}).`,
    );
  if (picked.assignmentId === given.assignmentId) return given;
  const locked = await repos.work.get(picked.assignmentId, null, { forUpdate: true });
  if (!locked?.response) throw notFound(`Attempt ${attempt} of the review is gone.`);
  return locked;
}

/**
 * A reviewer's decision on a review assignment. accepted / fixed: the answer (or its correction)
 * becomes the task's result with an audit (audited_by the reviewer, audit_source the operator,
 * audit_time_secs the review's active time). rejected: the work goes back as a redo, reserved for its
 * author for a while, carrying the feedback. With several attempts (overlap) the decision is about the
 * one the reviewer picked (`attempt`), the one given to review by default.
 */
export async function reviewAssignment(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  assignmentId: string,
  input: ReviewInput,
  checkSchema: ResponseSchemaCheck,
  settings: WorkSettings,
  now: Date,
): Promise<Assignment> {
  assertWorking(worker);
  return uow.transaction(async (repos) => {
    const { a, task, work } = await held(repos, worker, assignmentId, input.leaseToken, now);
    if (a.role !== 'review' || !a.parentAssignmentId)
      throw invalid(`Assignment ${assignmentId} is not a review: submit its answer instead.`);
    const given = await repos.work.get(a.parentAssignmentId, null, { forUpdate: true });
    if (!given?.response) throw notFound(`Assignment ${assignmentId} not found.`);
    const reviewed = await decidedAttempt(repos, given, input.attempt);
    if (!reviewed.response) throw notFound(`Assignment ${assignmentId} not found.`);
    const activeMs = measured(a, input.activeMs, now);
    if (input.result === 'fixed' && !input.response) throw invalid('response is required with result "fixed" (the corrected answer).');
    if (input.result !== 'fixed' && input.response) throw invalid(`response is only sent with result "fixed", not "${input.result}".`);
    const feedback = input.feedback?.length ? input.feedback : null;
    if (input.result === 'rejected' && finalReview(await repos.work.forTask(a.taskId), settings))
      throw invalid(
        `Reviewers rejected the work of task ${a.taskId} ${maxRejections(settings)} times: this review is final (under_review.final). Accept the answer or fix it.`,
      );
    const fix = input.result === 'fixed' ? checkedResponse(task, input.response!, reviewed.activeMs, checkSchema) : null;
    const score = decisionScore(task, input.result, reviewed.response, fix);
    // The review's active time is recorded as a submit's is: it counts in the reviewer's figures.
    const events = [
      event(a, 'reviewed', now, { result: input.result, reviewed_assignment_id: reviewed.assignmentId, score, active_ms: activeMs }),
    ];
    const decided: Assignment = {
      ...a,
      // The review points at the attempt it decided (a redo of it is then known as a review's rejection).
      parentAssignmentId: reviewed.assignmentId,
      status: 'submitted',
      reviewResult: input.result,
      feedback,
      activeMs,
      submittedAt: now,
      endedAt: now,
      draft: null,
    };
    if (input.result === 'rejected') {
      await repos.work.update({ ...reviewed, status: 'rejected', feedback, reviewedAt: now });
      await openRedo(repos, work, reviewed, settings, now);
      events.push(event(reviewed, 'redo_created', now, { reserved_for: reviewed.workerId }));
    } else {
      const response = fix ?? reviewed.response;
      if (fix) decided.response = fix;
      await repos.work.update({ ...reviewed, status: input.result, feedback, reviewedAt: now });
      const audit: TaskAudit = {
        // The customer's own reviewer by id, one of the operator's by the handle the customer knows them by.
        auditedBy: workerSeenBy(a.accountId, worker),
        auditedAt: now,
        auditTimeSecs: Math.round(activeMs / 1000),
        result: input.result,
        source: OPERATOR_AUDIT_SOURCE,
      };
      await adopt(repos, task, work, reviewed, response, audit, now);
      events.push(event(reviewed, 'completed', now));
    }
    await repos.work.update(decided);
    await repos.work.addEvents(events);
    await decisionRecorded(repos, work);
    return decided;
  });
}

/** The task's work goes back to the attempt stage as a redo of `rejected`, its author's first. */
async function openRedo(repos: Repositories, work: TaskWork, rejected: Assignment | null, settings: WorkSettings, now: Date) {
  Object.assign(work, {
    stage: 'attempt',
    openSlots: 1,
    parentAssignmentId: rejected?.assignmentId ?? null,
    reservedFor: rejected?.workerId ?? null,
    reservedUntil: rejected ? new Date(now.getTime() + settings.redoReserveMs) : null,
  });
  await repos.work.updateTaskWork(work);
}

/**
 * A customer's rejecting audit of a live task: the task is redone by a worker (the author of the
 * adopted answer first), with the customer's comments as feedback. Runs in the audit's transaction.
 */
export async function redoAfterCustomerReject(
  repos: Repositories,
  caller: Caller,
  task: Task,
  comments: string | undefined,
  settings: WorkSettings,
  now: Date,
) {
  const work = await repos.work.lockTaskWork(task.taskId);
  if (!work) return;
  const adopted = adoptedAttempt(await repos.work.forTask(task.taskId));
  // A FeedbackItem of the contract (category and text, at most 5000 characters; about the whole answer).
  const feedback: FeedbackItem[] = [{ category: 'other', text: (comments?.trim() || 'Rejected by the customer.').slice(0, 5000) }];
  if (adopted) await repos.work.update({ ...adopted, status: 'rejected', feedback, reviewedAt: now });
  await openRedo(repos, work, adopted, settings, now);
  await repos.work.addEvents([
    {
      at: now,
      accountId: caller.account.accountId,
      workerId: adopted?.workerId ?? null,
      assignmentId: adopted?.assignmentId ?? null,
      taskId: task.taskId,
      kind: 'redo_created',
      data: { by: 'customer' },
    },
  ]);
}
