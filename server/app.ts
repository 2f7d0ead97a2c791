// createApp(generation, deps): the Express app of one generation, made from its bundled contract:
// parsers -> auth -> rate limit -> idempotency -> body coercion -> contract validation -> handler
// -> error mapper.
import express, { type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Logger } from 'pino';

type ValidatorOptions = Parameters<typeof OpenApiValidator.middleware>[0];
import type { Generation } from './domain/model.ts';
import type { UnitOfWork } from './domain/ports.ts';
import { authenticate } from './http/auth.ts';
import { coerceBody } from './http/coerce.ts';
import { loadContract, type Contract } from './http/contract.ts';
import { HttpError, errorMapper } from './http/errors.ts';
import { idempotency, saveErrorAnswer } from './http/idempotency.ts';
import { projectHandlers } from './http/projects.ts';
import { taskHandlers, type HandlerTable, type OperationId } from './http/tasks.ts';
import { trainingCreations, trainingHandlers } from './http/training.ts';
import { cacheValidatorRoutes } from './validator-routes.ts';

cacheValidatorRoutes();

export interface AppDeps {
  uow: UnitOfWork;
  logger: Logger;
  /** Shared by both generations: one key, one bucket. */
  rateLimit: RequestHandler;
  validateResponses: boolean;
  idempotencyTtlMs: number;
}

/** Where each generation is served: the older one under /legacy. */
export const basePath: Record<Generation, string> = { current: '', legacy: '/legacy' };

/** The handler of every operation of a generation's contract, by operationId. */
export function handlerTable(contract: Contract, uow: UnitOfWork): HandlerTable {
  return { ...taskHandlers({ uow, contract }), ...projectHandlers({ uow, contract }), ...trainingHandlers({ uow, contract }) };
}

/** Where a string (or an object key) of a parsed body or query holds U+0000, as `body.a.b`; else null. */
function nulIn(value: unknown, where: string): string | null {
  if (typeof value === 'string') return value.includes('\0') ? where : null;
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\0')) return `${where} (a key)`;
      const found = nulIn(v, `${where}.${k}`);
      if (found) return found;
    }
  }
  return null;
}

export function createApp(generation: Generation, deps: AppDeps) {
  const contract = loadContract(generation);
  const handlers = handlerTable(contract, deps.uow);
  const app = express();
  app.disable('x-powered-by');
  // No ETag: the contract has no conditional requests, and hashing every body costs each answer.
  app.set('etag', false);

  app.use(express.json({ limit: '10mb' }));
  if (contract.acceptsForms) app.use(express.urlencoded({ extended: true, limit: '10mb' }));
  // PostgreSQL stores no U+0000 in text or JSON: such a request is refused, not failed with a 500.
  app.use((req, _res, next) => {
    const where = nulIn(req.body, 'body') ?? nulIn(req.query, 'query') ?? (/%00/.test(req.path) ? 'the path' : null);
    next(where ? new HttpError(400, `${where} contains the character U+0000, which is not accepted in text.`) : undefined);
  });
  app.use(authenticate(deps.uow));
  app.use(deps.rateLimit);
  const trainingPaths = trainingCreations(contract);
  app.use(idempotency(deps.idempotencyTtlMs, (p) => contract.creations.has(p) || trainingPaths.has(p)));
  app.use((req, _res, next) => {
    const op = req.method === 'POST' ? contract.creations.get(req.path) : undefined;
    if (op && req.body && typeof req.body === 'object') {
      req.body = coerceBody(req.body, op.bodySchema, contract.resolve, req.is('application/x-www-form-urlencoded') !== false);
    }
    next();
  });
  // The validator fills in schema defaults; a task keeps the parameters as they were sent, so the
  // body is validated as a copy.
  app.use((req, res, next) => {
    res.locals.body = req.body;
    if (req.body && typeof req.body === 'object') req.body = structuredClone(req.body);
    next();
  });
  // The validator gets its own copy of the bundled contract, served at this generation's base path.
  const apiSpec = { ...structuredClone(contract.doc), servers: [{ url: basePath[generation] || '/' }] } as unknown as ValidatorOptions['apiSpec'];
  app.use(
    OpenApiValidator.middleware({
      apiSpec,
      validateRequests: { coerceTypes: false, allowUnknownQueryParameters: false, allErrors: true },
      validateResponses: deps.validateResponses,
      validateSecurity: false,
      validateFormats: true,
    }),
  );
  app.use(async (req, res, next) => {
    const operationId = (req as typeof req & { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
    const handler = operationId ? handlers[operationId as OperationId] : undefined;
    try {
      // test/server/handlers.test.ts keeps every operation of the contract served.
      if (!handler) throw new HttpError(404, 'Not found: no such endpoint.');
      req.body = res.locals.body;
      await handler(req, res);
    } catch (err) {
      next(err);
    }
  });
  app.use(errorMapper(generation, deps.logger, saveErrorAnswer(deps.uow)));
  return app;
}
