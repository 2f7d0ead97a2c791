import type { CallbackPayloads, ResultWriter, Repositories, UnitOfWork } from '../domain/ports.ts';
import type { Task } from '../domain/model.ts';
import type { Database, Execute, Store } from './db.ts';
import type { SecretBox } from './secrets.ts';
import { executeIn } from './rows.ts';
import { workRepository } from './work.ts';
import { storageRepository } from './storage.ts';
import { transferRepository } from './transfer.ts';
import { workerRepository } from './workers.ts';
import { qualityRepository } from './quality.ts';
import { qualificationRepository } from './qualification.ts';
import { countsRepository } from './counts.ts';
import { overviewRepository } from './overview.ts';
import { identityRepositories } from './identity.ts';
import { taskRepository } from './tasks.ts';
import { idempotencyRepository } from './idempotency.ts';
import { batchRepository, projectRepository } from './projects.ts';
import { trainingRepository } from './training.ts';
import { outboxRepository } from './outbox.ts';
import { accountRepository } from './accounts.ts';

function repositories(
  db: Database,
  execute: Execute,
  secrets: SecretBox,
  payloads: CallbackPayloads,
  results: ResultWriter | undefined,
  afterCommit: Map<string, Task> | null,
): Repositories {
  // A completed task's response files (decision record 24) are written outside any transaction:
  // after the statement that wrote the task, or, in a transaction, once it has committed (the last
  // state of each task; unitOfWork below). A transaction that rolls back writes none.
  const writeFiles = async (list: Task[]) => {
    if (!results) return;
    for (const task of list) {
      if (!results.wanted(task)) afterCommit?.delete(task.taskId);
      else if (afterCommit) afterCommit.set(task.taskId, structuredClone(task));
      else await results.writeAndRecord(task, repos).catch((err: unknown) => results.failed(task, err));
    }
  };
  const repos: Repositories = {
    payloads,
    work: workRepository(db, execute),
    workers: workerRepository(db),
    quality: qualityRepository(db, execute),
    qualification: qualificationRepository(db, execute),
    counts: countsRepository(execute),
    overview: overviewRepository(execute),
    ...identityRepositories(db, secrets),
    transfer: transferRepository(db, execute),
    storage: storageRepository(db, secrets),
    tasks: taskRepository(db, execute, writeFiles),
    idempotency: idempotencyRepository(db, execute),
    projects: projectRepository(db),
    batches: batchRepository(db, execute),
    training: trainingRepository(db),
    outbox: outboxRepository(db, execute, secrets),
    accounts: accountRepository(db, execute, secrets),
  };
  return repos;
}
/** For a unit of work that queues no callback (a tool that only reads or seeds): asking for a payload is a bug. */
const noPayloads = () => {
  throw new Error('This unit of work was opened without callback payloads (unitOfWork(store, payloads)).');
};
const noCallbackPayloads: CallbackPayloads = { taskCompleted: noPayloads, attachmentError: noPayloads, batchCompleted: noPayloads };

/**
 * The repositories on a store. `payloads` renders queued callbacks (the HTTP layer's views, which
 * the store does not know: the composition root passes them in).
 */
export function unitOfWork(store: Store, payloads: CallbackPayloads = noCallbackPayloads, results?: ResultWriter): UnitOfWork {
  const outside = repositories(store.db, store.execute, store.secrets, payloads, results, null);
  return {
    ...outside,
    async transaction(work) {
      // The response files of the tasks the transaction completed, written once it has committed
      // (decision record 24): a slow bucket holds no connection (PGlite has only one).
      const afterCommit = new Map<string, Task>();
      const answer = await store.db.transaction((tx) => {
        const db = tx as unknown as Database;
        return work(repositories(db, executeIn(db), store.secrets, payloads, results, afterCommit));
      });
      for (const task of afterCommit.values())
        await results?.writeAndRecord(task, outside).catch((err: unknown) => results.failed(task, err));
      return answer;
    },
  };
}
