// HTTP Basic authentication (the API key is the user name, the password is empty), or a member's
// session cookie (issue 34), the per-key rate limit and the per-address limit of failed
// authentications. The key (or the session and its mode) decides the account and the mode.
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { wallClock } from '../domain/clock.ts';
import { hashKey } from '../domain/accounts.ts';
import type { Caller } from '../domain/model.ts';
import type { AuthenticatedKey, UnitOfWork } from '../domain/ports.ts';
import { whenAnswerEnds } from './answer-end.ts';
import type { AccessTable } from './access.ts';
import { peerAddress, type ClientAddress } from './client-address.ts';
import { HttpError, authChallenge } from './errors.ts';
import { authenticateSession, cookieOf, overTls, sessionCookieName, ssoCookieName, type MemberAuthDeps } from './member-auth.ts';
import type { LiveRequest } from './typed.ts';

/** Whether a request carries an Authorization header (then it, not a session cookie, decides). */
const hasAuthorization = (rawHeaders: string[]) => rawHeaders.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'authorization');

/**
 * The API key of a request, or null. Refused: a second Authorization header (Node keeps only the
 * first, and a proxy may have read the other one), a non-empty password (it would be ignored, so a
 * secret put there by mistake must not silently authenticate), anything but Basic.
 */
function apiKeyOf(rawHeaders: string[]): string | null {
  const values = rawHeaders.filter((_, i) => i % 2 === 0 && rawHeaders[i]!.toLowerCase() === 'authorization').length;
  if (values !== 1) return null;
  const header = rawHeaders[rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'authorization') + 1]!;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return decoded || null;
  return colon === decoded.length - 1 && colon > 0 ? decoded.slice(0, colon) : null;
}

/** Where token buckets are kept when several server processes share them (the database). */
export interface SharedBuckets {
  /** Takes up to `count` whole tokens (none when the bucket holds less than one); `tokens`: what is left. */
  take(key: string, perSecond: number, burst: number, count: number): Promise<{ taken: number; tokens: number }>;
  /** Gives `count` tokens back (never above `burst`). */
  giveBack(key: string, perSecond: number, burst: number, count: number): Promise<void>;
}

/**
 * Says when a limit trips: one warning (no secrets: the limit, whom it refuses, how long) per
 * limit and subject a minute, however many requests it refuses meanwhile.
 */
export function limitLog(logger: Pick<Logger, 'warn'> | undefined, everyMs = 60_000, maxSubjects = 10_000) {
  const said = new Map<string, number>();
  return (limit: string, subject: Record<string, string>, retryAfter: number) => {
    if (!logger) return;
    const key = `${limit} ${JSON.stringify(subject)}`;
    const now = performance.now();
    if ((said.get(key) ?? -Infinity) > now - everyMs) return;
    said.delete(key);
    said.set(key, now);
    if (said.size > maxSubjects) said.delete(said.keys().next().value!);
    logger.warn({ limit, ...subject, retry_after: retryAfter }, `limit reached: ${limit}`);
  };
}

export type LimitLog = ReturnType<typeof limitLog>;

/** Whole seconds to wait for a bucket at `tokens` to hold one token again (at least 1). */
const secondsUntilOne = (tokens: number, perSecond: number) => Math.max(1, Math.ceil((1 - tokens) / perSecond));

/** How long tokens taken ahead from a shared bucket may be used (then they are dropped, unused). */
const leaseMs = 1000;

/**
 * Token buckets by key: `burst` at once, refilled at `perSecond`. In this process's memory, or
 * (given `shared`) in the database every process shares. Then a statement takes up to `ahead`
 * tokens at once, which this process spends without a statement for up to a second (what it has
 * not spent by then is dropped: the processes together never exceed the limit; they may fall
 * short of it by what they dropped). And it keeps the time until which a key it saw run out
 * stays empty, so a refused caller costs no statement until then (other processes can only have
 * emptied the bucket further: that never refuses what the bucket would grant).
 * At most `maxKeys` are remembered, the least recently used forgotten.
 */
export function tokenBuckets(perSecond: number, burst: number, shared?: SharedBuckets, ahead = 1, maxKeys = 100_000) {
  const local = new Map<string, { tokens: number; at: number }>();
  const leased = new Map<string, { left: number; until: number }>();
  const blockedUntil = new Map<string, number>();
  /** When a token last came back to a key (Infinity while it is being given back). */
  const givenBack = new Map<string, number>();
  const remember = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key); // re-inserted last: the map's order is the least recently used first
    map.set(key, value);
    if (map.size > maxKeys) map.delete(map.keys().next().value!);
  };
  const level = (key: string, now: number) => {
    const b = local.get(key);
    return b ? Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond) : burst;
  };
  const leaseLeft = (key: string, now: number) => {
    const lease = leased.get(key);
    return lease && lease.until > now ? lease : null;
  };
  const retryAfter = (key: string): number => {
    const now = performance.now();
    if (!shared) {
      const tokens = level(key, now);
      return tokens >= 1 ? 0 : secondsUntilOne(tokens, perSecond);
    }
    const until = blockedUntil.get(key);
    if (until === undefined || (leaseLeft(key, now)?.left ?? 0) > 0) return 0;
    if (until <= now) {
      blockedUntil.delete(key);
      return 0;
    }
    return Math.max(1, Math.ceil((until - now) / 1000));
  };
  return {
    /** Seconds before `key` may take a token again, or 0 (from this process's memory only). */
    retryAfter,
    /** Gives a token back to `key`'s bucket: what was taken turned out not to count. */
    giveBack(key: string): Promise<void> {
      const now = performance.now();
      if (!shared) {
        if (local.has(key)) remember(local, key, { tokens: Math.min(burst, level(key, now) + 1), at: now });
        return Promise.resolve();
      }
      blockedUntil.delete(key);
      givenBack.set(key, Infinity);
      return shared.giveBack(key, perSecond, burst, 1).finally(() => {
        blockedUntil.delete(key);
        remember(givenBack, key, performance.now());
      });
    },
    /** Takes a token from `key`'s bucket: 0, or the seconds to wait when it had none. */
    take(key: string): number | Promise<number> {
      const now = performance.now();
      if (!shared) {
        const tokens = level(key, now);
        if (tokens < 1) return secondsUntilOne(tokens, perSecond);
        remember(local, key, { tokens: tokens - 1, at: now });
        return 0;
      }
      const lease = leaseLeft(key, now);
      if (lease && lease.left > 0) {
        lease.left--;
        return 0;
      }
      return shared.take(key, perSecond, burst, ahead).then(({ taken, tokens }) => {
        const at = performance.now();
        // Empty, as of this statement: remembered, unless a token came back since it started (then
        // the next take asks the database again).
        if (tokens < 1 && (givenBack.get(key) ?? -Infinity) < now) remember(blockedUntil, key, at + ((1 - tokens) / perSecond) * 1000);
        if (taken < 1) return secondsUntilOne(tokens, perSecond);
        // Concurrent takes of this process add up.
        if (taken > 1) remember(leased, key, { left: (leaseLeft(key, at)?.left ?? 0) + taken - 1, until: at + leaseMs });
        return 0;
      });
    },
  };
}

/**
 * Failures per subject (a token bucket each, see tokenBuckets): `burst` at once, refilled at
 * `perSecond`; burst 0: no limit. `kind` names the subjects in bucket keys and log lines
 * (`address`, `email`).
 */
export function failureLimit(
  limit: string,
  kind: string,
  perSecond: number,
  burst: number,
  shared?: SharedBuckets,
  tripped?: LimitLog,
  maxSubjects = 100_000,
) {
  const buckets = tokenBuckets(perSecond, burst, shared, 1, maxSubjects);
  const keyOf = (subject: string) => `${kind}:${subject}`;
  return {
    /** Seconds to wait before this subject may try again (a refusal, which is logged), or 0. */
    retryAfter(subject: string): number {
      const wait = burst <= 0 ? 0 : buckets.retryAfter(keyOf(subject));
      if (wait > 0) tripped?.(limit, { [kind]: subject }, wait);
      return wait;
    },
    /** Counts a failure: 0, or the seconds to wait when the subject had none left (it is over its limit, which is logged). */
    async failed(subject: string): Promise<number> {
      if (burst <= 0) return 0;
      const wait = await buckets.take(keyOf(subject));
      if (wait > 0) tripped?.(limit, { [kind]: subject }, wait);
      return wait;
    },
    /** Takes back a failure counted ahead (a log-in that succeeded after all). */
    async forgive(subject: string): Promise<void> {
      if (burst > 0) await buckets.giveBack(keyOf(subject));
    },
  };
}

export type FailureLimit = ReturnType<typeof failureLimit>;

/**
 * Unknown keys and tokens, and failed log-ins, per client address (see failureLimit): a blocked
 * address is answered 429 before any database lookup. Only a failure that cost a lookup counts (a
 * request without a key, or with a malformed header, costs nothing); a successful authentication
 * does not refill the bucket. A credential that authenticated a request in this process (its hash,
 * remembered, the least recently used forgotten past `maxCredentials`) is still let through while
 * its address is blocked: someone else's wrong keys from the same address (an office behind one
 * NAT, a proxy) do not lock a valid client out, and nobody without the credential gets past.
 */
export function authFailureLimit(
  perSecond: number,
  burst: number,
  shared?: SharedBuckets,
  tripped?: LimitLog,
  maxAddresses = 100_000,
  maxCredentials = 100_000,
) {
  const addresses = failureLimit('failed authentications', 'address', perSecond, burst, shared, tripped, maxAddresses);
  const proven = new Set<string>();
  return {
    ...addresses,
    /**
     * Seconds to wait before this address may try again, or 0; always 0 for a credential (its
     * hash) that worked before.
     */
    retryAfter: (address: string, credential?: string): number =>
      credential !== undefined && proven.has(credential) ? 0 : addresses.retryAfter(address),
    /** The credential (its hash) worked: its requests pass a blocked address from now on. */
    proven(credential: string): void {
      if (burst <= 0) return;
      proven.delete(credential);
      proven.add(credential);
      if (proven.size > maxCredentials) proven.delete(proven.values().next().value!);
    },
    /** The credential no longer works (revoked, rotated, lapsed). */
    disproven(credential: string): void {
      proven.delete(credential);
    },
  };
}

export type AuthFailureLimit = ReturnType<typeof authFailureLimit>;

const tooManyFailures = (wait: number) =>
  new HttpError(429, `Too many failed authentications from this address; retry after ${wait} second${wait === 1 ? '' : 's'}.`, {
    'Retry-After': String(wait),
  });

/** Requests whose live request is counted by their own work rather than at authentication. */
export interface CountLater {
  /** Whether this request's work counts it (a task creation: in its creating statement). */
  applies(req: Request): boolean;
  /** Counting failed (the database was unreachable): the request is answered all the same. */
  failed(err: unknown): void;
}

/** How an API key's last use is recorded: at most once a minute per key and process. */
function keyUses(uow: UnitOfWork, failed: (err: unknown) => void) {
  const written = new Map<string, number>();
  return (found: AuthenticatedKey, now: Date) => {
    const id = `${found.account.accountId}/${found.key.keyId}`;
    const last = written.get(id);
    if (last !== undefined && now.getTime() - last < 60_000) return;
    written.delete(id);
    written.set(id, now.getTime());
    // The least recently written are forgotten first.
    if (written.size > 100_000) written.delete(written.keys().next().value!);
    const write =
      found.key.scopes === 'all'
        ? uow.accountIdentity.touchLegacyKey(found.account.accountId, found.mode, now)
        : uow.apiKeys.touch(found.key.keyId, now);
    write.catch(failed);
  };
}

/** What authentication needs to know of members and the access table (issue 34). */
export interface IdentityAuth extends MemberAuthDeps {
  table: AccessTable;
  /** PUBLIC_URL: an https one makes cookies Secure. */
  publicUrl: string;
}

/**
 * A live request is counted where the key is looked up (one statement), except a request that
 * `countLater` names: its lookup only reads, its work counts it (a creation: in the statement that
 * writes the task, so that a creation writes once), and whatever its work did not count is counted
 * before its answer is sent. With `identity`: an operation the access table calls public needs no
 * credential, and a request without an Authorization header may be a member's (its session cookie).
 */
export function authenticate(
  uow: UnitOfWork,
  failures: AuthFailureLimit = authFailureLimit(0, 0),
  countLater?: CountLater,
  clientAddress: ClientAddress = peerAddress,
  identity?: IdentityAuth,
): RequestHandler {
  const touch = keyUses(uow, (err) => countLater?.failed(err));
  return async (req, res, next) => {
    try {
      const address = clientAddress(req);
      res.locals.requester = {
        address,
        requestId: res.locals.requestId,
        userAgent: req.get('user-agent'),
        secure: identity ? overTls(req, identity.publicUrl) : req.secure,
      };
      if (identity?.table.match(req.method, req.path)?.access.public) {
        // No credential: the per-key rate limit counts the address.
        res.locals.principal = { kind: 'public' };
        res.locals.requester.ssoAttempt = cookieOf(req, ssoCookieName);
        res.locals.keyHash = `address:${address}`;
        return next();
      }
      if (identity && !hasAuthorization(req.rawHeaders)) {
        const secret = cookieOf(req, sessionCookieName);
        if (secret) {
          // A blocked address: 429 before any lookup, unless the session worked before.
          const credential = `session:${hashKey(secret)}`;
          const wait = failures.retryAfter(address, credential);
          if (wait > 0) throw tooManyFailures(wait);
          if (await authenticateSession(identity, req, res, secret)) {
            failures.proven(credential);
            return next();
          }
          failures.disproven(credential);
          const over = await failures.failed(address);
          if (over > 0) throw tooManyFailures(over);
          throw new HttpError(
            401,
            'The session is unknown or has ended; log in again (POST /v1/session).',
            authChallenge,
            'unauthenticated',
          );
        }
      }
      const key = apiKeyOf(req.rawHeaders);
      const keyHash = key ? hashKey(key) : '';
      // A blocked address: 429 before any lookup, unless the key worked before.
      const wait = failures.retryAfter(address, key ? `key:${keyHash}` : undefined);
      if (wait > 0) throw tooManyFailures(wait);
      const later = countLater?.applies(req) === true;
      const now = (identity?.now ?? wallClock)();
      const found = key ? await uow.accounts.authenticate(keyHash, { ...(later ? { countLater: true } : {}), now }) : null;
      if (!found) {
        if (key) failures.disproven(`key:${keyHash}`);
        // Over the limit already (concurrent failures, or another process used it up): 429 too.
        const over = key ? await failures.failed(address) : 0;
        if (over > 0) throw tooManyFailures(over);
        throw new HttpError(401, 'A valid API key is required (HTTP Basic, the key as user name, empty password).', authChallenge);
      }
      failures.proven(`key:${keyHash}`);
      res.locals.caller = { account: found.account, mode: found.mode } satisfies Caller;
      res.locals.principal = { kind: 'key', ...found.key };
      res.locals.requester.mode = found.mode;
      res.locals.keyHash = keyHash;
      touch(found, now);
      if (later && found.mode === 'live') {
        const live: LiveRequest = { counted: false };
        res.locals.liveRequest = live;
        const count = () => {
          live.counted = true;
          return uow.accounts.countLiveRequest(found.account.accountId).catch(countLater!.failed);
        };
        // An answer its work did not count waits for the count (as the lookup's count did): what a
        // client was answered is counted, crash or not.
        whenAnswerEnds(res, (end) => {
          if (live.counted) end();
          else void count().then(end);
        });
        // A client that went away before its answer.
        res.once('close', () => {
          if (!live.counted) void count();
        });
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

const tooMany = (wait: number) =>
  new HttpError(429, `Too many requests; retry after ${wait} second${wait === 1 ? '' : 's'}.`, { 'Retry-After': String(wait) });

/**
 * Token bucket per API key: `burst` requests at once, refilled at `perSecond` (see tokenBuckets).
 * Shared, each process takes 1/20 s of refill ahead (at least one token, at most a tenth of the
 * burst): a key at its limit costs about 20 statements a second per process, whatever the limit.
 */
export function rateLimit(perSecond: number, burst: number, shared?: SharedBuckets, tripped?: LimitLog): RequestHandler {
  const buckets = tokenBuckets(perSecond, burst, shared, Math.max(1, Math.floor(Math.min(perSecond / 20, burst / 10))));
  // Whom a refusal names in the log: the account, the worker or the address logging in, never the key.
  const refused = (res: Response, wait: number) => {
    tripped?.(
      'requests',
      res.locals.caller
        ? { account: res.locals.caller.account.accountId, mode: res.locals.caller.mode }
        : res.locals.worker
          ? { worker: res.locals.worker.workerId }
          : { bucket: String(res.locals.keyHash) },
      wait,
    );
    return tooMany(wait);
  };
  return (_req, res, next) => {
    if (burst <= 0) return next();
    const key = `key:${res.locals.keyHash}`;
    const wait = buckets.retryAfter(key);
    if (wait > 0) return next(refused(res, wait));
    const taken = buckets.take(key);
    if (typeof taken === 'number') return next(taken > 0 ? refused(res, taken) : undefined);
    taken.then((w) => next(w > 0 ? refused(res, w) : undefined), next);
  };
}
