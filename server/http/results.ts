// GET /v1/task/{taskId}/files/{file} (tag Tasks, current generation): a part of a task's response
// kept as a file (server/results/files.ts, decision record 24). The link's signature and expiry
// and the caller's key are all checked: a link opens one file of one task, for its account and mode.
import { wallClock } from '../domain/clock.ts';
import { createHmac, randomBytes } from 'node:crypto';
import { notFound } from '../domain/errors.ts';
import { getTask } from '../domain/task-reads.ts';
import { readResultFile, resultLinks, type ResultLinks } from '../results/files.ts';
import { defaultStorageSettings } from '../storage/s3.ts';
import { HttpError } from './errors.ts';
import type { HandlerDeps } from './tasks.ts';
import { Download, type OperationRequest, type Operations } from './typed.ts';

type Request<Id extends keyof Operations['current']> = OperationRequest<Operations['current'][Id]>;

/** For an app made without them (a test's, the bench's): the defaults, a key of this process, links to localhost. */
export function defaultResultLinks(): ResultLinks {
  const key = randomBytes(32);
  return resultLinks(
    { inlineMaxBytes: 1024 ** 2, linkMs: 604_800_000, dir: './data/results' },
    (purpose, message) => createHmac('sha256', key).update(`${purpose}\n${message}`).digest('base64url'),
    () => 'http://localhost',
    wallClock,
  );
}

export function resultHandlers({ uow, results, storage = defaultStorageSettings }: HandlerDeps & { results: ResultLinks }) {
  return {
    async getTaskResultFile({ path, query, caller }: Request<'getTaskResultFile'>) {
      const { taskId, file } = path;
      const now = results.now();
      // Another account's or mode's key finds no such task (404), as for any task not its own.
      const task = await getTask(uow, caller, taskId, now);
      const expires = query.expires ?? Number.NaN;
      if (!Number.isSafeInteger(expires) || !results.verify(taskId, file, expires, query.signature ?? ''))
        throw new HttpError(403, 'This result file link is not valid (its signature does not match).');
      if (expires * 1000 <= now.getTime())
        throw new HttpError(403, 'This result file link has expired; read the task again (GET /v1/task/{taskId}) for a new one.');
      const found = file === 'annotations' || file === 'events' ? await readResultFile(uow, task, file, results.settings, storage) : null;
      if (!found) throw notFound(`Task ${taskId} has no ${file} file.`);
      // The file is JSON the server wrote itself: streamed as kept, not parsed and sent again (the
      // typed layer lets only non-JSON answers be a Download, hence the cast).
      return new Download('application/json', found.body) as never;
    },
  };
}
