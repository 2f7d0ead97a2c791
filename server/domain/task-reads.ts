// Reading tasks: one task (a due test-mode task is completed first), and the pages of the list
// with their next_token.
import { notFound } from './errors.ts';
import { positionToken, queryBinding, readPositionToken } from './page-token.ts';
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
  const binding = queryBinding(['tasks', caller.account.accountId, caller.mode, input.filterKey]);
  let page: PageRequest;
  let carried: number | undefined;
  if (input.offset !== undefined) {
    page = { limit: input.limit, offset: input.offset };
  } else {
    const position = input.nextToken ? readPositionToken(input.nextToken, binding, /^[0-9a-f]{24}$/) : null;
    carried = position ? position.count : 0;
    // A token of an older server carries no running count: the store counts the tasks before it.
    page = {
      limit: input.limit,
      after: position ? { createdAt: position.at, taskId: position.id } : null,
      ...(position && position.count === undefined ? { countBefore: true } : {}),
    };
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
    ...(hasMore && last && input.offset === undefined
      ? { nextToken: positionToken({ at: last.createdAt, id: last.taskId, count: offset + pageTasks.length }, binding) }
      : {}),
  };
}
