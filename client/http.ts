// The transport under the openapi-fetch clients: Basic auth (customers) or Bearer (workers),
// User-Agent, Idempotency-Key where the contract takes one (generated/retry.ts), typed error bodies, and retries that
// never make a request happen twice.
import type { Middleware } from 'openapi-fetch';
import { HumantaskError, errorBodyOf } from './errors.ts';
import { retryRules, type RetryRule } from '../generated/retry.ts';
import { VERSION } from './version.ts';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 disables retrying). */
  retries?: number;
  /** Backoff before the first retry, doubled for each later one, with jitter (default 250 ms). */
  minDelayMs?: number;
  /**
   * The longest backoff (default 10 s). A `Retry-After` longer than this is not waited for: the
   * 429 is returned (or thrown) instead.
   */
  maxDelayMs?: number;
}

export type FetchFn = (request: Request) => Promise<Response>;

/**
 * How a request may be retried. `safe`: it may be sent again after any failure (GET and the other
 * HTTP idempotent methods, POSTs the contract marks idempotent, and every request that carries an
 * `Idempotency-Key`), except for the statuses in `final`, which are the operation's own answer (the
 * older generation's 500 for cancelling a completed task). Otherwise only when it surely did not
 * run (429, or a connection that was refused).
 */
interface Policy {
  safe: boolean;
  final: readonly number[];
}

/** The API a client speaks: a customer generation, or the worker API (`/worker/v1`). */
export type ApiKind = 'current' | 'legacy' | 'worker';

/** The contract's rules (generated from each operation's `x-retry`), by API. */
const RULES: Record<ApiKind, Readonly<Record<string, RetryRule>>> = {
  current: retryRules.current,
  legacy: retryRules.legacy,
  worker: retryRules.workforce,
};
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

export function basicAuth(apiKey: string): string {
  return 'Basic ' + btoa(`${apiKey}:`);
}

function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  // randomUUID exists only in secure contexts in browsers; getRandomValues everywhere.
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Browsers do not let a page set User-Agent (and would preflight it); other runtimes do. */
function userAgentAllowed(): boolean {
  const ua = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent;
  return !ua?.startsWith('Mozilla/');
}

function userAgent(extra: string | undefined): string {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  const runtime = proc?.versions?.node ? ` node/${proc.versions.node}` : '';
  return `${extra ? extra + ' ' : ''}humantask-client/${VERSION}${runtime}`;
}

export interface TransportOptions {
  /** The `Authorization` header, read for each request (a worker's token changes at log-in); none when undefined. */
  authorization: () => string | undefined;
  userAgent?: string | undefined;
  throwOnError?: boolean | undefined;
  generation: ApiKind;
}

/** Policies of the requests this client built, looked up by the retrying fetch. */
export type PolicyMap = WeakMap<Request, Policy>;

export function transportMiddleware(options: TransportOptions, policies: PolicyMap): Middleware {
  const ua = userAgentAllowed() ? userAgent(options.userAgent) : undefined;
  const rules = RULES[options.generation];
  return {
    onRequest({ request, schemaPath }) {
      const h = request.headers;
      const auth = options.authorization();
      if (auth !== undefined && !h.has('authorization')) h.set('authorization', auth);
      if (ua && !h.has('user-agent')) h.set('user-agent', ua);
      const rule = request.method === 'POST' ? rules[schemaPath] : undefined;
      // An operation that takes a key gets one, the same on every attempt.
      if (rule?.repeat === 'key' && !h.has('idempotency-key')) h.set('idempotency-key', newIdempotencyKey());
      policies.set(request, {
        safe: SAFE_METHODS.has(request.method) || rule !== undefined || h.has('idempotency-key'),
        final: rule?.final ?? [],
      });
      return request;
    },
    async onResponse({ request, response, schemaPath }) {
      if (response.ok) return undefined;
      const body = errorBodyOf(response.status, response.statusText, await response.text());
      const headers = new Headers(response.headers);
      headers.delete('content-length');
      headers.delete('content-encoding');
      headers.set('content-type', 'application/json');
      const normalized = new Response(JSON.stringify(body), { status: response.status, statusText: response.statusText, headers });
      if (options.throwOnError) throw new HumantaskError(`${request.method} ${schemaPath}`, normalized, body);
      return normalized;
    },
  };
}

function policyOf(request: Request, policies: PolicyMap): Policy {
  // A request replaced by a later middleware is not in the map: judge it by method and key.
  return policies.get(request) ?? { safe: SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key'), final: [] };
}

function retryableStatus(status: number, policy: Policy): boolean {
  if (status === 429) return true; // refused before it ran: safe for every request
  if (!policy.safe || policy.final.includes(status)) return false;
  return status === 408 || (status >= 500 && status !== 501 && status !== 505);
}

function retryableError(err: unknown, policy: Policy, signal: AbortSignal): boolean {
  if (signal.aborted) return false;
  const name = (err as { name?: string } | null)?.name;
  if (name === 'AbortError' || name === 'TimeoutError') return false;
  if (policy.safe) return true;
  // Node's fetch names the cause; a refused connection never reached the server.
  return (err as { cause?: { code?: string } } | null)?.cause?.code === 'ECONNREFUSED';
}

function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A fetch that retries as the request's policy allows: exponential backoff with jitter, `Retry-After` honoured. */
export function retryingFetch(base: FetchFn, retry: RetryOptions | false | undefined, policies: PolicyMap): FetchFn {
  const retries = retry === false ? 0 : (retry?.retries ?? 3);
  const minDelay = (retry || undefined)?.minDelayMs ?? 250;
  const maxDelay = (retry || undefined)?.maxDelayMs ?? 10_000;
  const backoff = (attempt: number) => {
    const cap = Math.min(maxDelay, minDelay * 2 ** attempt);
    return cap / 2 + (Math.random() * cap) / 2;
  };
  if (retries <= 0) return base;
  return async (request) => {
    const policy = policyOf(request, policies);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      let response: Response;
      try {
        // Each attempt sends a copy, so the body can be sent again (the same Idempotency-Key too).
        response = await base(last ? request : request.clone());
      } catch (err) {
        if (last || !retryableError(err, policy, request.signal)) throw err;
        await sleep(backoff(attempt), request.signal);
        continue;
      }
      if (last || !retryableStatus(response.status, policy)) return response;
      const wait = retryAfterMs(response.headers.get('retry-after'));
      if (wait !== undefined && wait > maxDelay) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(Math.max(backoff(attempt), wait ?? 0), request.signal);
    }
  };
}
