// The task rules: creation (with duplicate prevention and test-mode completion), retrieval, lists,
// cancel, metadata, unique_id, tags and customer review. Each operation is one transaction.
import { assertTypeEnabled } from './accounts.ts';
import { callbackAddressProblem } from './callback-address.ts';
import { DomainError, conflict, invalid, notFound } from './errors.ts';
import { newTaskId, sha256 } from './ids.ts';
import type { Caller, Generation, Json, Task, Urgency } from './model.ts';
import type { OutboxMessage, PageRequest, Repositories, TaskFilters, UnitOfWork } from './ports.ts';
import { UniqueIdTaken } from './ports.ts';
import { batchToJoin, taskSettled } from './batches.ts';
import { mergeProjectParams } from './projects.ts';
import { acceptTaskParams } from './param-rules.ts';
import { attachmentUrls, bucketObject, bucketScheme, failedTestAttachments, withDirectLinks } from './attachments.ts';
import { queueTaskCallback, resendLatestCallback, taskCallback } from './outbox.ts';
import { IdempotencyKeyBusy, savedAnswer, type IdempotencyInput } from './idempotency.ts';
import { syntheticResponse, type TaskType } from './synthetic.ts';
import { chosenErrorResponse, testOutcomeOf } from './test-outcomes.ts';
import { recordCustomerAudit } from './quality/calibration.ts';
import { redoAfterCustomerReject } from './workforce/answers.ts';
import { defaultWorkSettings, type WorkSettings } from './workforce/work.ts';

const MAX_TAGS = 5;

/** The creation parameters that are task fields of their own; everything else known is `params`. */
const commonFields = new Set([
  'callback_url',
  'instruction',
  'metadata',
  'unique_id',
  'clear_unique_id_on_error',
  'tags',
  'project',
  'batch',
  'project_param_version',
  'urgency',
]);

export interface Answer {
  statusCode: number;
  body: string;
}

export interface CreateTaskInput {
  caller: Caller;
  generation: Generation;
  type: string;
  /** The request body, validated against the contract, numbers and booleans already typed. */
  body: Json;
  /** The type's parameter names, from the contract: only these are kept in `params`. */
  paramNames: ReadonlySet<string>;
  now: Date;
  /** Checks parameters merged from a project against the type's required ones: a message, or null. */
  checkMerged: (body: Json) => string | null;
  /** The answer the client gets for the created task; saved with an Idempotency-Key. */
  render: (task: Task) => Answer;
  idempotency?: IdempotencyInput;
  /** The live request was not counted at authentication: the creating statement counts it. */
  countLiveRequest?: boolean;
}

export async function createTask(uow: UnitOfWork, input: CreateTaskInput): Promise<Answer> {
  const { caller } = input;
  assertTypeEnabled(caller, input.type);
  const uniqueId = (input.body.unique_id as string | undefined) ?? null;
  try {
    // A task of a batch or a project is made from what they hold (read and locked in the
    // transaction); any other creation is a single statement.
    if (typeof input.body.batch !== 'string' && input.body.project === undefined)
      return await writeNewTask(uow, input, await newTask(uow, input));
    return await uow.transaction(async (repos) => writeNewTask(repos, input, await newTask(repos, input)));
  } catch (err) {
    // Two requests raced for one unique_id: the loser learns which task won.
    if (err instanceof UniqueIdTaken && uniqueId !== null) await assertUniqueIdFree(uow, caller, uniqueId, null);
    throw err;
  }
}

/**
 * Writes a new task with its Idempotency-Key claim and, in test mode, its synthetic completion and
 * callback: one statement. The answer shows the task as it was created (pending).
 */
async function writeNewTask(repos: Repositories, input: CreateTaskInput, task: Task): Promise<Answer> {
  const { caller, now } = input;
  const answer = input.render(task);
  let callback: OutboxMessage | null = null;
  // Test mode: no person works on the task; it ends as its metadata chooses (at once by default).
  if (caller.mode === 'test' && startTestCompletion(task, caller.account.testCompletionDelayMs, now))
    callback = taskCallback(repos.payloads, task, caller.account.defaultCallbackUrl, now);
  const saved = input.idempotency && savedAnswer(caller, input.idempotency, answer);
  const created = await repos.tasks.create(task, {
    ...(saved ? { answer: saved } : {}),
    ...(callback ? { callback } : {}),
    ...(input.countLiveRequest ? { countLiveRequestOf: caller.account.accountId } : {}),
  });
  if (!created) throw new IdempotencyKeyBusy();
  await taskSettled(repos, task, now);
  return answer;
}

/** The task a creation request describes, after its batch and project are applied. */
async function newTask(repos: Repositories, input: CreateTaskInput): Promise<Task> {
  const { caller, now } = input;
  let body = input.body;
  const batch = typeof body.batch === 'string' ? await batchToJoin(repos, caller, body.batch, body.project as string | undefined) : null;
  const projectName = batch?.project ?? (body.project as string | undefined);
  // A version of no project would be dropped without a word.
  if (body.project_param_version !== undefined && projectName === undefined)
    throw invalid("project_param_version names a parameter version of the task's project: give project (or batch) with it.");
  let projectParamVersion: number | null = null;
  if (projectName !== undefined) {
    const merged = await mergeProjectParams(repos, caller, projectName, input.type, body);
    body = merged.body;
    projectParamVersion = merged.version;
    // With a project, the type-defining parameters may come from it: check what the merge gave.
    const problem = input.checkMerged(body);
    if (problem)
      throw invalid(`${problem} (neither the request nor the project's parameter version ${merged.version ?? '(none)'} supplies it)`);
  }
  if (caller.mode === 'test') {
    const outcome = testOutcomeOf((body.metadata as Json | undefined) ?? {});
    if ('problem' in outcome) throw invalid(outcome.problem);
  }
  const callbackUrl = (body.callback_url as string | undefined) ?? caller.account.defaultCallbackUrl;
  if (!callbackUrl) throw invalid('callback_url is required (this account has no default callback URL).');
  const badCallback = typeof body.callback_url === 'string' ? callbackAddressProblem(body.callback_url) : null;
  if (badCallback) throw invalid(`callback_url ${badCallback}.`);
  const params: Json = {};
  for (const [key, value] of Object.entries(body)) {
    if (input.paramNames.has(key) && !commonFields.has(key)) params[key] = value;
  }
  acceptTaskParams(input.type, params);
  const stored = withDirectLinks(params);
  await refuseUnconnectedBuckets(repos, caller, stored);
  return {
    taskId: newTaskId(now),
    accountId: caller.account.accountId,
    mode: caller.mode,
    generation: input.generation,
    type: input.type,
    status: 'pending',
    instruction: (body.instruction as string | undefined) ?? null,
    params: stored,
    response: null,
    callbackUrl: (body.callback_url as string | undefined) ?? null,
    callbackCompleted: null,
    urgency: (body.urgency as Urgency | undefined) ?? 'day',
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    customerReviewStatus: null,
    timesRedone: 0,
    metadata: (body.metadata as Json | undefined) ?? {},
    project: projectName ?? null,
    batch: batch?.name ?? null,
    projectParamVersion,
    audits: [],
    uniqueId: (body.unique_id as string | undefined) ?? null,
    tags: body.tags ? [...new Set(body.tags as string[])] : null,
    clearUniqueIdOnError: body.clear_unique_id_on_error === true,
    testCompleteAt: null,
    // Live mode fetches the attachments (test mode only simulates that).
    attachmentCheckAt: caller.mode === 'live' && attachmentUrls(stored).length > 0 ? now : null,
  };
}

/** A bucket attachment (s3://, gs://) is accepted only when the account has a connection to its bucket in this mode. */
async function refuseUnconnectedBuckets(repos: Repositories, caller: Caller, params: Json) {
  const objects = attachmentUrls(params).flatMap((url) => {
    const object = bucketObject(url);
    return object ? [{ url, ...object }] : [];
  });
  if (objects.length === 0) return;
  const [missing] = await repos.storage.unconnected(caller.account.accountId, caller.mode, objects);
  if (!missing) return;
  const url = objects.find((o) => o.provider === missing.provider && o.bucket === missing.bucket)!.url;
  throw invalid(
    `attachment ${url} is in bucket "${missing.bucket}", and this account has no storage connection to ` +
      `${bucketScheme(missing.provider)}://${missing.bucket}/ in ${caller.mode} mode (POST /v1/storage/connections).`,
  );
}

async function assertUniqueIdFree(repos: Repositories, caller: Caller, uniqueId: string, taskId: string | null) {
  const holder = await repos.tasks.findByUniqueId(caller.account.accountId, caller.mode, uniqueId);
  if (holder && holder.taskId !== taskId) {
    throw conflict(`The unique_id ("${uniqueId}") is already used for a different task (${holder.taskId}).`);
  }
}

/**
 * Starts a new test-mode task on the way its metadata chooses (decision 19): completed now (true:
 * its callback is due), later (a delay of its own, or the account's), or never (`pending`).
 */
function startTestCompletion(task: Task, accountDelayMs: number, now: Date): boolean {
  const outcome = testOutcomeOf(task.metadata);
  if ('problem' in outcome || outcome.kind === 'pending') return false;
  const delayMs = outcome.kind === 'delayed' ? outcome.ms : accountDelayMs;
  if (delayMs > 0) {
    task.testCompleteAt = new Date(now.getTime() + delayMs);
    return false;
  }
  completeSynthetically(task, now);
  return true;
}

function completeSynthetically(task: Task, now: Date) {
  const failed = failedTestAttachments(task.params);
  task.testCompleteAt = null;
  task.updatedAt = now;
  task.completedAt = now;
  // A chosen error ends the first completion only: a redo (after a rejection) completes.
  const chosen = testOutcomeOf(task.metadata);
  const chosenError = task.timesRedone === 0 && 'kind' in chosen && chosen.kind === 'error';
  if (failed.length > 0 || chosenError) {
    task.status = 'error';
    task.response = chosenError
      ? { ...chosenErrorResponse }
      : { error: `Attachment could not be fetched (HTTP 404): ${failed.join(', ')}` };
    if (task.clearUniqueIdOnError) task.uniqueId = null;
    return;
  }
  task.status = 'completed';
  const seed = task.timesRedone === 0 ? task.taskId : `${task.taskId}:${task.timesRedone}`;
  task.response = syntheticResponse(task.type as TaskType, task.params, seed);
  task.customerReviewStatus = 'pending';
}

const isDueTestTask = (task: Task, now: Date) => task.status === 'pending' && task.testCompleteAt !== null && task.testCompleteAt <= now;

/** Completes the test-mode tasks whose delay is over; a read also completes a due task first. */
async function settleDueTestTask(repos: Repositories, task: Task, now: Date): Promise<Task> {
  if (isDueTestTask(task, now)) {
    completeSynthetically(task, now);
    await repos.tasks.update(task);
    await queueTaskCallback(repos, task, now);
    await taskSettled(repos, task, now);
  }
  return task;
}

/**
 * Completes the test-mode tasks whose completion delay is over. Runs periodically; a read of a
 * due task completes it first anyway, so no reader ever sees it late.
 */
export async function completeDueTestTasks(uow: UnitOfWork, now: Date, batch = 100): Promise<number> {
  const due = await uow.tasks.dueTestTaskIds(now, batch);
  // Each on its own: a task that cannot be completed holds up none of the others (the poller logs it).
  // It is tried again later, after as long as it has existed (1 s, then 2 s, 4 s, ... at most an hour):
  // neither does it come first in every poll (a batch of them would starve the rest) nor fill the log.
  const failures: Error[] = [];
  for (const { taskId, accountId, mode, createdAt } of due) {
    try {
      await uow.transaction(async (repos) => {
        const task = await repos.tasks.get(accountId, mode, taskId, { forUpdate: true });
        if (task) await settleDueTestTask(repos, task, now);
      });
    } catch (err) {
      const retryInMs = Math.min(3_600_000, Math.max(1000, now.getTime() - createdAt.getTime()));
      const retryAt = new Date(now.getTime() + retryInMs);
      failures.push(new Error(`test-mode task ${taskId} could not be completed (tried again at ${retryAt.toISOString()})`, { cause: err }));
      await uow.tasks
        .postponeTestCompletion(taskId, retryAt)
        .catch((e: unknown) => failures.push(new Error(`test-mode task ${taskId} could not be postponed`, { cause: e })));
    }
  }
  if (failures.length > 0)
    throw new AggregateError(failures, `${failures.length} of ${due.length} due test-mode tasks could not be completed`);
  return due.length;
}

/** A task of the caller's account and mode; not_found when there is none. */
async function taskById(repos: Repositories, caller: Caller, taskId: string, forUpdate = false): Promise<Task> {
  const task = await repos.tasks.get(caller.account.accountId, caller.mode, taskId, { forUpdate });
  if (!task) throw notFound(`Task ${taskId} not found.`);
  return task;
}

async function lockedTask(repos: Repositories, caller: Caller, taskId: string, now: Date): Promise<Task> {
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

export async function cancelTask(uow: UnitOfWork, caller: Caller, taskId: string, clearUniqueId: boolean, now: Date): Promise<Task> {
  return uow.transaction(async (repos) => {
    const task = await lockedTask(repos, caller, taskId, now);
    if (task.status === 'completed' || task.status === 'error') {
      throw new DomainError(
        'cancel_completed',
        `Task ${taskId} is ${task.status === 'error' ? 'in error' : 'completed'}; only pending tasks can be canceled.`,
      );
    }
    let changed = false;
    if (task.status === 'pending') {
      task.status = 'canceled';
      task.testCompleteAt = null;
      // Live: the work on it ends; its workers' next heartbeat or submit is told so.
      if (task.mode === 'live') await repos.work.closeTask(task.taskId, now);
      changed = true;
    }
    if (clearUniqueId && task.uniqueId !== null) {
      task.uniqueId = null;
      changed = true;
    }
    if (changed) {
      task.updatedAt = now;
      await repos.tasks.update(task);
      await taskSettled(repos, task, now);
    }
    return task;
  });
}

/**
 * Cancels up to `limit` pending tasks the filters match (in the list's order), each as cancelTask
 * does; `hasMore`: pending tasks still match. A filter on another status matches nothing to cancel.
 * A task that left pending meanwhile (completed by its worker) is passed over. Run inside the
 * request's transaction (http/activity.ts), the cancellations and their log entry commit together.
 */
export async function cancelMatchingTasks(
  uow: UnitOfWork,
  caller: Caller,
  filters: TaskFilters,
  limit: number,
  clearUniqueId: boolean,
  now: Date,
): Promise<{ taskIds: string[]; hasMore: boolean }> {
  if (filters.statuses && !filters.statuses.includes('pending')) return { taskIds: [], hasMore: false };
  const { tasks } = await uow.tasks.list(
    caller.account.accountId,
    caller.mode,
    { ...filters, statuses: ['pending'] },
    { limit, after: null },
  );
  const taskIds: string[] = [];
  for (const task of tasks.slice(0, limit)) {
    try {
      const canceled = await cancelTask(uow, caller, task.taskId, clearUniqueId, now);
      if (canceled.status === 'canceled') taskIds.push(task.taskId);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'cancel_completed')) throw err;
    }
  }
  return { taskIds, hasMore: tasks.length > limit };
}

/** Runs a change on a locked task; `updated_at` moves only when the change changed something. */
async function changeTask(
  uow: UnitOfWork,
  caller: Caller,
  taskId: string,
  now: Date,
  change: (task: Task, repos: Repositories) => Promise<boolean> | boolean,
): Promise<Task> {
  return uow.transaction(async (repos) => {
    const task = await lockedTask(repos, caller, taskId, now);
    if (await change(task, repos)) {
      task.updatedAt = now;
      await repos.tasks.update(task);
    }
    return task;
  });
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function setTaskMetadata(uow: UnitOfWork, caller: Caller, taskId: string, metadata: Json, now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    if (same(task.metadata, metadata)) return false;
    task.metadata = metadata;
    return true;
  });
}

export async function setTaskUniqueId(uow: UnitOfWork, caller: Caller, taskId: string, uniqueId: string, now: Date) {
  try {
    return await changeTask(uow, caller, taskId, now, async (task, repos) => {
      if (task.uniqueId === uniqueId) return false;
      await assertUniqueIdFree(repos, caller, uniqueId, taskId);
      task.uniqueId = uniqueId;
      return true;
    });
  } catch (err) {
    if (err instanceof UniqueIdTaken) await assertUniqueIdFree(uow, caller, uniqueId, taskId);
    throw err;
  }
}

export function deleteTaskUniqueId(uow: UnitOfWork, caller: Caller, taskId: string, now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    if (task.uniqueId === null) return false;
    task.uniqueId = null;
    return true;
  });
}

export function addTaskTags(uow: UnitOfWork, caller: Caller, taskId: string, tags: string[], now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    const current = task.tags ?? [];
    const next = [...new Set([...current, ...tags])];
    if (next.length > MAX_TAGS) {
      throw invalid(`A task has at most ${MAX_TAGS} tags; this change would give it ${next.length}.`);
    }
    if (next.length === current.length) return false;
    task.tags = next;
    return true;
  });
}

export function removeTaskTags(uow: UnitOfWork, caller: Caller, taskId: string, tags: string[], now: Date) {
  return changeTask(uow, caller, taskId, now, (task) => {
    const current = task.tags ?? [];
    const next = current.filter((t) => !tags.includes(t));
    if (next.length === current.length) return false;
    task.tags = next.length > 0 ? next : null;
    return true;
  });
}

export async function auditTask(
  uow: UnitOfWork,
  caller: Caller,
  taskId: string,
  review: { accepted: boolean; comments?: string },
  now: Date,
  work: WorkSettings = defaultWorkSettings,
): Promise<Task> {
  // The answer shows the task as the audit left it (as a creation's shows the task as created),
  // even where test mode has redone it by the time the answer is sent.
  let asAudited: Task | null = null;
  const task = await changeTask(uow, caller, taskId, now, async (task, repos) => {
    if (task.status !== 'completed') {
      throw invalid(`Task ${taskId} is ${task.status === 'error' ? 'in error' : task.status}; only a completed task can be reviewed.`);
    }
    if (task.customerReviewStatus === 'rejected') {
      throw invalid(`Task ${taskId} was rejected and is being redone; review it once the redo is delivered.`);
    }
    task.audits = [
      ...task.audits,
      {
        auditedBy: caller.account.accountId,
        auditedAt: now,
        auditTimeSecs: 0,
        result: review.accepted ? 'accepted' : 'rejected',
        source: 'customer',
        ...(review.comments !== undefined ? { comments: review.comments } : {}),
      },
    ];
    task.customerReviewStatus = review.accepted ? 'accepted' : 'rejected';
    if (caller.mode === 'live') await recordCustomerAudit(repos, caller, task, review.accepted, now);
    if (!review.accepted && caller.mode === 'test') {
      asAudited = { ...task, updatedAt: now };
      // Test mode redoes a rejected task at once, with a new synthetic response.
      // A redo keeps the task completed at its first completion time; updated_at moves.
      const completedAt = task.completedAt;
      task.timesRedone += 1;
      completeSynthetically(task, now);
      task.completedAt = completedAt;
      task.customerReviewStatus = 'fixed';
      // The redone task's callback is sent again.
      await queueTaskCallback(repos, task, now);
    }
    // Live mode: a worker redoes it (the callback is sent again when the redo is adopted).
    if (!review.accepted && caller.mode === 'live') await redoAfterCustomerReject(repos, caller, task, review.comments, work, now);
    return true;
  });
  return asAudited ?? task;
}

/** One delivery attempt of a task's callback. */
export interface CallbackAttempt {
  event: 'task_completed' | 'attachment_error';
  attemptedAt: Date;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** The delivery attempts of a task's callbacks, oldest first. */
export async function listTaskCallbacks(uow: UnitOfWork, caller: Caller, taskId: string): Promise<CallbackAttempt[]> {
  await taskById(uow, caller, taskId);
  const [messages, attempts] = await Promise.all([
    uow.outbox.forSubject(caller.account.accountId, taskId),
    uow.outbox.attemptsFor(caller.account.accountId, taskId),
  ]);
  const eventOf = new Map(messages.map((m) => [m.id, m.event]));
  return attempts.map((a) => {
    const event = eventOf.get(a.messageId);
    return {
      event: event === 'attachment_error' ? event : 'task_completed',
      attemptedAt: a.attemptedAt,
      url: a.url,
      statusCode: a.statusCode,
      error: a.error,
      durationMs: a.durationMs,
    };
  });
}

/** Queues a fresh delivery of the task's callback (its result, or its attachment error). */
export function redeliverTaskCallback(uow: UnitOfWork, caller: Caller, taskId: string, now: Date) {
  return uow.transaction(async (repos) => {
    const task = await lockedTask(repos, caller, taskId, now);
    if (task.status !== 'completed' && task.status !== 'error') {
      throw invalid(`Task ${taskId} is ${task.status}; only a completed task or one in error has a callback to send.`);
    }
    if (!(await resendLatestCallback(repos, task, now)) && !(await queueTaskCallback(repos, task, now))) {
      throw invalid(`Task ${taskId} has no callback address (no callback_url, and the account has no default).`);
    }
    return task;
  });
}

/** The failed fetches of an attachment check: `statusCode` 0 when no HTTP answer came. */
export interface FailedAttachment {
  url: string;
  statusCode: number;
  reason: string;
}

/**
 * The outcome of a live task's attachment check: when a fetch failed, the task moves to `error`
 * (its unique_id cleared if it asked for that) and the attachment-error callback is queued.
 */
export function finishAttachmentCheck(uow: UnitOfWork, task: Task, failures: FailedAttachment[], now: Date) {
  return uow.transaction(async (repos) => {
    const current = await repos.tasks.get(task.accountId, task.mode, task.taskId, { forUpdate: true });
    if (!current) return;
    current.attachmentCheckAt = null;
    if (current.status === 'pending' && failures.length > 0) {
      current.status = 'error';
      current.response = { error: `Attachment could not be fetched: ${failures.map((f) => `${f.url} (${f.reason})`).join(', ')}` };
      current.completedAt = now;
      current.updatedAt = now;
      if (current.clearUniqueIdOnError) current.uniqueId = null;
      await repos.tasks.update(current);
      await repos.work.closeTask(current.taskId, now);
      await queueTaskCallback(
        repos,
        current,
        now,
        failures.map(({ url, statusCode }) => ({ url, statusCode })),
      );
      await taskSettled(repos, current, now);
      return;
    }
    await repos.tasks.update(current);
  });
}

// ---- Many creations at once: an import's group of lines (issue 36). ----

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
