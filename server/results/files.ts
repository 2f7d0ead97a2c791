// Responses kept as files (issue 37, decision record 24). A video response's `annotations` and
// `events`, and another response's `annotations` when the response is larger than
// RESULT_INLINE_MAX_BYTES, are written as files: into the account's newest storage connection of
// the task's mode, else under RESULTS_DIR. The API and the callbacks then show signed, expiring
// links to GET /v1/task/{taskId}/files/{file} in their place. The task's row keeps the whole
// response as well (the work loop, quality checks and exports read it), so a file can always be
// written again from it.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Json, ResultFileName, ResultFilesRecord, Task } from '../domain/model.ts';
import type { Repositories, ResultWriter } from '../domain/ports.ts';
import { getObject, putObject, StorageError, type BucketAccess, type StorageNetwork } from '../storage/s3.ts';

/** The video types: their tracks and events are always files, as Scale's video responses link them. */
const videoTypes = new Set(['videoplaybackannotation']);
/** The other types whose response has an `annotations` array: it is a file when the response is large. */
const annotationTypes = new Set([
  'annotation',
  'pointannotation',
  'lineannotation',
  'polygonannotation',
  'imageannotation',
  'documenttranscription',
  'namedentityrecognition',
]);

export interface ResultSettings {
  /** RESULT_INLINE_MAX_BYTES: a larger response (as JSON) keeps its `annotations` in a file. */
  inlineMaxBytes: number;
  /** RESULT_LINK_SECONDS, in ms: how long a link lives. */
  linkMs: number;
  /** RESULTS_DIR: where files are kept for an account without a storage connection. */
  dir: string;
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** Which parts of a task's response are files (none while it is not completed, or for an error response). */
function resultFileNames(task: Pick<Task, 'type' | 'status' | 'response'>, inlineMaxBytes: number): ResultFileName[] {
  const r = task.response;
  if (task.status !== 'completed' || r === null || typeof r !== 'object' || Array.isArray(r) || 'error' in r) return [];
  if (videoTypes.has(task.type)) return (['annotations', 'events'] as const).filter((f) => Array.isArray(r[f]));
  if (annotationTypes.has(task.type) && Array.isArray(r.annotations) && bytesOf(r) > inlineMaxBytes) return ['annotations'];
  return [];
}

/** JSON with every object's keys sorted: the same response read back from the database (jsonb orders keys its own way) hashes alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

const responseHash = (response: Json | null) => createHash('sha256').update(canonical(response)).digest('hex');

const purpose = 'result file';

/** Signs and shows result file links; `baseUrl` is where the API is reached (PUBLIC_URL, else where the server listens). */
export interface ResultLinks {
  settings: ResultSettings;
  /** The clock links expire by (the server's: tests move it). */
  now: () => Date;
  /** The task as the API and its callbacks show it: its files' parts as links. */
  show(task: Task): Task;
  /** Whether a link's signature holds (its expiry is checked apart). */
  verify(taskId: string, file: string, expires: number, signature: string): boolean;
}

export function resultLinks(
  settings: ResultSettings,
  sign: (purpose: string, message: string) => string,
  baseUrl: () => string,
  now: () => Date,
): ResultLinks {
  const signatureOf = (taskId: string, file: string, expires: number) => sign(purpose, `${taskId}\n${file}\n${expires}`);
  return {
    settings,
    now,
    show(task) {
      const names = resultFileNames(task, settings.inlineMaxBytes);
      if (names.length === 0) return task;
      const expires = Math.floor((now().getTime() + settings.linkMs) / 1000);
      const response = { ...(task.response as Record<string, Json>) };
      for (const file of names)
        response[file] = {
          url: `${baseUrl()}/v1/task/${encodeURIComponent(task.taskId)}/files/${file}?expires=${expires}&signature=${signatureOf(task.taskId, file, expires)}`,
          expires_at: new Date(expires * 1000).toISOString(),
        };
      return { ...task, response };
    },
    verify(taskId, file, expires, signature) {
      const expected = Buffer.from(signatureOf(taskId, file, expires));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** The bucket files of a task: under one folder per task and response, so a redo never overwrites what a link read. */
const bucketKey = (task: Task, sha: string, file: ResultFileName) =>
  `humantask-results/${task.mode}/${task.taskId}/${sha.slice(0, 16)}/${file}.json`;
const localKey = (task: Task, sha: string, file: ResultFileName) =>
  join(task.accountId, task.mode, task.taskId, `${sha.slice(0, 16)}-${file}.json`);

/** A file under `dir`, whole or not at all: written to a temporary name, flushed, then renamed into place. */
async function writeLocal(dir: string, key: string, bytes: Buffer) {
  const path = join(dir, key);
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.partial`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

/** The connection a task's files go to: the account's newest in the task's mode, with its secret. */
async function resultBucket(repos: Repositories, task: Task): Promise<(BucketAccess & { connectionId: string }) | null> {
  const newest = (await repos.storage.list(task.accountId, task.mode)).at(-1);
  if (!newest) return null;
  return repos.storage.forBucket(task.accountId, task.mode, newest.provider, newest.bucket);
}

/** Whether the task's response has files that its row does not name yet. */
const filesWanted = (task: Task, settings: ResultSettings) =>
  resultFileNames(task, settings.inlineMaxBytes).length > 0 && task.resultFiles?.sha256 !== responseHash(task.response);

/**
 * Writes the files of the task's response (when it has any its row does not name yet) and sets
 * `task.resultFiles` to where they are; the caller records that. Never inside a transaction (a
 * slow bucket would hold its connection). The names hold the response's hash, and a file is whole
 * or absent, so a file no row names yet is no harm (decision record 24). A bucket that refuses the
 * file (no s3:PutObject, gone) is no loss: the file is kept under RESULTS_DIR instead.
 */
async function writeResultFiles(task: Task, repos: Repositories, settings: ResultSettings, net: StorageNetwork) {
  const names = resultFileNames(task, settings.inlineMaxBytes);
  if (names.length === 0) return;
  const sha = responseHash(task.response);
  if (task.resultFiles?.sha256 === sha) return;
  const response = task.response as Record<string, Json>;
  const contents = names.map((file) => ({ file, bytes: Buffer.from(JSON.stringify(response[file])) }));
  const bucket = await resultBucket(repos, task);
  if (bucket) {
    try {
      const files: ResultFilesRecord['files'] = {};
      for (const { file, bytes } of contents) {
        const key = bucketKey(task, sha, file);
        // The bytes themselves, not a stream of them: the S3 client can send them again when a
        // kept-alive connection closes under the upload.
        await putObject(bucket, key, bytes, { size: bytes.length, contentType: 'application/json' }, net);
        files[file] = { key, bytes: bytes.length };
      }
      const where = { kind: 'bucket' as const, connectionId: bucket.connectionId, provider: bucket.provider, bucket: bucket.bucket };
      task.resultFiles = { sha256: sha, where, files };
      return;
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
    }
  }
  const files: ResultFilesRecord['files'] = {};
  for (const { file, bytes } of contents) {
    const key = localKey(task, sha, file);
    await writeLocal(settings.dir, key, bytes);
    files[file] = { key, bytes: bytes.length };
  }
  task.resultFiles = { sha256: sha, where: { kind: 'local' }, files };
}

/**
 * Writes the task's files, then records them in its row while it still holds this response: the
 * one way files are kept, after a task is written (the store, ports.ts ResultWriter) and when a
 * link is read before that was done (readResultFile). A task that moved on meanwhile (another
 * answer, a redo) keeps the record of its own response; the files written stay unnamed.
 */
async function writeAndRecord(task: Task, repos: Repositories, settings: ResultSettings, net: StorageNetwork) {
  const before = task.resultFiles;
  await writeResultFiles(task, repos, settings, net);
  if (!task.resultFiles || task.resultFiles === before) return;
  if (!(await repos.tasks.setResultFiles(task.taskId, task.response as Json, task.resultFiles))) task.resultFiles = before;
}

/** The writer the store calls once a task is written (ports.ts ResultWriter); `warn` hears of a write that failed after a commit. */
export function resultWriter(settings: ResultSettings, net: StorageNetwork, warn: (message: string) => void): ResultWriter {
  return {
    wanted: (task) => filesWanted(task, settings),
    writeAndRecord: (task, repos) => writeAndRecord(task, repos, settings, net),
    failed: (task, err) =>
      warn(
        `the response files of task ${task.taskId} could not be written (${err instanceof Error ? err.message : String(err)}); they are written when a link to them is read`,
      ),
  };
}

/**
 * One file of a task, to answer: written again first when the row names none for its current
 * response (a server stopped between the two, or settings changed); null when the task's response
 * has no such file, or its bucket connection is gone.
 */
export async function readResultFile(
  repos: Repositories,
  task: Task,
  file: ResultFileName,
  settings: ResultSettings,
  net: StorageNetwork,
): Promise<{ bytes: number; body: AsyncIterable<Buffer> } | null> {
  if (!resultFileNames(task, settings.inlineMaxBytes).includes(file)) return null;
  if (task.resultFiles?.sha256 !== responseHash(task.response) || !task.resultFiles.files[file])
    await writeAndRecord(task, repos, settings, net);
  const record = task.resultFiles;
  const stored = record?.files[file];
  if (!record || !stored) return null;
  if (record.where.kind === 'local') {
    const path = join(settings.dir, stored.key);
    const found = await stat(path).catch(() => null);
    if (!found) {
      // Lost from the disk: written again from the row (which keeps the response).
      await writeLocal(settings.dir, stored.key, Buffer.from(JSON.stringify((task.response as Record<string, Json>)[file])));
    }
    return { bytes: stored.bytes, body: createReadStream(path) };
  }
  const connection = await repos.storage.get(task.accountId, task.mode, record.where.connectionId);
  if (!connection) return null;
  const access = await repos.storage.forBucket(task.accountId, task.mode, connection.provider, connection.bucket);
  if (!access) return null;
  try {
    return { bytes: stored.bytes, body: await getObject(access, stored.key, net) };
  } catch (err) {
    if (err instanceof StorageError) return null;
    throw err;
  }
}
