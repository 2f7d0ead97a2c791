// Training, hidden evaluation and pausing on top of the work loop (WORKFORCE.md §6; decision 0011).
//
// - A worker new to a project whose policy requires training (training.required > 0) and whose
//   account has training tasks of the project's type first gets those tasks (in creation order, at
//   most `required` a try), one at a time, and sees after each submit its score and what differed.
//   A try passes when the mean of its scores reaches pass_score; a failed try may be followed by
//   another after retry_after_s, at most max_tries in all; then the project gives them no work.
// - A qualified worker's live claims are, at the policy's rate, swapped for one of the account's
//   evaluation tasks of the project's type, which takes the place of the live task that was claimed
//   in that worker's queue: shown with its project, batch and instruction, the project's parameters
//   as that task got them, and an id of that task's millisecond that sorts where its id does; the
//   live task goes to other workers (this one gets it only once they have nothing else to do). It
//   is scored against the expected answer without a word to the worker.
// - The mean of a worker's last `window` evaluation scores in a project is their accuracy; with at
//   least min_scored scores below pause_below they are paused for that project (no more of its
//   work; other projects go on), and their answers there since their accuracy last held that are
//   still under review go back to the queue. Delivered answers stay (decision 0011).
//
// The standing is kept per worker and project (worker_qualifications); the claim statement leaves
// out projects where a worker is anything but qualified. Scores are kept on the assignments.
import { randomBytes } from 'node:crypto';
import { withDirectLinks } from '../attachments.ts';
import { notFound } from '../errors.ts';
import type { Json, Task } from '../model.ts';
import { acceptTaskParams } from '../param-rules.ts';
import type { Project, Repositories, UnitOfWork } from '../ports.ts';
import type { Answer, Assignment, Lease, TaskWork, WorkEvent } from '../workforce/model.ts';
import type { WorkerPrincipal } from '../workforce/worker.ts';
import { trainingDifferences } from './differences.ts';
import type { Qualification, QualificationState, QualityPolicy, QualityTask, TrainingProgress } from './model.ts';
import { projectPolicy } from './policy.ts';
import { scoreAnswers } from './score.ts';

/** What a claim of the work loop needs to issue a training or evaluation assignment. */
export interface IssueSettings {
  lease: Lease;
  newAssignmentId: () => string;
  newLeaseToken: () => string;
}

const scoredEvent = (a: Assignment, at: Date, data: Json, kind: WorkEvent['kind'] = 'scored'): WorkEvent => ({
  at,
  accountId: a.accountId,
  workerId: a.workerId,
  assignmentId: a.assignmentId,
  taskId: a.taskId,
  kind,
  data,
});

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** A fresh assignment of a training or evaluation task, shaped as the claim statement writes a live one. */
function qualityAssignment(
  worker: WorkerPrincipal,
  accountId: string,
  fields: Pick<Assignment, 'taskId' | 'purpose' | 'qualityTaskId' | 'qualityProject' | 'qualityBatch'> &
    Partial<Pick<Assignment, 'standsFor' | 'draft'>>,
  s: IssueSettings,
  now: Date,
): Assignment {
  return {
    assignmentId: s.newAssignmentId(),
    accountId,
    workerId: worker.workerId,
    role: 'attempt',
    status: 'active',
    leaseToken: s.newLeaseToken(),
    issuedAt: now,
    leaseExpiresAt: new Date(now.getTime() + Math.min(s.lease.leaseMs, s.lease.hardCapMs)),
    hardDeadline: new Date(now.getTime() + s.lease.hardCapMs),
    heartbeatAt: null,
    submittedAt: null,
    endedAt: null,
    reviewedAt: null,
    activeMs: 0,
    draft: null,
    response: null,
    parentAssignmentId: null,
    reviewResult: null,
    feedback: null,
    skipReason: null,
    score: null,
    trainingFeedback: null,
    standsFor: null,
    ...fields,
  };
}

// ---------------------------------------------------------------------------------------------
// Training

/** The training tasks of a try: the account's of the project's type, in creation order, at most `required`. */
const tryTasks = (repos: Repositories, project: Project, policy: QualityPolicy) =>
  repos.qualification.trainingTasks(project.accountId, project.type, policy.training.required);

/**
 * The next training task of a worker in training (or whose wait is over: a new try begins),
 * issued as their assignment; null when no project has training for them now. `project`: only
 * that one.
 */
export async function claimTraining(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  project: string | undefined,
  s: IssueSettings,
  now: Date,
): Promise<Assignment | null> {
  const rows = (await uow.qualification.inTraining(worker.workerId)).filter((q) => project === undefined || q.project === project);
  for (const row of rows) {
    if (row.state === 'waiting' && row.retryAfter && row.retryAfter > now) continue;
    const issued = await uow.transaction(async (repos) => {
      const q = await repos.qualification.get(row.workerId, row.accountId, row.project, { forUpdate: true });
      if (!q || (q.state !== 'training' && q.state !== 'waiting')) return null;
      const p = await repos.projects.get(q.accountId, 'live', q.project);
      if (!p) return null;
      if (q.state === 'waiting') {
        if (q.retryAfter && q.retryAfter > now) return null;
        Object.assign(q, { state: 'training', tries: q.tries + 1, tryStartedAt: now, retryAfter: null, updatedAt: now });
        await repos.qualification.put(q);
      }
      const policy = await projectPolicy(repos, p);
      const tasks = await tryTasks(repos, p, policy);
      if (tasks.length === 0) {
        // The policy no longer asks for training (required 0): nothing stands between the worker and live work.
        await repos.qualification.put({ ...q, state: 'qualified', lastGoodAt: now, updatedAt: now });
        return null;
      }
      const done = new Set(await repos.qualification.submittedTraining(q.workerId, q.accountId, q.project, q.tryStartedAt ?? now));
      const next = tasks.find((t) => !done.has(t.id));
      if (!next) return null;
      const a = qualityAssignment(
        worker,
        q.accountId,
        { taskId: next.id, purpose: 'training', qualityTaskId: next.id, qualityProject: q.project, qualityBatch: null },
        s,
        now,
      );
      return (await repos.qualification.issue(a)) ? a : null;
    });
    if (issued) return issued;
  }
  return null;
}

/** Where the worker stands in the project's training (the contract's TrainingProgress). */
async function progressOf(repos: Repositories, q: Qualification, policy: QualityPolicy, required: number): Promise<TrainingProgress> {
  const scores =
    q.tryStartedAt && q.state === 'training'
      ? await repos.qualification.scores(q.workerId, q.accountId, q.project, 'training', Math.max(required, 1), q.tryStartedAt)
      : [];
  const meanScore = scores.length > 0 ? mean(scores) : q.trainingScore;
  return {
    state: q.state,
    scored: q.state === 'training' ? scores.length : q.state === 'qualified' && q.tries === 0 ? 0 : required,
    required,
    ...(meanScore !== null ? { mean_score: meanScore } : {}),
    ...(required > 0 ? { pass_score: policy.training.pass_score } : {}),
    tries: q.tries,
    max_tries: policy.training.max_tries,
    ...(q.state === 'waiting' && q.retryAfter ? { retry_after: q.retryAfter.toISOString() } : {}),
  };
}

/**
 * Where a worker stands in a project's training, as their own figures show it (GET
 * /worker/v1/stats); null before any training (qualified with no try: nothing to show).
 */
export async function trainingProgress(
  repos: Repositories,
  q: Qualification,
  project: Project,
  policy: QualityPolicy,
): Promise<TrainingProgress | null> {
  if (q.state === 'qualified' && q.tries === 0) return null;
  return progressOf(repos, q, policy, (await tryTasks(repos, project, policy)).length);
}

/** A scored training answer moves the try on: once `required` are scored, qualified, waiting or failed. */
async function afterTraining(repos: Repositories, a: Assignment, project: Project, policy: QualityPolicy, score: number, now: Date) {
  const q =
    (await repos.qualification.get(a.workerId, a.accountId, project.name, { forUpdate: true })) ??
    ({
      workerId: a.workerId,
      accountId: a.accountId,
      project: project.name,
      state: 'training',
      tries: 1,
      tryStartedAt: a.issuedAt,
      retryAfter: null,
      trainingScore: null,
      lastGoodAt: null,
      pausedAccuracy: null,
      evaluationSince: null,
      updatedAt: now,
    } satisfies Qualification);
  const required = (await tryTasks(repos, project, policy)).length;
  if (q.state === 'training' && q.tryStartedAt) {
    const scores = await repos.qualification.scores(a.workerId, a.accountId, project.name, 'training', required, q.tryStartedAt);
    if (scores.length >= required) {
      const m = required === 0 ? 1 : mean(scores);
      q.trainingScore = m;
      if (m >= policy.training.pass_score) Object.assign(q, { state: 'qualified', lastGoodAt: now });
      else if (q.tries >= policy.training.max_tries) q.state = 'failed';
      else Object.assign(q, { state: 'waiting', retryAfter: new Date(now.getTime() + policy.training.retry_after_s * 1000) });
      q.updatedAt = now;
      await repos.qualification.put(q);
    }
  }
  return { q, required, passed: score >= policy.training.pass_score };
}

// ---------------------------------------------------------------------------------------------
// The live claim: gated by training, mixed with hidden evaluation.

/** Why a live claim was undone: the worker must train first, or gets an evaluation task in its place. */
type Swap =
  | { kind: 'train'; project: Project }
  | { kind: 'evaluate'; project: Project; task: QualityTask; standsFor: TaskWork; shownId: string }
  | { kind: 'again'; returned: Assignment };

class Undo extends Error {
  constructor(readonly swap: Swap) {
    super('claim undone for the quality loop');
  }
}

/**
 * Decides on a live task just claimed (inside its transaction): null to keep it, or what to give
 * instead. A worker's first claim in a project records their standing: qualified at once when the
 * project requires no training (or the account has no training task of its type).
 */
async function decide(repos: Repositories, worker: WorkerPrincipal, work: TaskWork, random: () => number, now: Date): Promise<Swap | null> {
  if (work.project === null || work.calibration) return null;
  const project = await repos.projects.get(work.accountId, 'live', work.project);
  if (!project) return null;
  const policy = await projectPolicy(repos, project);
  const q = await repos.qualification.get(worker.workerId, work.accountId, project.name);
  if (!q) {
    if (policy.training.required > 0 && (await repos.qualification.hasTrainingTasks(project.accountId, project.type)))
      return { kind: 'train', project };
    await repos.qualification.put({
      workerId: worker.workerId,
      accountId: work.accountId,
      project: project.name,
      state: 'qualified',
      tries: 0,
      tryStartedAt: null,
      retryAfter: null,
      trainingScore: null,
      lastGoodAt: now,
      pausedAccuracy: null,
      evaluationSince: null,
      updatedAt: now,
    });
    return null;
  }
  if (q.state !== 'qualified') return null;
  const e = policy.evaluation;
  // Counted up to trusted_after only: a claim's work does not grow with the worker's history.
  const trusted =
    e.rate_new === e.rate_trusted ||
    (await repos.qualification.liveSubmitted(worker.workerId, work.accountId, project.name, e.trusted_after)) >= e.trusted_after;
  const rate = trusted ? e.rate_trusted : e.rate_new;
  if (rate <= 0 || random() >= rate) return null;
  const pick = await repos.qualification.evaluationFor(worker.workerId, work.accountId, project.type, work.taskId);
  // A live task the worker handed back comes back to them as it was (as a handed-back evaluation does).
  // One whose place an evaluation of theirs took comes to them as it is (a second one would carry its
  // millisecond again); and one passed over by as many workers as it needs goes on as it is (passed
  // over by more, it would wait for the workers left and come out of the queue's order).
  if (pick.handedBack || pick.stoodInMine || pick.stoodIn >= work.needed || !pick.task) return null;
  return { kind: 'evaluate', project, task: pick.task, standsFor: work, shownId: shownId(work.taskId, pick) };
}

/** How far back an evaluation handed back is still given again (a bound on the rows a claim reads). */
const returnedWithinMs = 7 * 86_400_000;

/**
 * Since when a worker's evaluations keep the live tasks they took the place of away from that
 * worker (while they have other work): one lease (WORK_LEASE_SECONDS) from the evaluation's issue,
 * as a task comes back to the queue when a lease on it lapses. It also bounds the rows a claim reads.
 */
export const standInsSince = (lease: Lease, now: Date) => new Date(now.getTime() - lease.leaseMs);

const suffixOf = (id: string) => BigInt(`0x${id.slice(12)}`);
const maxSuffix = 0xffff_ffff_ffffn;

/**
 * The id an evaluation is shown under in the place of live task `liveId`: a task id (ids.ts: 12 hex
 * of milliseconds, 12 random hex) of the same millisecond whose random part is drawn uniformly
 * between those of the tasks just before and just after it (`neighbours`), the live id itself left
 * out. It sorts exactly where the live task does, so the worker's queue reads in the same order
 * as if they had been given that task; and given its neighbours, the live task's own random part
 * was just such a draw.
 */
function shownId(liveId: string, neighbours: { before: string | null; after: string | null }): string {
  const lo = neighbours.before ? suffixOf(neighbours.before) + 1n : 0n;
  const hi = neighbours.after ? suffixOf(neighbours.after) - 1n : maxSuffix;
  const own = suffixOf(liveId);
  // hi - lo + 1 values in the range, the live task's own among them.
  const choices = hi - lo;
  let drawn = choices > 0n ? lo + (randomBytes(8).readBigUInt64BE(0) % choices) : own + 1n;
  if (choices > 0n && drawn >= own) drawn += 1n;
  return liveId.slice(0, 12) + drawn.toString(16).padStart(12, '0');
}

/** Whether an evaluation handed back, in the place of its live task, comes before live task `work` in the queue. */
const comesFirst = (returned: { assignment: Assignment; priority: number; createdAt: Date }, work: TaskWork, taskId: string) =>
  returned.priority !== work.priority
    ? returned.priority > work.priority
    : returned.createdAt.getTime() !== work.createdAt.getTime()
      ? returned.createdAt < work.createdAt
      : returned.assignment.taskId < taskId;

/**
 * Claims a live attempt through `claim` (the work loop's statement), then keeps it, or undoes it
 * and gives the worker training (new to a project that requires it) or, at the policy's rate, an
 * evaluation task in its place. An evaluation the worker handed back (released, or its lease
 * lapsed) is given again when its live task would come first, as that task would have come back
 * to them. Bounded: each undo for training moves that project out of the worker's claims;
 * evaluation is tried once. `project`: the claim's project, if it names one.
 */
export async function claimLiveOrQuality(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  claim: (repos: Repositories) => Promise<Assignment | null>,
  project: string | undefined,
  s: IssueSettings,
  now: Date,
  random: () => number,
): Promise<Assignment | null> {
  let evaluated = false;
  for (let round = 0; round < 10; round++) {
    try {
      return await uow.transaction(async (repos) => {
        // Read before the claim, which may take the open slot of the live task it stands in for.
        const returned = evaluated
          ? null
          : await repos.qualification.returnedEvaluation(worker.workerId, project, new Date(now.getTime() - returnedWithinMs));
        const a = await claim(repos);
        const work = a ? await repos.work.getTaskWork(a.taskId) : null;
        // The live task it stands in for counts as the evaluation itself (once it is no longer passed over).
        if (returned && (!a || !work || a.taskId === returned.assignment.standsFor || comesFirst(returned, work, a.taskId)))
          throw new Undo({ kind: 'again', returned: returned.assignment });
        if (!a) return null;
        const swap = work ? await decide(repos, worker, work, evaluated ? () => 1 : random, now) : null;
        if (swap) throw new Undo(swap);
        return a;
      });
    } catch (err) {
      if (!(err instanceof Undo)) throw err;
      const { swap } = err;
      if (swap.kind === 'train') {
        await uow.transaction(async (repos) => {
          if (await repos.qualification.get(worker.workerId, swap.project.accountId, swap.project.name, { forUpdate: true })) return;
          await repos.qualification.put({
            workerId: worker.workerId,
            accountId: swap.project.accountId,
            project: swap.project.name,
            state: 'training',
            tries: 1,
            tryStartedAt: now,
            retryAfter: null,
            trainingScore: null,
            lastGoodAt: null,
            pausedAccuracy: null,
            evaluationSince: null,
            updatedAt: now,
          });
        });
        const t = await claimTraining(uow, worker, swap.project.name, s, now);
        if (t) return t;
      } else if (swap.kind === 'again') {
        evaluated = true;
        const r = swap.returned;
        const a = qualityAssignment(
          worker,
          r.accountId,
          {
            taskId: r.taskId,
            purpose: 'evaluation',
            qualityTaskId: r.qualityTaskId,
            qualityProject: r.qualityProject,
            qualityBatch: r.qualityBatch,
            standsFor: r.standsFor,
            // As the claim offers a live task's draft to the worker who had it.
            draft: r.draft,
          },
          s,
          now,
        );
        if (await uow.qualification.issue(a)) return a;
      } else {
        evaluated = true;
        const live = swap.standsFor;
        const a = qualityAssignment(
          worker,
          swap.project.accountId,
          {
            taskId: swap.shownId,
            purpose: 'evaluation',
            qualityTaskId: swap.task.id,
            qualityProject: swap.project.name,
            qualityBatch: live.batch,
            standsFor: live.taskId,
          },
          s,
          now,
        );
        if (await uow.qualification.issue(a)) return a;
      }
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Showing and submitting training and evaluation assignments.

/**
 * The params of an evaluation shown in the place of a live task: what that task's creation would
 * have stored had its request carried the evaluation's params. The project's parameter version the
 * live task uses, under the evaluation's own; no `instruction` (a task's is a field of its own;
 * a promoted task keeps its instruction in the stored params); the parameter rules and direct
 * links applied; the keys in the order that creation keeps (the project's, then the request's,
 * as sent: params are stored as the customer sent them, decision 17).
 */
function shownParams(type: string, own: Json, projectParams: Json | null): Json {
  const { instruction: _own, ...given } = own;
  const { instruction: _project, ...defaults } = projectParams ?? {};
  const merged: Json = { ...defaults, ...given };
  try {
    acceptTaskParams(type, merged);
  } catch {
    // The project's parameters do not go with this evaluation's: it is shown with its own.
    return withDirectLinks(given);
  }
  return withDirectLinks(merged);
}

/**
 * The task a training or evaluation assignment shows, as a live task of its project would be.
 * Evaluation: the instruction, project, batch and parameter version of the live task whose place
 * it took, the evaluation's params shown as that task's creation would store them, the shown id.
 * Training (and an evaluation issued before the live task was kept): the training task's params
 * without `instruction`, the project's latest instruction, the training task's id (training).
 */
export async function qualityTaskOf(repos: Repositories, a: Assignment): Promise<{ task: Task; quality: QualityTask; project: Project }> {
  const quality = a.qualityTaskId ? await repos.qualification.qualityTask(a.accountId, a.qualityTaskId) : null;
  const project = a.qualityProject ? await repos.projects.get(a.accountId, 'live', a.qualityProject) : null;
  if (!quality || !project) throw notFound(`Assignment ${a.assignmentId} not found.`);
  const versions = await repos.projects.paramVersions([project.projectId]);
  const live = a.purpose === 'evaluation' && a.standsFor ? await repos.tasks.get(a.accountId, 'live', a.standsFor) : null;
  const latest = versions.at(-1);
  const version = live ? (versions.find((v) => v.version === live.projectParamVersion) ?? null) : (latest ?? null);
  const projectInstruction =
    typeof latest?.params.instruction === 'string' && latest.params.instruction !== '' ? latest.params.instruction : null;
  const { instruction: _stored, ...params } = quality.params;
  const task: Task = {
    taskId: a.taskId,
    accountId: a.accountId,
    mode: 'live',
    generation: 'current',
    type: quality.type,
    status: 'pending',
    instruction: live ? live.instruction : projectInstruction,
    params: live ? shownParams(quality.type, quality.params, version?.params ?? null) : params,
    response: null,
    callbackUrl: null,
    callbackCompleted: null,
    urgency: 'day',
    createdAt: a.issuedAt,
    updatedAt: a.issuedAt,
    completedAt: null,
    customerReviewStatus: null,
    timesRedone: 0,
    metadata: {},
    project: project.name,
    batch: live ? live.batch : a.qualityBatch,
    projectParamVersion: version?.version ?? null,
    audits: [],
    uniqueId: null,
    tags: null,
    clearUniqueIdOnError: false,
    testCompleteAt: null,
    attachmentCheckAt: null,
  };
  return { task, quality, project };
}

/**
 * Submits a held training or evaluation assignment (inside the submit's transaction): the answer
 * checked as a live one (`check`), scored against the expected answer, a `scored` event. Training:
 * the feedback kept on the assignment and the try moved on. Evaluation: the rolling accuracy,
 * and a pause when it falls below the mark. Nothing of a customer's task changes, no callback.
 */
export async function submitQualityAnswer(
  repos: Repositories,
  a: Assignment,
  activeMs: number,
  check: (task: Task) => Answer,
  now: Date,
): Promise<Assignment> {
  const { task, quality, project } = await qualityTaskOf(repos, a);
  const response = check(task);
  const policy = await projectPolicy(repos, project);
  let score = 0;
  let details = null;
  try {
    ({ score, details } = scoreAnswers(quality.type, quality.params, quality.expectedResponse, response));
  } catch {
    // No scorer for the type (none today): scored 0, shown as such.
  }
  const submitted: Assignment = { ...a, status: 'submitted', response, activeMs, submittedAt: now, endedAt: now, draft: null, score };
  await repos.work.update(submitted);
  const events = [
    scoredEvent(a, now, { active_ms: activeMs }, 'submitted'),
    scoredEvent(a, now, { purpose: a.purpose, score, project: project.name, type: quality.type }),
  ];
  if (a.purpose === 'training') {
    const { q, required, passed } = await afterTraining(repos, submitted, project, policy, score, now);
    submitted.trainingFeedback = {
      score,
      passed,
      differences: details ? trainingDifferences(details) : [],
      ...(policy.training.show_expected ? { expected_response: quality.expectedResponse } : {}),
      progress: await progressOf(repos, q, policy, required),
    };
    await repos.work.update(submitted);
  } else {
    const paused = await afterEvaluation(repos, submitted, project, policy, now);
    if (paused) events.push(scoredEvent(a, now, paused, 'paused'));
  }
  await repos.work.addEvents(events);
  return submitted;
}

/**
 * The rolling accuracy after an evaluation score: at or above the mark (with enough scores) it
 * moves the worker's last good time on; below it (with enough scores) the worker is paused for the
 * project and their answers under review since that time go back to the queue. Answers the
 * `paused` event's data, or null.
 */
async function afterEvaluation(
  repos: Repositories,
  a: Assignment,
  project: Project,
  policy: QualityPolicy,
  now: Date,
): Promise<Json | null> {
  const e = policy.evaluation;
  const q = await repos.qualification.get(a.workerId, a.accountId, project.name, { forUpdate: true });
  if (q?.state !== 'qualified') return null;
  const scores = await repos.qualification.scores(a.workerId, a.accountId, project.name, 'evaluation', e.window, q.evaluationSince);
  if (scores.length < e.min_scored) return null;
  const accuracy = mean(scores);
  if (accuracy >= e.pause_below) {
    await repos.qualification.put({ ...q, lastGoodAt: now, updatedAt: now });
    return null;
  }
  const requeued = await repos.qualification.requeueSince(a.workerId, a.accountId, project.name, q.lastGoodAt ?? new Date(0), now);
  await repos.qualification.put({ ...q, state: 'paused', pausedAccuracy: accuracy, updatedAt: now });
  return { project: project.name, accuracy, window: scores.length, requeued: requeued.length };
}

// ---------------------------------------------------------------------------------------------
// A lead's reset

/**
 * A lead returns one of the account's workers to work on a project (POST
 * /v1/workforce/workers/{workerId}/unpause with `project`): paused by the evaluation rules →
 * qualified, their rolling accuracy counted afresh from now (the scores that paused them no longer
 * count); failed training (no try left) → a new set of tries, the first one at once. Any other
 * standing (training, waiting, qualified, none yet) stays as it is. A change writes an
 * `unpaused` event {project, from, by: 'customer'}. 404 when the account has no such live project.
 * The standing afterwards (null: none recorded).
 */
export async function resetStanding(
  uow: UnitOfWork,
  accountId: string,
  workerId: string,
  projectName: string,
  now: Date,
): Promise<QualificationState | null> {
  return uow.transaction(async (repos) => {
    await liveProject(repos, accountId, projectName);
    return reset(repos, accountId, workerId, projectName, now);
  });
}

/**
 * The same for a worker of the operator's workforce, named by the handle the account sees
 * (`opw_...`): the standing in the account's project is the account's to reset (its policy set
 * it, on its work); the worker's own pause is the operator's and stays. 404 for an unknown
 * project, or a handle with no standing in it.
 */
export async function resetOperatorStanding(
  uow: UnitOfWork,
  accountId: string,
  handle: string,
  projectName: string,
  now: Date,
): Promise<QualificationState> {
  return uow.transaction(async (repos) => {
    await liveProject(repos, accountId, projectName);
    const hex = /^opw_([0-9a-f]{24})$/.exec(handle)?.[1];
    const workerId = hex ? await repos.qualification.operatorWorkerOf(accountId, projectName, hex) : null;
    if (!workerId) throw notFound(`Worker ${handle} has no standing in project "${projectName}".`);
    return (await reset(repos, accountId, workerId, projectName, now))!;
  });
}

async function liveProject(repos: Repositories, accountId: string, projectName: string): Promise<void> {
  if (!(await repos.projects.get(accountId, 'live', projectName))) throw notFound(`Project "${projectName}" not found.`);
}

async function reset(
  repos: Repositories,
  accountId: string,
  workerId: string,
  projectName: string,
  now: Date,
): Promise<QualificationState | null> {
  const q = await repos.qualification.get(workerId, accountId, projectName, { forUpdate: true });
  if (q?.state !== 'paused' && q?.state !== 'failed') return q?.state ?? null;
  const changed: Qualification =
    q.state === 'paused'
      ? { ...q, state: 'qualified', pausedAccuracy: null, lastGoodAt: now, evaluationSince: now, updatedAt: now }
      : { ...q, state: 'waiting', tries: 0, tryStartedAt: null, retryAfter: null, updatedAt: now };
  await repos.qualification.put(changed);
  await repos.work.addEvents([
    {
      at: now,
      accountId,
      workerId,
      assignmentId: null,
      taskId: null,
      kind: 'unpaused',
      data: { project: projectName, from: q.state, by: 'customer' },
    },
  ]);
  return changed.state;
}
