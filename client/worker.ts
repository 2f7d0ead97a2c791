// The worker client: the worker API (`{origin}/worker/v1/...`) for people and scripts that do live
// tasks. An openapi-fetch client of the worker contract's paths plus the work loop's methods, with
// the customer clients' transport: retries that never run a request twice, errors as
// `{ ok: false, status, error }` or thrown `HumantaskError`.
//
//   const worker = createWorkerClient({ baseUrl: 'https://humantask.example.com' });
//   await worker.login(email, password);               // keeps the session token
//   const next = await worker.next({ wait: 20 });        // long poll: 204 when nothing came
//   if (next.ok && next.status === 200) await worker.submit(next.data.assignment_id, { ... });
import createFetchClient, { type Client } from 'openapi-fetch';
import type {
  components as WorkforceComponents,
  operations as WorkforceOperations,
  paths as WorkforcePaths,
} from '../generated/workforce.ts';
import { HumantaskError } from './errors.ts';
import { retryingFetch, transportMiddleware, type FetchFn, type PolicyMap, type RetryOptions } from './http.ts';
import type { IterateOptions, RequestOptions } from './types.ts';

export type { WorkforceComponents, WorkforceOperations, WorkforcePaths };

type Schemas = WorkforceComponents['schemas'];
/** An assignment as the worker sees it: the task, the lease while active, the draft, the answer, the review. */
export type WorkerAssignment = Schemas['Assignment'];
/** The worker API's error body: `{status_code, error, code}` (`code` is stable: `lease_lost`, `worker_paused`, ...). */
export type WorkerErrorBody = Schemas['ErrorBody'];

export interface WorkerClientOptions {
  /** The service's origin, for example `https://humantask.example.com` (no `/worker`, no `/v1`). */
  baseUrl: string;
  /**
   * A session token (`wks_...`) or API token (`wka_...`), sent as `Authorization: Bearer`. Leave it
   * out to `login` first; `login` keeps the session token it gets, `logout` drops it.
   */
  token?: string;
  /** The fetch to use (default: the global one). */
  fetch?: FetchFn;
  /** Prepended to this client's User-Agent (outside browsers). */
  userAgent?: string;
  /** Retry policy; `false` sends every request once. Default `{ retries: 3, minDelayMs: 250, maxDelayMs: 10000 }`. */
  retry?: RetryOptions | false;
  /** Throw a `HumantaskError` for an error answer instead of returning `{ ok: false, error }`. */
  throwOnError?: boolean;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

type Responses<Op> = Op extends { responses: infer R } ? R : never;
type SuccessStatus<Op> = Extract<keyof Responses<Op>, 200 | 204>;
type BodyOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;

/** A successful answer: `status` 200 with the contract's body, or 204 (no content: `data` undefined). */
export type WorkerSuccess<Op> = {
  [S in SuccessStatus<Op>]: { ok: true; status: S; data: BodyOf<Responses<Op>[S]>; error?: never; response: Response };
}[SuccessStatus<Op>];

/** An error answer: one of the operation's documented error statuses, and the `{status_code, error, code}` body. */
export interface WorkerFailure<Op> {
  ok: false;
  status: Exclude<keyof Responses<Op>, 200 | 204 | 'default'> & number;
  data?: never;
  error: WorkerErrorBody;
  response: Response;
}

/** What a worker method resolves to; with `throwOnError: true` (`Throw = true`) only the successes. */
export type WorkerResult<Op, Throw extends boolean = false> = Throw extends true
  ? WorkerSuccess<Op>
  : WorkerSuccess<Op> | WorkerFailure<Op>;

type R<Name extends keyof WorkforceOperations, T extends boolean> = Promise<WorkerResult<WorkforceOperations[Name], T>>;

/** What `next` asks for: a role (`attempt` or `review`), a project, and how long to wait for work. */
export type NextRequest = Schemas['AssignmentClaimRequest'] & {
  /** Long poll: wait up to this many seconds (0 to 30) for work before answering 204. */
  wait?: number;
};

/** Options of `submit`. */
export interface SubmitOptions extends RequestOptions {
  /** The `Idempotency-Key` to send; by default a new random UUID per call (reused by its retries). */
  idempotencyKey?: string;
}

/** The history's filters, without the paging cursor (the iterator manages it). */
export type HistoryFilters = Omit<NonNullable<WorkforceOperations['listAssignments']['parameters']['query']>, 'next_token'>;

/** Options of a log-in. */
export interface LoginOptions extends RequestOptions {
  /** The workforce to log in to: `operator`, or the `wkf_...` id of an account's workforce. */
  workforceId?: string;
}

export interface WorkerApi<T extends boolean> {
  /** The token requests carry now (set by the options, `login` or `setToken`). */
  readonly token: string | undefined;
  /** Replaces the token (for example one kept from an earlier session); `undefined` sends none. */
  setToken(token: string | undefined): void;
  /**
   * `POST /v1/session`: logs in; on success the client keeps the session token for later requests.
   * `workforceId` names the workforce (`operator` or `wkf_...`) when the address and password open
   * workers of several (409 `workforce_required` otherwise).
   */
  login(email: string, password: string, options?: LoginOptions): R<'loginWorker', T>;
  /** `DELETE /v1/session`: revokes the session token; on success the client drops it. */
  logout(options?: RequestOptions): R<'logoutWorker', T>;
  /** `GET /v1/me`: the worker, roles and status. */
  me(options?: RequestOptions): R<'getCurrentWorker', T>;
  /** The worker's API tokens for scripts. */
  tokens: {
    list(options?: RequestOptions): R<'listWorkerTokens', T>;
    /** `POST /v1/tokens`: the secret (`token`) is in this answer only. */
    create(body: Schemas['WorkerTokenCreateRequest'], options?: RequestOptions): R<'createWorkerToken', T>;
    revoke(tokenId: string, options?: RequestOptions): R<'deleteWorkerToken', T>;
  };
  /**
   * `POST /v1/assignments/next`: one piece of work with its lease (status 200), or status 204 when
   * there is none (after waiting `wait` seconds). Asking again while an assignment is held answers
   * that one, so it is retried like a read.
   */
  next(request?: NextRequest, options?: RequestOptions): R<'claimAssignment', T>;
  /** `GET /v1/assignments/{assignmentId}`: one of the worker's assignments. */
  get(assignmentId: string, options?: RequestOptions): R<'getAssignment', T>;
  /** `POST .../heartbeat`: renews the lease, adds active time, saves the draft. Send one every 20 to 30 s. */
  heartbeat(assignmentId: string, body: Schemas['HeartbeatRequest'], options?: RequestOptions): R<'heartbeatAssignment', T>;
  /** `POST .../submit`: the answer. Sends an `Idempotency-Key`, so a retry after a lost answer replays the first one. */
  submit(assignmentId: string, body: Schemas['SubmitRequest'], options?: SubmitOptions): R<'submitAssignment', T>;
  /** `POST .../skip`: gives the task back with a reason (not offered to this worker again). */
  skip(assignmentId: string, body: Schemas['SkipRequest'], options?: RequestOptions): R<'skipAssignment', T>;
  /** `POST .../release`: gives the task back without a reason (it may come back, with the draft). */
  release(assignmentId: string, body: Schemas['ReleaseRequest'], options?: RequestOptions): R<'releaseAssignment', T>;
  /** `POST .../review`: decides a review assignment (accepted, fixed with `response`, rejected with `feedback_items`). */
  review(assignmentId: string, body: Schemas['ReviewRequest'], options?: RequestOptions): R<'reviewAssignment', T>;
  /** `GET /v1/assignments`: one page of the worker's own assignments, newest first. */
  history(query?: WorkforceOperations['listAssignments']['parameters']['query'], options?: RequestOptions): R<'listAssignments', T>;
  /** Every assignment of the worker matching the filters, newest first, page after page. Throws `HumantaskError`. */
  iterateHistory(filters?: HistoryFilters, options?: IterateOptions): AsyncIterableIterator<WorkerAssignment>;
}

/** The worker client: the openapi-fetch client of the worker API's paths (`/v1/...` under `/worker`) plus the methods. */
export type WorkerClient<Throw extends boolean = false> = Client<WorkforcePaths, 'application/json'> & WorkerApi<Throw>;

/** `true` for `throwOnError: true`, `false` when absent or false, `boolean` when not known. */
type ThrowOf<O> = O extends { throwOnError: true } ? true : O extends { throwOnError?: false | undefined } ? false : boolean;

interface Init {
  params?: { path?: Record<string, string>; query?: Record<string, unknown> };
  body?: unknown;
  signal?: AbortSignal | undefined;
  headers?: Record<string, string> | undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: one loose result inside; the types callers see (WorkerApi) are exact
type Loose = { ok: boolean; status: number; data?: any; error?: WorkerErrorBody; response: Response };

const init = (o: RequestOptions | undefined, rest: Omit<Init, 'signal' | 'headers'> = {}): Init => ({
  ...rest,
  signal: o?.signal,
  headers: o?.headers,
});

const ASSIGNMENT = '/v1/assignments/{assignmentId}';

/** A client of the worker API at `{baseUrl}/worker/v1/...`. */
export function createWorkerClient<const O extends WorkerClientOptions>(options: O): WorkerClient<ThrowOf<O>> {
  if (!options.baseUrl) throw new TypeError('humantask worker client: baseUrl (the service origin) is required');
  const origin = options.baseUrl.replace(/\/+$/, '');
  let token = options.token;
  const policies: PolicyMap = new WeakMap();
  const base: FetchFn = options.fetch ?? ((request) => globalThis.fetch(request));
  const raw = createFetchClient<WorkforcePaths, 'application/json'>({
    baseUrl: `${origin}/worker`,
    fetch: retryingFetch(base, options.retry, policies),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  raw.use(
    transportMiddleware(
      {
        authorization: () => (token === undefined ? undefined : `Bearer ${token}`),
        userAgent: options.userAgent,
        throwOnError: options.throwOnError,
        generation: 'worker',
      },
      policies,
    ),
  );

  const send = async (method: 'get' | 'post' | 'delete', path: string, i: Init): Promise<Loose> => {
    // biome-ignore lint/suspicious/noExplicitAny: the path is one of the contract's; its types are checked at the method level
    const { data, error, response } = await (raw.request as (m: string, p: string, i: Init) => Promise<any>)(method, path, i);
    return response.ok ? { ok: true, status: response.status, data, response } : { ok: false, status: response.status, error, response };
  };
  const onAssignment = (assignmentId: string, action: string, body: unknown, o: RequestOptions | undefined) =>
    send('post', `${ASSIGNMENT}/${action}`, init(o, { params: { path: { assignmentId } }, body }));
  const page = async (query: Record<string, unknown>, o: IterateOptions | undefined) => {
    const r = await send('get', '/v1/assignments', init(o, { params: { query } }));
    if (!r.ok) throw new HumantaskError('GET /v1/assignments', r.response, r.error!);
    return r.data as Schemas['AssignmentList'];
  };

  const api = {
    get token() {
      return token;
    },
    setToken(value: string | undefined) {
      token = value;
    },
    async login(email: string, password: string, o?: LoginOptions) {
      const body = { email, password, ...(o?.workforceId !== undefined ? { workforce_id: o.workforceId } : {}) };
      const r = await send('post', '/v1/session', init(o, { body }));
      if (r.ok) token = (r.data as Schemas['Session']).token;
      return r;
    },
    async logout(o?: RequestOptions) {
      const r = await send('delete', '/v1/session', init(o));
      if (r.ok) token = undefined;
      return r;
    },
    me: (o?: RequestOptions) => send('get', '/v1/me', init(o)),
    tokens: {
      list: (o?: RequestOptions) => send('get', '/v1/tokens', init(o)),
      create: (body: unknown, o?: RequestOptions) => send('post', '/v1/tokens', init(o, { body })),
      revoke: (tokenId: string, o?: RequestOptions) => send('delete', '/v1/tokens/{tokenId}', init(o, { params: { path: { tokenId } } })),
    },
    next: ({ wait, ...body }: NextRequest = {}, o?: RequestOptions) =>
      send('post', '/v1/assignments/next', init(o, { body, ...(wait !== undefined ? { params: { query: { wait } } } : {}) })),
    get: (assignmentId: string, o?: RequestOptions) => send('get', ASSIGNMENT, init(o, { params: { path: { assignmentId } } })),
    heartbeat: (assignmentId: string, body: unknown, o?: RequestOptions) => onAssignment(assignmentId, 'heartbeat', body, o),
    submit: (assignmentId: string, body: unknown, o?: SubmitOptions) =>
      onAssignment(assignmentId, 'submit', body, {
        ...o,
        ...(o?.idempotencyKey ? { headers: { ...o.headers, 'Idempotency-Key': o.idempotencyKey } } : {}),
      }),
    skip: (assignmentId: string, body: unknown, o?: RequestOptions) => onAssignment(assignmentId, 'skip', body, o),
    release: (assignmentId: string, body: unknown, o?: RequestOptions) => onAssignment(assignmentId, 'release', body, o),
    review: (assignmentId: string, body: unknown, o?: RequestOptions) => onAssignment(assignmentId, 'review', body, o),
    history: (query?: object, o?: RequestOptions) => send('get', '/v1/assignments', init(o, { params: { query: { ...query } } })),
    async *iterateHistory(filters?: HistoryFilters, o?: IterateOptions) {
      // Cursor paging: the server's keyset (issued_at, id) gives each earlier assignment exactly once.
      let next: string | undefined;
      do {
        const p = await page(next ? { ...filters, next_token: next } : { ...filters }, o);
        yield* p.docs;
        next = p.has_more ? p.next_token : undefined;
      } while (next);
    },
  };
  // The loose implementation satisfies the precise interface by construction (the same paths); the
  // cast is the one place where the two meet, as in api.ts. Getters survive: defineProperties copies them.
  const client = Object.defineProperties(raw, Object.getOwnPropertyDescriptors(api));
  return client as unknown as WorkerClient<ThrowOf<O>>;
}
