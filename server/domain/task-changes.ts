// Changes to a task after its creation: cancel (one, or every task a filter matches), metadata,
// unique_id, tags, the customer's audit, and the outcome of a live task's attachment check. Each is
// one transaction on the locked task.
import { DomainError, invalid } from './errors.ts';
import type { Caller, Json, Task } from './model.ts';
import type { Repositories, TaskFilters, UnitOfWork } from './ports.ts';
import { UniqueIdTaken } from './ports.ts';
import { taskSettled } from './batches.ts';
import { queueTaskCallback } from './outbox.ts';
import { recordCustomerAudit } from './quality/calibration.ts';
import { redoAfterCustomerReject } from './workforce/answers.ts';
import { defaultWorkSettings, type WorkSettings } from './workforce/work.ts';
import { MAX_TAGS, assertUniqueIdFree } from './task-creation.ts';
import { lockedTask } from './task-reads.ts';
import { completeSynthetically } from './test-completion.ts';

export async function cancelTask(uow: UnitOfWork, caller: Caller, taskId: string, clearUniqueId: boolean, now: Date): Promise<Task> {
  return uow.transaction(async (repos) => {
    const task = await lockedTask(repos, caller, taskId, now);
    if (task.status === 'completed' || task.status === 'error') {
      throw new DomainError(
        'cancel_completed',
        `Task ${taskId} is ${task.status === 'error' ? 'in error' : 'completed'}; only pending tasks can be canceled.`,
      );
    }
    let changed = false;
    if (task.status === 'pending') {
      task.status = 'canceled';
      task.testCompleteAt = null;
      // Live: the work on it ends; its workers' next heartbeat or submit is told so.
      if (task.mode === 'live') await repos.work.closeTask(task.taskId, now);
      changed = true;
    }
    if (clearUniqueId && task.uniqueId !== null) {
      task.uniqueId = null;
      changed = true;
    }
    if (changed) {
      task.updatedAt = now;
      await repos.tasks.update(task);
      await taskSettled(repos, task, now);
    }
    return task;
  });
}

/**
 * Cancels up to `limit` pending tasks the filters match (in the list's order), each as cancelTask
 * does; `hasMore`: pending tasks still match. A filter on another status matches nothing to cancel.
 * A task that left pending meanwhile (completed by its worker) is passed over. Run inside the
 * request's transaction (http/activity.ts), the cancellations and their log entry commit together.
 */
export async function cancelMatchingTasks(
  uow: UnitOfWork,
  caller: Caller,
  filters: TaskFilters,
  limit: number,
  clearUniqueId: boolean,
  now: Date,
): Promise<{ taskIds: string[]; hasMore: boolean }> {
  if (filters.statuses && !filters.statuses.includes('pending')) return { taskIds: [], hasMore: false };
  const { tasks } = await uow.tasks.list(
    caller.account.accountId,
    caller.mode,
    { ...filters, statuses: ['pending'] },
    { limit, after: null },
  );
  const taskIds: string[] = [];
  for (const task of tasks.slice(0, limit)) {
    try {
      const canceled = await cancelTask(uow, caller, task.taskId, clearUniqueId, now);
      if (canceled.status === 'canceled') taskIds.push(task.taskId);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'cancel_completed')) throw err;
    }
  }
  return { taskIds, hasMore: tasks.length > limit };
}

/** Runs a change on a locked task; `updated_at` moves only when the change changed something. */
async function changeTask(
  uow: UnitOfWork,
  caller: Caller,
  taskId: string,
  now: Date,
  change: (task: Task, repos: Repositories) => Promise<boolean> | boolean,
): Promise<Task> {
  return uow.transaction(async (repos) => {
    const task = await lockedTask(repos, caller, taskId, now);
    if (await change(task, repos)) {
      task.updatedAt = now;
      await repos.tasks.update(task);
    }
    return task;
  });
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function setTaskMetadata(uow: UnitOfWork, caller: Caller, taskId: string, metadata: Json, now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    if (same(task.metadata, metadata)) return false;
    task.metadata = metadata;
    return true;
  });
}

export async function setTaskUniqueId(uow: UnitOfWork, caller: Caller, taskId: string, uniqueId: string, now: Date) {
  try {
    return await changeTask(uow, caller, taskId, now, async (task, repos) => {
      if (task.uniqueId === uniqueId) return false;
      await assertUniqueIdFree(repos, caller, uniqueId, taskId);
      task.uniqueId = uniqueId;
      return true;
    });
  } catch (err) {
    if (err instanceof UniqueIdTaken) await assertUniqueIdFree(uow, caller, uniqueId, taskId);
    throw err;
  }
}

export function deleteTaskUniqueId(uow: UnitOfWork, caller: Caller, taskId: string, now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    if (task.uniqueId === null) return false;
    task.uniqueId = null;
    return true;
  });
}

export function addTaskTags(uow: UnitOfWork, caller: Caller, taskId: string, tags: string[], now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    const current = task.tags ?? [];
    const next = [...new Set([...current, ...tags])];
    if (next.length > MAX_TAGS) {
      throw invalid(`A task has at most ${MAX_TAGS} tags; this change would give it ${next.length}.`);
    }
    if (next.length === current.length) return false;
    task.tags = next;
    return true;
  });
}

export function removeTaskTags(uow: UnitOfWork, caller: Caller, taskId: string, tags: string[], now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    const current = task.tags ?? [];
    const next = current.filter((t) => !tags.includes(t));
    if (next.length === current.length) return false;
    task.tags = next.length > 0 ? next : null;
    return true;
  });
}

export async function auditTask(
  uow: UnitOfWork,
  caller: Caller,
  taskId: string,
  review: { accepted: boolean; comments?: string },
  now: Date,
  work: WorkSettings = defaultWorkSettings,
): Promise<Task> {
  // The answer shows the task as the audit left it (as a creation's shows the task as created),
  // even where test mode has redone it by the time the answer is sent.
  let asAudited: Task | null = null;
  const task = await changeTask(uow, caller, taskId, now, async (task, repos) => {
    if (task.status !== 'completed') {
      throw invalid(`Task ${taskId} is ${task.status === 'error' ? 'in error' : task.status}; only a completed task can be reviewed.`);
    }
    if (task.customerReviewStatus === 'rejected') {
      throw invalid(`Task ${taskId} was rejected and is being redone; review it once the redo is delivered.`);
    }
    task.audits = [
      ...task.audits,
      {
        auditedBy: caller.account.accountId,
        auditedAt: now,
        auditTimeSecs: 0,
        result: review.accepted ? 'accepted' : 'rejected',
        source: 'customer',
        ...(review.comments !== undefined ? { comments: review.comments } : {}),
      },
    ];
    task.customerReviewStatus = review.accepted ? 'accepted' : 'rejected';
    if (caller.mode === 'live') await recordCustomerAudit(repos, caller, task, review.accepted, now);
    if (!review.accepted && caller.mode === 'test') {
      asAudited = { ...task, updatedAt: now };
      // Test mode redoes a rejected task at once, with a new synthetic response.
      // A redo keeps the task completed at its first completion time; updated_at moves.
      const completedAt = task.completedAt;
      task.timesRedone += 1;
      completeSynthetically(task, now);
      task.completedAt = completedAt;
      task.customerReviewStatus = 'fixed';
      // The redone task's callback is sent again.
      await queueTaskCallback(repos, task, now);
    }
    // Live mode: a worker redoes it (the callback is sent again when the redo is adopted).
    if (!review.accepted && caller.mode === 'live') await redoAfterCustomerReject(repos, caller, task, review.comments, work, now);
    return true;
  });
  return asAudited ?? task;
}

/** The failed fetches of an attachment check: `statusCode` 0 when no HTTP answer came. */
export interface FailedAttachment {
  url: string;
  statusCode: number;
  reason: string;
}

/**
 * The outcome of a live task's attachment check: when a fetch failed, the task moves to `error`
 * (its unique_id cleared if it asked for that) and the attachment-error callback is queued.
 */
export function finishAttachmentCheck(uow: UnitOfWork, task: Task, failures: FailedAttachment[], now: Date) {
  return uow.transaction(async (repos) => {
    const current = await repos.tasks.get(task.accountId, task.mode, task.taskId, { forUpdate: true });
    if (!current) return;
    current.attachmentCheckAt = null;
    if (current.status === 'pending' && failures.length > 0) {
      current.status = 'error';
      current.response = { error: `Attachment could not be fetched: ${failures.map((f) => `${f.url} (${f.reason})`).join(', ')}` };
      current.completedAt = now;
      current.updatedAt = now;
      if (current.clearUniqueIdOnError) current.uniqueId = null;
      await repos.tasks.update(current);
      await repos.work.closeTask(current.taskId, now);
      await queueTaskCallback(
        repos,
        current,
        now,
        failures.map(({ url, statusCode }) => ({ url, statusCode })),
      );
      await taskSettled(repos, current, now);
      return;
    }
    await repos.tasks.update(current);
  });
}
