// Test mode's completion of a task (decision 19): now, after a delay (its own or the account's),
// or never, as its metadata chooses; a synthetic answer, or the error it chose.
import type { Task } from './model.ts';
import type { Repositories, UnitOfWork } from './ports.ts';
import { taskSettled } from './batches.ts';
import { failedTestAttachments } from './attachments.ts';
import { queueTaskCallback } from './outbox.ts';
import { syntheticResponse, type TaskType } from './synthetic.ts';
import { chosenErrorResponse, testOutcomeOf } from './test-outcomes.ts';

/**
 * Starts a new test-mode task on the way its metadata chooses (decision 19): completed now (true:
 * its callback is due), later (a delay of its own, or the account's), or never (`pending`).
 */
export function startTestCompletion(task: Task, accountDelayMs: number, now: Date): boolean {
  const outcome = testOutcomeOf(task.metadata);
  if ('problem' in outcome || outcome.kind === 'pending') return false;
  const delayMs = outcome.kind === 'delayed' ? outcome.ms : accountDelayMs;
  if (delayMs > 0) {
    task.testCompleteAt = new Date(now.getTime() + delayMs);
    return false;
  }
  completeSynthetically(task, now);
  return true;
}

export function completeSynthetically(task: Task, now: Date) {
  const failed = failedTestAttachments(task.params);
  task.testCompleteAt = null;
  task.updatedAt = now;
  task.completedAt = now;
  // A chosen error ends the first completion only: a redo (after a rejection) completes.
  const chosen = testOutcomeOf(task.metadata);
  const chosenError = task.timesRedone === 0 && 'kind' in chosen && chosen.kind === 'error';
  if (failed.length > 0 || chosenError) {
    task.status = 'error';
    task.response = chosenError
      ? { ...chosenErrorResponse }
      : { error: `Attachment could not be fetched (HTTP 404): ${failed.join(', ')}` };
    if (task.clearUniqueIdOnError) task.uniqueId = null;
    return;
  }
  task.status = 'completed';
  const seed = task.timesRedone === 0 ? task.taskId : `${task.taskId}:${task.timesRedone}`;
  task.response = syntheticResponse(task.type as TaskType, task.params, seed);
  task.customerReviewStatus = 'pending';
}

export const isDueTestTask = (task: Task, now: Date) =>
  task.status === 'pending' && task.testCompleteAt !== null && task.testCompleteAt <= now;

/** Completes the test-mode tasks whose delay is over; a read also completes a due task first. */
export async function settleDueTestTask(repos: Repositories, task: Task, now: Date): Promise<Task> {
  if (isDueTestTask(task, now)) {
    completeSynthetically(task, now);
    await repos.tasks.update(task);
    await queueTaskCallback(repos, task, now);
    await taskSettled(repos, task, now);
  }
  return task;
}

/**
 * Completes the test-mode tasks whose completion delay is over. Runs periodically; a read of a
 * due task completes it first anyway, so no reader ever sees it late.
 */
export async function completeDueTestTasks(uow: UnitOfWork, now: Date, batch = 100): Promise<number> {
  const due = await uow.tasks.dueTestTaskIds(now, batch);
  // Each on its own: a task that cannot be completed holds up none of the others (the poller logs it).
  // It is tried again later, after as long as it has existed (1 s, then 2 s, 4 s, ... at most an hour):
  // neither does it come first in every poll (a batch of them would starve the rest) nor fill the log.
  const failures: Error[] = [];
  for (const { taskId, accountId, mode, createdAt } of due) {
    try {
      await uow.transaction(async (repos) => {
        const task = await repos.tasks.get(accountId, mode, taskId, { forUpdate: true });
        if (task) await settleDueTestTask(repos, task, now);
      });
    } catch (err) {
      const retryInMs = Math.min(3_600_000, Math.max(1000, now.getTime() - createdAt.getTime()));
      const retryAt = new Date(now.getTime() + retryInMs);
      failures.push(new Error(`test-mode task ${taskId} could not be completed (tried again at ${retryAt.toISOString()})`, { cause: err }));
      await uow.tasks
        .postponeTestCompletion(taskId, retryAt)
        .catch((e: unknown) => failures.push(new Error(`test-mode task ${taskId} could not be postponed`, { cause: e })));
    }
  }
  if (failures.length > 0)
    throw new AggregateError(failures, `${failures.length} of ${due.length} due test-mode tasks could not be completed`);
  return due.length;
}
