// Worker passwords: scrypt (memory-hard, in node:crypto, no native dependency), a random salt per
// password, the parameters stored with the hash so that the cost can be raised later without
// invalidating old hashes, and a constant-time comparison.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

const keyLength = 32;
const blockSize = 8;
const parallelization = 1;

/** scrypt needs 128 × N × r bytes; allow twice that (node's default maxmem is 32 MB). */
const maxmemFor = (n: number, r: number) => 256 * n * r;

/**
 * `scrypt$<log2 N>$<r>$<p>$<salt base64url>$<hash base64url>`. `cost` is log2 of N: 15 (32 MB, tens
 * of milliseconds) by default (WORKER_PASSWORD_COST), lower in tests.
 */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const n = 2 ** cost;
  const hash = await scrypt(password.normalize('NFC'), salt, keyLength, {
    N: n,
    r: blockSize,
    p: parallelization,
    maxmem: maxmemFor(n, blockSize),
  });
  return ['scrypt', cost, blockSize, parallelization, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; false for a malformed hash, never a throw. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [cost, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![cost, r, p].every((x) => Number.isInteger(x) && x > 0) || cost > 24 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const n = 2 ** cost;
  const actual = await scrypt(password.normalize('NFC'), salt, expected.length, { N: n, r, p, maxmem: maxmemFor(n, r) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash to check against when there is no worker: a failed login costs the same either way. */
let decoy: Promise<string> | undefined;
export function decoyHash(cost: number): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'), cost);
  return decoy;
}

/** A password the server chooses: 24 characters from an unambiguous alphabet (~140 bits). */
export function generatePassword(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  const bytes = randomBytes(24);
  // 256 is not a multiple of 57: the slight bias costs well under a bit of the ~140.
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
}

/** Why the gate turned a hash away: its subject has as many in progress as allowed, or the queue is full. */
export type HashRefusal = 'subject' | 'full';

export interface HashTicket {
  /** Resolves when the hash may run. */
  ready: Promise<void>;
  /** Frees the slot (or the place in the queue): call it once the hash is done, or abandoned. */
  release(): void;
}

export interface HashGateSettings {
  /** Hashes running at once (WORKER_PASSWORD_CONCURRENCY): each takes one of libuv's threads. */
  concurrency: number;
  /** Hashes waiting at most (WORKER_PASSWORD_QUEUE); more are refused at once. */
  queue: number;
  /** Hashes in progress (running or waiting) per subject (WORKER_PASSWORD_PER_CLIENT). */
  perSubject: number;
}

/**
 * Bounds password hashing, deliberately costly: scrypt runs on libuv's thread pool (4 threads
 * unless UV_THREADPOOL_SIZE says otherwise), which DNS lookups (callbacks, attachment checks) and
 * file access share. At most `concurrency` hashes run; up to `queue` wait, taken by their first
 * subject (a client address, an account): the one with the fewest running goes next, the longest
 * waiting among equals, so one client's many requests never make another wait behind them; a
 * subject with `perSubject` in progress, or a full queue, is refused at once. `hashed` counts the
 * hashes let through (a metric), `refused` the refusals.
 */
export function hashGate(
  settings: HashGateSettings,
  observe: { hashed?: () => void; refused?: (why: HashRefusal, subjects: readonly string[]) => void } = {},
) {
  let running = 0;
  let waiting = 0;
  const inProgress = new Map<string, number>();
  /** Running hashes by first subject. */
  const runningBy = new Map<string, number>();
  /** Waiting starts by first subject; the map's order is the turn order among equals. */
  const queues = new Map<string, (() => void)[]>();
  const count = (map: Map<string, number>, key: string, by: number) => {
    const n = (map.get(key) ?? 0) + by;
    if (n > 0) map.set(key, n);
    else map.delete(key);
  };
  const add = (subjects: readonly string[], by: number) => {
    for (const s of subjects) count(inProgress, s, by);
  };
  const startNext = () => {
    while (running < settings.concurrency && queues.size > 0) {
      let next: string | undefined;
      for (const key of queues.keys()) if (next === undefined || (runningBy.get(key) ?? 0) < (runningBy.get(next) ?? 0)) next = key;
      const starts = queues.get(next!)!;
      queues.delete(next!);
      const start = starts.shift()!;
      // Its subject's next hash waits for every other subject's turn.
      if (starts.length > 0) queues.set(next!, starts);
      waiting--;
      start();
    }
  };
  return {
    /** A ticket for one hash on behalf of `subjects` (the first decides its turn), or why not. */
    admit(subjects: readonly string[]): HashTicket | HashRefusal {
      if (subjects.some((s) => (inProgress.get(s) ?? 0) >= settings.perSubject)) {
        observe.refused?.('subject', subjects);
        return 'subject';
      }
      if (running >= settings.concurrency && waiting >= settings.queue) {
        observe.refused?.('full', subjects);
        return 'full';
      }
      add(subjects, 1);
      const key = subjects[0] ?? '';
      let state: 'waiting' | 'running' | 'done' = 'waiting';
      let start!: () => void;
      const ready = new Promise<void>((resolve) => {
        start = () => {
          state = 'running';
          running++;
          count(runningBy, key, 1);
          observe.hashed?.();
          resolve();
        };
      });
      if (running < settings.concurrency) start();
      else {
        waiting++;
        queues.set(key, [...(queues.get(key) ?? []), start]);
      }
      return {
        ready,
        release() {
          if (state === 'done') return;
          if (state === 'running') {
            running--;
            count(runningBy, key, -1);
          } else {
            // Gave up while waiting (the client went away): out of the queue.
            const starts = (queues.get(key) ?? []).filter((s) => s !== start);
            if (starts.length > 0) queues.set(key, starts);
            else queues.delete(key);
            waiting--;
          }
          state = 'done';
          add(subjects, -1);
          startNext();
        },
      };
    },
  };
}

export type HashGate = ReturnType<typeof hashGate>;
