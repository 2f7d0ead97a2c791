// @humantask/client: typed clients of both API generations and of the worker API (browser-safe: no
// Node-only imports).
//
//   const client = createClient({ apiKey, baseUrl: 'https://humantask.example.com' });
//   const res = await client.tasks.create('categorization', { ... });
//
// Each client is an openapi-fetch client of its generation's paths (`client.GET('/v1/tasks')`)
// plus convenience methods (`client.tasks`, `projects`, `batches`, `trainingTasks`,
// `evaluationTasks`) over the same paths. `createWorkerClient` (worker.ts) speaks the worker API.
import createFetchClient, { type Client } from 'openapi-fetch';
import { buildApi } from './api.ts';
import { basicAuth, retryingFetch, transportMiddleware, type FetchFn, type PolicyMap, type RetryOptions } from './http.ts';
import type { Api, CurrentPaths, LegacyPaths } from './types.ts';

export { HumantaskError } from './errors.ts';
export { createWorkerClient } from './worker.ts';
export type {
  HistoryFilters,
  LoginOptions,
  NextRequest,
  SubmitOptions,
  WorkerApi,
  WorkerAssignment,
  WorkerClient,
  WorkerClientOptions,
  WorkerErrorBody,
  WorkerFailure,
  WorkerResult,
  WorkerSuccess,
  WorkforceComponents,
  WorkforceOperations,
  WorkforcePaths,
} from './worker.ts';
export { VERSION } from './version.ts';
export { fetchResultFile, withResultFiles, type ResultFile, type WithResultFiles } from './results.ts';
export type { RetryOptions, FetchFn } from './http.ts';
export type * from './types.ts';
export type { Client, Middleware } from 'openapi-fetch';

export interface ClientOptions {
  /** The API key (test or live); sent as HTTP Basic user name with an empty password. */
  apiKey: string;
  /** The service's origin, for example `https://humantask.example.com` (no `/v1`). */
  baseUrl: string;
  /** The fetch to use (default: the global one), e.g. to add a proxy, logging or a test double. */
  fetch?: FetchFn;
  /** Prepended to this client's User-Agent (outside browsers, which do not allow setting it). */
  userAgent?: string;
  /** Retry policy; `false` sends every request once. Default `{ retries: 3, minDelayMs: 250, maxDelayMs: 10000 }`. */
  retry?: RetryOptions | false;
  /** Throw a `HumantaskError` for an error answer instead of returning `{ ok: false, error }`. */
  throwOnError?: boolean;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** A client of one generation: the openapi-fetch client of its paths plus the convenience methods. */
export type GenerationClient<P extends {}, Throw extends boolean, G extends 'current' | 'legacy'> = Client<P, 'application/json'> &
  Api<P, Throw> & { readonly generation: G };

/** The current generation's client (`{origin}/v1/...`). */
export type HumantaskClient<Throw extends boolean = false> = GenerationClient<CurrentPaths, Throw, 'current'>;
/** The older generation's client (`{origin}/legacy/v1/...`). */
export type LegacyHumantaskClient<Throw extends boolean = false> = GenerationClient<LegacyPaths, Throw, 'legacy'>;

/** `true` for `throwOnError: true`, `false` when absent or false, `boolean` when not known. */
type ThrowOf<O> = O extends { throwOnError: true } ? true : O extends { throwOnError?: false | undefined } ? false : boolean;

// biome-ignore lint/suspicious/noExplicitAny: built loose here, typed per generation by the overloads above
function build(generation: 'current' | 'legacy', options: ClientOptions): GenerationClient<any, boolean, 'current' | 'legacy'> {
  if (!options.apiKey) throw new TypeError('humantask client: apiKey is required');
  if (!options.baseUrl) throw new TypeError('humantask client: baseUrl (the service origin) is required');
  const origin = options.baseUrl.replace(/\/+$/, '');
  const policies: PolicyMap = new WeakMap();
  const base: FetchFn = options.fetch ?? ((request) => globalThis.fetch(request));
  // biome-ignore lint/suspicious/noExplicitAny: one raw client for either generation's paths
  const raw = createFetchClient<any, 'application/json'>({
    baseUrl: generation === 'legacy' ? `${origin}/legacy` : origin,
    fetch: retryingFetch(base, options.retry, policies),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const authorization = basicAuth(options.apiKey);
  raw.use(
    transportMiddleware(
      { authorization: () => authorization, userAgent: options.userAgent, throwOnError: options.throwOnError, generation },
      policies,
    ),
  );
  return Object.assign(raw, buildApi(raw, generation), { generation });
}

/** A client of the current generation (`{baseUrl}/v1/...`). */
export function createClient<const O extends ClientOptions>(options: O): HumantaskClient<ThrowOf<O>> {
  return build('current', options) as HumantaskClient<ThrowOf<O>>;
}

/** A client of the older generation: `baseUrl` is the origin, the client adds `/legacy`. */
export function createLegacyClient<const O extends ClientOptions>(options: O): LegacyHumantaskClient<ThrowOf<O>> {
  return build('legacy', options) as LegacyHumantaskClient<ThrowOf<O>>;
}
