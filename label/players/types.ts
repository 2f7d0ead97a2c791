// A player turns a task's params into tools and the person's work into an answer the worker API
// accepts. The shell owns everything else (lease, heartbeat, timer, submit, skip, release).
import type { Assignment, Draft, FeedbackItem, WorkerResponse } from '../api.ts';
import type { Shortcut } from '../keys.ts';
import type { MediaAddress } from '../media.ts';

export type Answer = { ok: true; response: WorkerResponse } | { ok: false; problem: string };

export interface Player {
  /** The answer to submit, or what is still missing. */
  getResponse(): Answer;
  /** The work in progress, saved by heartbeats and restored on reload. */
  getDraft(): Draft;
  shortcuts: Shortcut[];
  destroy?(): void;
  /**
   * Optional: the player honours `context.readOnly` itself (shows the answer, takes no edits, but
   * lets the person pick a part to pin a remark on). Without it, a read-only player is made inert.
   */
  readOnly?: boolean;
  /** Optional: the parts of the answer remarks can be pinned to (review mode and the feedback views). */
  pinning?: Pinning;
}

/** What a remark points at: a region, a field or a frame range (the contract's FeedbackItem scope). */
export type PinScope = NonNullable<FeedbackItem['scope']>;
/** A remark shown on its part: a reviewer's feedback item, or a difference a training score found. */
export interface Pin {
  scope: PinScope;
  /** A short heading (the feedback item's category, a difference's kind). */
  title: string;
  text: string;
}

/**
 * The pinning hook: a player that has it names the parts of its answer (shapes, fields, frames),
 * reports the part the person points at, and shows remarks on their parts. A player without it
 * still works in review mode: its remarks are about the whole answer.
 */
export interface Pinning {
  /** The parts a remark may point at, each with a name for people ("Shape 2: car box"). */
  targets(): { scope: PinScope; label: string }[];
  /** Called with the part the person picks in the player (a click on a shape, focus in a field). */
  onPick(pick: (scope: PinScope) => void): void;
  /** Shows the remarks on their parts (an empty list clears them); those with no part here are ignored. */
  show(pins: Pin[]): void;
}

/** Whether a remark's scope points at this target (the same region, field or overlapping frames). */
export function sameScope(a: PinScope, b: PinScope): boolean {
  if (a.region_id !== undefined || b.region_id !== undefined) return a.region_id === b.region_id;
  if (a.field !== undefined || b.field !== undefined) return a.field === b.field;
  if (a.frames && b.frames) return a.frames.start <= b.frames.end && b.frames.start <= a.frames.end;
  return false;
}

export interface PlayerContext {
  /** The work changed (the shell saves the draft locally and marks it unsaved). */
  changed(): void;
  /** Active time on this assignment so far, in milliseconds (earlier sessions included). */
  activeMs(): number;
  /** Show the answer without taking edits (a review before "fix", a feedback view); see Player.readOnly. */
  readOnly?: boolean;
  /**
   * The address to load a file of the task from (an image, recording, video, PDF, frame file):
   * the server's media route of the assignment, never the customer's host (label/media.ts).
   */
  media: MediaAddress;
}

export type PlayerFactory = (container: HTMLElement, assignment: Assignment, draft: Draft | undefined, context: PlayerContext) => Player;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) if (value !== undefined) node.setAttribute(name, value);
  node.append(...children);
  return node;
}
