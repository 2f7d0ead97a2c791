// Worker identity: workers (the operator's workforce and accounts' own), their passwords, sessions
// and API tokens. Secrets are shown once and stored hashed: passwords with scrypt (passwords.ts),
// tokens (256 random bits) with SHA-256, which is sound for random secrets.
import { randomBytes } from 'node:crypto';
import { DomainError, invalid, notFound } from '../errors.ts';
import { sha256 } from '../ids.ts';
import { positionToken, queryBinding, readPositionToken } from '../page-token.ts';
import type { Mode } from '../model.ts';
import { workforceIdOf, type Workforce } from './handles.ts';
import type { WorkRepository } from './model.ts';
import { decoyHash, generatePassword, hashPassword, verifyPassword } from './passwords.ts';
import type { WorkerPrincipal, WorkerRole, WorkerStatus } from './worker.ts';

export interface WorkerRecord {
  workerId: string;
  /** null: the operator's workforce. */
  accountId: string | null;
  /** The mode of the key that made it (the operator's workforce: live); a test-mode worker does test-mode work only. */
  mode: Mode;
  email: string;
  displayName: string;
  status: WorkerStatus;
  roles: WorkerRole[];
  calibrator: boolean;
  createdAt: Date;
  lastSeenAt: Date | null;
}

export type TokenKind = 'session' | 'api';

export interface WorkerTokenRecord {
  tokenId: string;
  workerId: string;
  kind: TokenKind;
  tokenHash: string;
  /** What an API token is for; null for sessions. */
  name: string | null;
  createdAt: Date;
  /** A session: when it lapses unless used (moved by use); an API token: its expiry, if any. */
  expiresAt: Date | null;
  /** A session's end however it is used; null for API tokens. */
  absoluteExpiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** An e-mail address already used by a worker of the same workforce that is not removed. */
export class EmailTaken extends Error {
  constructor() {
    super('email taken');
  }
}

export interface WorkerWithHash {
  worker: WorkerRecord;
  passwordHash: string | null;
}

export interface WorkerRepository {
  /** Throws EmailTaken when a worker of the same workforce that is not removed has the address (any letter case). */
  insert(worker: WorkerRecord, passwordHash: string | null): Promise<void>;
  get(workerId: string, options?: { forUpdate?: boolean }): Promise<WorkerRecord | null>;
  /**
   * The workers that are not removed with this address (any letter case), of every workforce, with
   * their password hashes: at most `limit`, the operator's first, then the most recently seen.
   */
  withEmail(email: string, limit: number): Promise<WorkerWithHash[]>;
  /** The worker of this workforce that is not removed with this address (any letter case). */
  findInWorkforce(workforce: Workforce, email: string): Promise<WorkerWithHash | null>;
  /** Workers of one workforce (an account's in one mode, or the operator's), newest first, after a position. */
  list(
    workforce: Workforce,
    filter: { status?: WorkerStatus; limit: number; after?: { createdAt: Date; workerId: string } },
  ): Promise<WorkerRecord[]>;
  update(worker: WorkerRecord): Promise<void>;
  setPassword(workerId: string, passwordHash: string): Promise<void>;
  insertToken(token: WorkerTokenRecord): Promise<void>;
  findToken(tokenHash: string): Promise<{ token: WorkerTokenRecord; worker: WorkerRecord } | null>;
  /** Records a use: last_used_at (and the worker's last_seen_at), and a session's new expiry. */
  touchToken(tokenId: string, workerId: string, usedAt: Date, expiresAt: Date | null): Promise<void>;
  /** Revokes one live token of the worker; false when there is none with that id (and kind). */
  revokeToken(workerId: string, tokenId: string, kind: TokenKind, now: Date): Promise<boolean>;
  /** Revokes every live token of the worker; how many. */
  revokeAllTokens(workerId: string, now: Date): Promise<number>;
  /** Revokes the worker's live sessions but the `keep` newest (by log-in); how many. */
  revokeSessionsBeyond(workerId: string, keep: number, now: Date): Promise<number>;
  /** The worker's live API tokens (not revoked, not lapsed), newest first. */
  liveApiTokens(workerId: string, now: Date): Promise<WorkerTokenRecord[]>;
}

/** What identity needs of the work loop: ending a paused or removed worker's open assignments. */
type HeldWork = Pick<WorkRepository, 'releaseAllHeld'>;

/** What identity needs of the store: the workers (and their held work), in one transaction where it matters. */
export interface IdentityStore {
  workers: WorkerRepository;
  work: HeldWork;
  transaction<T>(work: (repos: { workers: WorkerRepository; work: HeldWork }) => Promise<T>): Promise<T>;
}

export interface IdentitySettings {
  /** log2 of scrypt's N (WORKER_PASSWORD_COST). */
  passwordCost: number;
  /** A session lapses after this long without use (WORKER_SESSION_TTL_SECONDS). */
  sessionTtlMs: number;
  /** ... and this long after log-in, however used (WORKER_SESSION_MAX_SECONDS). */
  sessionMaxMs: number;
}

/** At most this many live API tokens per worker (the contract's WorkerTokenCreateRequest). */
const maxApiTokens = 20;

/** At most this many live sessions per worker: a log-in beyond it revokes the oldest (the contract's loginWorker). */
const maxSessions = 10;

/**
 * A log-in without `workforce_id` tries the password against at most this many workforces that
 * use the address (the operator's first, then the most recently seen): each try is a costly hash,
 * and an address is one worker per workforce, so few share one (decision 0013).
 */
const maxLoginWorkforces = 5;

/**
 * With workforce_id named, the address's workers are read up to this many to find that workforce's
 * one (an address has one worker per workforce; accounts are made by the operator, so few).
 */
const maxNamedLookup = 1000;

const newWorkerId = () => 'wkr_' + randomBytes(12).toString('hex');
const newTokenId = () => 'wtk_' + randomBytes(12).toString('hex');
/** A token: a readable prefix (`wks_` session, `wka_` API) and 256 random bits, base64url. */
const newTokenSecret = (kind: TokenKind) => (kind === 'session' ? 'wks_' : 'wka_') + randomBytes(32).toString('base64url');
const hashToken = (token: string) => sha256(token);

export const principalOf = (w: WorkerRecord): WorkerPrincipal => ({
  workerId: w.workerId,
  accountId: w.accountId,
  mode: w.mode,
  roles: w.roles,
  calibrator: w.calibrator,
  status: w.status,
});

export interface NewWorker {
  accountId: string | null;
  /** The mode of the key that makes the worker; the operator's workforce is live. */
  mode: Mode;
  email: string;
  displayName: string;
  roles: WorkerRole[];
  calibrator: boolean;
  /** Absent: the server chooses one and returns it. */
  password?: string;
}

function checkPassword(password: string): void {
  // The contract bounds it too; the CLI and admin interface come here without the contract.
  if (password.length < 12 || password.length > 256) throw invalid('password must be 12 to 256 characters long.');
}

/** ajv-formats' `email` (the contract's format), so that every stored address is one the contract shows. */
const emailPattern =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

function checkNewWorker(w: NewWorker): void {
  if (!emailPattern.test(w.email) || w.email.length > 254)
    throw invalid(`email must be an e-mail address of at most 254 characters, not "${w.email.slice(0, 300)}".`);
  if (!w.displayName.trim() || w.displayName.length > 100) throw invalid('display_name must be 1 to 100 characters long.');
  if (w.roles.length === 0) throw invalid('roles must name at least one role (labeler, reviewer, lead).');
  for (const r of w.roles)
    if (!['labeler', 'reviewer', 'lead'].includes(r)) throw invalid(`roles: "${r}" is not a role (labeler, reviewer, lead).`);
  if (w.password !== undefined) checkPassword(w.password);
}

export async function createWorker(
  store: IdentityStore,
  input: NewWorker,
  settings: IdentitySettings,
  now: Date,
): Promise<{ worker: WorkerRecord; generatedPassword?: string }> {
  checkNewWorker(input);
  if (input.accountId === null && input.mode !== 'live') throw invalid("The operator's workforce is live: it has no test-mode workers.");
  const password = input.password ?? generatePassword();
  const worker: WorkerRecord = {
    workerId: newWorkerId(),
    accountId: input.accountId,
    mode: input.mode,
    email: input.email,
    displayName: input.displayName,
    status: 'active',
    roles: [...new Set(input.roles)],
    calibrator: input.calibrator,
    createdAt: now,
    lastSeenAt: null,
  };
  try {
    await store.workers.insert(worker, await hashPassword(password, settings.passwordCost));
  } catch (err) {
    if (err instanceof EmailTaken)
      throw new DomainError(
        'conflict',
        `The e-mail address ${input.email} is already used by another worker of this workforce.`,
        'email_taken',
      );
    throw err;
  }
  return { worker, ...(input.password === undefined ? { generatedPassword: password } : {}) };
}

export interface SessionGrant {
  token: string;
  expiresAt: Date;
  absoluteExpiresAt: Date;
  worker: WorkerRecord;
}

/**
 * Logs in: a session token, or null for a wrong address or password, a worker without a password,
 * or a removed worker (the caller cannot tell which). An address is one worker per workforce, so
 * the password is tried against each workforce's worker with the address (at most
 * maxLoginWorkforces), or only the one `workforceId` names; an address nobody uses costs one hash
 * too (a decoy), as one used once does. The same address and password opening workers of several
 * workforces → 409 `workforce_required`: the caller names one.
 */
export async function login(
  store: IdentityStore,
  input: { email: string; password: string; workforceId?: string | undefined },
  settings: IdentitySettings,
  now: Date,
): Promise<SessionGrant | null> {
  const { email, password, workforceId } = input;
  const candidates = (await store.workers.withEmail(email, workforceId === undefined ? maxLoginWorkforces : maxNamedLookup)).filter(
    (c) => workforceId === undefined || workforceIdOf(c.worker) === workforceId,
  );
  const tried = candidates.slice(0, maxLoginWorkforces);
  const matched: WorkerRecord[] = [];
  if (tried.length === 0) await verifyPassword(password, await decoyHash(settings.passwordCost));
  for (const c of tried) {
    const ok = await verifyPassword(password, c.passwordHash ?? (await decoyHash(settings.passwordCost)));
    if (ok && c.passwordHash && c.worker.status !== 'removed') matched.push(c.worker);
  }
  if (matched.length === 0) return null;
  if (matched.length > 1)
    throw new DomainError(
      'conflict',
      'This e-mail address and password open workers of several workforces: name the one to log in to in workforce_id (operator, or the wkf_ id the account that made you a worker gave you).',
      'workforce_required',
    );
  const worker = matched[0]!;
  const token = newTokenSecret('session');
  const absoluteExpiresAt = new Date(now.getTime() + settings.sessionMaxMs);
  const expiresAt = new Date(Math.min(now.getTime() + settings.sessionTtlMs, absoluteExpiresAt.getTime()));
  await store.transaction(async ({ workers }) => {
    // The worker's row is the lock: concurrent log-ins keep at most maxSessions between them.
    await workers.get(worker.workerId, { forUpdate: true });
    await workers.insertToken({
      tokenId: newTokenId(),
      workerId: worker.workerId,
      kind: 'session',
      tokenHash: hashToken(token),
      name: null,
      createdAt: now,
      expiresAt,
      absoluteExpiresAt,
      lastUsedAt: now,
      revokedAt: null,
    });
    await workers.revokeSessionsBeyond(worker.workerId, maxSessions, now);
  });
  return { token, expiresAt, absoluteExpiresAt, worker };
}

export type TokenCheck =
  | { ok: true; worker: WorkerRecord; token: WorkerTokenRecord }
  | { ok: false; reason: 'unknown' | 'session_expired' | 'worker_removed' };

/**
 * The worker a token belongs to. A session is renewed by use (sliding, up to its absolute end); the
 * use is written at most every `touchEveryMs` per token, so that a busy worker does not write a row on
 * every request.
 */
export async function checkToken(store: IdentityStore, token: string, settings: IdentitySettings, now: Date): Promise<TokenCheck> {
  const found = await store.workers.findToken(hashToken(token));
  if (!found) return { ok: false, reason: 'unknown' };
  const { token: record, worker } = found;
  // Removal revoked the token: its holder (who has a real token) learns why it stopped working.
  if (worker.status === 'removed') return { ok: false, reason: 'worker_removed' };
  if (record.revokedAt) return { ok: false, reason: 'unknown' };
  if (record.expiresAt && record.expiresAt.getTime() <= now.getTime())
    return { ok: false, reason: record.kind === 'session' ? 'session_expired' : 'unknown' };
  const touchEveryMs = Math.min(60_000, settings.sessionTtlMs / 20);
  if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() >= touchEveryMs) {
    const expiresAt =
      record.kind === 'session' && record.absoluteExpiresAt
        ? new Date(Math.min(now.getTime() + settings.sessionTtlMs, record.absoluteExpiresAt.getTime()))
        : record.expiresAt;
    await store.workers.touchToken(record.tokenId, worker.workerId, now, expiresAt);
    record.lastUsedAt = now;
    record.expiresAt = expiresAt;
  }
  return { ok: true, worker, token: record };
}

export async function logout(store: IdentityStore, workerId: string, tokenId: string, now: Date): Promise<void> {
  await store.workers.revokeToken(workerId, tokenId, 'session', now);
}

export async function createApiToken(
  store: IdentityStore,
  workerId: string,
  input: { name: string; expiresAt?: Date },
  now: Date,
): Promise<{ record: WorkerTokenRecord; token: string }> {
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) throw invalid('expires_at must lie in the future.');
  return store.transaction(async ({ workers }) => {
    // The worker's row is the lock: two creations at once cannot both pass the limit.
    await workers.get(workerId, { forUpdate: true });
    if ((await workers.liveApiTokens(workerId, now)).length >= maxApiTokens) {
      throw new DomainError('conflict', `A worker has at most ${maxApiTokens} live API tokens; revoke one first.`, 'token_limit');
    }
    const token = newTokenSecret('api');
    const record: WorkerTokenRecord = {
      tokenId: newTokenId(),
      workerId,
      kind: 'api',
      tokenHash: hashToken(token),
      name: input.name,
      createdAt: now,
      expiresAt: input.expiresAt ?? null,
      absoluteExpiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
    };
    await workers.insertToken(record);
    return { record, token };
  });
}

export async function revokeApiToken(store: IdentityStore, workerId: string, tokenId: string, now: Date): Promise<void> {
  if (!(await store.workers.revokeToken(workerId, tokenId, 'api', now))) throw notFound(`Token ${tokenId} not found.`);
}

/** Whether the worker belongs to this workforce (an account's own in one mode, or the operator's). */
const inWorkforce = (worker: Pick<WorkerRecord, 'accountId' | 'mode'>, workforce: Workforce) =>
  worker.accountId === workforce.accountId && worker.mode === workforce.mode;

/** A worker of this workforce; 404 for any other (another account's, the other mode's, the operator's). */
export async function workerOf(
  store: Pick<IdentityStore, 'workers'>,
  workforce: Workforce,
  workerId: string,
  options?: { forUpdate?: boolean },
): Promise<WorkerRecord> {
  const worker = /^wkr_[0-9a-f]{24}$/.test(workerId) ? await store.workers.get(workerId, options) : null;
  if (!worker || !inWorkforce(worker, workforce)) throw notFound(`Worker ${workerId} not found.`);
  return worker;
}

export interface WorkerChanges {
  displayName?: string;
  roles?: WorkerRole[];
  calibrator?: boolean;
  status?: 'active' | 'paused';
}

/**
 * Changes a worker of this workforce. Pausing ends the assignments they hold: the tasks go back to
 * the queue (their drafts kept for them), and what they send on those leases later gets 403
 * worker_paused (work.ts).
 */
export async function changeWorker(
  store: IdentityStore,
  workforce: Workforce,
  workerId: string,
  changes: WorkerChanges,
  now: Date,
): Promise<WorkerRecord> {
  return store.transaction(async ({ workers, work }) => {
    const worker = await workerOf({ workers }, workforce, workerId, { forUpdate: true });
    if (worker.status === 'removed') throw invalid(`Worker ${workerId} was removed and cannot be changed.`);
    if (changes.displayName !== undefined && (!changes.displayName.trim() || changes.displayName.length > 100))
      throw invalid('display_name must be 1 to 100 characters long.');
    if (changes.roles !== undefined)
      checkNewWorker({ ...workforce, email: worker.email, displayName: worker.displayName, roles: changes.roles, calibrator: false });
    const changed: WorkerRecord = {
      ...worker,
      ...(changes.displayName !== undefined ? { displayName: changes.displayName } : {}),
      ...(changes.roles !== undefined ? { roles: [...new Set(changes.roles)] } : {}),
      ...(changes.calibrator !== undefined ? { calibrator: changes.calibrator } : {}),
      ...(changes.status !== undefined ? { status: changes.status } : {}),
    };
    await workers.update(changed);
    if (changed.status === 'paused') await work.releaseAllHeld(workerId, 'paused', now);
    return changed;
  });
}

/**
 * Removes a worker: status removed, every token revoked, the assignments they hold ended (the
 * tasks go back to the queue). Removing twice changes nothing.
 */
export async function removeWorker(store: IdentityStore, workforce: Workforce, workerId: string, now: Date): Promise<WorkerRecord> {
  return store.transaction(async ({ workers, work }) => {
    const worker = await workerOf({ workers }, workforce, workerId, { forUpdate: true });
    if (worker.status === 'removed') return worker;
    const removed: WorkerRecord = { ...worker, status: 'removed' };
    await workers.update(removed);
    await workers.revokeAllTokens(workerId, now);
    await work.releaseAllHeld(workerId, 'removed', now);
    return removed;
  });
}

/** A new password (given, or chosen and returned) and every token revoked. */
export async function resetPassword(
  store: IdentityStore,
  workforce: Workforce,
  workerId: string,
  password: string | undefined,
  settings: IdentitySettings,
  now: Date,
): Promise<{ worker: WorkerRecord; generatedPassword?: string; revokedTokens: number }> {
  if (password !== undefined) checkPassword(password);
  const chosen = password ?? generatePassword();
  const hash = await hashPassword(chosen, settings.passwordCost);
  return store.transaction(async ({ workers }) => {
    const worker = await workerOf({ workers }, workforce, workerId);
    if (worker.status === 'removed') throw invalid(`Worker ${workerId} was removed; its password cannot be reset.`);
    await workers.setPassword(workerId, hash);
    const revokedTokens = await workers.revokeAllTokens(workerId, now);
    return { worker, revokedTokens, ...(password === undefined ? { generatedPassword: chosen } : {}) };
  });
}

export interface WorkerPage {
  workers: WorkerRecord[];
  hasMore: boolean;
  nextToken?: string;
}

/** One page of a workforce's workers, newest first; next_token bound to the workforce and filter. */
export async function listWorkers(
  store: IdentityStore,
  workforce: Workforce,
  filter: { status?: WorkerStatus; limit: number; nextToken?: string },
): Promise<WorkerPage> {
  const binding = queryBinding(['workers', workforce.accountId, workforce.mode, filter.status ?? null]);
  const position = filter.nextToken ? readPositionToken(filter.nextToken, binding, /^wkr_[0-9a-f]{24}$/) : undefined;
  const after = position ? { createdAt: position.at, workerId: position.id } : undefined;
  const rows = await store.workers.list(workforce, {
    ...(filter.status ? { status: filter.status } : {}),
    limit: filter.limit + 1,
    ...(after ? { after } : {}),
  });
  const workers = rows.slice(0, filter.limit);
  const hasMore = rows.length > filter.limit;
  const last = workers.at(-1);
  return {
    workers,
    hasMore,
    ...(hasMore && last ? { nextToken: positionToken({ at: last.createdAt, id: last.workerId }, binding) } : {}),
  };
}
