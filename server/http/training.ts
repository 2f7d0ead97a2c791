// Handlers of the training and evaluation task operations (tag "Training and evaluation"), for
// either generation: creation per kind and type (the seed's misspelt paths and their aliases),
// retrieval and lists.
import { wallClock } from '../domain/clock.ts';
import type { components } from '../../generated/current.ts';
import type { Json } from '../domain/model.ts';
import { IdempotencyKeyBusy } from '../domain/idempotency.ts';
import { createTrainingTask, getTrainingTask, listTrainingTasks, type TrainingKind } from '../domain/training.ts';
import type { Contract, Json as Schema } from './contract.ts';
import { HttpError } from './errors.ts';
import { concurrentAnswer, ownerOf, Replay } from './idempotency.ts';
import { trainingFilters } from './filters.ts';
import type { CreationRequest, HandlerDeps } from './tasks.ts';
import type { OperationRequest, Operations } from './typed.ts';
import { trainingTaskListView, trainingTaskView } from './views/training.ts';

type Schemas = components['schemas'];
type Request<Id extends keyof Operations['current']> = OperationRequest<Operations['current'][Id]>;

/** A training or evaluation creation's answers: kept exactly as sent (not typed like its parameters). */
export const trainingAnswers: ReadonlySet<string> = new Set(['expected_response', 'initial_response']);

export interface TrainingCreation {
  operationId: string;
  path: string;
  kind: TrainingKind;
  type: string;
  paramNames: ReadonlySet<string>;
  bodySchema: Json;
}

/**
 * The creation operations of a contract, by path (POST /v1/training_tasks/<kind>, POST
 * /v1/evaluation_tasks/<kind>), each with its task type and the type's parameter names.
 */
export function trainingCreations(contract: Contract): Map<string, TrainingCreation> {
  const { doc, resolve, propertyNames } = contract;
  const oneOf: Schema[] = resolve(doc.components.schemas.TrainingTask)?.oneOf ?? [];
  const branches = oneOf.map((b) => resolve(b)!);
  const creations = new Map<string, TrainingCreation>();
  for (const [p, item] of Object.entries<Schema>(doc.paths)) {
    const m = /^\/v1\/(training|evaluation)_tasks\/[a-z]+$/.exec(p);
    const kind = m?.[1] === 'training' || m?.[1] === 'evaluation' ? m[1] : undefined;
    const op = item.post;
    if (!kind || !op) continue;
    // The path's kind may be misspelt (segmentannoation); the type it creates is the one its
    // answer's example shows, as for task creation (contract.ts).
    const examples = resolve(op.responses['200'])?.content['application/json'].examples ?? {};
    const type = String(resolve(Object.values<Schema>(examples)[0])?.value?.type);
    const branch = branches.find((b) => b.properties?.type?.const === type);
    if (!branch) throw new Error(`${op.operationId}: the contract's TrainingTask has no branch for type "${type}".`);
    creations.set(p, {
      operationId: op.operationId,
      path: p,
      kind,
      type,
      paramNames: propertyNames(branch.properties.params),
      bodySchema: op.requestBody.content['application/json'].schema,
    });
  }
  return creations;
}

export function trainingHandlers({ uow, contract, now = wallClock }: HandlerDeps) {
  const creations = trainingCreations(contract);

  /** Every training and evaluation task creation operation: the path names the kind and the type. */
  const create = async ({ route, body, caller, idempotency }: CreationRequest): Promise<Schemas['TrainingTask'] | Replay> => {
    const op = creations.get(route);
    if (!op) throw new HttpError(404, 'Not found: no such endpoint.');
    try {
      const task = await createTrainingTask(uow, {
        caller,
        kind: op.kind,
        type: op.type,
        // Typed before the contract checked it (app.ts), as every creation's body; the answers as sent.
        body: body ?? {},
        paramNames: op.paramNames,
        now: now(),
        idempotency,
        render: (task) => JSON.stringify(trainingTaskView(task)),
      });
      return trainingTaskView(task);
    } catch (err) {
      if (!(err instanceof IdempotencyKeyBusy) || !idempotency) throw err;
      return new Replay(await concurrentAnswer(uow, ownerOf(caller, idempotency), idempotency));
    }
  };

  const list =
    (kind: TrainingKind) =>
    async ({ query: q, caller }: Request<'listTrainingTasks'>) => {
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      const page = await listTrainingTasks(uow, {
        caller,
        kind,
        filters: trainingFilters(q),
        limit,
        offset,
      });
      return trainingTaskListView(page, limit, offset);
    };

  return {
    create,
    getTrainingTask: async ({ path, caller }: Request<'getTrainingTask'>) =>
      trainingTaskView(await getTrainingTask(uow, caller, 'training', path.trainingTaskId)),
    getEvaluationTask: async ({ path, caller }: Request<'getEvaluationTask'>) =>
      trainingTaskView(await getTrainingTask(uow, caller, 'evaluation', path.evaluationTaskId)),
    listTrainingTasks: list('training'),
    listEvaluationTasks: list('evaluation'),
  };
}
