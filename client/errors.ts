import type { ErrorBody } from './types.ts';

/** Headers that may carry a request id (the reference server sends none; gateways often add one). */
const REQUEST_ID_HEADERS = ['x-request-id', 'request-id'];

/**
 * An error answer of the API, thrown by a client made with `throwOnError: true` and by the `iterate`
 * helpers. `body` is the answer's `{status_code, error}`.
 */
export class HumantaskError extends Error {
  override readonly name = 'HumantaskError';
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The `{status_code, error}` body (made from the status when the answer had none). */
  readonly body: ErrorBody;
  /** The request id a response header gave, if any. */
  readonly requestId: string | undefined;
  /** `METHOD /path/{template}`, for example `POST /v1/task/{taskId}/cancel`. */
  readonly operation: string;
  /** Seconds from `Retry-After`, when the answer had one (429). */
  readonly retryAfter: number | undefined;
  readonly response: Response;

  constructor(operation: string, response: Response, body: ErrorBody) {
    super(`${operation} failed with ${response.status}: ${body.error}`);
    this.status = response.status;
    this.body = body;
    this.operation = operation;
    this.response = response;
    let requestId: string | undefined;
    for (const h of REQUEST_ID_HEADERS) requestId ??= response.headers.get(h) ?? undefined;
    this.requestId = requestId;
    const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
    this.retryAfter = Number.isFinite(retryAfter) ? retryAfter : undefined;
  }
}

const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === 'object' && v !== null && typeof (v as ErrorBody).status_code === 'number' && typeof (v as ErrorBody).error === 'string';

/**
 * The `{status_code, error}` body of an error answer's text. Answers that are not the API's (a
 * proxy's HTML page, an empty body) get one made from the status, so errors are always typed.
 */
export function errorBodyOf(status: number, statusText: string, text: string): ErrorBody {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isErrorBody(parsed)) return parsed;
  } catch {
    // not JSON: fall through
  }
  const trimmed = text.trim();
  const message = trimmed && !trimmed.startsWith('<') ? trimmed.slice(0, 500) : statusText || `HTTP ${status}`;
  return { status_code: status, error: message };
}
