// `humantask import` and `humantask export`: a client of the API (any server of it, by --url and
// --key), with a progress bar (cli-progress) on standard error while the import is read or the
// export written. What they print on standard output is the final import or export (JSON).
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { SingleBar } from 'cli-progress';

export interface ApiTarget {
  url: string;
  key: string;
}

const auth = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

/** A failed request: its status and the server's message (exit 1). */
export class ApiError extends Error {}

async function answer(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: the status says it
  }
  if (!res.ok) throw new ApiError(`${res.status}: ${String(body.error ?? (text || res.statusText))}`);
  return body;
}

function bar(label: string, total: number, quiet: boolean) {
  if (quiet) return null;
  const b = new SingleBar({ format: `${label} [{bar}] {percentage}% {value}/{total} {unit}`, stream: process.stderr, hideCursor: false });
  b.start(total, 0, { unit: '' });
  return b;
}

/** Polls `path` until `done`, moving a bar from `progress`. */
async function follow(
  target: ApiTarget,
  path: string,
  done: (r: Record<string, unknown>) => boolean,
  progress: (r: Record<string, unknown>) => [number, number, string],
  label: string,
  quiet: boolean,
) {
  let progressBar: ReturnType<typeof bar> = null;
  for (;;) {
    const r = await answer(await fetch(`${target.url}${path}`, { headers: { authorization: auth(target.key) } }));
    const [value, total, unit] = progress(r);
    if (!progressBar) progressBar = bar(label, Math.max(1, total), quiet);
    progressBar?.setTotal(Math.max(1, total));
    progressBar?.update(value, { unit });
    if (done(r)) {
      progressBar?.stop();
      return r;
    }
    await sleep(250);
  }
}

export interface ImportOptions {
  file: string;
  type?: string;
  project?: string;
  batch?: string;
  format?: string;
  attachmentColumn?: string;
  params?: string;
  quiet: boolean;
}

/** Uploads the file (streamed), then follows the import until it ends: the import. */
export async function runImport(target: ApiTarget, o: ImportOptions): Promise<Record<string, unknown>> {
  const query = new URLSearchParams();
  for (const [k, v] of [
    ['type', o.type],
    ['project', o.project],
    ['batch', o.batch],
    ['format', o.format],
    ['attachment_column', o.attachmentColumn],
    ['params', o.params],
  ] as const)
    if (v !== undefined) query.set(k, v);
  const csv = o.format === 'csv' || (o.format === undefined && o.file.toLowerCase().endsWith('.csv'));
  const size = statSync(o.file).size;
  const upload = bar('upload', size, o.quiet);
  let sent = 0;
  const stream = createReadStream(o.file);
  stream.on('data', (chunk) => {
    sent += chunk.length;
    upload?.update(sent, { unit: 'bytes' });
  });
  const res = await fetch(`${target.url}/v1/imports?${query}`, {
    method: 'POST',
    headers: { authorization: auth(target.key), 'content-type': csv ? 'text/csv' : 'application/x-ndjson', 'content-length': String(size) },
    body: Readable.toWeb(stream) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  upload?.stop();
  const posted = await answer(res);
  return follow(
    target,
    `/v1/imports/${String(posted.import_id)}`,
    (r) => ['completed', 'stopped', 'failed'].includes(String(r.state)),
    (r) => [
      Number(r.bytes_read),
      Number(r.bytes_total),
      `bytes, ${String(r.created)} created, ${String(r.duplicates)} duplicates, ${String(r.refused)} refused`,
    ],
    'import',
    o.quiet,
  );
}

export interface ExportOptions {
  format: string;
  filters: Record<string, string[]>;
  view?: string;
  imageWidth?: string;
  imageHeight?: string;
  output: string;
  quiet: boolean;
}

/** Asks for the export, follows it, and downloads its file to `output`: the export. */
export async function runExport(target: ApiTarget, o: ExportOptions): Promise<Record<string, unknown>> {
  const query = new URLSearchParams();
  for (const [k, values] of Object.entries(o.filters)) for (const v of values) query.append(k, v);
  const body = {
    format: o.format,
    ...(o.view !== undefined ? { view: o.view } : {}),
    ...(o.imageWidth !== undefined ? { image_width: o.imageWidth } : {}),
    ...(o.imageHeight !== undefined ? { image_height: o.imageHeight } : {}),
  };
  const asked = await answer(
    await fetch(`${target.url}/v1/exports?${query}`, {
      method: 'POST',
      headers: { authorization: auth(target.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
  const done = await follow(
    target,
    `/v1/exports/${String(asked.export_id)}`,
    (r) => !['queued', 'running'].includes(String(r.state)),
    (r) => [Number(r.tasks_written), Number(r.tasks_total), 'tasks'],
    'export',
    o.quiet,
  );
  if (done.state !== 'completed') throw new ApiError(`the export ended ${String(done.state)}: ${String(done.error ?? '')}`);
  const file = await fetch(String(done.download_url));
  if (!file.ok || !file.body) throw new ApiError(`the download answered ${file.status}`);
  await pipeline(Readable.fromWeb(file.body as import('node:stream/web').ReadableStream), createWriteStream(o.output));
  return done;
}
