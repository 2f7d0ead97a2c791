// What a worker reads of its own assignments (the task to work on, the answers under review), and
// what a customer reads of who worked on a task.
import { invalid, notFound } from '../errors.ts';
import type { Caller, Task } from '../model.ts';
import type { UnitOfWork } from '../ports.ts';
import { qualityTaskOf } from '../quality/qualification.ts';
import type { Assignment, AssignmentStatus } from './model.ts';
import type { WorkerPrincipal } from './worker.ts';
import { attemptsUnderReview, finalReview } from './answers.ts';
import { defaultWorkSettings, type WorkSettings } from './work.ts';

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
