// The shell's state machine: where the person is (logged out, between tasks, waiting for work,
// working on a task, reviewing one, or looking at a task whose lease was lost), the transitions
// allowed between those states, and what each state holds. The shell enters a state and shows its
// screen through `go`; what a state started (a question in flight, a countdown, a work session with
// its timers and keys) is stopped by the `leave` it registered, when the next state is entered.
// Pure: no DOM, so that the transitions are tested on their own (test/unit/label/shell-state.test.ts).

export type StateName = 'logged-out' | 'idle' | 'waiting' | 'working' | 'reviewing' | 'lease-lost';

/** What each state holds; `W` is the work session (label/shell/work.ts). */
export type ShellState<W> =
  | { name: 'logged-out' }
  /** Logged in without a task: the next-task screen, my history, a training feedback, a task held in another tab. */
  | { name: 'idle'; view: 'next' | 'history' | 'feedback' | 'held-elsewhere'; take?: (() => void) | undefined }
  /** Asking for work: `asking` while the server holds the question (the long poll), else counting down to the next one. */
  | { name: 'waiting'; asking: AbortController | null }
  | { name: 'working'; work: W }
  | { name: 'reviewing'; work: W }
  /** The task's lease ended (lost, canceled, closed): the work stays shown, nothing more is sent. */
  | { name: 'lease-lost' };

/**
 * The transitions allowed, from each state. Logging out, or a session that ended (401), leads to
 * logged-out from anywhere logged in.
 */
const transitions: Readonly<Record<StateName, readonly StateName[]>> = {
  // Log in: the app asks for work at once.
  'logged-out': ['logged-out', 'waiting'],
  // N asks for work; my history and the training feedback are idle views; "take over here" opens the task.
  idle: ['idle', 'waiting', 'working', 'reviewing', 'logged-out'],
  // The answer: a task (or a review); none yet (waiting again); Esc or an error (idle); the task held in another tab (idle).
  waiting: ['waiting', 'idle', 'working', 'reviewing', 'logged-out'],
  // Submit, skip or a review's decision ask for the next task; release, my history, another tab's take-over end in idle.
  working: ['waiting', 'idle', 'lease-lost', 'logged-out'],
  reviewing: ['waiting', 'idle', 'lease-lost', 'logged-out'],
  'lease-lost': ['waiting', 'idle', 'logged-out'],
};

export class ShellMachine<W> {
  private current: ShellState<W> = { name: 'logged-out' };
  private leaveCurrent: (() => void) | undefined;
  private readonly listeners: ((state: ShellState<W>) => void)[] = [];

  get state(): ShellState<W> {
    return this.current;
  }

  /** The work session open now (working or reviewing), else undefined. */
  get work(): W | undefined {
    const s = this.current;
    return s.name === 'working' || s.name === 'reviewing' ? s.work : undefined;
  }

  is(...names: StateName[]): boolean {
    return names.includes(this.current.name);
  }

  /**
   * Leaves the current state (its `leave` runs) and enters `next`, whose `leave` is kept for when it
   * is left in turn. A transition the table does not allow is a bug in the shell: it throws.
   */
  go(next: ShellState<W>, leave?: () => void): void {
    if (!transitions[this.current.name].includes(next.name))
      throw new Error(`The shell cannot go from ${this.current.name} to ${next.name}.`);
    this.leave();
    this.current = next;
    this.leaveCurrent = leave;
    for (const listener of this.listeners) listener(next);
  }

  /**
   * Ends what the current state started (its `leave` runs once) while staying in it: for a state
   * that is built before it is entered (a work session opens its player only after the question
   * for work ended).
   */
  leave(): void {
    const left = this.leaveCurrent;
    this.leaveCurrent = undefined;
    left?.();
  }

  /** Adds to what is stopped when the current state is left (a dialog, the keys of a view shown in it). */
  alsoOnLeave(stop: () => void): void {
    const before = this.leaveCurrent;
    this.leaveCurrent = () => {
      stop();
      before?.();
    };
  }

  /** Calls `listener` after each transition, with the state entered. */
  onChange(listener: (state: ShellState<W>) => void): void {
    this.listeners.push(listener);
  }
}
