// The work loop of live mode: a worker claims a task (a lease with a fencing token), keeps it with
// heartbeats, submits an answer checked like test mode's synthetic answers, and the task completes
// in the same transaction, or goes to review (accept, fix, reject → redo). A sweeper returns
// lapsed leases. Each operation is one transaction; the claim, heartbeat, skip/release and sweep
// are single statements (server/store/work.ts).
import { randomBytes } from 'node:crypto';
import { checkAnswer } from '../../../shared/answer-rules.ts';
import { wallClock, type Clock } from '../clock.ts';
import { taskSettled } from '../batches.ts';
import { DomainError, invalid, notFound } from '../errors.ts';
import { newTaskId } from '../ids.ts';
import type { Caller, Json, Task, TaskAudit } from '../model.ts';
import { queueTaskCallback } from '../outbox.ts';
import { overlapping, settleOverlap } from '../quality/consensus.ts';
import { decisionRecorded, decisionScore } from '../quality/calibration.ts';
import type { Repositories, UnitOfWork } from '../ports.ts';
import {
  adoptedAttempt,
  isAnswer,
  type Answer,
  type Assignment,
  type AssignmentStatus,
  type Draft,
  type FeedbackItem,
  type ReviewResult,
  type TaskWork,
  type WorkEvent,
  type WorkEventKind,
} from './model.ts';
import type { WorkerPrincipal } from './worker.ts';
import { workerSeenBy } from './handles.ts';
import { claimLiveOrQuality, claimTraining, qualityTaskOf, standInsSince, submitQualityAnswer } from '../quality/qualification.ts';

export interface WorkSettings {
  /** A lease without heartbeat lapses after this. */
  leaseMs: number;
  /** Heartbeats renew a lease up to this long after it was issued. */
  hardCapMs: number;
  /** A redo waits this long for the worker whose work was rejected before any worker may take it. */
  redoReserveMs: number;
  /**
   * Reviewers reject a task's work at most this many times: its next review is final, and accepts
   * or fixes (REVIEW_MAX_REJECTIONS; 2 when absent).
   */
  maxRejections?: number | undefined;
}

/** The defaults of server/config.ts (WORK_LEASE_SECONDS, WORK_HARD_CAP_SECONDS, REDO_RESERVE_SECONDS, REVIEW_MAX_REJECTIONS). */
export const defaultWorkSettings: WorkSettings = { leaseMs: 600_000, hardCapMs: 14_400_000, redoReserveMs: 86_400_000, maxRejections: 2 };

/** How many times reviewers may reject a task's work (REVIEW_MAX_REJECTIONS). */
const maxRejections = (settings: Pick<WorkSettings, 'maxRejections'>) => settings.maxRejections ?? 2;

/** How many times reviewers rejected the work of a task (its assignments, oldest first). */
const rejections = (assignments: readonly Assignment[]) =>
  assignments.filter((x) => x.role === 'review' && x.reviewResult === 'rejected').length;

/** Whether a review of a task with these assignments is final: reviewers rejected its work as often as they may. */
const finalReview = (assignments: readonly Assignment[], settings: Pick<WorkSettings, 'maxRejections'>) =>
  rejections(assignments) >= maxRejections(settings);

/**
 * A draft's limit, serialized as JSON (the contract's AssignmentDraft: 1 MB). The worker API
 * refuses a heartbeat's body past it (and 16 KB for the rest) before reading it; this is the exact
 * check, on what is stored.
 */
export const maxDraftBytes = 1_048_576;

/** The operator's name on audits made by its reviewers (the contract's `audit_source`). */
const OPERATOR_AUDIT_SOURCE = 'humantask';

/**
 * Checks an answer against the task type's response schema (the contract, through the HTTP layer):
 * a message naming the problem, or null.
 */
export type ResponseSchemaCheck = (type: string, response: Json) => string | null;

const canAttempt = (w: WorkerPrincipal) => w.roles.includes('labeler') || w.roles.includes('lead');
const canReview = (w: WorkerPrincipal) => w.roles.includes('reviewer') || w.roles.includes('lead');

function assertActive(worker: WorkerPrincipal) {
  if (worker.status !== 'active')
    throw new DomainError('forbidden', `Worker ${worker.workerId} is ${worker.status}: no work is handed out.`, 'worker_paused');
}

/** A paused worker's held work went back to the queue when they were paused: nothing they send on it counts. */
function assertWorking(worker: WorkerPrincipal) {
  if (worker.status !== 'active')
    throw new DomainError(
      'forbidden',
      `Worker ${worker.workerId} is ${worker.status}: the assignments they held went back to the queue when they were paused.`,
      'worker_paused',
    );
}

const roleMissing = (message: string) => new DomainError('forbidden', message, 'role_missing');
const newAssignmentId = (now: Date) => `asg_${newTaskId(now)}`;
const newLeaseToken = () => `lt_${randomBytes(16).toString('hex')}`;

const event = (
  a: Pick<Assignment, 'accountId' | 'workerId' | 'assignmentId' | 'taskId'>,
  kind: WorkEventKind,
  at: Date,
  data: Json | null = null,
): WorkEvent => ({
  at,
  accountId: a.accountId,
  workerId: a.workerId,
  assignmentId: a.assignmentId,
  taskId: a.taskId,
  kind,
  data,
});

/**
 * Hands the worker one eligible task, or null when there is none. A worker holds one active
 * assignment at a time: while it is held, asking again answers it again (same lease). Without a
 * role: the caller's reserved redos first, then reviews, then attempts, as its roles allow.
 */
export async function claimNext(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  request: { role?: 'attempt' | 'review' | undefined; project?: string | undefined },
  settings: WorkSettings,
  now: Date,
  random: () => number = Math.random,
): Promise<Assignment | null> {
  assertActive(worker);
  if (request.role === 'attempt' && !canAttempt(worker))
    throw roleMissing(`Worker ${worker.workerId} has neither the labeler nor the lead role: it cannot take attempts.`);
  if (request.role === 'review' && !canReview(worker))
    throw roleMissing(`Worker ${worker.workerId} has neither the reviewer nor the lead role: it cannot take reviews.`);
  // A test-mode worker does test-mode work only, and none waits for a person (decision 0013).
  if (worker.mode !== 'live') return null;
  const held = await uow.work.activeFor(worker.workerId);
  if (held && held.leaseExpiresAt > now) return held;
  if (held) await uow.work.expireLapsed(now, 100);
  const steps: { role: 'attempt' | 'review'; reservedOnly: boolean }[] = [];
  const attempts = request.role !== 'review' && canAttempt(worker);
  if (attempts) steps.push({ role: 'attempt', reservedOnly: true });
  if (request.role !== 'attempt' && canReview(worker)) steps.push({ role: 'review', reservedOnly: false });
  if (attempts) steps.push({ role: 'attempt', reservedOnly: false });
  const lease = { leaseMs: settings.leaseMs, hardCapMs: settings.hardCapMs };
  const issue = { lease, newAssignmentId: () => newAssignmentId(now), newLeaseToken };
  // Training first for a worker in training (domain/quality/qualification.ts).
  const training = attempts ? await claimTraining(uow, worker, request.project, issue, now) : null;
  if (training) return training;
  const since = standInsSince(lease, now);
  const take = async (step: (typeof steps)[number], passOverStandInsSince: Date | undefined) => {
    const claim = (repos: Repositories) =>
      repos.work.claim({
        worker,
        ...step,
        project: request.project,
        assignmentId: newAssignmentId(now),
        leaseToken: newLeaseToken(),
        now,
        lease,
        passOverStandInsSince,
      });
    // A live attempt may be swapped for training (new to its project) or a hidden evaluation task.
    return step.role === 'attempt' && !step.reservedOnly
      ? claimLiveOrQuality(uow, worker, claim, request.project, issue, now, random)
      : claim(uow);
  };
  for (const step of steps) {
    const a = await take(step, step.role === 'attempt' ? since : undefined);
    if (a) return a;
  }
  // Nothing else to do: the live tasks whose place went to this worker's hidden evaluations are theirs too.
  if (attempts && (await uow.qualification.hasOpenStandIn(worker.workerId, since))) {
    const a = await take({ role: 'attempt', reservedOnly: false }, undefined);
    if (a) return a;
  }
  // A concurrent request of the same worker may have taken work meanwhile: that is the one to resume.
  const taken = await uow.work.activeFor(worker.workerId);
  return taken && taken.leaseExpiresAt > now ? taken : null;
}

/** Resolves when new work may be claimable (a nudge after a commit), or after `ms`. */
export interface WorkAvailable {
  wait(ms: number): Promise<void>;
}

/**
 * claimNext with a bounded long poll: tries again whenever work may have become claimable (and at
 * least every `recheckMs`) until `waitMs` are over; null when nothing came. Each try leases on the
 * clock `now` (the wait itself is real time).
 */
export async function claimNextWaiting(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  request: { role?: 'attempt' | 'review'; project?: string | undefined },
  settings: WorkSettings,
  wait: { waitMs: number; available: WorkAvailable; recheckMs?: number; signal?: AbortSignal },
  random: () => number = Math.random,
  now: Clock = wallClock,
): Promise<Assignment | null> {
  const deadline = Date.now() + wait.waitMs;
  for (;;) {
    // A worker who went away (a tab closed while it waited) takes no task: it would sit leased to
    // nobody until its lease lapsed.
    if (wait.signal?.aborted) return null;
    const a = await claimNext(uow, worker, request, settings, now(), random);
    const left = deadline - Date.now();
    if (a || left <= 0) return a;
    await wait.available.wait(Math.min(left, wait.recheckMs ?? 1000));
  }
}

/** Why a lease is not held: 404 when the assignment is not the worker's, else a 409 that says what happened. */
async function leaseLost(repos: Repositories, workerId: string, assignmentId: string, now: Date): Promise<never> {
  const a = await repos.work.get(assignmentId, workerId);
  if (!a) throw notFound(`Assignment ${assignmentId} not found.`);
  throw whyNotHeld(a, now);
}

/** The 409 of an assignment whose lease is not held any more (lapsed, ended, canceled, another lease). */
export function whyNotHeld(a: Assignment, now: Date) {
  const lost = (message: string) => new DomainError('conflict', message, 'lease_lost');
  switch (a.status) {
    case 'canceled':
      return new DomainError('conflict', `Task ${a.taskId} was canceled; its assignment ${a.assignmentId} has ended.`, 'task_canceled');
    case 'expired':
      return lost(
        `The lease of assignment ${a.assignmentId} lapsed and the task went back to the queue; it may be with another worker now.`,
      );
    case 'active':
      return a.leaseExpiresAt <= now
        ? lost(
            `The lease of assignment ${a.assignmentId} lapsed at ${a.leaseExpiresAt.toISOString()}; the task may be with another worker now.`,
          )
        : lost(`lease_token is not the current lease of assignment ${a.assignmentId} (another tab or an older lease).`);
    default:
      return new DomainError(
        'conflict',
        `Assignment ${a.assignmentId} is already ${a.status}; it takes no more changes.`,
        'assignment_closed',
      );
  }
}

export interface HeartbeatInput {
  leaseToken: string;
  draft?: Draft | undefined;
  /** Active time the client measured since its last heartbeat (or since the assignment was issued). */
  activeMs?: number | undefined;
}

export async function heartbeat(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  assignmentId: string,
  input: HeartbeatInput,
  settings: WorkSettings,
  now: Date,
): Promise<Assignment> {
  assertWorking(worker);
  const bytes = input.draft === undefined ? 0 : Buffer.byteLength(JSON.stringify(input.draft));
  if (bytes > maxDraftBytes)
    throw invalid(`draft is ${bytes} bytes serialized as JSON; a draft may be at most ${maxDraftBytes} bytes (1 MB). Nothing was saved.`);
  const a = await uow.work.heartbeat({
    assignmentId,
    workerId: worker.workerId,
    leaseToken: input.leaseToken,
    draft: input.draft,
    activeMs: input.activeMs,
    now,
    leaseMs: settings.leaseMs,
  });
  return a ?? leaseLost(uow, worker.workerId, assignmentId, now);
}

/** Skips (with a reason) or releases a held assignment: the task goes back to the queue for others. */
export async function giveBack(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  assignmentId: string,
  input: { leaseToken: string; status: 'skipped' | 'released'; reason?: string | undefined; activeMs?: number | undefined },
  now: Date,
): Promise<Assignment> {
  assertWorking(worker);
  if (input.status === 'skipped' && !input.reason?.trim()) throw invalid('reason is required to skip a task.');
  const a = await uow.work.giveBack({
    assignmentId,
    workerId: worker.workerId,
    leaseToken: input.leaseToken,
    status: input.status,
    reason: input.reason,
    activeMs: input.activeMs,
    now,
  });
  return a ?? leaseLost(uow, worker.workerId, assignmentId, now);
}

/** Expires lapsed leases (their slots go back); answers how many. Run by the poller. */
export function expireLapsedLeases(uow: UnitOfWork, now: Date, limit = 100): Promise<number> {
  return uow.work.expireLapsed(now, limit);
}

/** The held assignment (locked), inside a transaction. */
async function heldAssignment(repos: Repositories, worker: WorkerPrincipal, assignmentId: string, leaseToken: string, now: Date) {
  const a = await repos.work.get(assignmentId, worker.workerId, { forUpdate: true });
  if (!a) throw notFound(`Assignment ${assignmentId} not found.`);
  if (a.status !== 'active' || a.leaseToken !== leaseToken || a.leaseExpiresAt <= now) throw whyNotHeld(a, now);
  return a;
}

/** The held assignment (locked), its task (locked) and its work row, inside a transaction. */
async function held(repos: Repositories, worker: WorkerPrincipal, assignmentId: string, leaseToken: string, now: Date) {
  return heldTask(repos, await heldAssignment(repos, worker, assignmentId, leaseToken, now));
}

async function heldTask(repos: Repositories, a: Assignment) {
  const assignmentId = a.assignmentId;
  const task = await repos.tasks.get(a.accountId, 'live', a.taskId, { forUpdate: true });
  const work = await repos.work.lockTaskWork(a.taskId);
  if (!task || !work) throw notFound(`Assignment ${assignmentId} not found.`);
  return { a, task, work };
}

/** Active time: what the client counted since its last heartbeat, never more than the time that passed. */
const measured = (a: Assignment, activeMs: number | undefined, now: Date) =>
  a.activeMs + Math.max(0, Math.min(activeMs ?? 0, now.getTime() - (a.heartbeatAt ?? a.issuedAt).getTime()));

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
async function attemptsUnderReview(repos: Pick<Repositories, 'work'>, taskId: string, reviewedId: string): Promise<Assignment[]> {
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

/**
 * What a worker sees of an assignment: the task to work on and, for a review, the answer under
 * review and, when several workers attempted the task (overlap), all their answers.
 */
export interface AssignmentWork {
  assignment: Assignment;
  task: Task;
  reviewed: Assignment | null;
  attempts?: Assignment[];
  /** An active review that may not reject (reviewers rejected the task's work as often as they may). */
  final?: boolean;
}

async function withWork(
  uow: UnitOfWork,
  a: Assignment,
  settings: Pick<WorkSettings, 'maxRejections'> = defaultWorkSettings,
): Promise<AssignmentWork> {
  if (a.purpose !== 'live') return { assignment: a, task: (await qualityTaskOf(uow, a)).task, reviewed: null };
  const task = await uow.tasks.get(a.accountId, 'live', a.taskId);
  if (!task) throw notFound(`Assignment ${a.assignmentId} not found.`);
  const reviewed = a.role === 'review' && a.parentAssignmentId ? await uow.work.get(a.parentAssignmentId, null) : null;
  if (!reviewed) return { assignment: a, task, reviewed };
  const attempts = await attemptsUnderReview(uow, a.taskId, reviewed.assignmentId);
  const final = a.status === 'active' && finalReview(await uow.work.forTask(a.taskId), settings);
  return { assignment: a, task, reviewed, ...(attempts.length > 1 ? { attempts } : {}), ...(final ? { final } : {}) };
}

/** A worker's own assignment with its task (404 for anyone else's). */
export async function getOwnAssignment(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  assignmentId: string,
  settings: Pick<WorkSettings, 'maxRejections'> = defaultWorkSettings,
): Promise<AssignmentWork> {
  const a = await uow.work.get(assignmentId, worker.workerId);
  if (!a) throw notFound(`Assignment ${assignmentId} not found.`);
  return withWork(uow, a, settings);
}

/** The task and reviewed answer of an assignment just claimed. */
export const assignmentWork = withWork;

/** A page of the worker's own assignments, newest first, with a token for the next page. */
export async function listOwnAssignments(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  input: { statuses?: AssignmentStatus[] | undefined; limit: number; nextToken?: string | undefined },
): Promise<{ assignments: Assignment[]; nextToken: string | null }> {
  let before: { issuedAt: Date; assignmentId: string } | null = null;
  if (input.nextToken) {
    const m = /^(\d+)\.(asg_[0-9a-f]{24})$/.exec(Buffer.from(input.nextToken, 'base64url').toString('utf8'));
    if (!m) throw invalid('next_token is not a token of this list.');
    before = { issuedAt: new Date(Number(m[1])), assignmentId: m[2]! };
  }
  const rows = await uow.work.forWorker(
    worker.workerId,
    { ...(input.statuses ? { statuses: input.statuses } : {}) },
    { limit: input.limit + 1, before },
  );
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  const nextToken =
    rows.length > input.limit && last ? Buffer.from(`${last.issuedAt.getTime()}.${last.assignmentId}`).toString('base64url') : null;
  return { assignments: page, nextToken };
}

/** Who worked on a task, for its customer (oldest first). */
export async function taskAssignments(uow: UnitOfWork, caller: Caller, taskId: string): Promise<Assignment[]> {
  const task = await uow.tasks.get(caller.account.accountId, caller.mode, taskId);
  if (!task) throw notFound(`Task ${taskId} not found.`);
  return uow.work.forTask(taskId);
}
