// One error mapper: every failure becomes `{status_code, error}` JSON (no HTML, no stack), with
// WWW-Authenticate on 401 and Retry-After on 429.
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.ts';
import { notValidJson } from '../../shared/json.ts';
import type { Generation } from '../domain/model.ts';
import { safeError } from '../store/errors.ts';
import { type ContractName, loadContract } from './contract.ts';
import { describeProblems, fromValidator, requestProblems } from './validation-words.ts';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** The machine-readable `code` of the error body (ErrorBody.code), where the answer has one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

export const authChallenge = { 'WWW-Authenticate': 'Basic realm="humantask"' };

/** The status answering a cancel of a completed task: 400 (current) or 500 (older), seed §3.1, §7. */
const cancelCompletedStatus: Record<Generation, number> = { current: 400, legacy: 500 };

function domainStatus(err: DomainError, generation: Generation): number {
  switch (err.kind) {
    case 'invalid':
      return 400;
    case 'not_found':
      return 404;
    case 'forbidden':
      return 403;
    case 'conflict':
      return 409;
    case 'type_disabled':
      return 402;
    case 'cancel_completed':
      return cancelCompletedStatus[generation];
  }
}

/** A request as the validator saw it, for its errors to be said in words (http/validation-words.ts). */
export interface ValidatedRequest {
  contract: ContractName;
  method: string;
  /** The path inside the contract (`/v1/task/categorization`), without the API's base path. */
  path: string;
  body: unknown;
}

/** express-openapi-validator's 400, in plain words naming each field once ("body.categories is required"). */
function validationMessage(
  err: { message: string; errors?: { path?: string; message: string; errorCode?: string }[] },
  request?: ValidatedRequest,
): string {
  if (!err.errors?.length) return err.message;
  if (!request) return describeProblems(fromValidator(err.errors));
  return requestProblems(err.errors, loadContract(request.contract), request);
}

export interface ErrorAnswer {
  status: number;
  message: string;
  headers: Record<string, string>;
  code?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: whatever a handler, body-parser or the validator threw (Express types it any too)
export function toErrorAnswer(err: any, generation: Generation, request?: ValidatedRequest): ErrorAnswer {
  if (err instanceof HttpError)
    return { status: err.status, message: err.message, headers: err.headers, ...(err.code ? { code: err.code } : {}) };
  if (err instanceof DomainError)
    return { status: domainStatus(err, generation), message: err.message, headers: {}, ...(err.code ? { code: err.code } : {}) };
  // body-parser
  if (err?.type === 'entity.parse.failed') return { status: 400, message: notValidJson(err), headers: {} };
  if (err?.type === 'entity.too.large') return { status: 413, message: 'Request body is larger than 10 MB.', headers: {} };
  if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
    // express-openapi-validator: 400 validation, 404 unknown path, 405 method, 415 media type.
    const message = err.status === 404 ? 'Not found: no such endpoint.' : validationMessage(err, request);
    return { status: err.status, message, headers: err.status === 405 && err.headers ? err.headers : {} };
  }
  return { status: 500, message: 'Internal server error.', headers: {} };
}

/**
 * Saves an answer under the request's Idempotency-Key, when it has one (see idempotency.ts); true
 * when the key had an answer already, which was sent instead.
 */
export type SaveAnswer = (res: import('express').Response, statusCode: number, body: string) => Promise<boolean>;

/**
 * An error answer kept under the request's Idempotency-Key (both APIs' error mappers): the answer
 * and body to send, or null when the key had an answer already, which was sent instead. A key of a
 * different request (409) or of one still running (429) turns the answer into that refusal.
 */
export async function keptUnderKey(
  res: import('express').Response,
  answer: ErrorAnswer,
  bodyOf: (answer: ErrorAnswer) => string,
  saveAnswer: SaveAnswer,
  logger: Logger,
): Promise<{ answer: ErrorAnswer; body: string } | null> {
  const body = bodyOf(answer);
  try {
    if (await saveAnswer(res, answer.status, body)) return null;
  } catch (saveErr) {
    if (saveErr instanceof HttpError) {
      const refusal = toErrorAnswer(saveErr, 'current');
      return { answer: refusal, body: bodyOf(refusal) };
    }
    logger.error({ err: safeError(saveErr) }, 'could not save the answer of an idempotent request');
  }
  return { answer, body };
}

export function errorMapper(generation: Generation, logger: Logger, saveAnswer: SaveAnswer): ErrorRequestHandler {
  return async (err, req, res, _next) => {
    const mapped = toErrorAnswer(err, generation, { contract: generation, method: req.method, path: req.path, body: req.body }); // Stryker disable next-line all: which failures are logged; no client sees the log
    if (mapped.status >= 500 && !(err instanceof DomainError))
      logger.error({ err: safeError(err), url: req.originalUrl }, 'request failed');
    // The request id (see ops.ts) lets a caller quote the failed request to the operator.
    const requestId = typeof res.locals.requestId === 'string' ? { request_id: res.locals.requestId } : {};
    const bodyOf = (a: ErrorAnswer) =>
      JSON.stringify({ status_code: a.status, error: a.message, ...(a.code ? { code: a.code } : {}), ...requestId });
    const kept = await keptUnderKey(res, mapped, bodyOf, saveAnswer, logger);
    if (!kept) return;
    const { answer, body } = kept;
    // A request that names Humantask-Mode comes from a member's console (a session's request): its
    // 401 carries no Basic challenge, which the browser would answer with a password dialog of its own.
    const fromConsole = req.get('humantask-mode') !== undefined;
    for (const [k, v] of Object.entries(answer.headers)) if (!(fromConsole && k === 'WWW-Authenticate')) res.setHeader(k, v);
    res.status(answer.status).type('application/json').send(body);
  };
}
