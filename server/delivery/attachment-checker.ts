// Live mode: after creation, every http(s) attachment of a task is fetched (through the SSRF
// guard), and every bucket attachment (s3://, gs://) asked for with the account's connection. A non-200 answer, a timeout or a refused address moves the task to `error` with the
// attachment-error callback. The due time is stored on the task, so a restart loses no check.
import type { Logger } from 'pino';
import { attachmentUrls, bucketObject, type BucketObject } from '../domain/attachments.ts';
import type { Task } from '../domain/model.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import { finishAttachmentCheck, type FailedAttachment } from '../domain/task-changes.ts';
import { checkObject } from '../storage/s3.ts';
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

/** An object of the account's bucket: asked for with the connection's keys (HeadObject). */
async function checkBucketObject(uow: UnitOfWork, task: Task, url: string, object: BucketObject, options: AttachmentCheckerOptions) {
  const access = await uow.storage.forBucket(task.accountId, task.mode, object.provider, object.bucket);
  if (!access) return { url, statusCode: 0, reason: `no storage connection to bucket ${object.bucket}` };
  const failed = await checkObject(access, object.key, {
    allowPrivateNetworks: options.allowPrivateNetworks,
    timeoutMs: options.timeoutMs,
  });
  return failed && { url, ...failed };
}

async function check(uow: UnitOfWork, task: Task, fetch: Fetch, options: AttachmentCheckerOptions): Promise<FailedAttachment[]> {
  const results = await Promise.all(
    attachmentUrls(task.params).map(async (url): Promise<FailedAttachment | null> => {
      const object = bucketObject(url);
      if (object) return checkBucketObject(uow, task, url, object, options);
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
            await finishAttachmentCheck(uow, task, await check(uow, task, fetch, options), new Date());
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
