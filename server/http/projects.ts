// Handlers of the project and batch operations (tags Projects and Batches), the same in both
// generations.
import type { Request, Response } from 'express';
import type { components } from '../../generated/current.ts';
import { batchStatus, batchView, createBatch, finalizeBatch, getBatch, listBatches, setBatchMetadata } from '../domain/batches.ts';
import type { BatchFilters, BatchStatus } from '../domain/ports.ts';
import { createProject, getProject, listProjects, projectView, setProjectOntology, setProjectParams } from '../domain/projects.ts';
import { callerOf } from './auth.ts';
import { parseTimeFilter, type HandlerDeps, type HandlerTable } from './tasks.ts';

type Schemas = components['schemas'];

const pathParam = (req: Request, name: string): string =>
  (req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams?.[name] ?? '';

export function projectHandlers({ uow, contract }: HandlerDeps): HandlerTable {
  const json = (res: Response, body: unknown) => void res.status(200).json(body);
  return {
    async createProject(req, res) {
      const body = req.body as Schemas['ProjectCreateRequest'];
      json(res, projectView(await createProject(uow, callerOf(res), body, contract.paramNamesOf(body.type), new Date())));
    },
    async listProjects(_req, res) {
      json(res, (await listProjects(uow, callerOf(res))).map(projectView));
    },
    async getProject(req, res) {
      json(res, projectView(await getProject(uow, callerOf(res), pathParam(req, 'projectName'))));
    },
    async setProjectParams(req, res) {
      const body = req.body as Schemas['ProjectSetParamsRequest'];
      json(res, projectView(await setProjectParams(uow, callerOf(res), pathParam(req, 'projectName'), body, contract.paramNamesOf, new Date())));
    },
    async setProjectOntology(req, res) {
      const body = req.body as Schemas['ProjectSetOntologyRequest'];
      json(res, projectView(await setProjectOntology(uow, callerOf(res), pathParam(req, 'projectName'), body, new Date())));
    },
    async createBatch(req, res) {
      json(res, batchView(await createBatch(uow, callerOf(res), req.body as Schemas['BatchCreateRequest'], new Date())));
    },
    async getBatch(req, res) {
      json(res, batchView(await getBatch(uow, callerOf(res), pathParam(req, 'batchName'))));
    },
    async listBatches(req, res) {
      const q = req.query as Record<string, unknown>;
      const filters: BatchFilters = {};
      if (typeof q.project === 'string') filters.project = q.project;
      if (typeof q.status === 'string') filters.status = q.status as BatchStatus;
      const start = parseTimeFilter('start_time', q.start_time);
      const end = parseTimeFilter('end_time', q.end_time);
      if (start) filters.startTime = start;
      if (end) filters.endTime = end;
      const limit = (q.limit as number | undefined) ?? 100;
      const offset = (q.offset as number | undefined) ?? 0;
      const page = await listBatches(uow, callerOf(res), filters, limit, offset);
      json(res, { docs: page.batches.map(batchView), total: page.total, totalDocs: page.total, limit, offset, has_more: page.hasMore });
    },
    async finalizeBatch(req, res) {
      json(res, batchView(await finalizeBatch(uow, callerOf(res), pathParam(req, 'batchName'), new Date())));
    },
    async getBatchStatus(req, res) {
      json(res, await batchStatus(uow, callerOf(res), pathParam(req, 'batchName')));
    },
    async setBatchMetadata(req, res) {
      json(res, batchView(await setBatchMetadata(uow, callerOf(res), pathParam(req, 'batchName'), req.body as Schemas['Metadata'])));
    },
  };
}
