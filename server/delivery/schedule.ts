// The retry schedule of callbacks (docs/decisions/0009-callbacks.md): after a failed attempt, wait 5 s, 30 s,
// 1 min, ... 3 h (20 retries, ±10 % jitter), never later than 24 h after the first attempt. A 429
// or a timeout waits at least 60 s; a Retry-After is honoured within [delay, 2 × delay].
// `scale` compresses every duration (tests see retries in real time; the whole ladder runs on the
// dispatcher's clock, moved on by test/support/delivery-clock.ts).
const retryDelaysSeconds = [5, 30, 60, 120, 300, 600, 900, 1800, 2700, 3600, 3600, 3600, 5400, 5400, 7200, 7200, 7200, 9000, 9000, 10800];
export const maxRetries = retryDelaysSeconds.length;
const windowSeconds = 24 * 3600;
const slowDownFloorSeconds = 60;

export interface FailedAttempt {
  /** Attempts made so far, this one included (1 after the first attempt). */
  attempts: number;
  firstAttemptAt: Date;
  now: Date;
  /** The receiver answered 429, or did not answer in time. */
  slowDown: boolean;
  /** Retry-After of the answer, in seconds, when it gave one. */
  retryAfterSeconds?: number;
}

/** When to try again, or null when the message has failed for good. */
export function nextAttemptAt(f: FailedAttempt, scale: number, jitter = 0.1, random: () => number = Math.random): Date | null {
  const retry = f.attempts - 1; // the index of the retry to come
  const base = retryDelaysSeconds[retry];
  if (base === undefined) return null;
  let delay = base * (1 - jitter + 2 * jitter * random());
  if (f.slowDown) delay = Math.max(delay, slowDownFloorSeconds);
  if (f.retryAfterSeconds !== undefined) delay = Math.min(Math.max(f.retryAfterSeconds, delay), 2 * delay);
  const at = f.now.getTime() + delay * scale * 1000;
  if (at > f.firstAttemptAt.getTime() + windowSeconds * scale * 1000) return null;
  return new Date(at);
}

/** Retry-After as seconds (a number of seconds or an HTTP date), if it is one. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now.getTime()) / 1000);
}
