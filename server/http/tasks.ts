// Handlers of the task operations (tags Tasks and Task creation), shared by both generations: the
// generation's views make the difference.
import { IdempotencyKeyBusy } from '../domain/idempotency.ts';
import { invalid } from '../domain/errors.ts';
import type { Generation, Json, Task } from '../domain/model.ts';
import type { TaskFilters, UnitOfWork } from '../domain/ports.ts';
import type { WorkSettings } from '../domain/workforce/work.ts';
import type { IdentitySettings } from '../domain/workforce/identity.ts';
import {
  addTaskTags,
  auditTask,
  cancelTask,
  createTask,
  deleteTaskUniqueId,
  getTask,
  listTaskCallbacks,
  listTasks,
  cancelMatchingTasks,
  redeliverTaskCallback,
  removeTaskTags,
  setTaskMetadata,
  setTaskUniqueId,
  type TaskPage,
} from '../domain/tasks.ts';
import type { Contract } from './contract.ts';
import type { IdentityDeps } from './identity-deps.ts';
import { HttpError } from './errors.ts';
import { concurrentAnswer } from './idempotency.ts';
import { noteActivity } from './activity.ts';
import { Replay, type OperationRequest, type Operations } from './typed.ts';
import { callbackHistoryView, statusesFor, type ListShape } from './views/tasks.ts';

export interface HandlerDeps {
  uow: UnitOfWork;
  contract: Contract;
  /** Worker passwords (the current generation's tag Workforce creates workers); defaults when absent. */
  identity?: IdentitySettings;
  /** The work loop's settings (a customer's rejecting audit of a live task opens a redo); defaults when absent. */
  work?: WorkSettings;
  /** Members, sessions, single sign-on (tag Identity); defaults (nothing mailed, no SSO) when absent. */
  identityDeps?: IdentityDeps | undefined;
}

/** The request of an operation whose types are the same in both generations. */
type Shared<Id extends keyof Operations['current'] & keyof Operations['legacy']> = OperationRequest<Operations['current'][Id]>;

/** A creation request: the body as the client sent it, its path naming the type. */
export type CreationRequest = Pick<OperationRequest<unknown>, 'caller' | 'route' | 'idempotency' | 'liveRequest'> & {
  body: Json | undefined;
};

/** The list filters of either generation (the older one has `offset` and fewer statuses). */
type TaskListQuery = Omit<NonNullable<Operations['current']['listTasks']['parameters']['query']>, 'status'> &
  Pick<NonNullable<Operations['legacy']['listTasks']['parameters']['query']>, 'offset'> & { status?: Task['status'] };

/** How a generation shows tasks and pages their list. */
export interface TaskViews<TaskWire, ListWire> {
  task(task: Task): TaskWire;
  list(page: TaskPage, limit: number, offset: number, shape: ListShape): ListWire;
  /** By offset (older) or by next_token (current). */
  pagesByOffset: boolean;
}

// The contract's TimeFilter pattern, read: date, then optionally `T` or a space, the time, seconds,
// a fraction and an offset (`Z`, `+01:00`, `+0100`, `+01`; a space for the sign is a `+` that form
// decoding turned into a space). Whatever the pattern accepts is read here.
const timeFilter =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+ -])(\d{2})(?::?(\d{2}))?)?)?$/;
// What the database stores (PostgreSQL has no year 0 and ISO strings past 9999 need a sign).
const firstStored = Date.parse('0001-01-01T00:00:00.000Z');
const lastStored = Date.parse('9999-12-31T23:59:59.999Z');

export function parseTimeFilter(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  const m = timeFilter.exec(text);
  if (!m) throw invalid(`${name} is not a date or date-time: "${text}".`);
  const [, y, mo, d, h = '0', mi = '0', sec = '0', fraction = '', , sign, oh = '0', om = '0'] = m;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: that maps years 0-99 to 1900-1999.
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  // Date rolls 2026-02-30 over to March 2; such a date does not exist.
  if (date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d))
    throw invalid(`${name} is not a date or date-time: "${text}".`);
  date.setUTCHours(Number(h), Number(mi), Number(sec), Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offsetMinutes = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  const time = date.getTime() - offsetMinutes * 60_000;
  if (time < firstStored || time > lastStored) {
    throw invalid(`${name} is outside the times the service stores (0001-01-01 to 9999-12-31 UTC): "${text}".`);
  }
  return new Date(time);
}

const latest = (a: Date | undefined, b: Date | undefined) => (a && b ? (a > b ? a : b) : (a ?? b));
const earliest = (a: Date | undefined, b: Date | undefined) => (a && b ? (a < b ? a : b) : (a ?? b));
/** A query boolean (`true`/`false` in any letter case, checked by the contract). */
export const flag = (value: string | undefined) => String(value ?? 'false').toLowerCase() === 'true';

/** Repeated keys and comma-joined values alike (`tags=a&tags=b,c`). */
const listOf = (value: string | string[] | undefined): string[] | undefined => {
  if (value === undefined) return undefined;
  const items = (Array.isArray(value) ? value : [value])
    .flatMap((v) => String(v).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
};

export function taskHandlers<TaskWire, ListWire>({ uow, contract, work }: HandlerDeps, views: TaskViews<TaskWire, ListWire>) {
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
        now: new Date(),
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
      return new Replay(await concurrentAnswer(uow, caller, idempotency));
    }
  };

  return {
    create,
    getTask: async ({ path, caller }: Shared<'getTask'>) => views.task(await getTask(uow, caller, path.taskId, new Date())),
    async listTasks({ query: q, caller }: { query: TaskListQuery; caller: Shared<'listTasks'>['caller'] }) {
      const filters = taskFilters(gen, q);
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
        filterKey: JSON.stringify(Object.entries(filterParams).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      });
      return views.list(page, limit, offset ?? 0, { attachmentUrl: flag(q.include_attachment_url), limited: flag(q.limited_response) });
    },
    /** Current generation only (handlers.ts): the list's filters, up to `limit` pending tasks canceled. */
    async cancelTasks({ query: q, caller }: OperationRequest<Operations['current']['cancelTasks']>) {
      const { limit: _l, clear_unique_id: _c, ...filterParams } = q;
      const { taskIds, hasMore } = await cancelMatchingTasks(
        uow,
        caller,
        taskFilters(gen, filterParams),
        q.limit ?? 100,
        flag(q.clear_unique_id),
        new Date(),
      );
      noteActivity({ details: { canceled: taskIds.length, filters: filterParams as Json } });
      return { canceled: taskIds.length, task_ids: taskIds, has_more: hasMore };
    },
    async cancelTask({ path, query, caller }: Shared<'cancelTask'>) {
      const clear = flag(query.clear_unique_id);
      return views.task(await cancelTask(uow, caller, path.taskId, clear, new Date()));
    },
    setTaskMetadata: async ({ path, body, caller }: Shared<'setTaskMetadata'>) =>
      views.task(await setTaskMetadata(uow, caller, path.taskId, body, new Date())),
    setTaskUniqueId: async ({ path, body, caller }: Shared<'setTaskUniqueId'>) =>
      views.task(await setTaskUniqueId(uow, caller, path.taskId, body.unique_id, new Date())),
    deleteTaskUniqueId: async ({ path, caller }: Shared<'deleteTaskUniqueId'>) =>
      views.task(await deleteTaskUniqueId(uow, caller, path.taskId, new Date())),
    addTaskTags: async ({ path, body, caller }: Shared<'addTaskTags'>) =>
      views.task(await addTaskTags(uow, caller, path.taskId, body, new Date())),
    putTaskTags: async ({ path, body, caller }: Shared<'putTaskTags'>) =>
      views.task(await addTaskTags(uow, caller, path.taskId, body, new Date())),
    removeTaskTags: async ({ path, body, caller }: Shared<'removeTaskTags'>) =>
      views.task(await removeTaskTags(uow, caller, path.taskId, body ?? [], new Date())),
    listTaskCallbacks: async ({ path, caller }: Shared<'listTaskCallbacks'>) =>
      callbackHistoryView(await listTaskCallbacks(uow, caller, path.taskId)),
    redeliverTaskCallback: async ({ path, caller }: Shared<'redeliverTaskCallback'>) =>
      views.task(await redeliverTaskCallback(uow, caller, path.taskId, new Date())),
    auditTask: async ({ path, body, caller }: Shared<'auditTask'>) =>
      views.task(await auditTask(uow, caller, path.taskId, body, new Date(), work)),
  };
}

/** The list's filters as the domain takes them (times parsed; `created_*` are the `*_time` bounds by other names). */
function taskFilters(
  gen: Generation,
  q: Omit<TaskListQuery, 'limit' | 'offset' | 'next_token' | 'include_attachment_url' | 'limited_response'>,
): TaskFilters {
  const filters: TaskFilters = {
    // created_after/created_before are start_time/end_time by other names: both bounds apply.
    startTime: latest(parseTimeFilter('start_time', q.start_time), parseTimeFilter('created_after', q.created_after)),
    endTime: earliest(parseTimeFilter('end_time', q.end_time), parseTimeFilter('created_before', q.created_before)),
    statuses: q.status === undefined ? undefined : statusesFor(gen, q.status),
    type: q.type,
    project: q.project,
    batch: q.batch,
    uniqueId: q.unique_id,
    tags: listOf(q.tags),
    customerReviewStatus: q.customer_review_status,
    completedAfter: parseTimeFilter('completed_after', q.completed_after),
    completedBefore: parseTimeFilter('completed_before', q.completed_before),
    updatedAfter: parseTimeFilter('updated_after', q.updated_after),
    updatedBefore: parseTimeFilter('updated_before', q.updated_before),
  };
  for (const key of Object.keys(filters) as (keyof TaskFilters)[]) if (filters[key] === undefined) delete filters[key];
  return filters;
}
