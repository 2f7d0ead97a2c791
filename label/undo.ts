// Undo and redo, one mechanism for every player: a history of steps, each a person's change (however
// much it touched) that knows how to take itself back and do itself again. Most players record a
// snapshot of their work before each change (`Undo.snapshot`: the image, video, document and
// named-entity players' shapes, spans and tracks, the segmentation masks); the lidar player records
// the points one lasso changed, a step of its own (a frame's labels are too big to copy per lasso).
// The keys are the same in every player (`undoKeys`): Ctrl+Z, and Ctrl+Shift+Z or Ctrl+Y.
import type { Shortcut } from './keys.ts';

/** A change that can be taken back and done again. */
export interface Step {
  undo(): void;
  redo(): void;
}

export class Undo<S extends Step = Step> {
  private past: S[] = [];
  private future: S[] = [];

  constructor(private readonly limit = 200) {}

  /** Records a change just made (or about to be made): it becomes the one Ctrl+Z takes back; nothing is redoable any more. */
  push(step: S): void {
    this.past.push(step);
    if (this.past.length > this.limit) this.past.shift();
    this.future = [];
  }

  /** Forgets the step recorded last, without taking it back (the change it was for changed nothing). */
  forget(): void {
    this.past.pop();
  }

  /** Takes back the last change; the step, or undefined when there is none. */
  undo(): S | undefined {
    const step = this.past.pop();
    if (!step) return undefined;
    step.undo();
    this.future.push(step);
    return step;
  }

  /** Does again the change taken back last; the step, or undefined when there is none. */
  redo(): S | undefined {
    const step = this.future.pop();
    if (!step) return undefined;
    step.redo();
    this.past.push(step);
    return step;
  }

  /**
   * A history over snapshots of a player's work: `record()` before each change copies the work as
   * it is (`take`); undo puts that copy back (`put`), keeping a copy of the work as it was for redo.
   * The copy put back becomes the work: a later change records a new snapshot before it changes it.
   */
  static snapshot<T>(take: () => T, put: (state: T) => void, copy: (state: T) => T = structuredClone, limit = 200): Snapshots {
    const history = new Undo(limit);
    return {
      record() {
        const before = copy(take());
        let after: T | undefined;
        history.push({
          undo() {
            after = copy(take());
            put(before);
          },
          redo() {
            if (after !== undefined) put(after);
          },
        });
      },
      forget: () => history.forget(),
      undo: () => history.undo() !== undefined,
      redo: () => history.redo() !== undefined,
    };
  }
}

/** A snapshot history (Undo.snapshot): undo and redo say whether there was a step. */
export interface Snapshots {
  /** Call before a change, with the work as it is. */
  record(): void;
  forget(): void;
  undo(): boolean;
  redo(): boolean;
}

/** The undo and redo keys, the same in every player (the help lists them with the player's label). */
export function undoKeys(undo: () => void, redo: () => void, what = 'Undo'): Shortcut[] {
  return [
    { keys: ['Ctrl+Z'], label: what, run: undo },
    { keys: ['Ctrl+Shift+Z', 'Ctrl+Y'], label: 'Redo', run: redo },
  ];
}
