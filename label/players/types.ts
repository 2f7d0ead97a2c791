// A player turns a task's params into tools and the person's work into an answer the worker API
// accepts. The shell owns everything else (lease, heartbeat, timer, submit, skip, release).
import type { Assignment, Draft, WorkerResponse } from '../api.ts';
import type { Shortcut } from '../keys.ts';

export type Answer = { ok: true; response: WorkerResponse } | { ok: false; problem: string };

export interface Player {
  /** The answer to submit, or what is still missing. */
  getResponse(): Answer;
  /** The work in progress, saved by heartbeats and restored on reload. */
  getDraft(): Draft;
  shortcuts: Shortcut[];
  destroy?(): void;
}

export interface PlayerContext {
  /** The work changed (the shell saves the draft locally and marks it unsaved). */
  changed(): void;
  /** Active time on this assignment so far, in milliseconds (earlier sessions included). */
  activeMs(): number;
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
