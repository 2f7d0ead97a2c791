// Handlers of tag "Imports and exports" (current generation): POST /v1/imports streams the file
// into the import's pieces (server/transfer/imports.ts), POST /v1/exports asks for a file of the
// list's matches (server/transfer/exports.ts); both are then done by a server process's worker.
import { isRecord } from '../../shared/json.ts';
import { wallClock } from '../domain/clock.ts';
import { createHmac, randomBytes } from 'node:crypto';
import { readConfig } from '../config.ts';
import { invalid, notFound } from '../domain/errors.ts';
import type { Caller, Json } from '../domain/model.ts';
import { recordActivity } from '../domain/identity/activity.ts';
import type { ImportRecord, ImportSettings, Repositories, UnitOfWork } from '../domain/ports.ts';
import { receiveImport } from '../transfer/imports.ts';
import type { TransferDeps } from '../transfer/settings.ts';
import { requestExport } from '../transfer/exports.ts';
import { downloadLink } from '../transfer/links.ts';
import { requestActivity } from './activity.ts';
import { flag, taskFilters } from './filters.ts';
import type { HandlerDeps } from './tasks.ts';
import { Download, type OperationRequest, type Operations } from './typed.ts';
import { exportView, importView } from './views/transfer.ts';

type Request<Id extends keyof Operations['current']> = OperationRequest<Operations['current'][Id]>;

/** For an app made without them (a test's, the bench's): the defaults, and a key of this process. */
function defaultTransferDeps(): TransferDeps {
  const key = randomBytes(32);
  return {
    ...readConfig({}).transfer,
    allowPrivateNetworks: [],
    sign: (purpose, message) => createHmac('sha256', key).update(`${purpose}\n${message}`).digest('base64url'),
    now: wallClock,
  };
}

/** `params` as the validator hands it: parsed (its content is JSON), or still the text. */
function paramsOf(value: unknown): Json {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw invalid('params must be a JSON object of creation parameters.');
    }
  }
  if (!isRecord(parsed)) throw invalid('params must be a JSON object of creation parameters.');
  return parsed;
}

async function importOf(uow: UnitOfWork, caller: Caller, importId: string) {
  const found = await uow.transfer.getImport(caller.account.accountId, caller.mode, importId);
  // An upload still arriving has not been answered yet: it is no import of the caller's so far.
  if (!found || found.state === 'receiving') throw notFound(`Import ${importId} not found.`);
  return found;
}

export function transferHandlers({ uow, transfer }: HandlerDeps) {
  const deps = transfer ?? defaultTransferDeps();
  const withRefused = async (record: Awaited<ReturnType<typeof importOf>>) =>
    importView(record, await uow.transfer.refusedLines(record.importId, 0, 100));
  return {
    async createImport(request: Request<'createImport'>) {
      const { query: q, caller, upload } = request;
      const settings: ImportSettings = {};
      if (q.type !== undefined) settings.type = q.type;
      if (q.project !== undefined) settings.project = q.project;
      if (q.batch !== undefined) settings.batch = q.batch;
      if (q.params !== undefined) settings.params = paramsOf(q.params);
      if (q.attachment_column !== undefined) settings.attachmentColumn = q.attachment_column;
      if (q.source_url !== undefined) settings.sourceUrl = q.source_url;
      // The activity log's entry commits with the import's queueing (an upload takes no transaction).
      const recordCreated = async (repos: Repositories, created: ImportRecord) => {
        await recordActivity(
          repos,
          requestActivity(request, 'import.created', { type: 'import', id: created.importId }, created.updatedAt),
        );
      };
      const record = await receiveImport(
        uow,
        caller,
        { format: q.format, settings, maxRefusedShare: q.max_refused_share, upload, recordCreated },
        deps,
      );
      return importView(record, []);
    },
    getImport: async ({ path, caller }: Request<'getImport'>) => withRefused(await importOf(uow, caller, path.importId)),
    async getImportRefused({ path, query, caller }: Request<'getImportRefused'>) {
      const record = await importOf(uow, caller, path.importId);
      const errors = flag(query.errors);
      const csv = record.format === 'csv' && !errors;
      async function* lines() {
        if (csv && record.settings.headerText !== undefined) yield `${record.settings.headerText}\n`;
        for (let after = 0; ; ) {
          const page = await uow.transfer.refusedLines(record.importId, after, 1000);
          if (page.length === 0) return;
          for (const l of page) {
            if (errors) yield `${JSON.stringify({ line: l.line, status_code: l.statusCode, error: l.error })}\n`;
            else if (l.text !== null) yield `${l.text}\n`;
          }
          after = page.at(-1)!.line;
        }
      }
      return new Download(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8', lines());
    },
    async createExport({ query, body, caller, origin }: Request<'createExport'>) {
      const record = await requestExport(uow, caller, {
        filters: taskFilters(query, 'current'),
        filterQuery: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)])),
        format: body?.format ?? 'jsonl',
        view: body?.view ?? 'current',
        imageWidth: body?.image_width === undefined ? undefined : Number(body.image_width),
        imageHeight: body?.image_height === undefined ? undefined : Number(body.image_height),
        target: body?.target,
      });
      return exportView(record, downloadLink(deps, record, origin, deps.now()));
    },
    async getExport({ path, caller, origin }: Request<'getExport'>) {
      const record = await uow.transfer.getExport(caller.account.accountId, caller.mode, path.exportId);
      if (!record) throw notFound(`Export ${path.exportId} not found.`);
      return exportView(record, downloadLink(deps, record, origin, deps.now()));
    },
  };
}
