// Promotion (POST /v1/task/{taskId}/promote): an audited task becomes a training or evaluation task
// of its type in one call, its merged parameters (instruction included) as the params and its
// audited response as the expected answer. Idempotent per task and kind (a unique index on the
// source task), so a calibration batch's reviewed tasks can be turned into training material
// without bookkeeping on the client's side.
import { invalid, notFound } from '../errors.ts';
import { newTaskId } from '../ids.ts';
import type { Caller, Json, Task } from '../model.ts';
import type { TrainingTask, UnitOfWork } from '../ports.ts';
import type { ResponseSchemaCheck } from '../workforce/answers.ts';

export interface PromoteInput {
  kind: TrainingTask['kind'];
  initialResponse?: Json | undefined;
}

/** Whether the task's current answer was kept by an audit: the latest one accepted it (customer or reviewer) or a reviewer fixed it. */
function auditedAndKept(task: Task): boolean {
  if (task.customerReviewStatus === 'rejected') return false;
  const latest = task.audits.at(-1);
  return latest !== undefined && (latest.result === 'accepted' || latest.result === 'fixed');
}

export async function promoteTask(
  uow: UnitOfWork,
  caller: Caller,
  taskId: string,
  input: PromoteInput,
  checkSchema: ResponseSchemaCheck,
  now: Date,
): Promise<TrainingTask> {
  const task = await uow.tasks.get(caller.account.accountId, caller.mode, taskId);
  if (!task) throw notFound(`Task ${taskId} not found.`);
  if (input.kind === 'training' && input.initialResponse !== undefined)
    throw invalid('initial_response is only sent with kind "evaluation": a training task has no starting answer.');
  if (task.status !== 'completed' || task.response === null)
    throw invalid(
      `Task ${taskId} is ${task.status === 'error' ? 'in error' : task.status}; only a completed, audited task can be promoted.`,
    );
  if (!auditedAndKept(task))
    throw invalid(`Task ${taskId} has no accepted or fixed review: audit it first (POST /v1/task/{taskId}/audit).`);
  if (input.initialResponse !== undefined) {
    const problem = checkSchema(task.type, input.initialResponse);
    if (problem) throw invalid(`initial_response does not match the ${task.type} response schema: ${problem}`);
  }
  return uow.training.insertPromoted({
    id: newTaskId(now),
    accountId: caller.account.accountId,
    mode: caller.mode,
    kind: input.kind,
    type: task.type,
    params: { ...task.params, ...(task.instruction !== null ? { instruction: task.instruction } : {}) },
    expectedResponse: task.response,
    initialResponse: input.initialResponse ?? null,
    createdAt: now,
    sourceTaskId: task.taskId,
  });
}
