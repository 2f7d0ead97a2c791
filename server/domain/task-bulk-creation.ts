// Many creations at once: an import's group of lines (issue 36), each by the rules of a single
// creation (task-creation.ts), written together.
import { assertTypeEnabled } from './accounts.ts';
import { DomainError } from './errors.ts';
import type { Caller, Json, Task } from './model.ts';
import type { OutboxMessage, Repositories } from './ports.ts';
import { taskCallback } from './outbox.ts';
import { newTask } from './task-creation.ts';
import { startTestCompletion } from './test-completion.ts';

/** A line of an import, its body checked against the contract (as a creation request's is). */
export interface BulkCreation {
  type: string;
  /** The creation body: the line's own, over the import's project, batch and params. */
  body: Json;
  paramNames: ReadonlySet<string>;
  checkMerged: (body: Json) => string | null;
  /** Its creation body's key (type and canonical body), for a body without a unique_id; else null. */
  key: string | null;
}

/** How many tasks of a bulk creation go to the database in one statement. */
const BULK_SLICE = 100;

/** What became of each line: a task, a duplicate of an existing one, or the error of its single creation. */
export type BulkOutcome = { created: string } | { duplicate: true } | { refused: DomainError };

/**
 * Reads of a group's projects and batches once (the group runs in one transaction: a batch read
 * for update stays locked, and the object read is the one joined and changed).
 */
function readOnce(repos: Repositories): Repositories {
  const cached = <A extends unknown[], R>(read: (...args: A) => Promise<R>) => {
    const seen = new Map<string, Promise<R>>();
    return (...args: A) => {
      const key = JSON.stringify(args.slice(0, 3));
      const known = seen.get(key);
      if (known) return known;
      const value = read(...args);
      seen.set(key, value);
      return value;
    };
  };
  return {
    ...repos,
    projects: { ...repos.projects, get: cached(repos.projects.get), paramVersions: cached(repos.projects.paramVersions) },
    batches: { ...repos.batches, get: cached(repos.batches.get) },
  };
}

/**
 * Creates the tasks of many creation bodies in the caller's transaction, each by the rules of
 * `createTask` (batch and project applied, parameter rules, test-mode completion and callback,
 * live work) and each its own outcome: a line whose unique_id is held, or whose key was imported
 * before (in this group too), is a duplicate; a line the rules refuse is refused with the error its
 * single creation would get. The tasks are written together. A batch a task joined is settled by
 * the caller (once, when its import ends), not here.
 */
export async function createTasksInBulk(
  txRepos: Repositories,
  caller: Caller,
  lines: BulkCreation[],
  now: Date,
): Promise<{ outcomes: BulkOutcome[]; batches: Set<string> }> {
  const repos = readOnce(txRepos);
  const { accountId } = caller.account;
  const uniqueIds = lines.map((l) => l.body.unique_id).filter((u): u is string => typeof u === 'string');
  const keys = lines.map((l) => l.key).filter((k): k is string => k !== null);
  const [heldIds, heldKeys] = await Promise.all([
    uniqueIds.length ? repos.tasks.heldUniqueIds(accountId, caller.mode, uniqueIds) : new Set<string>(),
    keys.length ? repos.transfer.heldImportKeys(accountId, caller.mode, keys) : new Set<string>(),
  ]);
  const outcomes: BulkOutcome[] = [];
  const newKeys: { key: string; taskId: string }[] = [];
  const batches = new Set<string>();
  // The tasks go to the database a slice at a time, each slice's statement sent before the next is
  // built: the database writes one slice while this process builds the next (issue 36's bench).
  const writes: Promise<void>[] = [];
  let slice: Task[] = [];
  let callbacks: OutboxMessage[] = [];
  const send = async () => {
    if (slice.length === 0) return;
    const written = repos.tasks.createMany(slice, callbacks, caller.mode === 'live' ? slice.length : 0);
    // Awaited below, with the others: a slice refused meanwhile is no unhandled rejection.
    written.catch(() => {});
    writes.push(written);
    slice = [];
    callbacks = [];
    await new Promise((resolve) => setImmediate(resolve));
  };
  for (const line of lines) {
    const uniqueId = typeof line.body.unique_id === 'string' ? line.body.unique_id : null;
    if ((uniqueId !== null && heldIds.has(uniqueId)) || (uniqueId === null && line.key !== null && heldKeys.has(line.key))) {
      outcomes.push({ duplicate: true });
      continue;
    }
    let task: Task;
    try {
      assertTypeEnabled(caller, line.type);
      task = await newTask(repos, {
        caller,
        generation: 'current',
        type: line.type,
        body: line.body,
        paramNames: line.paramNames,
        now,
        checkMerged: line.checkMerged,
        render: () => ({ statusCode: 200, body: '' }),
      });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      outcomes.push({ refused: err });
      continue;
    }
    // Held from here on: a later line of the group with the same unique_id or body is a duplicate.
    if (uniqueId !== null) heldIds.add(uniqueId);
    else if (line.key !== null) {
      heldKeys.add(line.key);
      newKeys.push({ key: line.key, taskId: task.taskId });
    }
    if (caller.mode === 'test' && startTestCompletion(task, caller.account.testCompletionDelayMs, now)) {
      const callback = taskCallback(repos.payloads, task, caller.account.defaultCallbackUrl, now);
      if (callback) callbacks.push(callback);
    }
    if (task.batch !== null) batches.add(task.batch);
    slice.push(task);
    outcomes.push({ created: task.taskId });
    if (slice.length >= BULK_SLICE) await send();
  }
  await send();
  for (const written of writes) await written;
  if (newKeys.length) await repos.transfer.addImportKeys(accountId, caller.mode, newKeys);
  return { outcomes, batches };
}
