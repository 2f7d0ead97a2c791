// createWorkerApp(deps): the Express app of the worker API (/worker/v1), made from its bundled
// contract like a generation's app: worker auth -> rate limit -> parsers -> contract validation ->
// handler -> error mapper (answers with a `code`).
import express from 'express';
import type { AppDeps } from './app.ts';
import { wallClock } from './domain/clock.ts';
import { cloneJson } from './domain/json.ts';
import { defaultIdentitySettings } from './domain/workforce/settings.ts';
import { bodyParsers, storableInput } from './http/body-limits.ts';
import { dropAbsentNulls } from './http/coerce.ts';
import { loadContract } from './http/contract.ts';
import { dispatch } from './http/typed.ts';
import { contractValidator } from './http/validator.ts';
import { idempotency } from './http/idempotency.ts';
import { defaultWorkSettings } from './domain/workforce/work.ts';
import { authenticateWorker } from './http/workforce/auth.ts';
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

export function createWorkerApp(deps: AppDeps) {
  const contract = loadContract('workforce');
  const identity = deps.identity ?? defaultIdentitySettings;
  const now = deps.now ?? wallClock;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Answers carry tokens and customers' tasks: no cache keeps them, no page frames or renders them,
  // no link from them tells where they came from. (The media route sets its own, for files.)
  app.use((_req, res, next) => {
    res.set(workerApiHeaders);
    next();
  });
  app.use(authenticateWorker(deps.uow, identity, deps.authFailures, now));
  app.use(deps.rateLimit);
  app.use(...bodyParsers(false), storableInput(contract));
  // A submit may carry an Idempotency-Key: a retry gets the first answer (http/workforce/assignments.ts).
  app.use(idempotency(deps.idempotencyTtlMs, (p) => /^\/v1\/assignments\/[^/]+\/submit$/.test(p), now));
  // A null in a body means "not given" (as at /v1); the validator fills defaults into a copy.
  app.use((req, res, next) => {
    const schema = req.body && typeof req.body === 'object' ? contract.bodySchemaOf(req.method, req.path) : undefined;
    if (schema) req.body = dropAbsentNulls(req.body, schema, contract.resolve);
    res.locals.body = req.body;
    if (req.body && typeof req.body === 'object') req.body = cloneJson(req.body);
    next();
  });
  app.use(contractValidator('workforce', workerBasePath, deps.validateResponses));
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
    ),
  );
  // A wrong password counts as a failed authentication of the address, as an unknown token does;
  // so does a lease token that opens no assignment's files (the media route). Counted before the
  // answer goes (on PostgreSQL a statement), so that the next try already meets the limit.
  app.use((err: unknown, req: express.Request, _res: express.Response, next: express.NextFunction) => {
    const anonymous = (req.method === 'POST' && req.path === '/v1/session') || (req.method === 'GET' && /\/media$/.test(req.path));
    if (!anonymous || (err as { status?: number })?.status !== 401 || !deps.authFailures) return next(err);
    Promise.resolve(deps.authFailures.failed(req.socket.remoteAddress ?? '')).then(
      () => next(err),
      () => next(err),
    );
  });
  app.use(workerErrorMapper(deps.logger));
  return app;
}
