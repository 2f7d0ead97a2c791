// The lease of live work: a worker claims a task (a lease with a fencing token), keeps it with
// heartbeats, and skips or releases it; a sweeper returns lapsed leases. The claim, heartbeat,
// skip/release and sweep are single statements (server/store/work.ts). What is done with a held
// lease's answer (submit, review, redo) is in answers.ts; what a worker reads of its assignments
// is in assignments.ts.
import { randomBytes } from 'node:crypto';
import { wallClock, type Clock } from '../clock.ts';
import { DomainError, invalid, notFound } from '../errors.ts';
import { newTaskId } from '../ids.ts';
import type { Json } from '../model.ts';
import type { Repositories, UnitOfWork } from '../ports.ts';
import type { Assignment, Draft, WorkEvent, WorkEventKind } from './model.ts';
import type { WorkerPrincipal } from './worker.ts';
import { claimLiveOrQuality, claimTraining, standInsSince } from '../quality/qualification.ts';

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

/**
 * A draft's limit, serialized as JSON (the contract's AssignmentDraft: 1 MB). The worker API
 * refuses a heartbeat's body past it (and 16 KB for the rest) before reading it; this is the exact
 * check, on what is stored.
 */
export const maxDraftBytes = 1_048_576;

const canAttempt = (w: WorkerPrincipal) => w.roles.includes('labeler') || w.roles.includes('lead');
const canReview = (w: WorkerPrincipal) => w.roles.includes('reviewer') || w.roles.includes('lead');

function assertActive(worker: WorkerPrincipal) {
  if (worker.status !== 'active')
    throw new DomainError('forbidden', `Worker ${worker.workerId} is ${worker.status}: no work is handed out.`, 'worker_paused');
}

/** A paused worker's held work went back to the queue when they were paused: nothing they send on it counts. */
export function assertWorking(worker: WorkerPrincipal) {
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

export const event = (
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
export async function heldAssignment(repos: Repositories, worker: WorkerPrincipal, assignmentId: string, leaseToken: string, now: Date) {
  const a = await repos.work.get(assignmentId, worker.workerId, { forUpdate: true });
  if (!a) throw notFound(`Assignment ${assignmentId} not found.`);
  if (a.status !== 'active' || a.leaseToken !== leaseToken || a.leaseExpiresAt <= now) throw whyNotHeld(a, now);
  return a;
}

/** The held assignment (locked), its task (locked) and its work row, inside a transaction. */
export async function held(repos: Repositories, worker: WorkerPrincipal, assignmentId: string, leaseToken: string, now: Date) {
  return heldTask(repos, await heldAssignment(repos, worker, assignmentId, leaseToken, now));
}

export async function heldTask(repos: Repositories, a: Assignment) {
  const assignmentId = a.assignmentId;
  const task = await repos.tasks.get(a.accountId, 'live', a.taskId, { forUpdate: true });
  const work = await repos.work.lockTaskWork(a.taskId);
  if (!task || !work) throw notFound(`Assignment ${assignmentId} not found.`);
  return { a, task, work };
}

/** Active time: what the client counted since its last heartbeat, never more than the time that passed. */
export const measured = (a: Assignment, activeMs: number | undefined, now: Date) =>
  a.activeMs + Math.max(0, Math.min(activeMs ?? 0, now.getTime() - (a.heartbeatAt ?? a.issuedAt).getTime()));
