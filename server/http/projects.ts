// Handlers of the project and batch operations (tags Projects and Batches), the same in both
// generations.
import { batchStatus, createBatch, finalizeBatch, getBatch, listBatches, setBatchArchived, setBatchMetadata } from '../domain/batches.ts';
import type { BatchFilters } from '../domain/ports.ts';
import { createProject, getProject, listProjects, setProjectOntology, setProjectParams } from '../domain/projects.ts';
import { flag, parseTimeFilter, type HandlerDeps } from './tasks.ts';
import type { OperationRequest, Operations } from './typed.ts';
import { batchCountsView, batchListView, batchView, projectListView, projectView } from './views/projects.ts';

type Request<Id extends keyof Operations['current']> = OperationRequest<Operations['current'][Id]>;

export function projectHandlers({ uow, contract }: HandlerDeps) {
  return {
    createProject: async ({ body, caller }: Request<'createProject'>) =>
      projectView(await createProject(uow, caller, body, contract.paramNamesOf(body.type), new Date())),
    listProjects: async ({ caller }: Request<'listProjects'>) => projectListView(await listProjects(uow, caller)),
    getProject: async ({ path, caller }: Request<'getProject'>) => projectView(await getProject(uow, caller, path.projectName)),
    setProjectParams: async ({ path, body, caller }: Request<'setProjectParams'>) =>
      projectView(await setProjectParams(uow, caller, path.projectName, body, contract.paramNamesOf, new Date())),
    setProjectOntology: async ({ path, body, caller }: Request<'setProjectOntology'>) =>
      projectView(await setProjectOntology(uow, caller, path.projectName, body, new Date())),
    createBatch: async ({ body, caller }: Request<'createBatch'>) => batchView(await createBatch(uow, caller, body, new Date())),
    getBatch: async ({ path, caller }: Request<'getBatch'>) => batchView(await getBatch(uow, caller, path.batchName)),
    async listBatches({ query: q, caller }: Request<'listBatches'>) {
      const filters: BatchFilters = {};
      if (q.project !== undefined) filters.project = q.project;
      if (q.status !== undefined) filters.status = q.status;
      const start = parseTimeFilter('start_time', q.start_time);
      const end = parseTimeFilter('end_time', q.end_time);
      if (start) filters.startTime = start;
      if (end) filters.endTime = end;
      if (flag(q.exclude_archived)) filters.excludeArchived = true;
      const limit = q.limit ?? 100;
      const offset = q.offset ?? 0;
      return batchListView(await listBatches(uow, caller, filters, limit, offset), limit, offset);
    },
    finalizeBatch: async ({ path, caller }: Request<'finalizeBatch'>) =>
      batchView(await finalizeBatch(uow, caller, path.batchName, new Date())),
    getBatchStatus: async ({ path, caller }: Request<'getBatchStatus'>) => batchCountsView(await batchStatus(uow, caller, path.batchName)),
    setBatchMetadata: async ({ path, body, caller }: Request<'setBatchMetadata'>) =>
      batchView(await setBatchMetadata(uow, caller, path.batchName, body)),
    archiveBatch: async ({ path, caller }: Request<'archiveBatch'>) => batchView(await setBatchArchived(uow, caller, path.batchName, true)),
    unarchiveBatch: async ({ path, caller }: Request<'unarchiveBatch'>) =>
      batchView(await setBatchArchived(uow, caller, path.batchName, false)),
  };
}
