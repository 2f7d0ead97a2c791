// createWorkerApp(deps): the Express app of the worker API (/worker/v1), made from its bundled
// contract like a generation's app: worker auth -> rate limit -> parsers (each operation's body
// limit) -> contract validation -> log-in limits -> handler -> error mapper (answers with a `code`).
import express, { type RequestHandler } from 'express';
import type { AppDeps } from './app.ts';
import { wallClock } from './domain/clock.ts';
import { cloneJson } from '../shared/json.ts';
import { defaultIdentitySettings } from './domain/workforce/settings.ts';
import { authFailureLimit, tokenBuckets, type LimitLog } from './http/auth.ts';
import { bodyParsers, storableInput } from './http/body-limits.ts';
import { HttpError } from './http/errors.ts';
import { dropAbsentNulls } from './http/coerce.ts';
import { loadContract } from './http/contract.ts';
import { dispatch } from './http/typed.ts';
import { contractValidator } from './http/validator.ts';
import { idempotency, saveErrorAnswer } from './http/idempotency.ts';
import { defaultWorkSettings, maxDraftBytes } from './domain/workforce/work.ts';
import { authenticateWorker, loginLimits } from './http/workforce/auth.ts';
import { workerErrorMapper } from './http/workforce/errors.ts';
import { workerApiHandlers } from './http/workforce/handlers.ts';
import { defaultMediaSettings } from './http/workforce/media.ts';

/** Where the worker API is served. */
export const workerBasePath = '/worker';

/** The headers of every worker API answer (SECURITY.md, "The labeling app"). */
const workerApiHeaders = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

const heartbeatPath = /^\/v1\/assignments\/[^/]+\/heartbeat$/;

/**
 * What a request body may weigh, by operation, refused (413) before it is read: an answer (submit,
 * review) up to the 10 MB of any request, a heartbeat its draft and 16 KB for the rest, anything
 * else 64 KB (a log-in, a skip's reason, a token's name). So no request costs more parsing,
 * checking and copying on the event loop than its work needs.
 */
const bodyLimits = [
  { path: /^\/v1\/assignments\/[^/]+\/(submit|review)$/, bytes: 10 * 1_048_576, what: 'of this operation' },
  { path: heartbeatPath, bytes: maxDraftBytes + 16_384, what: 'of a heartbeat (a draft is at most 1 MB)' },
  { path: /^/, bytes: 65_536, what: 'of this operation' },
].map(({ path, bytes, what }) => {
  const parse = bodyParsers(false, bytes)[0]!;
  const tooLarge = () => new HttpError(413, `The request body is larger than ${bytes} bytes, the limit ${what}.`, {}, 'payload_too_large');
  /** Announced too large: answered at once, nothing read (the body-parser would read it all to discard it first). */
  const announced: RequestHandler = (req, _res, next) => next(Number(req.headers['content-length']) > bytes ? tooLarge() : undefined);
  /** Sent without a length: read up to the limit, no further. */
  const parser: RequestHandler = (req, res, next) =>
    parse(req, res, (err?: unknown) => next((err as { type?: string } | undefined)?.type === 'entity.too.large' ? tooLarge() : err));
  return { path, announced, parser };
});
const limitOf = (path: string) => bodyLimits.find((l) => l.path.test(path))!;

/** A heartbeat larger than this carries a large draft, limited per worker (largeHeartbeats). */
const largeHeartbeat = 65_536;

/**
 * Large heartbeats per worker, in this process (its event loop is what they cost): 10 at once,
 * then one every 5 seconds (the labeling app sends one every 20 to 30 s), refused with 429 before
 * the body is read. One without Content-Length counts as large.
 */
function largeHeartbeats(tripped?: LimitLog): RequestHandler {
  const buckets = tokenBuckets(0.2, 10);
  return (req, res, next) => {
    if (req.method !== 'POST' || !heartbeatPath.test(req.path)) return next();
    const length = req.headers['content-length'] === undefined ? Infinity : Number(req.headers['content-length']);
    if (length <= largeHeartbeat) return next();
    const worker = String(res.locals.worker?.workerId);
    const wait = buckets.take(`worker:${worker}`) as number;
    if (wait === 0) return next();
    tripped?.('large heartbeats', { worker }, wait);
    next(
      new HttpError(
        429,
        `Too many large heartbeats (over ${largeHeartbeat} bytes: 10 at once, then one every 5 seconds) for this worker; retry after ${wait} second${wait === 1 ? '' : 's'}.`,
        { 'Retry-After': String(wait) },
        'rate_limited',
      ),
    );
  };
}

export function createWorkerApp(deps: AppDeps) {
  const contract = loadContract('workforce');
  const identity = deps.identity ?? defaultIdentitySettings;
  const now = deps.now ?? wallClock;
  const failures = deps.authFailures ?? authFailureLimit(0, 0);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Answers carry tokens and customers' tasks: no cache keeps them, no page frames or renders them,
  // no link from them tells where they came from. (The media route sets its own, for files.)
  app.use((_req, res, next) => {
    res.set(workerApiHeaders);
    next();
  });
  app.use(authenticateWorker(deps.uow, identity, failures, now, deps.clientAddress));
  app.use(deps.rateLimit);
  app.use(
    (req, res, next) => limitOf(req.path).announced(req, res, next),
    largeHeartbeats(deps.limitLog),
    (req, res, next) => limitOf(req.path).parser(req, res, next),
    storableInput(contract),
  );
  // A submit may carry an Idempotency-Key: a retry gets the first answer (http/workforce/assignments.ts).
  app.use(idempotency(deps.idempotencyTtlMs, contract.takesKey, now));
  // A null in a body means "not given" (as at /v1); the validator fills defaults into a copy.
  app.use((req, res, next) => {
    const schema = req.body && typeof req.body === 'object' ? contract.bodySchemaOf(req.method, req.path) : undefined;
    if (schema) req.body = dropAbsentNulls(req.body, schema, contract.resolve);
    res.locals.body = req.body;
    if (req.body && typeof req.body === 'object') req.body = cloneJson(req.body);
    next();
  });
  app.use(contractValidator('workforce', workerBasePath));
  // A log-in is counted, then waits its turn at the password hashing (http/workforce/auth.ts).
  app.use(loginLimits(failures, deps.loginFailures, deps.hashGate, deps.clientAddress));
  // Long polls recheck every second without a nudge source (main.ts wakes them on NOTIFY).
  const workAvailable = deps.workAvailable ?? { wait: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };
  app.use(
    dispatch(
      workerApiHandlers({
        uow: deps.uow,
        contract,
        identity,
        authFailures: deps.authFailures,
        work: deps.work ?? defaultWorkSettings,
        workAvailable,
        random: deps.random,
        now,
        media: deps.media ?? defaultMediaSettings,
      }),
      deps.validateResponses ? contract.checkAnswer : undefined,
    ),
  );
  // A lease token that opens no assignment's files (the media route: a token in the query) counts as
  // a failed authentication of the address, as an unknown token does. Counted before the answer goes
  // (on PostgreSQL a statement), so that the next try already meets the limit. (A log-in is counted
  // before its password is checked: loginLimits.)
  app.use((err: unknown, req: express.Request, _res: express.Response, next: express.NextFunction) => {
    if (req.method !== 'GET' || !/\/media$/.test(req.path) || (err as { status?: number })?.status !== 401) return next(err);
    const address = deps.clientAddress ? deps.clientAddress(req) : (req.socket.remoteAddress ?? '');
    Promise.resolve(failures.failed(address)).then(
      () => next(err),
      () => next(err),
    );
  });
  app.use(workerErrorMapper(deps.logger, saveErrorAnswer(deps.uow)));
  return app;
}
