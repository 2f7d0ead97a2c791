// Wakes requests that wait for something to happen in the database (a long poll for work): the
// NOTIFY listener calls `notify`, each waiter resolves at once or when its time is up. Waiters
// always look in the database again, so a lost nudge costs at most their wait.
export interface Wakeup {
  notify(): void;
  /** Resolves at the next `notify`, or after `ms`. */
  wait(ms: number): Promise<void>;
}

export function createWakeup(): Wakeup {
  let waiters = new Set<() => void>();
  return {
    notify() {
      const woken = waiters;
      waiters = new Set();
      for (const wake of woken) wake();
    },
    wait(ms) {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiters.add(done);
      });
    },
  };
}
