// Responses kept as files (decision record 24): a video response's `annotations` and `events`, and
// a large response's `annotations`, come as signed links (`ResultFile`). `withResultFiles` fetches
// them with the client's key and gives the task (or callback body) with the arrays in their place.
import type { Client } from 'openapi-fetch';
import type { CurrentComponents, CurrentPaths } from './types.ts';

type Schemas = CurrentComponents['schemas'];
/** A link to a part of a response kept as a file. */
export type ResultFile = Schemas['ResultFile'];
/** The responses that carry links instead of their bulk. */
type FilesResponse = Schemas['AnnotationsFileResponse'] | Schemas['VideoPlaybackAnnotationFilesResponse'];

/** `T` (a task, or a task callback's body) with its response's files fetched: the type's own response shape. */
export type WithResultFiles<T> = T extends { response?: infer R } ? Omit<T, 'response'> & { response?: Exclude<R, FilesResponse> } : T;

const isResultFile = (v: unknown): v is ResultFile =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as ResultFile).url === 'string' && 'expires_at' in v;

/** Reads one file through the client (its key, retries and errors): the array it holds. */
export async function fetchResultFile(client: Client<CurrentPaths, 'application/json'>, file: ResultFile): Promise<unknown[]> {
  const url = new URL(file.url);
  const match = /\/v1\/task\/([^/]+)\/files\/(annotations|events)$/.exec(url.pathname);
  if (!match) throw new TypeError(`humantask client: ${file.url} is not a result file link`);
  const { data, error, response } = await client.GET('/v1/task/{taskId}/files/{file}', {
    params: {
      path: { taskId: decodeURIComponent(match[1]!), file: match[2] as 'annotations' | 'events' },
      query: { expires: Number(url.searchParams.get('expires')), signature: url.searchParams.get('signature') ?? '' },
    },
  });
  if (error !== undefined || !Array.isArray(data))
    throw new Error(`humantask client: reading ${url.pathname} failed (HTTP ${response.status}): ${JSON.stringify(error)}`);
  return data;
}

/**
 * The task (or a task callback's body) with every file its response links fetched and put in
 * place, so that the response has its type's inline shape. A response without links is returned
 * as it is; nothing is fetched.
 */
export async function withResultFiles<T extends { response?: unknown }>(
  client: Client<CurrentPaths, 'application/json'>,
  task: T,
): Promise<WithResultFiles<T>> {
  const response = task.response;
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return task as WithResultFiles<T>;
  const entries = Object.entries(response as Record<string, unknown>);
  if (!entries.some(([, v]) => isResultFile(v))) return task as WithResultFiles<T>;
  const inline: Record<string, unknown> = {};
  for (const [name, value] of entries) inline[name] = isResultFile(value) ? await fetchResultFile(client, value) : value;
  return { ...task, response: inline } as WithResultFiles<T>;
}
