// Imports (issue 36): a file of task creations made into tasks exactly once. The file is kept in
// the database in pieces as it arrives (so that any server process can read it, and a crash loses
// none of it); a server process takes the import with a lease, as the outbox's messages are taken
// (graphile-worker's and pg-boss's claim: one statement, SKIP LOCKED), and reads it in groups of
// lines: each group's tasks, its refused lines and the import's new cursor are written in one
// transaction, fenced by the lease's token. A process that dies leaves its lease to lapse; the next
// claim goes on from the cursor, so no line written is lost and none is written twice.
import { randomBytes } from 'node:crypto';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Logger } from 'pino';
import type { TransferConfig } from './settings.ts';
import { assertTypeEnabled } from '../domain/accounts.ts';
import { getBatch, settleBatch } from '../domain/batches.ts';
import { invalid } from '../domain/errors.ts';
import { newTaskId } from '../domain/ids.ts';
import { notValidJson } from '../../shared/json.ts';
import type { Caller, Json } from '../domain/model.ts';
import type { ImportProgress, ImportRecord, ImportSettings, RefusedLine, Repositories, UnitOfWork } from '../domain/ports.ts';
import { UniqueIdTaken } from '../domain/ports.ts';
import { projectByName } from '../domain/projects.ts';
import { createTasksInBulk, type BulkCreation } from '../domain/task-bulk-creation.ts';
import { bucketObject, bucketPrefix, bucketScheme } from '../domain/attachments.ts';
import { safeRequest } from '../delivery/net.ts';
import { listKeys, presignedGet, StorageError } from '../storage/s3.ts';
import { checkJsonDepth } from '../http/body-limits.ts';
import { loadContract } from '../http/contract.ts';
import { HttpError, toErrorAnswer } from '../http/errors.ts';
import { fileRecords, type FileRecord } from './lines.ts';
import { lineChecker, type CheckedLine } from './validate.ts';

/** The size of the pieces an import's file is kept in (the last may be shorter). */
const PIECE_BYTES = 1024 * 1024;
/** A line longer than a single creation's body limit is refused (413), as that creation would be. */
const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** Drops every piece of an import's file (past any piece number). */
const ALL_PIECES = 2 ** 31 - 1;
/** How many lines are checked between two turns of other work (the transaction in flight among them). */
const CHECK_SLICE = 25;
/** An import stops for refused lines only once it has read this many (a few bad first lines are no verdict). */
const MIN_LINES_TO_STOP = 100;

export interface ImportRequest {
  format: 'jsonl' | 'csv' | undefined;
  settings: ImportSettings;
  maxRefusedShare: number | undefined;
  upload: { stream: AsyncIterable<Buffer>; contentType: string | undefined; contentLength: number | undefined } | undefined;
  /**
   * Called in the transaction that makes the import the customer's (its row for a source_url, its
   * queueing once the upload is in): the activity log's entry (http/transfer.ts) commits with it.
   */
  recordCreated?: (repos: Repositories, record: ImportRecord) => Promise<void>;
}

const newImportId = (now: Date) => `imp_${newTaskId(now)}`;
const newToken = () => randomBytes(16).toString('hex');

/** The creation parameters a CSV column may name besides the type's own (TaskCreateCommon). */
const commonColumns = new Set([
  'callback_url',
  'instruction',
  'metadata',
  'unique_id',
  'clear_unique_id_on_error',
  'tags',
  'project',
  'batch',
  'project_param_version',
]);

/** How long the link signed for a manifest in the customer's bucket lives: the whole fetch. */
const manifestLinkSeconds = 3600;

/**
 * Where the file of `source_url` is fetched from: the URL itself, or, for an object of the
 * account's bucket (a manifest), a link signed with the connection's keys for that object alone.
 * Null when the account has no connection to that bucket any more.
 */
async function sourceLink(uow: UnitOfWork, job: ImportRecord, config: TransferConfig): Promise<string | null> {
  const url = job.settings.sourceUrl!;
  const object = bucketObject(url);
  if (!object) return url;
  const access = await uow.storage.forBucket(job.accountId, job.mode, object.provider, object.bucket);
  if (!access) return null;
  return presignedGet(access, object.key, manifestLinkSeconds, { allowPrivateNetworks: config.allowPrivateNetworks, timeoutMs: 15_000 });
}

/** The words of a template that name the object (ImportParams): its URL and its key. */
const URL_WORD = '{{url}}';
const KEY_WORD = '{{key}}';

/** The template with the object's URL and key put in its strings, at any depth; its URL as `attachment` when it names none. */
function filledTemplate(template: Json, url: string, key: string): Json {
  let named = false;
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (v.includes(URL_WORD)) named = true;
      return v.replaceAll(URL_WORD, url).replaceAll(KEY_WORD, key);
    }
    if (Array.isArray(v)) return v.map(fill);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  const filled = fill(template) as Json;
  return named ? filled : { ...filled, attachment: url };
}

/**
 * The lines of an import from a bucket prefix: one creation per object under it, from the
 * template, handed to `take` (false: stop). Null when done, else why the listing failed.
 */
async function prefixLines(
  uow: UnitOfWork,
  job: ImportRecord,
  where: NonNullable<ReturnType<typeof bucketPrefix>>,
  config: TransferConfig,
  take: (piece: Buffer) => Promise<boolean>,
): Promise<string | null> {
  const access = await uow.storage.forBucket(job.accountId, job.mode, where.provider, where.bucket);
  if (!access) return 'the account has no storage connection to its bucket any more';
  const scheme = bucketScheme(where.provider);
  try {
    for await (const key of listKeys(access, where.prefix, { allowPrivateNetworks: config.allowPrivateNetworks, timeoutMs: 15_000 })) {
      const line = filledTemplate(job.settings.params ?? {}, `${scheme}://${where.bucket}/${key}`, key);
      if (!(await take(Buffer.from(`${JSON.stringify(line)}\n`)))) return null;
    }
  } catch (err) {
    if (err instanceof StorageError) return err.message.replace(/\.$/, '');
    throw err;
  }
  return null;
}

/**
 * POST /v1/imports: checks what applies to the whole file (its type, project, batch), then keeps
 * the streamed body in pieces and answers the import, queued; or, with a source URL, answers it at
 * once in state `fetching` (a server process fetches it).
 */
export async function receiveImport(
  uow: UnitOfWork,
  caller: Caller,
  request: ImportRequest,
  config: TransferConfig,
): Promise<ImportRecord> {
  const { settings, upload } = request;
  const prefix = settings.sourceUrl === undefined ? null : bucketPrefix(settings.sourceUrl);
  const format = prefix ? 'jsonl' : (request.format ?? (upload?.contentType?.toLowerCase().startsWith('text/csv') ? 'csv' : 'jsonl'));
  const hasBody = upload !== undefined && upload.contentLength !== 0;
  if (settings.sourceUrl !== undefined && hasBody) throw invalid('Send the file as the request body or give source_url, not both.');
  if (settings.sourceUrl === undefined && !hasBody) throw invalid('Send the file as the request body, or give source_url.');
  const manifest = prefix ?? (settings.sourceUrl === undefined ? null : bucketObject(settings.sourceUrl));
  if (manifest && !(await uow.storage.forBucket(caller.account.accountId, caller.mode, manifest.provider, manifest.bucket)))
    throw invalid(
      `source_url ${settings.sourceUrl} is in bucket "${manifest.bucket}", and this account has no storage connection to ` +
        `${bucketScheme(manifest.provider)}://${manifest.bucket}/ in ${caller.mode} mode (POST /v1/storage/connections).`,
    );
  if (prefix && settings.type === undefined)
    throw invalid(`An import from a bucket prefix needs type: each object under ${settings.sourceUrl} becomes a task of that type.`);
  if (prefix && request.format === 'csv')
    throw invalid('An import from a bucket prefix makes one JSON line per object from the params template: format csv does not apply.');
  if (settings.type !== undefined)
    assertTypeEnabled(caller, loadContract('current').creations.get(`/v1/task/${settings.type}`)?.type ?? settings.type);
  if (settings.batch !== undefined) await getBatch(uow, caller, settings.batch);
  if (settings.project !== undefined) await projectByName(uow, caller, settings.project);
  if (upload?.contentLength !== undefined && upload.contentLength > config.importMaxBytes) throw tooLarge(config);
  const now = new Date();
  const token = newToken();
  const record: ImportRecord = {
    importId: newImportId(now),
    accountId: caller.account.accountId,
    mode: caller.mode,
    state: settings.sourceUrl !== undefined ? 'fetching' : 'receiving',
    format,
    settings,
    maxRefusedShare: request.maxRefusedShare ?? config.importMaxRefusedShare,
    bytesTotal: 0,
    bytesRead: 0,
    nextLine: 1,
    linesRead: 0,
    created: 0,
    duplicates: 0,
    refused: 0,
    batches: [],
    error: null,
    // While the upload arrives, its lease says it is alive; an upload that stops is deleted once it lapses.
    leaseUntil: settings.sourceUrl !== undefined ? null : new Date(now.getTime() + config.leaseMs),
    leaseToken: settings.sourceUrl !== undefined ? null : token,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  if (upload === undefined || settings.sourceUrl !== undefined) {
    await uow.transaction(async (repos) => {
      await repos.transfer.insertImport(record);
      await request.recordCreated?.(repos, record);
    });
    await uow.transfer.nudgeTransfers();
    return record;
  }
  await uow.transfer.insertImport(record);
  let received: number;
  try {
    received = await keepPieces(uow, record, token, upload.stream, config);
  } catch (err) {
    await uow.transfer.deleteImport(record.importId);
    throw err;
  }
  const queued: ImportRecord = { ...record, state: 'queued', bytesTotal: received, leaseUntil: null, updatedAt: new Date() };
  const kept = await uow.transaction(async (repos) => {
    if (!(await repos.transfer.saveImportProgress(record.importId, token, progressOf(queued), 0))) return false;
    await request.recordCreated?.(repos, queued);
    return true;
  });
  if (!kept) throw new Error(`import ${record.importId} was taken over while its upload arrived`);
  await uow.transfer.nudgeTransfers();
  return queued;
}

const tooLarge = (config: TransferConfig) =>
  new HttpError(413, `The file is larger than ${config.importMaxBytes} bytes, the import limit (IMPORT_MAX_BYTES).`);

/** Writes a stream into the import's pieces (PIECE_BYTES each but the last); the bytes kept. */
async function keepPieces(uow: UnitOfWork, record: ImportRecord, token: string, stream: AsyncIterable<Buffer>, config: TransferConfig) {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let total = 0;
  let seq = 0;
  const flush = async (all: boolean) => {
    while (pendingBytes >= PIECE_BYTES || (all && pendingBytes > 0)) {
      const joined = Buffer.concat(pending);
      const piece = joined.subarray(0, PIECE_BYTES);
      await uow.transfer.addImportChunk(record.importId, seq++, Buffer.from(piece));
      pending = joined.length > PIECE_BYTES ? [joined.subarray(PIECE_BYTES)] : [];
      pendingBytes = joined.length - piece.length;
      // Still arriving: the lease stays ahead.
      await uow.transfer.saveImportProgress(
        record.importId,
        token,
        progressOf({ ...record, bytesTotal: total, updatedAt: new Date(), leaseUntil: new Date(Date.now() + config.leaseMs) }),
        0,
      );
    }
  };
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > config.importMaxBytes) throw tooLarge(config);
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (pendingBytes >= PIECE_BYTES) await flush(false);
  }
  await flush(true);
  return total;
}

function progressOf(r: ImportRecord): ImportProgress {
  return {
    state: r.state,
    bytesTotal: r.bytesTotal,
    bytesRead: r.bytesRead,
    nextLine: r.nextLine,
    linesRead: r.linesRead,
    created: r.created,
    duplicates: r.duplicates,
    refused: r.refused,
    batches: r.batches,
    error: r.error,
    settings: r.settings,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
    leaseUntil: r.leaseUntil,
  };
}

/** The lease of an import was taken over by another process: this one stops working on it. */
class LeaseLost extends Error {}

/** The pieces of an import's file from the piece holding byte `from`, each cut to start there. */
async function* piecesFrom(uow: UnitOfWork, importId: string, from: number): AsyncGenerator<Buffer> {
  let seq = Math.floor(from / PIECE_BYTES);
  let skip = from - seq * PIECE_BYTES;
  for (;;) {
    const piece = await uow.transfer.importChunk(importId, seq++);
    if (!piece) return;
    yield skip > 0 ? piece.subarray(skip) : piece;
    skip = 0;
  }
}

/** A CSV row made a creation body: by the header's columns (see the contract's `attachment_column`). */
function rowBody(header: string[], attachmentColumn: string, cells: string[]): Json {
  const body: Json = {};
  const metadata: Json = {};
  header.forEach((column, i) => {
    const cell = cells[i];
    if (cell === undefined || cell === '') return;
    if (column === attachmentColumn) body.attachment = cell;
    else if (column.startsWith('metadata.')) metadata[column.slice('metadata.'.length)] = cell;
    else if (column === 'tags' && !cell.startsWith('[')) body.tags = cell.split(',').map((t) => t.trim());
    else if (cell.startsWith('[') || cell.startsWith('{')) {
      try {
        body[column] = JSON.parse(cell);
      } catch {
        body[column] = cell;
      }
    } else body[column] = cell;
  });
  if (Object.keys(metadata).length > 0) body.metadata = { ...((body.metadata as Json | undefined) ?? {}), ...metadata };
  return body;
}

/** Why a CSV header cannot be read into creations (a column that names nothing), or null. */
function headerProblem(header: string[], settings: ImportSettings): string | null {
  if (settings.type === undefined && !header.includes('type'))
    return 'A CSV import needs type: give it for the file, or name each row\'s in a column "type".';
  // Without the file's type, any type's parameters may be columns (each row is checked against its own).
  const creations = [...loadContract('current').creations.values()];
  const operations = settings.type === undefined ? creations : creations.filter((o) => o.path === `/v1/task/${settings.type}`);
  const attachmentColumn = settings.attachmentColumn ?? 'attachment';
  const known = (c: string) =>
    c === 'type' ||
    c === attachmentColumn ||
    c.startsWith('metadata.') ||
    commonColumns.has(c) ||
    operations.some((o) => o.paramNames.has(c));
  const unknown = header.filter((c) => !known(c));
  if (unknown.length > 0)
    return `The CSV header names ${unknown.map((c) => JSON.stringify(c)).join(', ')}, which ${unknown.length === 1 ? 'is' : 'are'} neither a creation parameter of ${settings.type ?? 'a task type'}, nor metadata.<key>, nor the attachment column ${JSON.stringify(attachmentColumn)}.`;
  if (new Set(header).size !== header.length) return 'The CSV header names a column twice.';
  return null;
}

/** The lease of an import was given back because this process stops: the next claim goes on from its cursor. */
class Stopping extends Error {}

/**
 * The import work of one server process: `round` claims a due import and reads it, group by group;
 * `stop` makes it give the import back after the group in hand (a graceful shutdown).
 */
export function importWorker(uow: UnitOfWork, config: TransferConfig, logger: Logger, now: () => Date = () => new Date()) {
  let stopping = false;
  /** Fetches an import's file from its source URL into its pieces (again from the start after a crash). */
  async function fetchSource(job: ImportRecord, token: string): Promise<ImportRecord> {
    let total = 0;
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let tooBig = false;
    const write = async (all: boolean) => {
      while (pendingBytes >= PIECE_BYTES || (all && pendingBytes > 0)) {
        const joined = Buffer.concat(pending);
        const piece = joined.subarray(0, PIECE_BYTES);
        await uow.transfer.addImportChunk(job.importId, seq++, Buffer.from(piece));
        pending = joined.length > PIECE_BYTES ? [joined.subarray(PIECE_BYTES)] : [];
        pendingBytes = joined.length - piece.length;
        const at = now();
        if (
          !(await uow.transfer.saveImportProgress(
            job.importId,
            token,
            progressOf({ ...job, bytesTotal: total, updatedAt: at, leaseUntil: new Date(at.getTime() + config.leaseMs) }),
            0,
          ))
        )
          throw new LeaseLost();
      }
    };
    // A fetch begun by a process that died starts again: what it kept is dropped first.
    await uow.transfer.saveImportProgress(job.importId, token, progressOf({ ...job, bytesTotal: 0 }), ALL_PIECES);
    const take = async (piece: Buffer) => {
      total += piece.length;
      if (total > config.importMaxBytes) {
        tooBig = true;
        return false;
      }
      pending.push(piece);
      pendingBytes += piece.length;
      await write(false);
      return true;
    };
    const failed = (error: string) => ({ ...job, state: 'failed' as const, error, finishedAt: now(), updatedAt: now(), leaseUntil: null });
    const prefix = bucketPrefix(job.settings.sourceUrl!);
    let next: ImportRecord;
    if (prefix) {
      const listFailure = await prefixLines(uow, job, prefix, config, take);
      if (listFailure !== null) next = failed(`The objects under source_url could not be listed: ${listFailure}.`);
      else if (tooBig)
        next = failed(
          `The objects under source_url make a file larger than ${config.importMaxBytes} bytes, the import limit (IMPORT_MAX_BYTES): import a narrower prefix.`,
        );
      else {
        await write(true);
        next = { ...job, state: 'running', bytesTotal: total, updatedAt: now() };
      }
      const drop = next.state === 'failed' ? ALL_PIECES : 0;
      if (!(await uow.transfer.saveImportProgress(job.importId, token, progressOf(next), drop))) throw new LeaseLost();
      return next;
    }
    const source = await sourceLink(uow, job, config);
    const answer = await safeRequest(source ?? 'about:no-connection', {
      method: 'GET',
      timeoutMs: Math.max(config.leaseMs * 10, 600_000),
      maxResponseBytes: 0,
      allowPrivateNetworks: [...config.allowPrivateNetworks],
      sink: take,
    });
    if (source === null)
      next = failed(`The file could not be fetched from source_url: the account has no storage connection to its bucket any more.`);
    else if (tooBig)
      next = failed(`The file at source_url is larger than ${config.importMaxBytes} bytes, the import limit (IMPORT_MAX_BYTES).`);
    else if (!answer.ok) next = failed(`The file could not be fetched from source_url: ${answer.error}: ${answer.message}.`);
    else if (answer.status !== 200)
      next = failed(`The file could not be fetched from source_url: the server answered ${answer.status}, not 200.`);
    else {
      await write(true);
      next = { ...job, state: 'running', bytesTotal: total, updatedAt: now() };
    }
    const drop = next.state === 'failed' ? ALL_PIECES : 0;
    if (!(await uow.transfer.saveImportProgress(job.importId, token, progressOf(next), drop))) throw new LeaseLost();
    return next;
  }

  /**
   * Reads the import from its cursor to its end (or until it stops), group by group, in two
   * stages: while one group's transaction runs, the next group's lines are checked (the database
   * writes as this process checks). Groups are written one after another, in the file's order.
   */
  async function read(claimed: ImportRecord, token: string): Promise<void> {
    let job = claimed;
    const account = await uow.accounts.findById(job.accountId);
    if (!account) throw new Error(`import ${job.importId}: account ${job.accountId} not found`);
    const checker = lineChecker(job.settings, config.allowPrivateNetworks);
    const csv = job.format === 'csv';
    let group: FileRecord[] = [];
    const flight: { writing: Promise<ImportRecord> | null } = { writing: null };
    /** Waits for the group being written; `job` is then the import as it stands after it. */
    const written = async () => {
      if (flight.writing) job = await flight.writing;
      flight.writing = null;
    };
    const records = fileRecords(
      piecesFrom(uow, job.importId, job.bytesRead),
      { offset: job.bytesRead, line: job.nextLine },
      MAX_LINE_BYTES,
      csv,
    );
    /** Writes `lines` once the group before them is written; false when the import stops there. */
    const next = async (lines: FileRecord[]) => {
      const checked = await checkGroup(job, lines, checker);
      await written();
      if (job.state === 'stopped') return false;
      if (stopping) {
        // Given back: whoever claims it next (this process after its restart, another now) goes on from here.
        await uow.transfer.saveImportProgress(job.importId, token, progressOf({ ...job, leaseUntil: null }), 0);
        throw new Stopping();
      }
      flight.writing = writeGroup(job, token, lines, checked);
      // Awaited by the next group or the end: a failure meanwhile is no unhandled rejection.
      flight.writing.catch(() => {});
      return true;
    };
    try {
      for await (const record of records) {
        if (csv && job.settings.header === undefined) {
          job = await readHeader(job, token, record);
          if (job.state === 'failed') return;
          continue;
        }
        group.push(record);
        if (group.length >= config.importGroupLines) {
          const lines = group;
          group = [];
          if (!(await next(lines))) return;
        }
      }
      if (group.length > 0 && !(await next(group))) return;
      await written();
    } finally {
      // Leaving early (an error, a stop): the group in hand is written or fails before the lease goes.
      await flight.writing?.catch(() => {});
    }
    if (job.state === 'stopped') return;
    const at = new Date();
    const done: ImportRecord = { ...job, state: 'completed', finishedAt: at, updatedAt: at, leaseUntil: null };
    // The end and the batches it leaves done, together: a batch completes (and calls back) once.
    await uow.transaction(async (repos) => {
      if (!(await repos.transfer.saveImportProgress(job.importId, token, progressOf(done), ALL_PIECES))) throw new LeaseLost();
      for (const name of done.batches) await settleBatch(repos, { account, mode: job.mode }, name, at);
    });
  }

  /** A group's records checked, a few at a time: the transaction of the group before goes on meanwhile. */
  async function checkGroup(job: ImportRecord, group: FileRecord[], checker: ReturnType<typeof lineChecker>) {
    const checked: CheckedLine[] = [];
    for (const record of group) {
      checked.push(checkRecord(job, record, checker));
      if (checked.length % CHECK_SLICE === 0) await yieldToOthers();
    }
    return checked;
  }

  async function readHeader(job: ImportRecord, token: string, record: FileRecord): Promise<ImportRecord> {
    const at = now();
    let header: string[] | null = null;
    try {
      header = record.text === null ? null : ((parseCsv(record.text) as string[][])[0] ?? []).map((c) => c.trim());
    } catch {
      header = null;
    }
    const problem = header === null ? 'The CSV header row cannot be read.' : headerProblem(header, job.settings);
    const next: ImportRecord = problem
      ? { ...job, state: 'failed', error: problem, finishedAt: at, updatedAt: at, leaseUntil: null }
      : {
          ...job,
          state: 'running',
          settings: { ...job.settings, header: header!, headerText: record.text! },
          bytesRead: record.end,
          nextLine: record.nextLine,
          updatedAt: at,
          leaseUntil: new Date(at.getTime() + config.leaseMs),
        };
    if (!(await uow.transfer.saveImportProgress(job.importId, token, progressOf(next), problem ? ALL_PIECES : 0))) throw new LeaseLost();
    return next;
  }

  /** A record checked as its creation request would be. */
  function checkRecord(job: ImportRecord, record: FileRecord, checker: ReturnType<typeof lineChecker>): CheckedLine {
    if (record.text === null) return { ok: false, statusCode: 413, error: 'The line is longer than 10 MB, the body limit of a creation.' };
    if (job.format === 'csv') {
      let cells: string[];
      try {
        cells = (parseCsv(record.text, { relax_column_count: true }) as string[][])[0] ?? [];
      } catch (err) {
        return { ok: false, statusCode: 400, error: `The row is not valid CSV: ${err instanceof Error ? err.message : String(err)}` };
      }
      const header = job.settings.header!;
      if (cells.length > header.length)
        return { ok: false, statusCode: 400, error: `The row has ${cells.length} values, but the header names ${header.length} columns.` };
      return checker.check(rowBody(header, job.settings.attachmentColumn ?? 'attachment', cells));
    }
    let parsed: unknown;
    try {
      checkJsonDepth(Buffer.from(record.text));
    } catch (err) {
      return { ok: false, statusCode: 400, error: err instanceof Error ? err.message : String(err) };
    }
    try {
      parsed = JSON.parse(record.text);
    } catch (err) {
      return {
        ok: false,
        statusCode: 400,
        error: notValidJson(err),
      };
    }
    return checker.check(parsed);
  }

  /** One group of records: their tasks, refused lines and the import's cursor, in one transaction. */
  async function writeGroup(job: ImportRecord, token: string, group: FileRecord[], checked: CheckedLine[]): Promise<ImportRecord> {
    const last = group.at(-1)!;
    for (let attempt = 1; ; attempt++) {
      try {
        return await uow.transaction(async (repos) => {
          const account = await repos.accounts.findById(job.accountId);
          if (!account) throw new Error(`import ${job.importId}: account ${job.accountId} not found`);
          const caller: Caller = { account, mode: job.mode };
          // Tasks are stamped with the wall clock, as a single creation's; the lease runs on the server's clock.
          const at = new Date();
          const leaseAt = now();
          const bulk: BulkCreation[] = [];
          const bulkIndex: number[] = [];
          checked.forEach((c, i) => {
            if (!c.ok) return;
            bulkIndex.push(i);
            bulk.push({ type: c.type, body: c.body, paramNames: c.operation.paramNames, checkMerged: c.operation.checkMerged, key: c.key });
          });
          const { outcomes, batches } = await createTasksInBulk(repos, caller, bulk, at);
          const refused: RefusedLine[] = [];
          let created = 0;
          let duplicates = 0;
          const outcomeOf = new Map(bulkIndex.map((index, i) => [index, outcomes[i]!]));
          group.forEach((record, i) => {
            const c = checked[i]!;
            const outcome = outcomeOf.get(i);
            if (!c.ok) refused.push({ line: record.line, statusCode: c.statusCode, error: c.error, text: record.text });
            else if (outcome && 'created' in outcome) created++;
            else if (outcome && 'duplicate' in outcome) duplicates++;
            else if (outcome && 'refused' in outcome) {
              const answer = toErrorAnswer(outcome.refused, 'current');
              refused.push({ line: record.line, statusCode: answer.status, error: answer.message, text: record.text });
            }
          });
          await repos.transfer.addRefusedLines(job.importId, refused);
          const next: ImportRecord = {
            ...job,
            state: 'running',
            bytesRead: last.end,
            nextLine: last.nextLine,
            linesRead: job.linesRead + group.length,
            created: job.created + created,
            duplicates: job.duplicates + duplicates,
            refused: job.refused + refused.length,
            batches: [...new Set([...job.batches, ...batches])],
            updatedAt: at,
            leaseUntil: new Date(leaseAt.getTime() + config.leaseMs),
          };
          if (next.linesRead >= MIN_LINES_TO_STOP && next.refused > next.maxRefusedShare * next.linesRead) {
            next.state = 'stopped';
            next.finishedAt = at;
            next.leaseUntil = null;
            next.error = `${next.refused} of the ${next.linesRead} lines read were refused, more than the allowed share ${next.maxRefusedShare}; the rest of the file was not read.`;
          }
          const drop = next.state === 'stopped' ? ALL_PIECES : Math.floor(next.bytesRead / PIECE_BYTES);
          if (!(await repos.transfer.saveImportProgress(job.importId, token, progressOf(next), drop))) throw new LeaseLost();
          return next;
        });
      } catch (err) {
        // Another import created one of these unique_ids meanwhile: the group is read again, and sees it.
        if (err instanceof UniqueIdTaken && attempt < 3) continue;
        throw err;
      }
    }
  }

  /** Claims one due import and works on it; true when one was claimed (more may be due). */
  async function round(): Promise<boolean> {
    if (stopping) return false;
    const token = newToken();
    const at = now();
    const job = await uow.transfer.claimImport(at, new Date(at.getTime() + config.leaseMs), token);
    if (!job) return false;
    try {
      if (job.state === 'receiving') {
        // Its upload stopped (the process receiving it died): the client got no answer, so no import.
        await uow.transfer.deleteImport(job.importId);
        return true;
      }
      let current = job;
      if (current.state === 'fetching') current = await fetchSource(current, token);
      if (current.state === 'failed') return true;
      await read(current, token);
    } catch (err) {
      if (err instanceof LeaseLost) logger.warn({ import: job.importId }, 'import taken over by another process');
      else if (!(err instanceof Stopping)) throw err;
    }
    return true;
  }
  return {
    round,
    stop() {
      stopping = true;
    },
  };
}
