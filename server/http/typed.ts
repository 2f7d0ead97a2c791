// Handlers typed by the contract (after Backstage's backend-openapi-utils `DocRequestHandler`): a
// handler table keyed by operationId, one handler per operation of a contract (the compiler fails
// when one is missing), each receiving its operation's path parameters, query and body as
// generated/ types them, and returning the operation's 200 answer (or NoContent, a 204; a Download,
// a file made here; or Streamed, a file passed on).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, RequestHandler, Response } from 'express';
import type { OpenApiRequest } from 'express-openapi-validator/dist/framework/types.js';
import type { operations as CurrentOperations, paths as CurrentPaths } from '../../generated/current.ts';
import type { operations as LegacyOperations, paths as LegacyPaths } from '../../generated/legacy.ts';
import type { operations as WorkforceOperations, paths as WorkforcePaths } from '../../generated/workforce.ts';
import type { Caller } from '../domain/model.ts';
import type { Contract, ContractName } from './contract.ts';
import type { Principal, Requester } from './access.ts';
import type { WorkerPrincipal } from '../domain/workforce/worker.ts';
import { HttpError } from './errors.ts';
import { Replay, replay, type IdempotencyContext } from './idempotency.ts';

// What the middlewares before a handler leave for it, typed once for the whole app.
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** Set by authenticate (http/auth.ts) on every request that reaches a generation's handler (not on a public operation's). */
      caller: Caller;
      /** Who is asking (http/access.ts): a key, a member's session, or nobody on a public operation. */
      principal: Principal;
      /** Where the request came from, for the activity log. */
      requester: Requester;
      keyHash: string;
      /** Set by the worker API's authentication on every request that reaches a worker handler. */
      worker: WorkerPrincipal;
      /** The token the worker's request carries (a session is revoked by logging out). */
      workerToken: WorkerCredential;
      /** Set by the idempotency middleware for a creation request with an Idempotency-Key. */
      idempotency?: IdempotencyContext;
      /** The body as the client sent it (the validator fills schema defaults into its own copy). */
      body?: unknown;
      /** A live creation request not counted at authentication (http/auth.ts): counted once, by its creation or after it. */
      liveRequest?: LiveRequest;
    }
  }
}

/** The operations a contract's paths serve (its webhooks are operations too, served by the client). */
type PathOperation<Paths> = {
  [P in keyof Paths]: Paths[P][Extract<keyof Paths[P], 'get' | 'put' | 'post' | 'delete' | 'patch'>];
}[keyof Paths];
type Served<Ops, Paths> = { [Id in keyof Ops as Ops[Id] extends PathOperation<Paths> ? Id : never]: Ops[Id] };

/** The operations each contract serves, by operationId: the two generations and the worker API. */
export interface Operations {
  current: Served<CurrentOperations, CurrentPaths>;
  legacy: Served<LegacyOperations, LegacyPaths>;
  workforce: Served<WorkforceOperations, WorkforcePaths>;
}

/** The token a worker's request was authenticated with. */
export interface WorkerCredential {
  tokenId: string;
  kind: 'session' | 'api';
}

type Parameter<Op, Where extends 'path' | 'query'> = Op extends { parameters: { [K in Where]?: infer P } }
  ? [NonNullable<P>] extends [never]
    ? Record<string, never>
    : NonNullable<P>
  : Record<string, never>;

/** The JSON body of an operation (undefined where the body is optional or absent). */
type BodyOf<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : Op extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : undefined;

/** The JSON answer of an operation's 200 response. */
export type AnswerOf<Op> = Op extends { responses: { 200: { content: { 'application/json': infer A } } } } ? A : never;

export interface OperationRequest<Op> {
  path: Parameter<Op, 'path'>;
  query: Parameter<Op, 'query'>;
  body: BodyOf<Op>;
  caller: Caller;
  /** The request path below the generation's base path (`/v1/task/categorization`). */
  route: string;
  idempotency: IdempotencyContext | undefined;
  /** Set on a live creation request that its creation is to count (see http/auth.ts). */
  liveRequest?: LiveRequest | undefined;
  /** Who is asking: a key, a member's session, or nobody (a public operation). */
  principal: Principal;
  /** The client address, request id and User-Agent (for the activity log and log-in throttles). */
  requester: Requester;
  /**
   * A body no parser read (a file streamed to `POST /v1/imports`): the request itself, with its
   * declared type and length. Absent for JSON and form bodies.
   */
  upload?: Upload | undefined;
  /** The scheme, host and port the request was made to (`http://127.0.0.1:8080`), for links in answers. */
  origin?: string;
  /** Aborted when the client goes away before its answer is sent (a long poll then claims nothing). */
  signal?: AbortSignal;
}

/** A streamed request body (see OperationRequest.upload). */
export interface Upload {
  stream: Readable;
  contentType: string | undefined;
  /** The Content-Length header, when the body has one (a chunked body has none). */
  contentLength: number | undefined;
}

/** A live request whose counting was left to its work: `counted` once something counted it. */
export interface LiveRequest {
  counted: boolean;
}

/** A request of the worker API: the worker instead of an account. */
export interface WorkerOperationRequest<Op> extends Omit<OperationRequest<Op>, 'caller' | 'principal' | 'requester'> {
  worker: WorkerPrincipal;
  credential: WorkerCredential;
}

/** A 200 answer with headers of its own (a log-in's Set-Cookie). */
export class WithHeaders<A> {
  constructor(
    readonly body: A,
    readonly headers: Record<string, string | string[]>,
  ) {}
}

/**
 * An answer made after the operation's transaction commits (http/activity.ts): an invitation is
 * mailed once it is stored, and no lock is held while the mail server answers. Typed by the answer
 * it will be.
 */
export class AfterCommit<A> {
  constructor(readonly finish: () => Promise<A>) {}
}
export const afterCommit = <A>(finish: () => Promise<A>): AfterCommit<A> => new AfterCommit(finish);

/** A 204 answer (the worker API's log-out, or no work for now), with its headers. */
export class NoContent {
  constructor(readonly headers: Record<string, string> = {}) {}
}

/** Whether an operation documents a 204 answer: only those may answer NoContent. */
type NoContentOf<Op> = Op extends { responses: { 204: unknown } } ? NoContent : never;

/**
 * An answer the handler sends itself, a body streamed from elsewhere: the worker API's media route,
 * whose files are not JSON. `send` writes the whole answer (or hands an error to the error mapper
 * by rejecting before anything was sent).
 */
export class Streamed {
  constructor(readonly send: (req: Request, res: Response) => Promise<void>) {}
}

/** Whether an operation documents a 206 (a byte range of a file): only those may answer Streamed. */
type StreamedOf<Op> = Op extends { responses: { 206: unknown } } ? Streamed : never;

/** A 200 answer that is a file, streamed (an import's refused lines): its media type and its bytes. */
export class Download {
  constructor(
    readonly contentType: string,
    readonly body: AsyncIterable<string | Buffer>,
  ) {}
}

/** Whether an operation's 200 answer is something else than JSON: only those may answer a Download. */
type DownloadOf<Op> = Op extends { responses: { 200: { content: infer C } } }
  ? Exclude<keyof C, 'application/json'> extends never
    ? never
    : Download
  : never;

export type OperationHandler<Op> = (
  request: OperationRequest<Op>,
) => Promise<AnswerOf<Op> | Replay | NoContentOf<Op> | DownloadOf<Op> | WithHeaders<AnswerOf<Op>> | AfterCommit<AnswerOf<Op>>>;
export type WorkerOperationHandler<Op> = (
  request: WorkerOperationRequest<Op>,
) => Promise<AnswerOf<Op> | Replay | NoContentOf<Op> | StreamedOf<Op>>;

/** One handler for every operation of a contract. */
export type HandlerTable<Ops> = { [Id in keyof Ops]: OperationHandler<Ops[Id]> };
/** One handler for every operation of the worker API. */
export type WorkerHandlerTable<Ops = Operations['workforce']> = { [Id in keyof Ops]: WorkerOperationHandler<Ops[Id]> };

/** A handler as the dispatcher calls it, before the operation is known. */
type WireHandler = (request: {
  path: Record<string, string>;
  query: unknown;
  body: unknown;
  caller: Caller;
  worker: WorkerPrincipal;
  credential: WorkerCredential;
  route: string;
  idempotency: IdempotencyContext | undefined;
  liveRequest: LiveRequest | undefined;
  principal: Principal;
  requester: Requester;
  upload: Upload | undefined;
  origin: string;
  signal: AbortSignal;
}) => Promise<unknown>;

/**
 * The route after the validator: calls the handler of the operation the validator matched. The
 * validator has checked path, query and body against that operation, which is what makes the
 * handler's types true; this is the one place where the wire becomes typed.
 */
export function dispatch(
  table: HandlerTable<Operations['current']> | HandlerTable<Operations['legacy']> | WorkerHandlerTable,
  checkAnswer?: Contract<ContractName>['checkAnswer'],
): RequestHandler {
  const handlers = new Map(Object.entries(table) as [string, WireHandler][]);
  return async (req: OpenApiRequest, res: Response, next) => {
    try {
      const operationId = req.openapi?.schema.operationId ?? '';
      /**
       * A JSON answer, checked against the contract first when the server checks its answers. A view
       * gives an absent optional field as `undefined`, which JSON leaves out: the answer is checked as
       * the client gets it.
       */
      const send = (body: unknown) => {
        const text = JSON.stringify(body);
        const problem = checkAnswer?.(operationId, 200, JSON.parse(text));
        if (problem) throw new Error(`The answer of ${operationId} does not match the contract: ${problem}`);
        res.status(200).type('application/json').send(text);
      };
      const handler = handlers.get(operationId);
      if (!req.openapi || !handler) throw new HttpError(404, 'Not found: no such endpoint.');
      const { caller, worker, workerToken: credential, idempotency, body, liveRequest, principal, requester } = res.locals;
      req.body = body;
      // A body that no parser read (a file to import) is the handler's to stream.
      const length = Number(req.get('content-length'));
      const upload: Upload | undefined =
        body === undefined && req.get('content-type') !== undefined && req.readable && !req.readableEnded
          ? {
              stream: req,
              contentType: req.get('content-type'),
              contentLength: Number.isSafeInteger(length) && length >= 0 ? length : undefined,
            }
          : undefined;
      const gone = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) gone.abort();
      });
      let answer = await handler({
        signal: gone.signal,
        path: req.openapi.pathParams,
        query: req.query,
        body,
        caller,
        worker,
        credential,
        route: req.path,
        idempotency,
        liveRequest,
        principal,
        requester,
        upload,
        origin: `${req.protocol}://${req.get('host') ?? 'localhost'}`,
      });
      if (answer instanceof AfterCommit) answer = await answer.finish();
      if (answer instanceof Replay) replay(res, answer.saved);
      else if (answer instanceof WithHeaders) {
        for (const [name, value] of Object.entries(answer.headers)) res.append(name, value);
        send(answer.body);
      } else if (answer instanceof Download) {
        res.status(200).type(answer.contentType);
        await pipeline(Readable.from(answer.body), res);
      } else if (answer instanceof NoContent) res.status(204).set(answer.headers).end();
      else if (answer instanceof Streamed) await answer.send(req, res);
      else send(answer);
    } catch (err) {
      next(err);
    }
  };
}
