// One poll loop behind every background job (callback delivery, attachment checks, delayed test
// completions), as graphile-worker and pg-boss run theirs: a round claims what is due (with a lease,
// in the database) and works on it; rounds never overlap; the poll interval is the fallback, and a
// nudge (a NOTIFY after the commit that queued work, or a due time learned then) runs a round at
// once. Nothing lives only here: a lost nudge or timer costs at most one poll interval.
import type { Logger } from 'pino';

export interface PollerOptions {
  /** Named in the log when a round fails. */
  name: string;
  /** Time between polls; 0: no polling, only nudges run rounds. */
  pollMs: number;
  /** Claims and works on what is due; answers true when more may be due already (a full claim). */
  round: () => Promise<unknown>;
  logger: Logger;
  /** Due-time wake-ups held at once; more are dropped (the poll finds that work). Default 1000. */
  maxTimers?: number;
  /** The clock that due times are read against (milliseconds since the epoch). Default Date.now. */
  now?: () => number;
}

export interface Poller {
  /** Polls every `pollMs` and runs a first round at once. */
  start(): void;
  /**
   * Runs a round as soon as possible, or at `at` when given (work that falls due then). Nudges that
   * come while a round runs make one more round after it; nudges while stopped are ignored.
   */
  nudge(at?: Date): void;
  /** No new rounds; resolves when the round in flight has finished. */
  stop(): Promise<void>;
}

// setTimeout fires at once beyond this (about 24.8 days); such due times are left to the poll.
const maxDelayMs = 2 ** 31 - 1;

export function createPoller(options: PollerOptions): Poller {
  const maxTimers = options.maxTimers ?? 1000;
  const now = options.now ?? Date.now;
  let started = false;
  let stopped = false;
  let interval: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  /** A round was asked for while one ran (or before the scheduled one began). */
  let pending = false;
  /** Wake-ups for due times, one per millisecond value. */
  const timers = new Map<number, NodeJS.Timeout>();

  async function loop(): Promise<void> {
    // Never inside the caller: a nudge may come from within the database client's notification.
    await Promise.resolve();
    while (pending && !stopped) {
      pending = false;
      try {
        if ((await options.round()) === true) pending = true;
      } catch (err) {
        options.logger.error({ err }, `${options.name} failed`);
      }
    }
  }

  function run(): void {
    if (!started || stopped) return;
    pending = true;
    if (running) return;
    running = loop().finally(() => (running = null));
  }

  function wakeAt(key: number, delay: number): void {
    const timer = setTimeout(() => {
      // Timers may fire a little before the wall clock reaches the due time: wait the rest.
      const left = key - now();
      if (left > 0) return wakeAt(key, left);
      timers.delete(key);
      run();
    }, delay);
    timer.unref();
    timers.set(key, timer);
  }

  return {
    start() {
      if (started) return;
      started = true;
      if (options.pollMs > 0) {
        // A poll that finds a round running is dropped (it would find what that round finds).
        interval = setInterval(() => {
          if (!running) run();
        }, options.pollMs);
        interval.unref();
      }
      run();
    },
    nudge(at) {
      if (!started || stopped) return;
      const delay = at ? at.getTime() - now() : 0;
      if (delay <= 0) return run();
      const key = at!.getTime();
      if (delay > maxDelayMs || timers.has(key) || timers.size >= maxTimers) return;
      wakeAt(key, delay);
    },
    async stop() {
      stopped = true;
      if (interval) clearInterval(interval);
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await running;
    },
  };
}
