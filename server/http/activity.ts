// The activity log's writer for every operation the access table gives an `activity` (issue 34): the
// operation's handler runs in one database transaction that also appends its entry, so that a
// change and its record commit together or not at all, whichever domain function makes the change.
// The transaction opens when the handler first touches the store (work before that, such as
// hashing a password or asking an identity provider, holds no lock); domain functions that open a
// transaction of their own join it. Handlers that record themselves (a log-in: the member is known
// only once the password is checked) are left alone.
import { isRecord } from '../../shared/json.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Actor, type NewActivity, recordActivity } from '../domain/identity/activity.ts';
import type { Json } from '../domain/model.ts';
import type { Repositories, UnitOfWork } from '../domain/ports.ts';
import type { AccessTable, Principal } from './access.ts';
import { Replay } from './idempotency.ts';
import { AfterCommit, type HandlerTable, type OperationRequest, type Operations, WithHeaders } from './typed.ts';

/** One request's transaction, begun when first needed. */
class RequestTransaction {
  #repos: Promise<Repositories> | undefined;
  #finish: ((error?: unknown) => void) | undefined;
  #done: Promise<unknown> | undefined;
  /** What the handler adds to the entry: details, another target, more entries. */
  details: Json | undefined;
  target: { type?: string; id?: string | null } | undefined;
  /** A public operation's: whose account, and who acted (the member who accepted an invitation). */
  accountId: string | undefined;
  actor: Actor | undefined;

  constructor(private readonly base: UnitOfWork) {}

  get opened() {
    return this.#repos !== undefined;
  }

  repos(): Promise<Repositories> {
    this.#repos ??= new Promise<Repositories>((resolve, reject) => {
      this.#done = this.base
        .transaction(async (repos) => {
          const outcome = new Promise<unknown>((r) => {
            this.#finish = r;
          });
          resolve(repos);
          const error = await outcome;
          if (error !== undefined) throw error;
        })
        .catch((err) => {
          reject(err);
          throw err;
        });
    });
    return this.#repos;
  }

  async commit(): Promise<void> {
    if (!this.#repos) return;
    this.#finish?.();
    await this.#done;
  }

  async rollback(error: unknown): Promise<void> {
    if (!this.#repos) return;
    this.#finish?.(error ?? new Error('rolled back'));
    await this.#done?.catch(() => {});
  }
}

const ambient = new AsyncLocalStorage<RequestTransaction>();

/**
 * The unit of work the handlers are given: the store itself, except while a recorded operation runs,
 * when every repository call and every transaction goes to that request's transaction.
 */
export function ambientUnitOfWork(base: UnitOfWork): UnitOfWork {
  const repositoryProxies = new Map<string, unknown>();
  return new Proxy(base, {
    get(target, prop, receiver) {
      const current = ambient.getStore();
      if (!current || typeof prop !== 'string' || prop === 'payloads') return Reflect.get(target, prop, receiver);
      if (prop === 'transaction') return <T>(work: (repos: Repositories) => Promise<T>) => current.repos().then(work);
      const cached = repositoryProxies.get(prop);
      if (cached) return cached;
      const repository: unknown = Reflect.get(target, prop);
      if (!repository || typeof repository !== 'object') return repository;
      // Methods that wait for the request's transaction, then run in it (the same repository's).
      const proxy = new Proxy(repository, {
        get(repo, method) {
          const value: unknown = Reflect.get(repo, method);
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            const request = ambient.getStore();
            if (!request) throw new Error(`${prop}.${String(method)} was called after its request's transaction ended.`);
            const inTransaction: unknown = Reflect.get(await request.repos(), prop);
            const run: unknown = inTransaction && typeof inTransaction === 'object' ? Reflect.get(inTransaction, method) : undefined;
            if (typeof run !== 'function') throw new Error(`${prop}.${String(method)} is no method of the transaction's repositories.`);
            return Reflect.apply(run, inTransaction, args);
          };
        },
      });
      repositoryProxies.set(prop, proxy);
      return proxy;
    },
  });
}

/** Adds details (a role from and to) or names the target of the entry the running operation records. */
export function noteActivity(note: {
  details?: Json;
  target?: { type?: string; id?: string | null };
  accountId?: string;
  actor?: Actor;
}): void {
  const current = ambient.getStore();
  if (!current) return;
  if (note.accountId) current.accountId = note.accountId;
  if (note.actor) current.actor = note.actor;
  if (note.details) current.details = { ...current.details, ...note.details };
  if (note.target) current.target = { ...current.target, ...note.target };
}

export function actorOf(principal: Principal | undefined): Actor {
  if (principal?.kind === 'member') return { type: 'member', id: principal.memberId, name: principal.email };
  if (principal?.kind === 'key') return { type: 'api_key', id: principal.keyId, name: principal.name };
  return { type: 'system' };
}

const pathTargets: [param: string, type: string][] = [
  ['taskId', 'task'],
  ['projectName', 'project'],
  ['batchName', 'batch'],
  ['workerId', 'worker'],
  ['memberId', 'member'],
  ['keyId', 'api_key'],
  ['sessionId', 'session'],
  ['connectionId', 'storage_connection'],
  ['importId', 'import'],
  ['exportId', 'export'],
];

/** What an operation changed: its path's object, else the object its answer names. */
function targetOf(action: string, path: unknown, answer: unknown): { type: string; id: string | null } {
  const params = isRecord(path) ? path : {};
  for (const [param, type] of pathTargets) {
    const id = params[param];
    if (typeof id === 'string') return { type, id };
  }
  const body = answer instanceof WithHeaders ? answer.body : answer;
  const a = isRecord(body) ? body : {};
  const type = action.slice(0, action.indexOf('.')).replace(/s$/, '');
  const named =
    a.name ??
    a.worker_id ??
    (isRecord(a.member) ? a.member.member_id : undefined) ??
    (isRecord(a.key) ? a.key.key_id : undefined) ??
    a.export_id ??
    a.import_id ??
    a.connection_id;
  return { type, id: typeof named === 'string' ? named : null };
}

/**
 * The entry of an operation that records itself (listed in `selfRecorded`) because its change
 * comes after work that must hold no transaction (a bucket tested, a file received): the handler
 * appends it with `recordActivity` in the transaction that makes the change.
 */
export function requestActivity(
  request: Pick<OperationRequest<unknown>, 'caller' | 'principal' | 'requester'>,
  action: string,
  target: { type: string; id: string },
  at: Date,
): NewActivity {
  return { accountId: request.caller.account.accountId, action, actor: actorOf(request.principal), target, at, origin: request.requester };
}

/**
 * Wraps the handler of every operation that records an activity (except those in `selfRecorded`):
 * the handler and the entry in one transaction, committed before the answer is sent.
 */
export function recordedHandlers<T extends HandlerTable<Operations['current']> | HandlerTable<Operations['legacy']>>(
  handlers: T,
  table: AccessTable,
  base: UnitOfWork,
  now: () => Date,
  selfRecorded: ReadonlySet<string> = new Set(),
): T {
  const wrapped: Record<string, unknown> = { ...handlers };
  for (const [operationId, handler] of Object.entries<(request: OperationRequest<unknown>) => Promise<unknown>>(handlers)) {
    const action = table.byId.get(operationId)?.access.activity;
    if (!action || selfRecorded.has(operationId)) continue;
    wrapped[operationId] = async (request: OperationRequest<unknown>) => {
      const tx = new RequestTransaction(base);
      try {
        const answer = await ambient.run(tx, () => handler(request));
        if (!(answer instanceof Replay)) {
          const target = { ...targetOf(action, request.path, answer), ...tx.target };
          const accountId = request.caller?.account.accountId ?? tx.accountId;
          if (accountId)
            await recordActivity(await tx.repos(), {
              accountId,
              action,
              actor: tx.actor ?? actorOf(request.principal),
              target,
              at: now(),
              origin: request.requester,
              details: tx.details,
            });
        }
        await tx.commit();
        return answer instanceof AfterCommit ? await answer.finish() : answer;
      } catch (err) {
        await tx.rollback(err);
        throw err;
      }
    };
  }
  // Each wrapper takes and answers what its handler does, so this is still the table it was given;
  // the compiler cannot follow that across the keys of a generic table, hence the one assertion.
  return wrapped as T;
}
