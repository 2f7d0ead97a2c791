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

/** Where the worker API is served. */
export const workerBasePath = '/worker';

export function createWorkerApp(deps: AppDeps) {
  const contract = loadContract('workforce');
  const identity = deps.identity ?? defaultIdentitySettings;
  const now = deps.now ?? wallClock;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
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
      }),
    ),
  );
  // A wrong password counts as a failed authentication of the address, as an unknown token does.
  app.use((err: unknown, req: express.Request, _res: express.Response, next: express.NextFunction) => {
    if (req.method === 'POST' && req.path === '/v1/session' && (err as { status?: number })?.status === 401)
      deps.authFailures?.failed(req.socket.remoteAddress ?? '');
    next(err);
  });
  app.use(workerErrorMapper(deps.logger));
  return app;
}
