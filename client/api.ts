// Convenience methods, thin over the typed paths: each one is a single `client.request(...)` on the
// contract's path; their types (client/types.ts) come from the same generated operation.
// biome-ignore-all lint/suspicious/noExplicitAny: one loose signature inside serves both generations; the types callers see (types.ts) are exact
import type { Client } from 'openapi-fetch';
import { HumantaskError } from './errors.ts';
import type { Api, CreateOptions, ErrorBody, IterateOptions, RequestOptions } from './types.ts';

type Method = 'get' | 'post' | 'put' | 'delete';
type Params = { path?: Record<string, string>; query?: Record<string, unknown>; header?: Record<string, string> };
interface Init {
  params?: Params;
  body?: unknown;
  signal?: AbortSignal | undefined;
  headers?: Record<string, string> | undefined;
}
interface LooseResult {
  ok: boolean;
  status: number;
  data?: any;
  error?: ErrorBody;
  response: Response;
}
type Item = Record<string, any>;

const TASK = '/v1/task/{taskId}';
const PROJECT = '/v1/projects/{projectName}';
const BATCH = '/v1/batches/{batchName}';

const init = (o: RequestOptions | undefined, rest: Omit<Init, 'signal' | 'headers'> = {}): Init => ({
  ...rest,
  signal: o?.signal,
  headers: o?.headers,
});

const creationInit = (body: unknown, o: CreateOptions | undefined): Init => ({
  body,
  signal: o?.signal,
  headers: o?.idempotencyKey ? { ...o.headers, 'Idempotency-Key': o.idempotencyKey } : o?.headers,
});

/** Tasks and training tasks are listed by `created_at` descending, ties by id descending. */
const olderThan = (idKey: string) => (a: Item, b: Item) => {
  const ta = Date.parse(a.created_at);
  const tb = Date.parse(b.created_at);
  return ta < tb || (ta === tb && a[idKey] < b[idKey]);
};

// The raw client is typed per generation outside; inside, one loose signature serves both.
export function buildApi(raw: Client<any>, generation: 'current' | 'legacy'): Api<any, boolean> {
  const send = async (method: Method, path: string, i: Init): Promise<LooseResult> => {
    const { data, error, response } = await (raw.request as (m: string, p: string, i: Init) => Promise<any>)(method, path, i);
    return response.ok ? { ok: true, status: response.status, data, response } : { ok: false, status: response.status, error, response };
  };

  /** One page for the iterators, which have no result to hand an error to: they throw it. */
  const page = async (path: string, query: Record<string, unknown>, o: IterateOptions | undefined) => {
    const r = await send('get', path, init(o, { params: { query } }));
    if (!r.ok) throw new HumantaskError(`GET ${path}`, r.response, r.error!);
    return r.data as { docs: Item[]; has_more: boolean; next_token?: string };
  };

  /** Cursor paging (current task list): the server guarantees each earlier task exactly once. */
  async function* byToken(path: string, filters: object | undefined, o: IterateOptions | undefined) {
    let token: string | undefined;
    do {
      const p = await page(path, token ? { ...filters, next_token: token } : { ...filters }, o);
      yield* p.docs;
      token = p.has_more ? p.next_token : undefined;
    } while (token);
  }

  /**
   * Offset paging. Objects created during the walk push later ones to the next page; `fresh`
   * drops what was already yielded, so each object comes once.
   */
  async function* byOffset(path: string, filters: object | undefined, o: IterateOptions | undefined, fresh: () => (item: Item) => boolean) {
    const isFresh = fresh();
    for (let offset = 0; ; ) {
      const p = await page(path, { ...filters, offset }, o);
      for (const item of p.docs) if (isFresh(item)) yield item;
      offset += p.docs.length;
      if (!p.has_more || p.docs.length === 0) return;
    }
  }

  /** Ordered lists: an item is new when it sorts strictly after the last one yielded. */
  const after = (older: (a: Item, b: Item) => boolean) => () => {
    let last: Item | undefined;
    return (item: Item) => {
      if (last && !older(item, last)) return false;
      last = item;
      return true;
    };
  };
  /** Batches tie on name in the database's collation: remember names instead. */
  const unseen = (key: string) => () => {
    const seen = new Set<unknown>();
    return (item: Item) => {
      if (seen.has(item[key])) return false;
      seen.add(item[key]);
      return true;
    };
  };

  const taskPath = (taskId: string) => ({ path: { taskId } });

  const trainingApi = (kind: 'training_tasks' | 'evaluation_tasks', idParam: string) => ({
    create: (type: string, body: unknown, o?: CreateOptions) => send('post', `/v1/${kind}/${type}`, creationInit(body, o)),
    get: (id: string, o?: RequestOptions) => send('get', `/v1/${kind}/{${idParam}}`, init(o, { params: { path: { [idParam]: id } } })),
    list: (query?: object, o?: RequestOptions) => send('get', `/v1/${kind}`, init(o, { params: { query: { ...query } } })),
    iterate: (filters?: object, o?: IterateOptions) => byOffset(`/v1/${kind}`, filters, o, after(olderThan('id'))),
  });

  const api = {
    tasks: {
      create: (type: string, body: unknown, o?: CreateOptions) => send('post', `/v1/task/${type}`, creationInit(body, o)),
      get: (taskId: string, o?: RequestOptions) => send('get', TASK, init(o, { params: taskPath(taskId) })),
      list: (query?: object, o?: RequestOptions) => send('get', '/v1/tasks', init(o, { params: { query: { ...query } } })),
      iterate: (filters?: object, o?: IterateOptions) =>
        generation === 'current' ? byToken('/v1/tasks', filters, o) : byOffset('/v1/tasks', filters, o, after(olderThan('task_id'))),
      cancel: (taskId: string, o?: RequestOptions & { clearUniqueId?: boolean }) =>
        send(
          'post',
          `${TASK}/cancel`,
          init(o, {
            params: {
              ...taskPath(taskId),
              ...(o?.clearUniqueId !== undefined ? { query: { clear_unique_id: String(o.clearUniqueId) } } : {}),
            },
          }),
        ),
      setMetadata: (taskId: string, metadata: unknown, o?: RequestOptions) =>
        send('post', `${TASK}/setMetadata`, init(o, { params: taskPath(taskId), body: metadata })),
      setUniqueId: (taskId: string, uniqueId: string, o?: RequestOptions) =>
        send('post', `${TASK}/unique_id`, init(o, { params: taskPath(taskId), body: { unique_id: uniqueId } })),
      deleteUniqueId: (taskId: string, o?: RequestOptions) => send('delete', `${TASK}/unique_id`, init(o, { params: taskPath(taskId) })),
      addTags: (taskId: string, tags: unknown, o?: RequestOptions) =>
        send('post', `${TASK}/tags`, init(o, { params: taskPath(taskId), body: tags })),
      putTags: (taskId: string, tags: unknown, o?: RequestOptions) =>
        send('put', `${TASK}/tags`, init(o, { params: taskPath(taskId), body: tags })),
      removeTags: (taskId: string, tags: unknown, o?: RequestOptions) =>
        send('delete', `${TASK}/tags`, init(o, { params: taskPath(taskId), body: tags })),
      listCallbacks: (taskId: string, o?: RequestOptions) => send('get', `${TASK}/callbacks`, init(o, { params: taskPath(taskId) })),
      redeliverCallback: (taskId: string, o?: RequestOptions) =>
        send('post', `${TASK}/callbacks/redeliver`, init(o, { params: taskPath(taskId) })),
      readResultFile: (link: { url: string }, o?: RequestOptions) => {
        const url = new URL(link.url);
        const [, taskId, file] = /\/v1\/task\/([^/]+)\/files\/([^/]+)$/.exec(url.pathname) ?? [];
        if (!taskId || !file) throw new TypeError(`humantask client: ${link.url} is not a result file link`);
        const query = { expires: Number(url.searchParams.get('expires')), signature: url.searchParams.get('signature') ?? '' };
        return send('get', `${TASK}/files/{file}`, init(o, { params: { path: { taskId: decodeURIComponent(taskId), file }, query } }));
      },
      audit: (taskId: string, review: unknown, o?: RequestOptions) =>
        send('post', `${TASK}/audit`, init(o, { params: taskPath(taskId), body: review })),
    },
    projects: {
      create: (body: unknown, o?: RequestOptions) => send('post', '/v1/projects', init(o, { body })),
      get: (name: string, o?: RequestOptions) => send('get', PROJECT, init(o, { params: { path: { projectName: name } } })),
      list: (query?: object, o?: RequestOptions) => send('get', '/v1/projects', init(o, { params: { query: { ...query } } })),
      setParams: (name: string, body: unknown, o?: RequestOptions) =>
        send('post', `${PROJECT}/setParams`, init(o, { params: { path: { projectName: name } }, body })),
      setOntology: (name: string, body: unknown, o?: RequestOptions) =>
        send('post', `${PROJECT}/setOntology`, init(o, { params: { path: { projectName: name } }, body })),
      archive: (name: string, o?: RequestOptions) =>
        send('post', `${PROJECT}/archive`, init(o, { params: { path: { projectName: name } } })),
      unarchive: (name: string, o?: RequestOptions) =>
        send('post', `${PROJECT}/unarchive`, init(o, { params: { path: { projectName: name } } })),
    },
    batches: {
      create: (body: unknown, o?: RequestOptions) => send('post', '/v1/batches', init(o, { body })),
      get: (name: string, o?: RequestOptions) => send('get', BATCH, init(o, { params: { path: { batchName: name } } })),
      list: (query?: object, o?: RequestOptions) => send('get', '/v1/batches', init(o, { params: { query: { ...query } } })),
      iterate: (filters?: object, o?: IterateOptions) => byOffset('/v1/batches', filters, o, unseen('name')),
      finalize: (name: string, o?: RequestOptions) => send('post', `${BATCH}/finalize`, init(o, { params: { path: { batchName: name } } })),
      archive: (name: string, o?: RequestOptions) => send('post', `${BATCH}/archive`, init(o, { params: { path: { batchName: name } } })),
      unarchive: (name: string, o?: RequestOptions) =>
        send('post', `${BATCH}/unarchive`, init(o, { params: { path: { batchName: name } } })),
      status: (name: string, o?: RequestOptions) => send('get', `${BATCH}/status`, init(o, { params: { path: { batchName: name } } })),
      setMetadata: (name: string, metadata: unknown, o?: RequestOptions) =>
        send('post', `${BATCH}/setMetadata`, init(o, { params: { path: { batchName: name } }, body: metadata })),
    },
    trainingTasks: trainingApi('training_tasks', 'trainingTaskId'),
    evaluationTasks: trainingApi('evaluation_tasks', 'evaluationTaskId'),
  };
  // The loose implementation satisfies the precise per-generation interface by construction
  // (same paths); the cast is the one place where the two meet.
  return api as unknown as Api<any, boolean>;
}
