// Training and evaluation tasks: a task's parameters with its correct answer, used to train workers
// (training) or to score them (evaluation). They are kept apart from ordinary tasks: their own id
// space, no status, no callback, never in the task list.
import { assertTypeEnabled } from './accounts.ts';
import { invalid, notFound } from './errors.ts';
import { newTaskId } from './ids.ts';
import { acceptTaskParams } from './param-rules.ts';
import type { Caller, Json } from './model.ts';
import type { TrainingTask, UnitOfWork } from './ports.ts';
import { claimIdempotencyKey, type IdempotencyInput } from './idempotency.ts';
import { isRecord } from '../../shared/json.ts';

export type TrainingKind = TrainingTask['kind'];

const kindName: Record<TrainingKind, string> = { training: 'Training task', evaluation: 'Evaluation task' };

export interface CreateTrainingTaskInput {
  caller: Caller;
  kind: TrainingKind;
  /** The stored type: a misspelt path kind (`segmentannoation`) already mapped to its type. */
  type: string;
  /** The request body, validated against the contract. */
  body: Json;
  /** The type's parameter names, from the contract: only these are kept in `params`. */
  paramNames: ReadonlySet<string>;
  now: Date;
  /** With an Idempotency-Key, the answer is saved in the same transaction as the task. */
  idempotency?: IdempotencyInput;
  /** The answer's body for the created task (saved with an Idempotency-Key). */
  render: (task: TrainingTask) => string;
}

/**
 * Creates a training or evaluation task. The contract's schema has already checked the body,
 * `expected_response` included; whether the answer fits the parameters (its labels among the
 * task's labels) is the client's responsibility (contract: "decided here"), so it is not checked.
 */
export async function createTrainingTask(uow: UnitOfWork, input: CreateTrainingTaskInput): Promise<TrainingTask> {
  const { caller, kind, body, now } = input;
  assertTypeEnabled(caller, input.type);
  if (!isRecord(body.expected_response)) throw invalid("expected_response is required: an object in the format of the type's response.");
  // Common task fields (callback_url, metadata, ...) are no parameters of the type: dropped here.
  const params: Json = {};
  for (const [key, value] of Object.entries(body)) if (input.paramNames.has(key)) params[key] = value;
  acceptTaskParams(input.type, params);
  const task: TrainingTask = {
    id: newTaskId(now),
    accountId: caller.account.accountId,
    mode: caller.mode,
    kind,
    type: input.type,
    params,
    expectedResponse: body.expected_response,
    // A training task has no starting answer; its request schema does not even know the key.
    initialResponse: kind === 'evaluation' && isRecord(body.initial_response) ? body.initial_response : null,
    createdAt: now,
  };
  const idem = input.idempotency;
  return uow.transaction(async (repos) => {
    const claimed = idem && (await claimIdempotencyKey(repos, caller, idem));
    await repos.training.insert(task);
    await claimed?.save({ statusCode: 200, body: input.render(task) });
    return task;
  });
}

/** One task of this kind, account and mode; another kind's id (or an ordinary task's) is not found. */
export async function getTrainingTask(uow: UnitOfWork, caller: Caller, kind: TrainingKind, id: string): Promise<TrainingTask> {
  const task = await uow.training.get(caller.account.accountId, caller.mode, kind, id);
  if (!task) throw notFound(`${kindName[kind]} ${id} not found.`);
  return task;
}

export interface ListTrainingTasksInput {
  caller: Caller;
  kind: TrainingKind;
  filters: { type?: string; startTime?: Date; endTime?: Date };
  limit: number;
  offset: number;
}

export interface TrainingTaskPage {
  tasks: TrainingTask[];
  total: number;
  hasMore: boolean;
}

/** One page, newest first, by offset. */
export async function listTrainingTasks(uow: UnitOfWork, input: ListTrainingTasksInput): Promise<TrainingTaskPage> {
  const { caller, limit, offset } = input;
  // The store fetches one row more than the page, which tells whether more follow.
  const { tasks, total } = await uow.training.list(caller.account.accountId, caller.mode, input.kind, input.filters, { limit, offset });
  return { tasks: tasks.slice(0, limit), total, hasMore: tasks.length > limit };
}
