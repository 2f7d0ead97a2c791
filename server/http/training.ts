// Handlers of the training and evaluation task operations (tag "Training and evaluation"), for
// either generation: creation per kind and type (the seed's misspelt paths and their aliases),
// retrieval and lists.
import type { Json } from '../domain/model.ts';
import { IdempotencyKeyBusy } from '../domain/idempotency.ts';
import {
  createTrainingTask, getTrainingTask, listTrainingTasks, trainingTaskListView, trainingTaskView, type TrainingKind,
} from '../domain/training.ts';
import { callerOf } from './auth.ts';
import { coerceBody } from './coerce.ts';
import type { Contract, Json as Schema } from './contract.ts';
import { replayConcurrentAnswer, type IdempotencyContext } from './idempotency.ts';
import { parseTimeFilter, pathParam, type Handler, type HandlerDeps, type HandlerTable, type OperationId } from './tasks.ts';

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
  const branches = ((resolve(doc.components.schemas.TrainingTask)?.oneOf ?? []) as Schema[]).map((b) => resolve(b)!);
  const creations = new Map<string, TrainingCreation>();
  for (const [p, item] of Object.entries<Schema>(doc.paths)) {
    const m = /^\/v1\/(training|evaluation)_tasks\/[a-z]+$/.exec(p);
    const op = item.post;
    if (!m || !op) continue;
    // The path's kind may be misspelt (segmentannoation); the type it creates is the one its
    // answer's example shows, as for task creation (contract.ts).
    const examples = resolve(op.responses['200'])?.content['application/json'].examples ?? {};
    const type = String(resolve(Object.values<Schema>(examples)[0])?.value?.type);
    const branch = branches.find((b) => b.properties?.type?.const === type);
    if (!branch) throw new Error(`${op.operationId}: the contract's TrainingTask has no branch for type "${type}".`);
    creations.set(p, {
      operationId: op.operationId,
      path: p,
      kind: m[1] as TrainingKind,
      type,
      paramNames: propertyNames(branch.properties.params),
      bodySchema: op.requestBody.content['application/json'].schema,
    });
  }
  return creations;
}


export function trainingHandlers({ uow, contract }: HandlerDeps): HandlerTable {
  const creationHandler = (op: TrainingCreation): Handler => async (req, res) => {
    const caller = callerOf(res);
    // Set by the idempotency middleware, for the paths server/app.ts hands it.
    const idem = res.locals.idempotency as IdempotencyContext | undefined;
    const sent = (req.body ?? {}) as Json;
    // Lenient parameter values the validator accepted ("allow_unlabeled": "true") are stored typed,
    // as on task creation; the answers are stored exactly as sent.
    const typed = coerceBody(sent, op.bodySchema, contract.resolve, false) as Json;
    try {
      const task = await createTrainingTask(uow, {
        caller,
        kind: op.kind,
        type: op.type,
        body: { ...typed, expected_response: sent.expected_response, initial_response: sent.initial_response },
        paramNames: op.paramNames,
        now: new Date(),
        idempotency: idem,
      });
      res.status(200).json(trainingTaskView(task));
    } catch (err) {
      if (!(err instanceof IdempotencyKeyBusy) || !idem) throw err;
      await replayConcurrentAnswer(uow, res, idem);
    }
  };

  const getHandler = (kind: TrainingKind, idParam: string): Handler => async (req, res) => {
    res.status(200).json(trainingTaskView(await getTrainingTask(uow, callerOf(res), kind, pathParam(req, idParam))));
  };

  const listHandler = (kind: TrainingKind): Handler => async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const limit = (q.limit as number | undefined) ?? 100;
    const offset = (q.offset as number | undefined) ?? 0;
    const page = await listTrainingTasks(uow, {
      caller: callerOf(res),
      kind,
      filters: {
        type: q.type as string | undefined,
        startTime: parseTimeFilter('start_time', q.start_time),
        endTime: parseTimeFilter('end_time', q.end_time),
      },
      limit,
      offset,
    });
    res.status(200).json(trainingTaskListView(page, limit, offset));
  };

  const handlers: HandlerTable = {
    getTrainingTask: getHandler('training', 'trainingTaskId'),
    getEvaluationTask: getHandler('evaluation', 'evaluationTaskId'),
    listTrainingTasks: listHandler('training'),
    listEvaluationTasks: listHandler('evaluation'),
  };
  for (const op of trainingCreations(contract).values()) handlers[op.operationId as OperationId] = creationHandler(op);
  return handlers;
}
