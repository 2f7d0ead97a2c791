// Active time: counted only while the tab is visible and the person gave input in the last
// `idleMs` (2 minutes), as the worker API's `active_ms` asks. Time is banked on every tick, input
// and visibility change; `take()` hands the unsent part to a heartbeat or submit.
export class ActiveTime {
  private lastInput = Number.NEGATIVE_INFINITY;
  private lastTick: number;
  private visible: boolean;
  private unsent = 0;
  total = 0;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly idleMs = 120_000,
    visible = true,
  ) {
    this.lastTick = now();
    this.visible = visible;
  }

  /** Banks the time since the last tick that counts as active. */
  tick(): void {
    const t = this.now();
    if (this.visible) {
      const end = Math.min(t, this.lastInput + this.idleMs);
      if (end > this.lastTick) {
        this.unsent += end - this.lastTick;
        this.total += end - this.lastTick;
      }
    }
    this.lastTick = t;
  }

  input(): void {
    this.tick();
    this.lastInput = this.now();
  }

  setVisible(visible: boolean): void {
    this.tick();
    this.visible = visible;
  }

  /** Active now: visible, with input in the last `idleMs`. */
  get active(): boolean {
    return this.visible && this.now() - this.lastInput < this.idleMs;
  }

  /** The active milliseconds not yet reported (whole ms); `giveBack` returns them after a failed send. */
  take(): number {
    this.tick();
    const ms = Math.floor(this.unsent);
    this.unsent -= ms;
    return ms;
  }

  giveBack(ms: number): void {
    this.unsent += ms;
  }
}

/** Wires an ActiveTime to the page's input and visibility events. */
export function trackActivity(timer: ActiveTime, target: Document = document): () => void {
  const onInput = () => timer.input();
  const onVisibility = () => timer.setVisible(target.visibilityState === 'visible');
  const events = ['keydown', 'pointerdown', 'pointermove', 'wheel', 'input'] as const;
  for (const e of events) target.addEventListener(e, onInput, { capture: true, passive: true });
  target.addEventListener('visibilitychange', onVisibility);
  return () => {
    for (const e of events) target.removeEventListener(e, onInput, { capture: true });
    target.removeEventListener('visibilitychange', onVisibility);
  };
}
