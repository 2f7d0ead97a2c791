// A server clock for tests (startServer's and startTestServer's `now`): the wall clock, moved on by
// the test. A test moves it past a session's, an Idempotency-Key's or a lease's end instead of
// waiting for it, so the lifetimes can stay long (their defaults): a request that a loaded machine
// slows down uses up none of them. It never runs behind the wall clock, so what the server stamps
// with the wall clock (a callback queued at a task's creation) is due on it too.
import type { Clock } from '../../server/domain/clock.ts';

export interface TestClock {
  now: Clock;
  /** Moves the clock on by `ms`. */
  advance(ms: number): void;
}

export function testClock(): TestClock {
  let ahead = 0;
  return {
    now: () => new Date(Date.now() + ahead),
    advance(ms) {
      ahead += ms;
    },
  };
}
