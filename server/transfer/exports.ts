// Exports (issue 36): the tasks a list's filters match, written by a format (formats/) into one
// gzip file, kept in the database in pieces and fetched through a signed link (links.ts). A server
// process takes an export with a lease, reads the tasks in keyset pages (each its own statement:
// nothing is held between pages, so other requests go between them), and streams them through the
// format and gzip into the pieces: memory is bounded by a page. An export that a dead process had
// begun starts again from the beginning (its file was not visible yet).
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import type { Logger } from 'pino';
import { pack } from 'tar-stream';
import { bucketPrefix, bucketScheme } from '../domain/attachments.ts';
import { invalid } from '../domain/errors.ts';
import { newTaskId } from '../domain/ids.ts';
import type { Caller, Json, Task } from '../domain/model.ts';
import type { ExportProgress, ExportRecord, TaskFilters, UnitOfWork } from '../domain/ports.ts';
import { currentTaskView, legacyTaskView } from '../http/views/tasks.ts';
import { putObject, StorageError } from '../storage/s3.ts';
import type { FolderEntry, FormatContext, ImageSize, Scratch } from './formats/format.ts';
import { exportFormats } from './formats/index.ts';
import type { TransferConfig } from './settings.ts';

/** Tasks read per statement. */
const PAGE = 500;
/** The size of the pieces an export's file is kept in. */
const PIECE_BYTES = 1024 * 1024;
/** The image test-mode answers are made for (the contract's "Test-mode responses"). */
const TEST_MODE_IMAGE: ImageSize = { width: 1024, height: 768 };

export interface ExportRequest {
  filters: TaskFilters;
  filterQuery: Record<string, string>;
  format: string;
  view: 'current' | 'legacy';
  imageWidth: number | undefined;
  imageHeight: number | undefined;
  /** A folder of one of the account's buckets to write the file into (`s3://<bucket>/<prefix>/`). */
  target: string | undefined;
}

const dateFilters = ['startTime', 'endTime', 'completedAfter', 'completedBefore', 'updatedAfter', 'updatedBefore'] as const;

/** Filters as kept in the export's row (JSON: times as ISO text) and back. */
const filtersToJson = (f: TaskFilters): Record<string, unknown> =>
  Object.fromEntries(Object.entries(f).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]));
function filtersFromJson(json: Record<string, unknown>): TaskFilters {
  const f = { ...json } as Record<string, unknown>;
  for (const k of dateFilters) if (typeof f[k] === 'string') f[k] = new Date(f[k] as string);
  return f as TaskFilters;
}

/** POST /v1/exports: refuses a format that cannot write some matching type; else the export, queued. */
export async function requestExport(uow: UnitOfWork, caller: Caller, request: ExportRequest): Promise<ExportRecord> {
  const format = exportFormats.get(request.format);
  if (!format) throw invalid(`format ${request.format} is not an export format.`);
  const target = request.target === undefined ? null : bucketPrefix(request.target);
  if (request.target !== undefined && !target)
    throw invalid(
      `target ${request.target} is not a bucket folder: give s3://<bucket>/ or s3://<bucket>/<prefix>/ (gs:// for Google Cloud Storage).`,
    );
  if (target && !(await uow.storage.forBucket(caller.account.accountId, caller.mode, target.provider, target.bucket)))
    throw invalid(
      `target ${request.target} is in bucket "${target.bucket}", and this account has no storage connection to ` +
        `${bucketScheme(target.provider)}://${target.bucket}/ in ${caller.mode} mode (POST /v1/storage/connections).`,
    );
  const now = new Date();
  // The tasks created up to now: a task created while the export is written is not in it.
  const filters: TaskFilters = {
    ...request.filters,
    endTime: request.filters.endTime && request.filters.endTime < now ? request.filters.endTime : now,
  };
  const types = await uow.tasks.typesOf(caller.account.accountId, caller.mode, filters);
  const total = [...types.values()].reduce((a, b) => a + b, 0);
  if (format.types) {
    const unfit = [...types].filter(([type]) => !format.types!.has(type));
    if (unfit.length > 0) {
      const n = unfit.reduce((a, [, count]) => a + count, 0);
      throw invalid(
        `The format ${format.name} cannot write tasks of type ${unfit.map(([t]) => t).join(', ')} (${n} of the ${total} matching tasks); it writes ${[...format.types].join(', ')}. Filter by type, or choose jsonl or csv.`,
      );
    }
  }
  const record: ExportRecord = {
    exportId: `exp_${newTaskId(now)}`,
    accountId: caller.account.accountId,
    mode: caller.mode,
    state: 'queued',
    format: format.name,
    view: request.view,
    filterQuery: request.filterQuery,
    filters: filtersToJson(filters),
    options: {
      ...(request.imageWidth !== undefined ? { imageWidth: request.imageWidth } : {}),
      ...(request.imageHeight !== undefined ? { imageHeight: request.imageHeight } : {}),
      ...(request.target !== undefined ? { target: request.target } : {}),
    },
    tasksTotal: total,
    tasksWritten: 0,
    skipped: [],
    sizeBytes: null,
    error: null,
    leaseUntil: null,
    leaseToken: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    expiresAt: null,
  };
  await uow.transfer.insertExport(record);
  await uow.transfer.nudgeTransfers();
  return record;
}

/** The file's name: the export id and the format's suffix. */
export const exportFileName = (r: Pick<ExportRecord, 'exportId' | 'format'>) =>
  `${r.exportId}.${exportFormats.get(r.format)?.suffix ?? 'gz'}`;

/** The bucket folder the export is written into as well, as asked; null when none. */
export const exportTarget = (r: Pick<ExportRecord, 'options'>): string | null =>
  typeof r.options.target === 'string' ? r.options.target : null;

/** The object an export with a target is written to: the folder and the file's name. */
export const exportTargetUrl = (r: Pick<ExportRecord, 'exportId' | 'format' | 'options'>): string | null => {
  const target = exportTarget(r);
  return target === null ? null : `${target}${exportFileName(r)}`;
};

class LeaseLost extends Error {}

/** A scratch file in the system's temp folder, removed once read (or when the export ends). */
async function scratchFile(): Promise<Scratch & { remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'humantask-export-'));
  const file = path.join(dir, 'scratch');
  const out = createWriteStream(file);
  return {
    async write(text) {
      if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    },
    async *drain() {
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      yield* createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 }) as AsyncIterable<string>;
      await rm(dir, { recursive: true, force: true });
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The image size of a task: its metadata's, else the export's option, else test mode's stand-in. */
function imageSizeOf(task: Task, options: Record<string, unknown>): ImageSize | null {
  const m = task.metadata as Json;
  const w = Number(m.width);
  const h = Number(m.height);
  if (Number.isFinite(w) && Number.isFinite(h) && w > 0 && h > 0) return { width: w, height: h };
  if (typeof options.imageWidth === 'number' && typeof options.imageHeight === 'number')
    return { width: options.imageWidth, height: options.imageHeight };
  return task.mode === 'test' ? TEST_MODE_IMAGE : null;
}

/** The export work of one server process: claims due exports and writes them; expires old files. */
export function exportWorker(uow: UnitOfWork, config: TransferConfig, logger: Logger, now: () => Date = () => new Date()) {
  async function write(job: ExportRecord, token: string): Promise<void> {
    const format = exportFormats.get(job.format);
    const fail = async (error: string) => {
      const at = now();
      await uow.transfer.saveExportProgress(job.exportId, token, {
        ...progressOf(job),
        state: 'failed',
        error,
        finishedAt: at,
        updatedAt: at,
        leaseUntil: null,
      });
    };
    if (!format) return fail(`format ${job.format} is not an export format of this server`);
    await uow.transfer.clearExportFile(job.exportId);
    const filters = filtersFromJson(job.filters);
    const skipped = new Map<string, number>();
    let written = 0;
    let lastSaved = Date.now();
    const scratches: Awaited<ReturnType<typeof scratchFile>>[] = [];
    const renew = async (force = false) => {
      if (!force && Date.now() - lastSaved < 1000) return;
      lastSaved = Date.now();
      const at = now();
      const saved = await uow.transfer.saveExportProgress(job.exportId, token, {
        ...progressOf(job),
        state: 'running',
        tasksWritten: written,
        skipped: [...skipped].map(([reason, count]) => ({ reason, count })),
        updatedAt: at,
        leaseUntil: new Date(at.getTime() + config.leaseMs),
      });
      if (!saved) throw new LeaseLost();
    };
    async function* tasks(): AsyncIterable<Task> {
      let after: { createdAt: Date; taskId: string } | null = null;
      for (;;) {
        const page: Task[] = await uow.tasks.listAfter(job.accountId, job.mode, filters, after, PAGE);
        for (const task of page) {
          yield task;
          written++;
        }
        await renew();
        if (page.length < PAGE) return;
        const last = page.at(-1)!;
        after = { createdAt: last.createdAt, taskId: last.taskId };
        // Other requests' statements go before the next page's.
        await yieldToOthers();
      }
    }
    // The ontology of the one project the export is filtered to, if it is one.
    const only = filters.projects?.length === 1 ? filters.projects[0] : undefined;
    const project = only ? await uow.projects.get(job.accountId, job.mode, only) : null;
    const ontology = project ? (await uow.projects.ontologyVersions([project.projectId])).at(-1)?.ontology : undefined;
    const ctx: FormatContext = {
      view: job.view === 'legacy' ? (t) => legacyTaskView(t) as unknown as Json : (t) => currentTaskView(t) as unknown as Json,
      imageSize: (t) => imageSizeOf(t, job.options),
      skip: (reason, count = 1) => skipped.set(reason, (skipped.get(reason) ?? 0) + count),
      ontologyLabels: ontologyLabels(ontology ?? []),
      scratch: () => {
        const s = scratchFile();
        s.then((x) => scratches.push(x));
        return lazyScratch(s);
      },
    };
    const bytes =
      format.writer.kind === 'file' ? Readable.from(format.writer.write(tasks(), ctx)) : tarOf(format.writer.write(tasks(), ctx));
    let seq = 0;
    let size = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async (all: boolean) => {
      while (pendingBytes >= PIECE_BYTES || (all && pendingBytes > 0)) {
        const joined = Buffer.concat(pending);
        const piece = joined.subarray(0, PIECE_BYTES);
        await uow.transfer.addExportChunk(job.exportId, seq++, Buffer.from(piece));
        pending = joined.length > PIECE_BYTES ? [joined.subarray(PIECE_BYTES)] : [];
        pendingBytes = joined.length - piece.length;
      }
    };
    try {
      await pipeline(bytes, createGzip(), async (gz: AsyncIterable<Buffer>) => {
        for await (const chunk of gz) {
          size += chunk.length;
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes >= PIECE_BYTES) await flush(false);
        }
        await flush(true);
      });
    } finally {
      for (const s of scratches) await s.remove();
    }
    const unwritten = await writeToTarget(job, size);
    if (unwritten !== null) {
      await uow.transfer.clearExportFile(job.exportId);
      return fail(unwritten);
    }
    const at = now();
    const saved = await uow.transfer.saveExportProgress(job.exportId, token, {
      state: 'completed',
      tasksWritten: written,
      skipped: [...skipped].map(([reason, count]) => ({ reason, count })),
      sizeBytes: size,
      error: null,
      updatedAt: at,
      finishedAt: at,
      expiresAt: new Date(at.getTime() + config.exportRetentionMs),
      leaseUntil: null,
    });
    if (!saved) throw new LeaseLost();
  }

  /** Puts the whole file into the export's target folder, if it has one: null when done (or none), else why not. */
  async function writeToTarget(job: ExportRecord, size: number): Promise<string | null> {
    const url = exportTargetUrl(job);
    const where = url === null ? null : bucketPrefix(exportTarget(job)!);
    if (url === null || where === null) return null;
    const access = await uow.storage.forBucket(job.accountId, job.mode, where.provider, where.bucket);
    if (!access) return `The file could not be written to ${url}: the account has no storage connection to its bucket any more.`;
    async function* pieces(): AsyncIterable<Buffer> {
      for (let seq = 0; ; ) {
        const page = await uow.transfer.exportChunks(job.exportId, seq, 4);
        for (const p of page) yield p.data;
        if (page.length < 4) return;
        seq = page.at(-1)!.seq + 1;
      }
    }
    try {
      await putObject(
        access,
        `${where.prefix}${exportFileName(job)}`,
        pieces(),
        { size, contentType: 'application/gzip' },
        { allowPrivateNetworks: config.allowPrivateNetworks, timeoutMs: Math.max(config.leaseMs, 60_000) },
      );
      return null;
    } catch (err) {
      if (err instanceof StorageError) return `The file could not be written to ${url}: ${err.message}`;
      throw err;
    }
  }

  /** Expires kept files past their time, then claims one due export and writes it; true when one was claimed. */
  async function round(): Promise<boolean> {
    await uow.transfer.expireExports(now());
    const token = randomBytes(16).toString('hex');
    const at = now();
    const job = await uow.transfer.claimExport(at, new Date(at.getTime() + config.leaseMs), token);
    if (!job) return false;
    try {
      await write(job, token);
    } catch (err) {
      if (err instanceof LeaseLost) logger.warn({ export: job.exportId }, 'export taken over by another process');
      else {
        logger.error({ err, export: job.exportId }, 'export failed');
        const end = now();
        await uow.transfer.saveExportProgress(job.exportId, token, {
          ...progressOf(job),
          state: 'failed',
          error: 'The file could not be written (the server logged why); ask for the export again.',
          finishedAt: end,
          updatedAt: end,
          leaseUntil: null,
        });
      }
    }
    return true;
  }
  return { round };
}

function progressOf(r: ExportRecord): ExportProgress {
  return {
    state: r.state,
    tasksWritten: r.tasksWritten,
    skipped: r.skipped,
    sizeBytes: r.sizeBytes,
    error: r.error,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
    expiresAt: r.expiresAt,
    leaseUntil: r.leaseUntil,
  };
}

/** A scratch made when first written to (the context hands one out at once). */
function lazyScratch(made: Promise<Scratch>): Scratch {
  return {
    write: async (text) => (await made).write(text),
    async *drain() {
      yield* (await made).drain();
    },
  };
}

/** The choices of an ontology, subchoices after their parent, as labels (strings or `choice`). */
function ontologyLabels(ontology: unknown[]): string[] {
  const out: string[] = [];
  const walk = (items: unknown[]) => {
    for (const item of items) {
      if (typeof item === 'string') out.push(item);
      else if (item && typeof item === 'object') {
        const { choice, subchoices } = item as { choice?: unknown; subchoices?: unknown };
        if (typeof choice === 'string') out.push(choice);
        if (Array.isArray(subchoices)) walk(subchoices);
      }
    }
  };
  walk(ontology);
  return [...new Set(out)];
}

/** A folder's files as a tar archive (tar-stream), entry by entry. */
function tarOf(entries: AsyncIterable<FolderEntry>): Readable {
  const archive = pack();
  (async () => {
    for await (const entry of entries) {
      const content = Buffer.from(entry.content, 'utf8');
      await new Promise<void>((resolve, reject) =>
        archive.entry({ name: entry.name, size: content.length, mtime: new Date(0) }, content, (err) => (err ? reject(err) : resolve())),
      );
    }
    archive.finalize();
  })().catch((err: unknown) => archive.destroy(err instanceof Error ? err : new Error(String(err))));
  return archive as unknown as Readable;
}
