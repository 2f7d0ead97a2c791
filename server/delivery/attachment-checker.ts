// Live mode: after creation, every http(s) attachment of a task is fetched (through the SSRF
// guard). A non-200 answer, a timeout or a refused address moves the task to `error` with the
// attachment-error callback. The due time is stored on the task, so a restart loses no check.
import type { Logger } from 'pino';
import { attachmentUrls } from '../domain/attachments.ts';
import type { Task } from '../domain/model.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import { finishAttachmentCheck, type FailedAttachment } from '../domain/tasks.ts';
import type { SafeResponse } from './net.ts';
import { createPoller, type Poller } from './poller.ts';

export interface AttachmentCheckerOptions {
  pollMs: number;
  timeoutMs: number;
  /** How long a claimed check is held before another server process may take it over. */
  leaseMs: number;
  concurrency: number;
  allowPrivateNetworks: string[];
}

export type Fetch = (
  url: string,
  options: { method: 'GET'; timeoutMs: number; maxResponseBytes: number; allowPrivateNetworks: string[] },
) => Promise<SafeResponse>;

async function check(task: Task, fetch: Fetch, options: AttachmentCheckerOptions): Promise<FailedAttachment[]> {
  const results = await Promise.all(
    attachmentUrls(task.params).map(async (url): Promise<FailedAttachment | null> => {
      // Only the status matters: the body is not kept (a few bytes are read, then the connection is closed).
      const r = await fetch(url, {
        method: 'GET',
        timeoutMs: options.timeoutMs,
        maxResponseBytes: 1024,
        allowPrivateNetworks: options.allowPrivateNetworks,
      });
      if (r.ok) return r.status === 200 ? null : { url, statusCode: r.status, reason: `HTTP ${r.status}` };
      return { url, statusCode: 0, reason: r.error === 'refused_address' ? 'address not allowed' : r.error.replaceAll('_', ' ') };
    }),
  );
  return results.filter((r): r is FailedAttachment => r !== null);
}

export function startAttachmentChecker(uow: UnitOfWork, fetch: Fetch, options: AttachmentCheckerOptions, logger: Logger): Poller {
  const poller = createPoller({
    name: 'attachment checks',
    pollMs: options.pollMs,
    logger,
    async round() {
      const now = new Date();
      const tasks = await uow.tasks.claimAttachmentChecks(now, new Date(now.getTime() + options.leaseMs), options.concurrency);
      await Promise.all(
        tasks.map(async (task) => {
          try {
            await finishAttachmentCheck(uow, task, await check(task, fetch, options), new Date());
          } catch (err) {
            logger.error({ err, task: task.taskId }, 'attachment check failed');
          }
        }),
      );
      // A full claim: more may be due.
      return tasks.length === options.concurrency;
    },
  });
  poller.start();
  return poller;
}
