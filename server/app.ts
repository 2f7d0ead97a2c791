// createApp(generation, deps): the Express app of one generation, made from its bundled contract:
// auth -> rate limit -> parsers -> idempotency -> body coercion -> contract validation -> handler
// -> error mapper.
import express, { type RequestHandler } from 'express';
import type { Logger } from 'pino';

import { type Clock, wallClock } from './domain/clock.ts';
import { cloneJson } from '../shared/json.ts';
import type { Generation } from './domain/model.ts';
import type { UnitOfWork } from './domain/ports.ts';
import { defaultWorkSettings, type WorkAvailable, type WorkSettings } from './domain/workforce/work.ts';
import type { IdentitySettings } from './domain/workforce/identity.ts';
import { defaultIdentitySettings } from './domain/workforce/settings.ts';
import { accessTable, authorize } from './http/access.ts';
import { ambientUnitOfWork, recordedHandlers } from './http/activity.ts';
import type { HashGate } from './domain/workforce/passwords.ts';
import { authenticate, type AuthFailureLimit, type FailureLimit, type LimitLog } from './http/auth.ts';
import { memberPasswordOperations, selfRecordedOperations } from './http/identity.ts';
import type { IdentityDeps } from './http/identity-deps.ts';
import { bodyParsers, storableInput } from './http/body-limits.ts';
import type { ClientAddress } from './http/client-address.ts';
import { passwordHashing } from './http/hashing.ts';
import { coerceBody, dropAbsentNulls } from './http/coerce.ts';
import { loadContract, type Contract } from './http/contract.ts';
import { creationNames } from './http/creation-names.ts';
import { errorMapper, HttpError } from './http/errors.ts';
import { currentHandlers, legacyHandlers } from './http/handlers.ts';
import { idempotency, saveErrorAnswer } from './http/idempotency.ts';
import { refusePrivateTargets } from './http/targets.ts';
import { splitListFilters } from './http/filters.ts';
import { unknownCreationTypes } from './http/tasks.ts';
import { trainingAnswers, trainingCreations } from './http/training.ts';
import type { StorageSettings } from './storage/s3.ts';
import type { ResultLinks } from './results/files.ts';
import type { TransferDeps } from './transfer/settings.ts';
import { dispatch, type HandlerTable, type Operations } from './http/typed.ts';
import { contractValidator } from './http/validator.ts';
import type { MediaSettings } from './http/workforce/deps.ts';

export interface AppDeps {
  uow: UnitOfWork;
  logger: Logger;
  /** Shared by both generations: one key, one bucket. */
  rateLimit: RequestHandler;
  /** Failed authentications per client address, shared by both generations and the worker API. */
  authFailures?: AuthFailureLimit;
  /** Failed worker log-ins per e-mail address (the worker API). */
  loginFailures: FailureLimit;
  /** Password hashing on requests' paths (log-ins, worker creations, password resets). */
  hashGate: HashGate;
  /** The client address of a request (TRUSTED_PROXIES; the limits, the activity log); the connection's peer when absent. */
  clientAddress?: ClientAddress;
  /** Says when a limit trips (http/auth.ts, limitLog). */
  limitLog?: LimitLog;
  /** ALLOW_PRIVATE_NETWORKS: callback and attachment URLs into other networks are refused at creation. */
  allowPrivateNetworks?: readonly string[];
  validateResponses: boolean;
  idempotencyTtlMs: number;
  /** Worker passwords and sessions (config.workers); the defaults when absent. */
  identity?: IdentitySettings;
  /** The work loop's leases and redos (config.workforce); the defaults when absent. */
  work?: WorkSettings;
  /** The worker API's media route: limits and the networks it may reach (config.media); the defaults when absent. */
  media?: MediaSettings;
  /** Wakes long polls for work (assignments/next); without it a long poll rechecks every second. */
  workAvailable?: WorkAvailable;
  /** The work loop's draws (hidden evaluation, review sampling): Math.random when absent; a simulation seeds it. */
  random?: () => number;
  /**
   * The clock that sessions, Idempotency-Keys and assignment leases lapse by (domain/clock.ts): the
   * wall clock when absent; a test moves one on instead of waiting.
   */
  now?: Clock;
  /** The handlers (default: handlerTable); bench/server.ts swaps in ones that do nothing. */
  handlers?: typeof handlerTable;
  /** Members, sessions, single sign-on, keys (issue 34); defaults when absent (nothing mailed, no SSO). */
  identityDeps?: IdentityDeps;
  /** Imports and exports (config.transfer, and the key that signs download links); defaults when absent. */
  transfer?: TransferDeps;
  /** Customers' buckets (config.storage, and the networks an endpoint may be in); defaults when absent. */
  storage?: StorageSettings;
  /** Responses kept as files: links and settings (config.results, the key that signs); defaults when absent. */
  results?: ResultLinks;
}

/** The operations of tag Workforce that hash a password: creating a worker, resetting a password. */
const hashingPath = /^\/v1\/workforce\/workers(\/[^/]+\/reset_password)?$/;

/** Where each generation is served: the older one under /legacy. */
export const basePath: Record<Generation, string> = { current: '', legacy: '/legacy' };

/** The handler of every operation of a generation's contract, by operationId. */
export function handlerTable(
  contract: Contract,
  uow: UnitOfWork,
  identity = defaultIdentitySettings,
  work = defaultWorkSettings,
  identityDeps?: IdentityDeps,
  transfer?: TransferDeps,
  storage?: StorageSettings,
  results?: ResultLinks,
  now?: Clock,
): HandlerTable<Operations['current']> | HandlerTable<Operations['legacy']> {
  return contract.generation === 'legacy'
    ? legacyHandlers({ uow, contract, work, now, ...(results ? { results } : {}) })
    : currentHandlers({
        uow,
        contract,
        identity,
        work,
        identityDeps,
        now,
        ...(transfer ? { transfer } : {}),
        ...(storage ? { storage } : {}),
        ...(results ? { results } : {}),
      });
}

export function createApp(generation: Generation, deps: AppDeps) {
  const contract = loadContract(generation);
  const access = accessTable(contract);
  const now = deps.now ?? wallClock;
  // The handlers see the store through the running operation's transaction where it records an
  // activity (http/activity.ts): the change and its entry commit together.
  const handlers = recordedHandlers(
    (deps.handlers ?? handlerTable)(
      contract,
      ambientUnitOfWork(deps.uow),
      deps.identity,
      deps.work,
      deps.identityDeps,
      deps.transfer,
      deps.storage,
      deps.results,
      now,
    ),
    access,
    deps.uow,
    now,
    selfRecordedOperations,
  );
  const app = express();
  app.disable('x-powered-by');
  // No ETag: the contract has no conditional requests, and hashing every body costs each answer.
  app.set('etag', false);

  // The key is checked before the body is read: a caller without one costs no parsing.
  // A live task creation is counted by its creating statement (one write per creation, not two).
  // A member's session (its cookie) instead of a key, and the public operations (log-in), come here
  // too; then the access table decides, before any body is read.
  const identity = deps.identityDeps;
  app.use(
    authenticate(
      deps.uow,
      deps.authFailures,
      {
        applies: (req) => req.method === 'POST' && contract.creations.has(req.path),
        failed: (err) => deps.logger.error({ err }, 'counting a live request failed'),
      },
      deps.clientAddress,
      {
        table: access,
        get publicUrl() {
          return identity?.publicUrl ?? 'http://127.0.0.1';
        },
        uow: deps.uow,
        now,
        settings: identity?.settings ?? { passwordCost: 15, idleMs: 3_600_000, maxMs: 43_200_000 },
      },
    ),
  );
  app.use(authorize(access));
  app.use(deps.rateLimit);
  app.use(...bodyParsers(contract.acceptsForms), storableInput(contract), unknownCreationTypes(contract));
  const trainingPaths = trainingCreations(contract);
  app.use(idempotency(deps.idempotencyTtlMs, contract.takesKey, deps.now));
  app.use(
    refusePrivateTargets(deps.allowPrivateNetworks ?? [], (p) =>
      contract.creations.has(p) ? 'task' : p === '/v1/batches' ? 'batch' : null,
    ),
  );
  // One path for every creation, task, training and evaluation alike: values typed first, then
  // checked by the contract (a numeric string meets the bounds of the number it stands for). A
  // name the API documents that this creation does not take is refused here, naming it; any other
  // unknown name passes and is ignored (http/creation-names.ts).
  const names = creationNames(generation);
  app.use((req, _res, next) => {
    const creation = req.method === 'POST' ? (contract.creations.get(req.path) ?? trainingPaths.get(req.path)) : undefined;
    if (creation && req.body && typeof req.body === 'object') {
      const form = req.is('application/x-www-form-urlencoded') !== false;
      req.body = coerceBody(req.body, creation.bodySchema, contract.resolve, form, 'kind' in creation ? trainingAnswers : undefined);
      const refused = names.refusal(req.path, req.body);
      if (refused) return next(new HttpError(400, refused));
    } else if (req.body && typeof req.body === 'object') {
      const schema = contract.bodySchemaOf(req.method, req.path);
      if (schema) req.body = dropAbsentNulls(req.body, schema, contract.resolve);
    }
    next();
  });
  // The validator fills in schema defaults; a task keeps the parameters as they were sent, so the
  // body is validated as a copy.
  app.use((req, res, next) => {
    res.locals.body = req.body;
    if (req.body && typeof req.body === 'object') req.body = cloneJson(req.body);
    next();
  });
  app.use(splitListFilters(contract));
  app.use(contractValidator(generation, basePath[generation] || '/'));
  // Creating a worker and resetting a password hash one: an account waits its turn (http/hashing.ts).
  const hashing = passwordHashing(deps.hashGate, (_req, res) => [`account:${res.locals.caller.account.accountId}`]);
  app.use((req, res, next) => (req.method === 'POST' && hashingPath.test(req.path) ? hashing(req, res, next) : next()));
  // A member's password (a log-in, a password set or changed) waits its turn at the same gate, by
  // its client address (and e-mail address, at log-in).
  const memberHashing = passwordHashing(deps.hashGate, (req, res) => [
    `address:${res.locals.requester.address}`,
    ...(typeof req.body?.email === 'string' ? [`email:${req.body.email.toLowerCase()}`] : []),
  ]);
  app.use((req, res, next) => {
    const op = access.match(req.method, req.path);
    return op && memberPasswordOperations.has(op.operationId) ? memberHashing(req, res, next) : next();
  });
  app.use(dispatch(handlers, deps.validateResponses ? contract.checkAnswer : undefined));
  app.use(errorMapper(generation, deps.logger, saveErrorAnswer(deps.uow)));
  return app;
}
