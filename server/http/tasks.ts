// Handlers of the task operations (tag Tasks and Task creation), for either generation.
import type { Request, Response } from 'express';
import type { components, operations as CurrentOperations } from '../../generated/current.ts';
import type { operations as LegacyOperations } from '../../generated/legacy.ts';
import { invalid } from '../domain/errors.ts';
import type { Generation, Json, Task } from '../domain/model.ts';
import type { TaskFilters, UnitOfWork } from '../domain/ports.ts';
import {
  addTaskTags, auditTask, cancelTask, createTask, deleteTaskUniqueId, getTask, listTaskCallbacks, listTasks,
  redeliverTaskCallback, removeTaskTags, setTaskMetadata, setTaskUniqueId,
} from '../domain/tasks.ts';
import { IdempotencyKeyBusy } from '../domain/idempotency.ts';
import { pagesByOffset, statusesFor, taskListView, taskView } from '../domain/views.ts';
import { callerOf } from './auth.ts';
import type { Contract } from './contract.ts';
import { HttpError } from './errors.ts';
import { replayConcurrentAnswer, type IdempotencyContext } from './idempotency.ts';

export type Handler = (req: Request, res: Response) => Promise<void>;
/** Every operationId of the two contracts. */
export type OperationId = keyof CurrentOperations | keyof LegacyOperations;
export type HandlerTable = Partial<Record<OperationId, Handler>>;
type Schemas = components['schemas'];

export interface HandlerDeps {
  uow: UnitOfWork;
  contract: Contract;
}

export const pathParam = (req: Request, name: string): string => { // Stryker disable next-line OptionalChaining: the validator sets req.openapi on every route it matched, and these routes are all matched
  const params = (req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams ?? {};
  return params[name] ?? '';
};

/** A time filter: a plain date (midnight UTC) or a date-time with or without offset (none = UTC). */
export function parseTimeFilter(name: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : /([Zz]|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`;
  const date = new Date(iso);
  // Date() rolls 2026-02-30 over to March 2; such a date does not exist. A rolled-over date always
  // lands on another day of the month (the contract's pattern keeps months 01-12 and days 01-31).
  const sameDay = date.getUTCDate() === Number(text.slice(8, 10));
  if (Number.isNaN(date.getTime()) || (!/[+-]\d{2}:?\d{2}$/.test(text) && !sameDay)) {
    throw invalid(`${name} is not a date or date-time: "${text}".`);
  }
  return date;
}

const listOf = (value: unknown): string[] | undefined => {
  if (value === undefined) return undefined;
  const items = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).map((s) => s.trim()).filter(Boolean);
  return items.length ? items : undefined;
};

export function taskHandlers({ uow, contract }: HandlerDeps): HandlerTable {
  const gen: Generation = contract.generation;
  const send = (res: Response, task: Task) => void res.status(200).json(taskView(task, gen));

  const create: Handler = async (req, res) => {
    const op = contract.creations.get(req.path);
    if (!op) throw new HttpError(404, 'Not found: no such endpoint.');
    const caller = callerOf(res);
    const idem = res.locals.idempotency as IdempotencyContext | undefined;
    let view: Json = {};
    try {
      await createTask(uow, {
        caller,
        generation: gen,
        type: op.type,
        body: (req.body ?? {}) as Json,
        paramNames: op.paramNames,
        checkMerged: op.checkMerged,
        now: new Date(),
        idempotency: idem,
        render: (task) => {
          view = taskView(task, gen);
          return { statusCode: 200, body: JSON.stringify(view) };
        },
      });
      res.status(200).json(view);
    } catch (err) {
      if (!(err instanceof IdempotencyKeyBusy) || !idem) throw err;
      await replayConcurrentAnswer(uow, res, idem);
    }
  };

  const handlers: HandlerTable = {
    async getTask(req, res) {
      send(res, await getTask(uow, callerOf(res), pathParam(req, 'taskId'), new Date()));
    },
    async listTasks(req, res) {
      const q = req.query as Record<string, unknown>;
      const filters: TaskFilters = {
        startTime: parseTimeFilter('start_time', q.start_time),
        endTime: parseTimeFilter('end_time', q.end_time),
        statuses: q.status === undefined ? undefined : statusesFor(gen, String(q.status)),
        type: q.type as string | undefined,
        project: q.project as string | undefined,
        batch: q.batch as string | undefined,
        uniqueId: q.unique_id as string | undefined,
        tags: listOf(q.tags),
        customerReviewStatus: q.customer_review_status as string | undefined,
        completedAfter: parseTimeFilter('completed_after', q.completed_after),
        completedBefore: parseTimeFilter('completed_before', q.completed_before),
        updatedAfter: parseTimeFilter('updated_after', q.updated_after),
        updatedBefore: parseTimeFilter('updated_before', q.updated_before),
      };
      for (const key of Object.keys(filters) as (keyof TaskFilters)[]) if (filters[key] === undefined) delete filters[key];
      const limit = (q.limit as number | undefined) ?? 100;
      const offset = pagesByOffset(gen) ? ((q.offset as number | undefined) ?? 0) : undefined;
      const { limit: _l, offset: _o, next_token: _n, ...filterParams } = q;
      const page = await listTasks(uow, {
        caller: callerOf(res),
        filters,
        limit,
        ...(offset !== undefined ? { offset } : {}),
        ...(typeof q.next_token === 'string' ? { nextToken: q.next_token } : {}),
        filterKey: JSON.stringify(Object.keys(filterParams).sort().map((k) => [k, filterParams[k]])),
      });
      res.status(200).json(taskListView(page, gen, limit, offset ?? 0));
    },
    async cancelTask(req, res) {
      const clear = String(req.query.clear_unique_id ?? 'false').toLowerCase() === 'true';
      send(res, await cancelTask(uow, callerOf(res), pathParam(req, 'taskId'), clear, new Date()));
    },
    async setTaskMetadata(req, res) {
      send(res, await setTaskMetadata(uow, callerOf(res), pathParam(req, 'taskId'), req.body as Schemas['Metadata'], new Date()));
    },
    async setTaskUniqueId(req, res) {
      const { unique_id } = req.body as Schemas['UniqueIdRequest'];
      send(res, await setTaskUniqueId(uow, callerOf(res), pathParam(req, 'taskId'), unique_id, new Date()));
    },
    async deleteTaskUniqueId(req, res) {
      send(res, await deleteTaskUniqueId(uow, callerOf(res), pathParam(req, 'taskId'), new Date()));
    },
    async addTaskTags(req, res) {
      send(res, await addTaskTags(uow, callerOf(res), pathParam(req, 'taskId'), req.body as Schemas['TagList'], new Date()));
    },
    async putTaskTags(req, res) {
      send(res, await addTaskTags(uow, callerOf(res), pathParam(req, 'taskId'), req.body as Schemas['TagList'], new Date()));
    },
    async removeTaskTags(req, res) {
      send(res, await removeTaskTags(uow, callerOf(res), pathParam(req, 'taskId'), (req.body ?? []) as Schemas['TagList'], new Date()));
    },
    async listTaskCallbacks(req, res) {
      res.status(200).json({ docs: await listTaskCallbacks(uow, callerOf(res), pathParam(req, 'taskId')) });
    },
    async redeliverTaskCallback(req, res) {
      send(res, await redeliverTaskCallback(uow, callerOf(res), pathParam(req, 'taskId'), new Date()));
    },
    async auditTask(req, res) {
      send(res, await auditTask(uow, callerOf(res), pathParam(req, 'taskId'), req.body as Schemas['AuditRequest'], new Date()));
    },
  };
  for (const op of contract.creations.values()) handlers[op.operationId as OperationId] = create;
  return handlers;
}
