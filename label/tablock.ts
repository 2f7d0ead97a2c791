// One tab per assignment in this browser. The server gives a worker's open assignment to every tab
// that asks (the same lease), so two tabs of one browser would both edit it and the last heartbeat
// would win. The tab working on an assignment holds a lock in localStorage (its id and a time it
// refreshes every second); another tab that gets the same assignment sees the lock and says the
// task is open elsewhere, with a button that takes it over: the holder is told over a
// BroadcastChannel (or notices its lock was overwritten), saves its draft locally and steps back,
// and the new tab starts from that draft. A lock not refreshed for 4 s is free (the tab is gone).
import { uuidV4 } from './players/image/uuid.ts';

const refreshMs = 1000;
const staleMs = 4000;
const key = (assignmentId: string) => `humantask.label.tab.${assignmentId}`;
type Message = { kind: 'take' | 'gone'; assignmentId: string; tab: string };

export class TabLock {
  readonly tab = uuidV4();
  private held: { assignmentId: string; timer: ReturnType<typeof setInterval> } | null = null;
  private readonly channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('humantask.label.tabs') : null;
  private waiting = new Map<string, () => void>();

  /** `takenAway` runs in the holding tab when another tab takes its assignment over. */
  constructor(private readonly takenAway: (assignmentId: string) => void) {
    this.channel?.addEventListener('message', (e: MessageEvent<Message>) => {
      const m = e.data;
      if (m.kind === 'take' && this.held?.assignmentId === m.assignmentId) this.lose();
      if (m.kind === 'gone') this.waiting.get(m.assignmentId)?.();
    });
    // A reload or a closed tab frees its lock at once.
    addEventListener('pagehide', () => this.release());
  }

  private read(assignmentId: string): { tab: string; at: number } | null {
    try {
      return JSON.parse(localStorage.getItem(key(assignmentId)) ?? 'null') as { tab: string; at: number } | null;
    } catch {
      return null;
    }
  }

  /** Whether another tab of this browser works on the assignment now. */
  heldElsewhere(assignmentId: string): boolean {
    const lock = this.read(assignmentId);
    return !!lock && lock.tab !== this.tab && Date.now() - lock.at < staleMs;
  }

  /** Holds the lock for this tab until `release` (or until another tab takes it over). */
  hold(assignmentId: string): void {
    this.release();
    const write = () => localStorage.setItem(key(assignmentId), JSON.stringify({ tab: this.tab, at: Date.now() }));
    write();
    const timer = setInterval(() => {
      // Overwritten by another tab (one without BroadcastChannel, or a message lost): step back.
      if (this.read(assignmentId)?.tab !== this.tab) this.lose();
      else write();
    }, refreshMs);
    this.held = { assignmentId, timer };
  }

  release(): void {
    if (!this.held) return;
    clearInterval(this.held.timer);
    if (this.read(this.held.assignmentId)?.tab === this.tab) localStorage.removeItem(key(this.held.assignmentId));
    this.held = null;
  }

  private lose(): void {
    const held = this.held;
    if (!held) return;
    clearInterval(held.timer);
    this.held = null;
    this.takenAway(held.assignmentId);
    this.channel?.postMessage({ kind: 'gone', assignmentId: held.assignmentId, tab: this.tab } satisfies Message);
  }

  /**
   * Takes the assignment over from the tab holding it: asks that tab to step back and waits until
   * it did (its draft is then saved in localStorage), at most the time a lock takes to go stale.
   */
  async takeOver(assignmentId: string): Promise<void> {
    if (this.heldElsewhere(assignmentId)) {
      const gone = new Promise<void>((resolve) => {
        const timeout = setTimeout(resolve, staleMs);
        this.waiting.set(assignmentId, () => {
          clearTimeout(timeout);
          resolve();
        });
      });
      this.channel?.postMessage({ kind: 'take', assignmentId, tab: this.tab } satisfies Message);
      // Without a channel the holder notices the overwritten lock within a second.
      if (!this.channel) localStorage.setItem(key(assignmentId), JSON.stringify({ tab: this.tab, at: Date.now() }));
      await gone;
      this.waiting.delete(assignmentId);
    }
    this.hold(assignmentId);
  }
}
