// Callbacks are queued in the outbox in the same transaction as the change they report; the
// dispatcher (server/delivery) sends them.
import { newTaskId } from './ids.ts';
import type { Json, Mode, Task } from './model.ts';
import type { CallbackPayloads, OutboxMessage, Repositories } from './ports.ts';
import { failedTestAttachments } from './attachments.ts';

export function newOutboxMessage(
  m: { accountId: string; mode: Mode; event: OutboxMessage['event']; subject: string; url: string; payload: Json },
  now: Date,
): OutboxMessage {
  return {
    id: newTaskId(now),
    ...m,
    createdAt: now,
    nextAttemptAt: now,
    attempts: 0,
    firstAttemptAt: null,
    leaseUntil: null,
    deliveredAt: null,
    failedAt: null,
  };
}

/**
 * The callback of a task that was completed (or redone) or ran into an error, to the task's
 * callback_url, else the account's default; null when there is no address. The task is shown as
 * the generation that created it (by `payloads`, the views).
 */
export function taskCallback(
  payloads: CallbackPayloads,
  task: Task,
  defaultCallbackUrl: string | null,
  now: Date,
  attachments: { url: string; statusCode: number }[] = failedTestAttachments(task.params).map((url) => ({ url, statusCode: 404 })),
): OutboxMessage | null {
  const url = task.callbackUrl ?? defaultCallbackUrl;
  if (!url) return null;
  // An error of failed attachments has its own callback; any other error (a test-mode task's chosen
  // one, decision 19) is sent as a completion, the task in `error` with its `{error}` response.
  const failed = task.status === 'error' && attachments.length > 0;
  const payload = failed ? payloads.attachmentError(task, attachments) : payloads.taskCompleted(task);
  return newOutboxMessage(
    {
      accountId: task.accountId,
      mode: task.mode,
      event: failed ? 'attachment_error' : 'task_completed',
      subject: task.taskId,
      url,
      payload,
    },
    now,
  );
}

/** Queues the callback of a task (see taskCallback); false when there is no address to send to. */
export async function queueTaskCallback(
  repos: Repositories,
  task: Task,
  now: Date,
  attachments?: { url: string; statusCode: number }[],
): Promise<boolean> {
  const defaultUrl = task.callbackUrl ? null : ((await repos.accounts.findById(task.accountId))?.defaultCallbackUrl ?? null);
  const message = taskCallback(repos.payloads, task, defaultUrl, now, attachments);
  if (message) await repos.outbox.add(message);
  return message !== null;
}

/** Sends the latest callback of a task again, as a new message; false when it had none. */
export async function resendLatestCallback(repos: Repositories, task: Task, now: Date): Promise<boolean> {
  const latest = (await repos.outbox.forSubject(task.accountId, task.taskId)).filter((m) => m.event !== 'batch_completed').at(-1);
  if (!latest) return false;
  await repos.outbox.add(
    newOutboxMessage(
      {
        accountId: latest.accountId,
        mode: latest.mode,
        event: latest.event,
        subject: latest.subject,
        url: latest.url,
        payload: latest.payload,
      },
      now,
    ),
  );
  return true;
}
