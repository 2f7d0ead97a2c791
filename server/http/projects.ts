// Handlers of the project and batch operations (tags Projects and Batches), the same in both
// generations.
import { wallClock } from '../domain/clock.ts';
import { batchStatus, createBatch, finalizeBatch, getBatch, listBatches, setBatchArchived, setBatchMetadata } from '../domain/batches.ts';
import { createProject, getProject, listProjects, setProjectArchived, setProjectOntology, setProjectParams } from '../domain/projects.ts';
import { canonicalType } from '../domain/type-names.ts';
import { batchFilters, projectFilters } from './filters.ts';
import { ownerOf, underKey } from './idempotency.ts';
import type { HandlerDeps } from './tasks.ts';
import type { OperationRequest, Operations } from './typed.ts';
import { batchCountsView, batchListView, batchView, projectListView, projectView } from './views/projects.ts';

type Request<Id extends keyof Operations['current']> = OperationRequest<Operations['current'][Id]>;

export function projectHandlers({ uow, contract, now = wallClock }: HandlerDeps) {
  return {
    async createProject({ body, caller, idempotency }: Request<'createProject'>) {
      // An alias names its type here too.
      const type = canonicalType(body.type);
      return underKey(
        uow,
        idempotency,
        (key) => ownerOf(caller, key),
        async () => projectView(await createProject(uow, caller, { ...body, type }, contract.paramRules, now())),
      );
    },
    listProjects: async ({ query, caller }: Request<'listProjects'>) =>
      projectListView(await listProjects(uow, caller, projectFilters(query))),
    getProject: async ({ path, caller }: Request<'getProject'>) => projectView(await getProject(uow, caller, path.projectName)),
    setProjectParams: async ({ path, body, caller }: Request<'setProjectParams'>) =>
      projectView(await setProjectParams(uow, caller, path.projectName, body, contract.paramRules, now())),
    setProjectOntology: async ({ path, body, caller }: Request<'setProjectOntology'>) =>
      projectView(await setProjectOntology(uow, caller, path.projectName, body, now())),
    archiveProject: async ({ path, caller }: Request<'archiveProject'>) =>
      projectView(await setProjectArchived(uow, caller, path.projectName, true)),
    unarchiveProject: async ({ path, caller }: Request<'unarchiveProject'>) =>
      projectView(await setProjectArchived(uow, caller, path.projectName, false)),
    createBatch: async ({ body, caller, idempotency }: Request<'createBatch'>) =>
      underKey(
        uow,
        idempotency,
        (key) => ownerOf(caller, key),
        async () => batchView(await createBatch(uow, caller, body, now())),
      ),
    getBatch: async ({ path, caller }: Request<'getBatch'>) => batchView(await getBatch(uow, caller, path.batchName)),
    async listBatches({ query: q, caller }: Request<'listBatches'>) {
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      return batchListView(await listBatches(uow, caller, batchFilters(q), limit, offset), limit, offset);
    },
    finalizeBatch: async ({ path, caller }: Request<'finalizeBatch'>) => batchView(await finalizeBatch(uow, caller, path.batchName, now())),
    getBatchStatus: async ({ path, caller }: Request<'getBatchStatus'>) => batchCountsView(await batchStatus(uow, caller, path.batchName)),
    setBatchMetadata: async ({ path, body, caller }: Request<'setBatchMetadata'>) =>
      batchView(await setBatchMetadata(uow, caller, path.batchName, body)),
    archiveBatch: async ({ path, caller }: Request<'archiveBatch'>) => batchView(await setBatchArchived(uow, caller, path.batchName, true)),
    unarchiveBatch: async ({ path, caller }: Request<'unarchiveBatch'>) =>
      batchView(await setBatchArchived(uow, caller, path.batchName, false)),
  };
}
