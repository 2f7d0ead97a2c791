/// <reference types="node" preserve="true" />
// @humantask/client/node: receiving callbacks in Node. Checks the account's callback auth key and
// the Standard Webhooks signature, rejects stale and replayed messages, and returns the payload
// typed by the contract. Its declarations use Node's types (@types/node, an optional peer).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { components as Current } from '../generated/current.ts';
import type { components as Legacy } from '../generated/legacy.ts';

type CurrentTask = Current['schemas']['Task'];
type LegacyTask = Legacy['schemas']['LegacyTask'];

// The contract types `response` of the completion callbacks as a bare object (generated as
// `Record<string, never>`); it is the task's response, typed here as the task's.
/** `taskCompleted` of a task created through the current generation. */
export type TaskCompletedPayload = Omit<Current['schemas']['TaskCompletedCallback'], 'response'> & {
  response: NonNullable<CurrentTask['response']>;
};
/** `taskCompleted` of a task created through the older generation. */
export type LegacyTaskCompletedPayload = Omit<Legacy['schemas']['LegacyTaskCompletedCallback'], 'response'> & {
  response: NonNullable<LegacyTask['response']>;
};
export type AttachmentErrorPayload = Current['schemas']['AttachmentErrorCallback'];
export type BatchCompletedPayload = Current['schemas']['BatchCompletedCallback'];

interface Delivery {
  /** `webhook-id`: the same on every retry of one message. */
  id: string;
  /** `webhook-timestamp`, seconds since the epoch. */
  timestamp: number;
}

/** A verified callback, by kind. */
export type VerifiedCallback = Delivery &
  (
    | { type: 'taskCompleted'; generation: 'current'; payload: TaskCompletedPayload }
    | { type: 'taskCompleted'; generation: 'legacy'; payload: LegacyTaskCompletedPayload }
    | { type: 'attachmentError'; payload: AttachmentErrorPayload }
    | { type: 'batchCompleted'; payload: BatchCompletedPayload }
  );

export type CallbackErrorReason =
  | 'bad_auth' // service-callback-auth missing or wrong
  | 'missing_headers' // a webhook-* header is missing
  | 'bad_signature' // no webhook-signature matches the body
  | 'bad_timestamp' // webhook-timestamp malformed or outside the tolerance
  | 'replayed' // this webhook-id was seen before
  | 'bad_payload'; // signed, but not JSON or not a known callback

/** Why a callback was refused. `reason` says which check failed. */
export class CallbackVerificationError extends Error {
  override readonly name = 'CallbackVerificationError';
  constructor(
    readonly reason: CallbackErrorReason,
    message: string,
  ) {
    super(message);
  }
}

/** Remembers the `webhook-id`s already processed. */
export interface ReplayStore {
  /** `true` when `id` was recorded before; otherwise records it and returns `false`. */
  seen(id: string): boolean | Promise<boolean>;
  /** Forgets `id` (its handler failed, so the service's retry must be processed). */
  forget?(id: string): void | Promise<void>;
}

/**
 * An in-memory LRU of `webhook-id`s. Retries of one message keep its id for up to 24 hours, so
 * ids are kept that long (plus the tolerance) unless `max` pushes the oldest out. One process only:
 * several instances behind a load balancer need a shared store (Redis `SET NX EX`, a table).
 */
export function createReplayCache(options: { max?: number; ttlMs?: number } = {}): ReplayStore {
  const max = options.max ?? 10_000;
  const ttlMs = options.ttlMs ?? 24 * 3600_000 + 600_000;
  const ids = new Map<string, number>(); // id -> expiry; Map order = least recently used first
  return {
    seen(id) {
      const now = Date.now();
      const expiry = ids.get(id);
      ids.delete(id);
      ids.set(id, now + ttlMs);
      if (expiry !== undefined && expiry > now) return true;
      for (const [oldest, exp] of ids) {
        if (ids.size <= max && exp > now) break;
        ids.delete(oldest);
      }
      return false;
    },
    forget(id) {
      ids.delete(id);
    },
  };
}

/** The store used when `seen` is not given: one per process. */
const defaultReplayStore = createReplayCache();

export interface VerifyCallbackOptions {
  /** The account's callback auth key (`service-callback-auth`); several while rotating. */
  callbackAuthKey: string | readonly string[];
  /** The account's signing secret, `whsec_<base64>`; several while rotating. */
  signingSecret: string | readonly string[];
  /** Largest accepted distance between `webhook-timestamp` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Replay protection (default: a per-process in-memory LRU); `false` turns it off. */
  seen?: ReplayStore | false;
  /** The clock, in milliseconds (default `Date.now`). */
  now?: () => number;
}

type HeaderInput = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  return Array.isArray(value) ? value.join(' ') : value;
}

const digest = (value: string | Uint8Array) => createHash('sha256').update(value).digest();
/** Constant-time equality of two values of any length (compares their SHA-256 digests). */
const safeEqual = (a: string | Uint8Array, b: string | Uint8Array) => timingSafeEqual(digest(a), digest(b));

const list = (v: string | readonly string[]) => (typeof v === 'string' ? [v] : v);
const secretKey = (secret: string) => Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');

function hmac(key: Uint8Array, id: string, timestamp: string, body: Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/**
 * The `webhook-signature` value the service sends for a message (`v1,<base64>`). For testing a
 * receiver: sign a body the way the service does.
 */
export function signCallback(signingSecret: string, id: string, timestamp: number, rawBody: string | Uint8Array): string {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody) : rawBody;
  return 'v1,' + hmac(secretKey(signingSecret), id, String(timestamp), body).toString('base64');
}

function classify(payload: unknown, delivery: Delivery): VerifiedCallback {
  const p = payload as Record<string, unknown> | null;
  if (p && typeof p === 'object' && !Array.isArray(p)) {
    if (typeof p.task_id === 'string' && p.task && typeof p.task === 'object') {
      // Only the older generation's task view has `urgency`.
      return 'urgency' in p.task
        ? { ...delivery, type: 'taskCompleted', generation: 'legacy', payload: p as LegacyTaskCompletedPayload }
        : { ...delivery, type: 'taskCompleted', generation: 'current', payload: p as TaskCompletedPayload };
    }
    if (typeof p.error === 'string' && Array.isArray(p.attachments))
      return { ...delivery, type: 'attachmentError', payload: p as AttachmentErrorPayload };
    if (p.batch && typeof p.batch === 'object' && p.counts && typeof p.counts === 'object') {
      return { ...delivery, type: 'batchCompleted', payload: p as BatchCompletedPayload };
    }
  }
  throw new CallbackVerificationError('bad_payload', 'The callback body is not a known callback.');
}

/**
 * Verifies a callback and returns its typed payload, or throws `CallbackVerificationError`.
 * `rawBody` must be the exact bytes received (verify before any JSON parsing).
 * Checks, in order: `service-callback-auth` (constant time), the `webhook-signature` over
 * `{webhook-id}.{webhook-timestamp}.{body}` (any of several space-separated signatures), the
 * timestamp tolerance, the payload, and last the `webhook-id` against the replay store (so a
 * forged message cannot fill it).
 */
export async function verifyCallback(
  headers: HeaderInput,
  rawBody: string | Uint8Array,
  options: VerifyCallbackOptions,
): Promise<VerifiedCallback> {
  const auth = header(headers, 'service-callback-auth');
  // Every key is compared, so the time taken does not tell which one matched.
  const authOk =
    auth !== undefined &&
    list(options.callbackAuthKey)
      .map((k) => safeEqual(auth, k))
      .includes(true);
  if (!authOk) throw new CallbackVerificationError('bad_auth', 'service-callback-auth is missing or wrong.');

  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new CallbackVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are required.');

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody) : rawBody;
  const expected = list(options.signingSecret).map((s) => hmac(secretKey(s), id, timestamp, body));
  const given = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  const signed = given.map((g) => expected.map((e) => safeEqual(g, e)).includes(true)).includes(true);
  if (!signed) throw new CallbackVerificationError('bad_signature', 'No webhook-signature matches the body.');

  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  const now = (options.now ?? Date.now)() / 1000;
  const tolerance = options.toleranceSeconds ?? 300;
  if (!(Math.abs(now - seconds) <= tolerance))
    throw new CallbackVerificationError('bad_timestamp', `webhook-timestamp is more than ${tolerance} s from now.`);

  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new CallbackVerificationError('bad_payload', 'The callback body is not JSON.');
  }
  const callback = classify(payload, { id, timestamp: seconds });

  const store = options.seen === undefined ? defaultReplayStore : options.seen;
  if (store && (await store.seen(id))) throw new CallbackVerificationError('replayed', `webhook-id ${id} was received before.`);
  return callback;
}

export interface CallbackMiddlewareOptions extends VerifyCallbackOptions {
  /** The largest body read (default 10 MB; larger → 413). */
  maxBodyBytes?: number;
}

type Next = (err?: unknown) => void;
type RequestWithBody = IncomingMessage & { body?: unknown };

class BodyTooLarge extends Error {}

async function rawBodyOf(req: RequestWithBody, max: number): Promise<Buffer> {
  // express.raw() (or another raw parser) ran: its Buffer holds the exact bytes.
  if (Buffer.isBuffer(req.body)) return req.body;
  if (req.readableEnded) {
    throw new Error('The request body was already read and parsed: mount callbackMiddleware before express.json(), or use express.raw().');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function reply(res: ServerResponse, status: number, body: object) {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}

/**
 * A request handler for Express or `node:http` that receives callbacks: reads the raw body,
 * verifies it (401 when it is not from the service or stale, 400 when the signed body is not a
 * known callback), then calls `handler` and answers 200 when it returns. A message already
 * processed (a retry whose first 2xx was lost) is answered 200 without calling `handler` again;
 * when `handler` throws, the message is forgotten so that the service's retry is processed, and
 * the error goes to `next` (Express) or becomes a 500.
 */
export function callbackMiddleware(
  options: CallbackMiddlewareOptions,
  handler: (callback: VerifiedCallback, req: IncomingMessage) => unknown,
): (req: IncomingMessage, res: ServerResponse, next?: Next) => Promise<void> {
  const store = options.seen === undefined ? defaultReplayStore : options.seen;
  const verifyOptions: VerifyCallbackOptions = { ...options, seen: store };
  return async (req, res, next) => {
    let callback: VerifiedCallback;
    try {
      const body = await rawBodyOf(req, options.maxBodyBytes ?? 10 * 1024 * 1024);
      callback = await verifyCallback(req.headers, body, verifyOptions);
    } catch (err) {
      if (err instanceof BodyTooLarge) return reply(res, 413, { status_code: 413, error: 'Callback body too large.' });
      if (!(err instanceof CallbackVerificationError))
        return next ? next(err) : reply(res, 500, { status_code: 500, error: 'Could not read the callback.' });
      if (err.reason === 'replayed') return reply(res, 200, { received: true, duplicate: true });
      const status = err.reason === 'bad_payload' ? 400 : 401;
      return reply(res, status, { status_code: status, error: err.message });
    }
    try {
      await handler(callback, req);
    } catch (err) {
      if (store) await store.forget?.(callback.id);
      return next ? next(err) : reply(res, 500, { status_code: 500, error: 'The callback handler failed.' });
    }
    reply(res, 200, { received: true });
  };
}
