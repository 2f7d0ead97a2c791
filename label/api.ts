// The worker API client: openapi-fetch typed by generated/workforce.ts. It talks to the page's own
// origin only: no link can point the app (and a worker's password) at another server. To work
// against the Prism mock, open the app the mock serves itself (`humantask mock --worker`, /label/).
import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/workforce.ts';

export type Assignment = components['schemas']['Assignment'];
export type WorkerProfile = components['schemas']['WorkerProfile'];
export type WorkerResponse = components['schemas']['WorkerResponse'];
/** Any JSON object the app chooses (the contract's AssignmentDraft). */
export type Draft = components['schemas']['AssignmentDraft'];
export type ErrorBody = components['schemas']['ErrorBody'];
export type FeedbackItem = components['schemas']['FeedbackItem'];
export type ReviewRequest = components['schemas']['ReviewRequest'];
export type WorkerStats = components['schemas']['WorkerStats'];
export type AssignmentList = components['schemas']['AssignmentList'];

const tokenKey = 'humantask.label.token';
const workerKey = 'humantask.label.worker';

/** An answer of the API that is not a success, with the contract's error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Partial<ErrorBody>,
  ) {
    super(body.error ?? `HTTP ${status}`);
  }
  get code(): string | undefined {
    return this.body.code;
  }
}

export function createApi() {
  const client = createClient<paths>({ baseUrl: `${location.origin}/worker` });
  client.use({
    onRequest({ request }) {
      const token = sessionStorage.getItem(tokenKey);
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  });
  const fail = (response: Response, error: unknown): never => {
    throw new ApiError(response.status, (error && typeof error === 'object' ? error : {}) as Partial<ErrorBody>);
  };
  const path = (assignmentId: string) => ({ params: { path: { assignmentId } } });
  return {
    worker(): WorkerProfile | null {
      const saved = sessionStorage.getItem(workerKey);
      return sessionStorage.getItem(tokenKey) && saved ? (JSON.parse(saved) as WorkerProfile) : null;
    },
    /** `workforceId`: the workforce to log in to, when the address and password open several. */
    async login(email: string, password: string, workforceId?: string): Promise<WorkerProfile> {
      const body = { email, password, ...(workforceId ? { workforce_id: workforceId } : {}) };
      const { data, error, response } = await client.POST('/v1/session', { body });
      if (!data) return fail(response, error);
      sessionStorage.setItem(tokenKey, data.token);
      sessionStorage.setItem(workerKey, JSON.stringify(data.worker));
      return data.worker;
    },
    async logout(): Promise<void> {
      try {
        await client.DELETE('/v1/session');
      } finally {
        sessionStorage.removeItem(tokenKey);
        sessionStorage.removeItem(workerKey);
      }
    },
    /**
     * The next assignment, or the seconds to wait before asking again (204). `wait`: the long poll,
     * the server holds the question up to that many seconds until work comes; `signal` ends it.
     */
    async next(wait = 0, signal?: AbortSignal): Promise<Assignment | { retryAfter: number }> {
      const { data, error, response } = await client.POST('/v1/assignments/next', {
        params: { query: wait ? { wait } : {} },
        body: {},
        ...(signal ? { signal } : {}),
      });
      if (response.status === 204) return { retryAfter: Math.max(1, Number(response.headers.get('retry-after')) || 10) };
      if (!data) return fail(response, error);
      return data;
    },
    async heartbeat(assignmentId: string, body: components['schemas']['HeartbeatRequest']) {
      const { data, error, response } = await client.POST('/v1/assignments/{assignmentId}/heartbeat', {
        ...path(assignmentId),
        body,
      });
      return data ?? fail(response, error);
    },
    async submit(assignmentId: string, body: components['schemas']['SubmitRequest'], idempotencyKey: string) {
      const { data, error, response } = await client.POST('/v1/assignments/{assignmentId}/submit', {
        params: { path: { assignmentId }, header: { 'Idempotency-Key': idempotencyKey } },
        body,
      });
      return data ?? fail(response, error);
    },
    async skip(assignmentId: string, body: components['schemas']['SkipRequest']) {
      const { data, error, response } = await client.POST('/v1/assignments/{assignmentId}/skip', { ...path(assignmentId), body });
      return data ?? fail(response, error);
    },
    async release(assignmentId: string, body: components['schemas']['ReleaseRequest']) {
      const { data, error, response } = await client.POST('/v1/assignments/{assignmentId}/release', { ...path(assignmentId), body });
      return data ?? fail(response, error);
    },
    /** Decides a review assignment: accepted, fixed (with the corrected answer) or rejected (with feedback). */
    async review(assignmentId: string, body: ReviewRequest) {
      const { data, error, response } = await client.POST('/v1/assignments/{assignmentId}/review', { ...path(assignmentId), body });
      return data ?? fail(response, error);
    },
    /** One page of my own assignments, newest first. */
    async history(nextToken?: string): Promise<AssignmentList> {
      const query = { limit: 25, ...(nextToken ? { next_token: nextToken } : {}) };
      const { data, error, response } = await client.GET('/v1/assignments', { params: { query } });
      return data ?? fail(response, error);
    },
    /** My figures over the last 30 days (the server's default period). */
    async stats(): Promise<WorkerStats> {
      const { data, error, response } = await client.GET('/v1/stats', {});
      return data ?? fail(response, error);
    },
  };
}

export type Api = ReturnType<typeof createApi>;
