// The worker API's error answers: `{status_code, error, code}` (ErrorBody), where `code` is stable
// for programs to branch on. An error that names no code gets the one of its status.
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { DomainError } from '../../domain/errors.ts';
import { safeError } from '../../store/errors.ts';
import { HttpError, keptUnderKey, toErrorAnswer, type ErrorAnswer, type SaveAnswer } from '../errors.ts';

export const bearerChallenge = { 'WWW-Authenticate': 'Bearer realm="humantask-worker"' };

const codeOfStatus: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'invalid_request',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'invalid_request',
  429: 'rate_limited',
  501: 'not_implemented',
};

export function workerErrorMapper(logger: Logger, saveAnswer: SaveAnswer): ErrorRequestHandler {
  return async (err, req, res, _next) => {
    // The worker API has no generation; 'current' only decides a cancel of a completed task, which
    // the worker API never does.
    const mapped = toErrorAnswer(err, 'current', { contract: 'workforce', method: req.method, path: req.path, body: req.body });
    // A 502 of the media route is a customer's host failing, said in the answer: not ours to log.
    if (
      mapped.status >= 500 &&
      mapped.status !== 501 &&
      !(err instanceof DomainError) &&
      !(err instanceof HttpError && mapped.status === 502)
    )
      logger.error({ err: safeError(err), url: req.originalUrl }, 'request failed');
    const requestId = typeof res.locals.requestId === 'string' ? { request_id: res.locals.requestId } : {};
    const bodyOf = (a: ErrorAnswer) =>
      JSON.stringify({ status_code: a.status, error: a.message, code: a.code ?? codeOfStatus[a.status] ?? 'internal', ...requestId });
    // A refused submit with an Idempotency-Key: the refusal is its answer (http/idempotency.ts).
    const kept = await keptUnderKey(res, mapped, bodyOf, saveAnswer, logger);
    if (!kept) return;
    const { answer, body } = kept;
    const headers = answer.status === 401 ? { ...answer.headers, ...bearerChallenge } : answer.headers;
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(answer.status).type('application/json').send(body);
  };
}
