// Creating a task: the rules of a creation request (type enabled, callback address, project and
// batch applied, parameter rules, duplicate prevention by unique_id and Idempotency-Key), the task
// written with its live work or its test-mode completion. One transaction.
import { assertTypeEnabled } from './accounts.ts';
import { callbackAddressProblem } from './callback-address.ts';
import { conflict, invalid } from './errors.ts';
import { newTaskId } from './ids.ts';
import type { Caller, Generation, Json, Task, Urgency } from './model.ts';
import type { OutboxMessage, Repositories, UnitOfWork } from './ports.ts';
import { UniqueIdTaken } from './ports.ts';
import { batchToJoin, taskSettled } from './batches.ts';
import { mergeProjectParams } from './projects.ts';
import { acceptTaskParams } from './param-rules.ts';
import { attachmentUrls, bucketObject, bucketScheme, withDirectLinks } from './attachments.ts';
import { taskCallback } from './outbox.ts';
import { IdempotencyKeyBusy, savedAnswer, type IdempotencyInput } from './idempotency.ts';
import { testOutcomeOf } from './test-outcomes.ts';
import { startTestCompletion } from './test-completion.ts';

export const MAX_TAGS = 5;

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
export async function newTask(repos: Repositories, input: CreateTaskInput): Promise<Task> {
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

export async function assertUniqueIdFree(repos: Repositories, caller: Caller, uniqueId: string, taskId: string | null) {
  const holder = await repos.tasks.findByUniqueId(caller.account.accountId, caller.mode, uniqueId);
  if (holder && holder.taskId !== taskId) {
    throw conflict(`The unique_id ("${uniqueId}") is already used for a different task (${holder.taskId}).`);
  }
}
