// A task's callbacks for its customer: the delivery attempts, and a fresh delivery on request.
import { invalid } from './errors.ts';
import type { Caller } from './model.ts';
import type { UnitOfWork } from './ports.ts';
import { queueTaskCallback, resendLatestCallback } from './outbox.ts';
import { lockedTask, taskById } from './task-reads.ts';

/** One delivery attempt of a task's callback. */
export interface CallbackAttempt {
  event: 'task_completed' | 'attachment_error';
  attemptedAt: Date;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** The delivery attempts of a task's callbacks, oldest first. */
export async function listTaskCallbacks(uow: UnitOfWork, caller: Caller, taskId: string): Promise<CallbackAttempt[]> {
  await taskById(uow, caller, taskId);
  const [messages, attempts] = await Promise.all([
    uow.outbox.forSubject(caller.account.accountId, taskId),
    uow.outbox.attemptsFor(caller.account.accountId, taskId),
  ]);
  const eventOf = new Map(messages.map((m) => [m.id, m.event]));
  return attempts.map((a) => {
    const event = eventOf.get(a.messageId);
    return {
      event: event === 'attachment_error' ? event : 'task_completed',
      attemptedAt: a.attemptedAt,
      url: a.url,
      statusCode: a.statusCode,
      error: a.error,
      durationMs: a.durationMs,
    };
  });
}

/** Queues a fresh delivery of the task's callback (its result, or its attachment error). */
export function redeliverTaskCallback(uow: UnitOfWork, caller: Caller, taskId: string, now: Date) {
  return uow.transaction(async (repos) => {
    const task = await lockedTask(repos, caller, taskId, now);
    if (task.status !== 'completed' && task.status !== 'error') {
      throw invalid(`Task ${taskId} is ${task.status}; only a completed task or one in error has a callback to send.`);
    }
    if (!(await resendLatestCallback(repos, task, now)) && !(await queueTaskCallback(repos, task, now))) {
      throw invalid(`Task ${taskId} has no callback address (no callback_url, and the account has no default).`);
    }
    return task;
  });
}
