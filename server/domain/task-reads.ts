// Reading tasks: one task (a due test-mode task is completed first), and the pages of the list
// with their next_token.
import { invalid, notFound } from './errors.ts';
import { sha256 } from './ids.ts';
import type { Caller, Task } from './model.ts';
import type { PageRequest, Repositories, TaskFilters, UnitOfWork } from './ports.ts';
import { isDueTestTask, settleDueTestTask } from './test-completion.ts';

/** A task of the caller's account and mode; not_found when there is none. */
export async function taskById(repos: Repositories, caller: Caller, taskId: string, forUpdate = false): Promise<Task> {
  const task = await repos.tasks.get(caller.account.accountId, caller.mode, taskId, { forUpdate });
  if (!task) throw notFound(`Task ${taskId} not found.`);
  return task;
}

export async function lockedTask(repos: Repositories, caller: Caller, taskId: string, now: Date): Promise<Task> {
  return settleDueTestTask(repos, await taskById(repos, caller, taskId, true), now);
}

export async function getTask(uow: UnitOfWork, caller: Caller, taskId: string, now: Date): Promise<Task> {
  // A plain read, unless the task is a test-mode task due for completion: then it is completed first.
  const task = await taskById(uow, caller, taskId);
  if (!isDueTestTask(task, now)) return task;
  return uow.transaction((repos) => lockedTask(repos, caller, taskId, now));
}

export interface ListTasksInput {
  caller: Caller;
  filters: TaskFilters;
  limit: number;
  /** Older generation: results to skip. Current generation: the token of the previous page. */
  offset?: number;
  nextToken?: string;
  /** A canonical form of the filters as the client gave them (binds the token to them). */
  filterKey: string;
}

export interface TaskPage {
  tasks: Task[];
  total: number;
  /** The matching tasks before this page: the offset skipped, or the running count a next_token carries. */
  offset: number;
  hasMore: boolean;
  nextToken?: string;
}

export async function listTasks(uow: UnitOfWork, input: ListTasksInput): Promise<TaskPage> {
  const { caller } = input;
  const binding = sha256(`${caller.account.accountId}\n${caller.mode}\n${input.filterKey}`).slice(0, 16);
  let page: PageRequest;
  let carried: number | undefined;
  if (input.offset !== undefined) {
    page = { limit: input.limit, offset: input.offset };
  } else {
    const position = input.nextToken ? decodeToken(input.nextToken, binding) : null;
    carried = position ? position.offset : 0;
    // A token of an older server carries no running count: the store counts the tasks before it.
    page = { limit: input.limit, after: position, ...(position && position.offset === undefined ? { countBefore: true } : {}) };
  }
  const { tasks, total, before } = await uow.tasks.list(caller.account.accountId, caller.mode, input.filters, page);
  const hasMore = tasks.length > input.limit;
  const pageTasks = tasks.slice(0, input.limit);
  const last = pageTasks.at(-1);
  const offset = input.offset ?? carried ?? before;
  return {
    tasks: pageTasks,
    total,
    offset,
    hasMore,
    ...(hasMore && last && input.offset === undefined ? { nextToken: encodeToken(last, offset + pageTasks.length, binding) } : {}),
  };
}

// next_token: the position (created_at, task_id) of the page's last task and the running count of
// the tasks up to it, bound to the account, mode and filters by a hash, so that it cannot be reused
// elsewhere. Tasks created during a walk sort before its position and change neither.
function encodeToken(last: Task, offset: number, binding: string): string {
  return Buffer.from(JSON.stringify({ c: last.createdAt.getTime(), i: last.taskId, o: offset, b: binding })).toString('base64url');
}

/** A token's position and running count (undefined in a token of an older server: the store counts). */
function decodeToken(token: string, binding: string): { createdAt: Date; taskId: string; offset: number | undefined } {
  let decoded: { c?: unknown; i?: unknown; o?: unknown; b?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('next_token is not a token of this API.');
  }
  if (typeof decoded.c !== 'number' || typeof decoded.i !== 'string' || !/^[0-9a-f]{24}$/.test(decoded.i)) {
    throw invalid('next_token is not a token of this API.');
  }
  if (decoded.b !== binding) {
    throw invalid('next_token belongs to another query: repeat the request with the same filters and API key.');
  }
  const offset = Number.isSafeInteger(decoded.o) && (decoded.o as number) >= 0 ? (decoded.o as number) : undefined;
  return { createdAt: new Date(decoded.c), taskId: decoded.i, offset };
}
