// Undo and redo over whole snapshots of the shapes: a person's change is one step, however many
// shapes it touched. Snapshots are deep copies (a few hundred shapes copy in well under a millisecond).
import { clone, type Shape } from './model.ts';

export class History {
  private past: Shape[][] = [];
  private future: Shape[][] = [];

  constructor(private readonly limit = 200) {}

  /** Call before a change, with the shapes as they are. */
  record(shapes: readonly Shape[]): void {
    this.past.push(shapes.map(clone));
    if (this.past.length > this.limit) this.past.shift();
    this.future = [];
  }

  /** The shapes before the last change, or undefined; `now` becomes redoable. */
  undo(now: readonly Shape[]): Shape[] | undefined {
    const previous = this.past.pop();
    if (previous) this.future.push(now.map(clone));
    return previous;
  }

  redo(now: readonly Shape[]): Shape[] | undefined {
    const next = this.future.pop();
    if (next) this.past.push(now.map(clone));
    return next;
  }
}
