// Handlers of the task operations (tags Tasks and Task creation), shared by both generations: the
// generation's views make the difference.
import { type Clock, wallClock } from '../domain/clock.ts';
import { IdempotencyKeyBusy } from '../domain/idempotency.ts';
import type { Generation, Json, Task } from '../domain/model.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import type { WorkSettings } from '../domain/workforce/work.ts';
import type { IdentitySettings } from '../domain/workforce/identity.ts';
import type { StorageSettings } from '../storage/s3.ts';
import type { TransferDeps } from '../transfer/settings.ts';
import type { ResultLinks } from '../results/files.ts';
import { listTaskCallbacks, redeliverTaskCallback } from '../domain/task-callbacks.ts';
import {
  addTaskTags,
  auditTask,
  cancelTask,
  deleteTaskUniqueId,
  cancelMatchingTasks,
  removeTaskTags,
  setTaskMetadata,
  setTaskUniqueId,
} from '../domain/task-changes.ts';
import { createTask } from '../domain/task-creation.ts';
import { getTask, listTasks, type TaskPage } from '../domain/task-reads.ts';
import type { IdentityDeps } from './identity-deps.ts';
import type { RequestHandler } from 'express';
import { loadContract, type Contract } from './contract.ts';
import { canonicalType } from '../domain/type-names.ts';
import { flag, taskFilters } from './filters.ts';
import { HttpError } from './errors.ts';
import { concurrentAnswer, ownerOf, Replay } from './idempotency.ts';
import { noteActivity } from './activity.ts';
import type { OperationRequest, Operations } from './typed.ts';
import { callbackHistoryView, type ListShape } from './views/tasks.ts';

export interface HandlerDeps {
  uow: UnitOfWork;
  contract: Contract;
  /** Worker passwords (the current generation's tag Workforce creates workers); defaults when absent. */
  identity?: IdentitySettings;
  /** The work loop's settings (a customer's rejecting audit of a live task opens a redo); defaults when absent. */
  work?: WorkSettings;
  /** Members, sessions, single sign-on (tag Identity); defaults (nothing mailed, no SSO) when absent. */
  identityDeps?: IdentityDeps | undefined;
  /** Imports and exports (config.transfer); none: the server answers them 503... see http/transfer.ts. */
  transfer?: TransferDeps;
  /** Customers' buckets (config.storage); defaults when absent. */
  storage?: StorageSettings;
  /** Responses kept as files: their links and settings (config.results); defaults when absent. */
  results?: ResultLinks;
  /** The server's clock (domain/clock.ts): what a handler records as now; the wall clock when absent. */
  now?: Clock;
}

/** The request of an operation whose types are the same in both generations. */
type Shared<Id extends keyof Operations['current'] & keyof Operations['legacy']> = OperationRequest<Operations['current'][Id]>;

/** A creation request: the body as the client sent it, its path naming the type. */
export type CreationRequest = Pick<OperationRequest<unknown>, 'caller' | 'route' | 'idempotency' | 'liveRequest'> & {
  body: Json | undefined;
};

/** The list query of either generation (the older one has `offset` and fewer statuses). */
type TaskListQuery = Omit<NonNullable<Operations['current']['listTasks']['parameters']['query']>, 'status'> &
  Pick<NonNullable<Operations['legacy']['listTasks']['parameters']['query']>, 'offset'> & { status?: Task['status'][] };

/** How a generation shows tasks and pages their list. */
export interface TaskViews<TaskWire, ListWire> {
  task(task: Task): TaskWire;
  list(page: TaskPage, limit: number, offset: number, shape: ListShape): ListWire;
  /** By offset (older) or by next_token (current). */
  pagesByOffset: boolean;
}

/**
 * `POST /v1/task/<name>` where this generation creates no type of that name: 404 naming it and the
 * types it creates (and, on the older generation, where a type of the current one is created). The
 * validator alone would answer 405: the path reads as a task's, which takes no POST. A task id (24
 * hex characters) is left to it.
 */
export function unknownCreationTypes(contract: Contract): RequestHandler {
  const typesOf = (c: Contract) => [...new Set([...c.creations.values()].map((op) => op.type))];
  const created = typesOf(contract);
  const currentOnly = new Set(contract.generation === 'legacy' ? typesOf(loadContract('current')).filter((t) => !created.includes(t)) : []);
  return (req, _res, next) => {
    const m = req.method === 'POST' ? /^\/v1\/task\/([^/]+)$/.exec(req.path) : null;
    if (!m?.[1] || contract.creations.has(req.path) || /^[0-9a-f]{24}$/.test(m[1])) return next();
    let name = m[1];
    try {
      name = decodeURIComponent(name);
    } catch {
      // Shown as sent.
    }
    const elsewhere = currentOnly.has(canonicalType(name))
      ? ` ${canonicalType(name)} tasks are created through the current generation (POST /v1/task/${name}, without /legacy).`
      : '';
    next(
      new HttpError(404, `Unknown task type "${name}": this generation creates ${created.join(', ')} (POST /v1/task/<type>).${elsewhere}`),
    );
  };
}

export function taskHandlers<TaskWire, ListWire>(
  { uow, contract, work, now = wallClock }: HandlerDeps,
  views: TaskViews<TaskWire, ListWire>,
) {
  const gen: Generation = contract.generation;

  /** Every task creation operation: the path names the type. */
  const create = async ({ route, body, caller, idempotency, liveRequest }: CreationRequest): Promise<TaskWire | Replay> => {
    const op = contract.creations.get(route);
    if (!op) throw new HttpError(404, 'Not found: no such endpoint.');
    let view: TaskWire | undefined;
    try {
      await createTask(uow, {
        caller,
        generation: gen,
        type: op.type,
        body: body ?? {},
        paramNames: op.paramNames,
        checkMerged: op.checkMerged,
        now: now(),
        idempotency,
        countLiveRequest: liveRequest?.counted === false,
        render: (task) => {
          view = views.task(task);
          return { statusCode: 200, body: JSON.stringify(view) };
        },
      });
      if (liveRequest) liveRequest.counted = true;
      if (view === undefined) throw new Error('createTask did not render the created task.');
      return view;
    } catch (err) {
      if (!(err instanceof IdempotencyKeyBusy) || !idempotency) throw err;
      // The creating statement ran (and counted the request); the key was held by another request.
      if (liveRequest) liveRequest.counted = true;
      return new Replay(await concurrentAnswer(uow, ownerOf(caller, idempotency), idempotency));
    }
  };

  return {
    create,
    getTask: async ({ path, caller }: Shared<'getTask'>) => views.task(await getTask(uow, caller, path.taskId, now())),
    async listTasks({ query: q, caller }: { query: TaskListQuery; caller: Shared<'listTasks'>['caller'] }) {
      const filters = taskFilters(q, gen);
      const limit = q.limit ?? 100;
      const offset = views.pagesByOffset ? (q.offset ?? 0) : undefined;
      // The shape flags change no match: a next_token stays bound to the filters alone.
      const { limit: _l, offset: _o, next_token: _n, include_attachment_url: _a, limited_response: _r, ...filterParams } = q;
      const page = await listTasks(uow, {
        caller,
        filters,
        limit,
        ...(offset !== undefined ? { offset } : {}),
        ...(typeof q.next_token === 'string' ? { nextToken: q.next_token } : {}),
        filterKey: JSON.stringify(
          Object.entries(filterParams)
            // A filter of one value is bound as the value itself, as before list filters took several:
            // a next_token issued then stays valid.
            .map(([name, value]): [string, unknown] => [
              name,
              Array.isArray(value) && value.length === 1 && name !== 'tags' ? value[0] : value,
            ])
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        ),
      });
      return views.list(page, limit, offset ?? 0, { attachmentUrl: flag(q.include_attachment_url), limited: flag(q.limited_response) });
    },
    /** Current generation only (handlers.ts): the list's filters, up to `limit` pending tasks canceled. */
    async cancelTasks({ query: q, caller }: OperationRequest<Operations['current']['cancelTasks']>) {
      const { limit: _l, clear_unique_id: _c, ...filterParams } = q;
      const { taskIds, hasMore } = await cancelMatchingTasks(
        uow,
        caller,
        taskFilters(filterParams, gen),
        q.limit ?? 100,
        flag(q.clear_unique_id),
        now(),
      );
      noteActivity({ details: { canceled: taskIds.length, filters: filterParams } });
      return { canceled: taskIds.length, task_ids: taskIds, has_more: hasMore };
    },
    async cancelTask({ path, query, caller }: Shared<'cancelTask'>) {
      const clear = flag(query.clear_unique_id);
      return views.task(await cancelTask(uow, caller, path.taskId, clear, now()));
    },
    setTaskMetadata: async ({ path, body, caller }: Shared<'setTaskMetadata'>) =>
      views.task(await setTaskMetadata(uow, caller, path.taskId, body, now())),
    setTaskUniqueId: async ({ path, body, caller }: Shared<'setTaskUniqueId'>) =>
      views.task(await setTaskUniqueId(uow, caller, path.taskId, body.unique_id, now())),
    deleteTaskUniqueId: async ({ path, caller }: Shared<'deleteTaskUniqueId'>) =>
      views.task(await deleteTaskUniqueId(uow, caller, path.taskId, now())),
    addTaskTags: async ({ path, body, caller }: Shared<'addTaskTags'>) =>
      views.task(await addTaskTags(uow, caller, path.taskId, body, now())),
    putTaskTags: async ({ path, body, caller }: Shared<'putTaskTags'>) =>
      views.task(await addTaskTags(uow, caller, path.taskId, body, now())),
    removeTaskTags: async ({ path, body, caller }: Shared<'removeTaskTags'>) =>
      views.task(await removeTaskTags(uow, caller, path.taskId, body ?? [], now())),
    listTaskCallbacks: async ({ path, caller }: Shared<'listTaskCallbacks'>) =>
      callbackHistoryView(await listTaskCallbacks(uow, caller, path.taskId)),
    redeliverTaskCallback: async ({ path, caller }: Shared<'redeliverTaskCallback'>) =>
      views.task(await redeliverTaskCallback(uow, caller, path.taskId, now())),
    auditTask: async ({ path, body, caller }: Shared<'auditTask'>) =>
      views.task(await auditTask(uow, caller, path.taskId, body, now(), work)),
  };
}
