// Undo and redo over whole snapshots of a player's work (the image player's shapes, the named-entity
// player's spans and relationships): a person's change is one step, however much it touched.
// Snapshots are deep copies (a few hundred shapes copy in well under a millisecond).
import { clone, type Shape } from './model.ts';

export class History<S = Shape[]> {
  private past: S[] = [];
  private future: S[] = [];

  constructor(
    /** A deep copy of a snapshot; by default the image player's (each shape cloned). */
    private readonly copy: (state: S) => S = ((shapes: Shape[]) => shapes.map(clone)) as unknown as (state: S) => S,
    private readonly limit = 200,
  ) {}

  /** Call before a change, with the work as it is. */
  record(state: S): void {
    this.past.push(this.copy(state));
    if (this.past.length > this.limit) this.past.shift();
    this.future = [];
  }

  /** The work before the last change, or undefined; `now` becomes redoable. */
  undo(now: S): S | undefined {
    const previous = this.past.pop();
    if (previous) this.future.push(this.copy(now));
    return previous;
  }

  redo(now: S): S | undefined {
    const next = this.future.pop();
    if (next) this.past.push(this.copy(now));
    return next;
  }
}
