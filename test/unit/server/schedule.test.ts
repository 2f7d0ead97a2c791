// The retry schedule of callbacks (docs/decisions/0009-callbacks.md), computed exactly.
import { describe, expect, it } from 'vitest';
import { maxRetries, nextAttemptAt, parseRetryAfter } from '../../../server/delivery/schedule.ts';

const t0 = new Date('2026-11-21T10:00:00.000Z');
const seconds = (a: Date | null, from: Date) => (a === null ? null : (a.getTime() - from.getTime()) / 1000);
const mid = () => 0.5; // no jitter
const ladder = [5, 30, 60, 120, 300, 600, 900, 1800, 2700, 3600, 3600, 3600, 5400, 5400, 7200, 7200, 7200, 9000, 9000, 10800];

describe('retry schedule', () => {
  it('waits 5 s, 30 s, 1 min, ... 3 h between attempts: 20 retries, then gives up', () => {
    expect(maxRetries).toBe(20);
    let now = t0;
    ladder.forEach((delay, i) => {
      const next = nextAttemptAt({ attempts: i + 1, firstAttemptAt: t0, now, slowDown: false }, 1, 0.1, mid);
      expect(seconds(next, now)).toBe(delay);
      now = next!;
    });
    expect(nextAttemptAt({ attempts: 21, firstAttemptAt: t0, now, slowDown: false }, 1, 0.1, mid)).toBeNull();
  });

  it('jitters each delay within ±10 %', () => {
    const low = nextAttemptAt({ attempts: 2, firstAttemptAt: t0, now: t0, slowDown: false }, 1, 0.1, () => 0);
    const high = nextAttemptAt({ attempts: 2, firstAttemptAt: t0, now: t0, slowDown: false }, 1, 0.1, () => 0.999999);
    expect(seconds(low, t0)).toBeCloseTo(27, 2);
    expect(seconds(high, t0)).toBeCloseTo(33, 2);
  });

  it('waits at least 60 s after a 429 or a timeout, and honours Retry-After within [delay, 2 × delay]', () => {
    expect(seconds(nextAttemptAt({ attempts: 1, firstAttemptAt: t0, now: t0, slowDown: true }, 1, 0.1, mid), t0)).toBe(60);
    const at = (retryAfterSeconds: number) =>
      seconds(nextAttemptAt({ attempts: 4, firstAttemptAt: t0, now: t0, slowDown: false, retryAfterSeconds }, 1, 0.1, mid), t0);
    expect(at(10)).toBe(120); // not earlier than the schedule
    expect(at(200)).toBe(200); // honoured
    expect(at(10_000)).toBe(240); // at most twice the delay
  });

  it('never plans an attempt later than 24 h after the first one', () => {
    const late = new Date(t0.getTime() + 23.5 * 3600 * 1000);
    expect(nextAttemptAt({ attempts: 20, firstAttemptAt: t0, now: late, slowDown: false }, 1, 0.1, mid)).toBeNull();
  });

  it('compresses every duration by the configured scale', () => {
    expect(seconds(nextAttemptAt({ attempts: 1, firstAttemptAt: t0, now: t0, slowDown: false }, 0.001, 0.1, mid), t0)).toBeCloseTo(
      0.005,
      9,
    );
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120', t0)).toBe(120);
    expect(parseRetryAfter(new Date(t0.getTime() + 90_000).toUTCString(), t0)).toBe(90);
    expect(parseRetryAfter('soon', t0)).toBeUndefined();
  });
});
