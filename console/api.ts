// The console's client of the current generation: openapi-fetch typed by generated/current.ts, on the
// page's own origin only, with the member's session (the HttpOnly cookie the browser sends) and never
// an API key. Every change carries the session's CSRF token (kept in memory: read again with
// GET /v1/session when the page loads); every request names the mode the URL shows (Humantask-Mode).
import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/current.ts';

export type Schemas = components['schemas'];
export type MemberSession = Schemas['MemberSession'];
export type Role = Schemas['MemberRole'];
export type ErrorBody = Schemas['ErrorBody'];
export type Mode = 'test' | 'live';

/** An answer of the API that is not a success, with the contract's error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Partial<ErrorBody>,
  ) {
    super(body.error ?? `The server answered ${status}.`);
  }
  get code(): string | undefined {
    return this.body.code;
  }
}

/** What went wrong, in the words to show: the API's error, or the failure's own message. */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

const unsafe = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the API client sends with each request: the session's CSRF token and the mode. */
export const sessionState: { csrf: string | null; mode: Mode } = { csrf: null, mode: 'test' };

export const client = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
client.use({
  onRequest({ request }) {
    if (unsafe.has(request.method) && sessionState.csrf) request.headers.set('x-csrf-token', sessionState.csrf);
    request.headers.set('humantask-mode', sessionState.mode);
    return request;
  },
});

/** The answer's data, or an ApiError with the contract's error body. */
export async function data<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && data !== undefined) return data;
  throw new ApiError(response.status, (error && typeof error === 'object' ? error : {}) as Partial<ErrorBody>);
}

/** The session of the cookie, or null when there is none (or it lapsed). */
export async function currentSession(): Promise<MemberSession | null> {
  try {
    return await data(client.GET('/v1/session'));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}
