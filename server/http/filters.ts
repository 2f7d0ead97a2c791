// The list filters of the API, read in one place: the query values clients send (time filters,
// booleans, list filters in both of their forms, type aliases) made into the domain's filters of
// each list (tasks, batches, projects, training and evaluation tasks). Whatever lists tasks or
// batches (the list operations, and bulk exports) builds its filters here, so that a filter means
// the same everywhere.
import type { RequestHandler } from 'express';
import type { Generation, TaskStatus } from '../domain/model.ts';
import { invalid } from '../domain/errors.ts';
import type { BatchFilters, BatchStatus, TaskFilters, TrainingTaskFilters } from '../domain/ports.ts';
import { canonicalType } from '../domain/type-names.ts';
import type { Contract } from './contract.ts';
import { statusesFor } from './views/tasks.ts';

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

/** The values of a list filter as sent: repeated keys and comma-joined values alike (`tags=a&tags=b,c`), blanks dropped. */
const listItems = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value])
    .flatMap((v) => String(v).split(','))
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The list filters' two forms made one before the contract checks the query: every value of a
 * query parameter the contract types as an array, split at its commas (`status=pending,error` and
 * `status=pending&status=error` alike give `["pending", "error"]`), so that each value is checked
 * against the parameter's item schema (an unknown status → 400 naming it) and its bounds count
 * values, not keys. Express reads the query anew on each access: the split one is set on the request.
 */
export function splitListFilters(contract: Contract): RequestHandler {
  return (req, _res, next) => {
    // Only lists take list filters, and lists are read by GET.
    const lists = req.method === 'GET' ? contract.listQueryParamsOf(req.method, req.path) : undefined;
    if (!lists) return next();
    const query: Record<string, unknown> = req.query;
    let split: Record<string, unknown> | undefined;
    for (const name of lists) {
      if (query[name] === undefined) continue;
      split ??= { ...query };
      split[name] = listItems(query[name]);
    }
    if (split) Object.defineProperty(req, 'query', { value: split, writable: true, configurable: true, enumerable: true });
    next();
  };
}

/** A list filter's values (split already by splitListFilters), or undefined when it was not given or is empty. */
const listOf = (value: readonly string[] | string | undefined): string[] | undefined => {
  if (value === undefined) return undefined;
  const items = listItems(value);
  return items.length ? [...new Set(items)] : undefined;
};

/** A type filter's values, aliases made their types. */
const typesOf = (value: readonly string[] | string | undefined) => {
  const names = listOf(value);
  return names && [...new Set(names.map(canonicalType))];
};

/** Leaves out what was not given, so that equal filters are equal objects. */
function given<F extends object>(filters: F): F {
  for (const key in filters) if (filters[key] === undefined) delete filters[key];
  return filters;
}

// A status filter's values, typed: the validator checked each against the contract's list, so these
// guards narrow and drop nothing.
const taskStatuses: ReadonlySet<string> = new Set<TaskStatus>(['pending', 'completed', 'canceled', 'error']);
const isTaskStatus = (s: string): s is TaskStatus => taskStatuses.has(s);
const batchStatuses: ReadonlySet<string> = new Set<BatchStatus>(['staging', 'in_progress', 'completed']);
const isBatchStatus = (s: string): s is BatchStatus => batchStatuses.has(s);

/** The task list's query of either generation (the older one has fewer statuses). */
export interface TaskListQuery {
  start_time?: string;
  end_time?: string;
  created_after?: string;
  created_before?: string;
  status?: readonly string[] | string;
  type?: readonly string[] | string;
  project?: readonly string[] | string;
  batch?: readonly string[] | string;
  unique_id?: readonly string[] | string;
  tags?: readonly string[] | string;
  customer_review_status?: readonly string[] | string;
  completed_after?: string;
  completed_before?: string;
  updated_after?: string;
  updated_before?: string;
}

/** The filters of a task list as a generation's client gives them (`status` as that generation names statuses). */
export function taskFilters(q: TaskListQuery, generation: Generation): TaskFilters {
  const statuses = listOf(q.status);
  return given({
    // created_after/created_before are start_time/end_time by other names: both bounds apply.
    startTime: latest(parseTimeFilter('start_time', q.start_time), parseTimeFilter('created_after', q.created_after)),
    endTime: earliest(parseTimeFilter('end_time', q.end_time), parseTimeFilter('created_before', q.created_before)),
    statuses: statuses && [...new Set(statuses.filter(isTaskStatus).flatMap((s) => statusesFor(generation, s)))],
    types: typesOf(q.type),
    projects: listOf(q.project),
    batches: listOf(q.batch),
    uniqueIds: listOf(q.unique_id),
    tags: listOf(q.tags),
    customerReviewStatuses: listOf(q.customer_review_status),
    completedAfter: parseTimeFilter('completed_after', q.completed_after),
    completedBefore: parseTimeFilter('completed_before', q.completed_before),
    updatedAfter: parseTimeFilter('updated_after', q.updated_after),
    updatedBefore: parseTimeFilter('updated_before', q.updated_before),
  });
}

/** The batch list's query. */
export interface BatchListQuery {
  project?: readonly string[] | string;
  status?: readonly BatchStatus[] | BatchStatus;
  start_time?: string;
  end_time?: string;
  completed_after?: string;
  completed_before?: string;
  audited_after?: string;
  audited_before?: string;
  exclude_archived?: string;
}

export function batchFilters(q: BatchListQuery): BatchFilters {
  return given({
    projects: listOf(q.project),
    statuses: listOf(q.status)?.filter(isBatchStatus),
    startTime: parseTimeFilter('start_time', q.start_time),
    endTime: parseTimeFilter('end_time', q.end_time),
    completedAfter: parseTimeFilter('completed_after', q.completed_after),
    completedBefore: parseTimeFilter('completed_before', q.completed_before),
    auditedAfter: parseTimeFilter('audited_after', q.audited_after),
    auditedBefore: parseTimeFilter('audited_before', q.audited_before),
    excludeArchived: flag(q.exclude_archived) || undefined,
  });
}

/** The project list's filter: `archived` true or false, or absent (every project). */
export const projectFilters = (q: { archived?: string }): { archived?: boolean } =>
  q.archived === undefined ? {} : { archived: flag(q.archived) };

/** A training or evaluation list's query. */
export function trainingFilters(q: { type?: readonly string[] | string; start_time?: string; end_time?: string }): TrainingTaskFilters {
  return given({
    types: typesOf(q.type),
    startTime: parseTimeFilter('start_time', q.start_time),
    endTime: parseTimeFilter('end_time', q.end_time),
  });
}
