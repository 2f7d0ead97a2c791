// The tool bar of the drawing players (image, document, video, segmentation, lidar): one button per
// tool with its key, the chosen one pressed, and the same keys as shortcuts, so that the bar, the
// keys and the help overlay (`?`) come from one list of tools.
import type { Shortcut } from '../keys.ts';
import { el } from './types.ts';

export interface ToolDef<T extends string> {
  id: T;
  /** The key that picks it (shown on its button, listed in the help). */
  key: string;
  /** Its name on the button. */
  name: string;
  /** What the help says of it (default "Tool: <name>"). */
  help?: string;
}

/**
 * A click on a tool or label button leaves the focus where it was, so that Space (pan), Enter
 * (finish) and the other keys keep working on the canvas; the keyboard still reaches the buttons.
 */
export const keepFocus = (b: HTMLButtonElement) => b.addEventListener('mousedown', (e) => e.preventDefault());

export class ToolBar<T extends string> {
  readonly element = el('div', { class: 'labels tools', role: 'toolbar', 'aria-label': 'Tool' });
  private readonly buttons = new Map<T, HTMLButtonElement>();

  constructor(
    private readonly tools: readonly ToolDef<T>[],
    pick: (tool: T) => void,
  ) {
    for (const t of tools) {
      const b = el('button', { type: 'button', 'aria-pressed': 'false', 'data-tool': t.id }, el('kbd', {}, t.key), ` ${t.name}`);
      b.addEventListener('click', () => pick(t.id));
      keepFocus(b);
      this.element.append(b);
      this.buttons.set(t.id, b);
    }
    this.shortcuts = tools.map((t) => ({ keys: [t.key], label: t.help ?? `Tool: ${t.name}`, run: () => pick(t.id) }));
  }

  /** The tools' keys, for the player's shortcuts. */
  readonly shortcuts: Shortcut[];

  has(tool: T): boolean {
    return this.buttons.has(tool);
  }

  /** Shows `tool` as the chosen one. */
  show(tool: T): void {
    for (const [t, b] of this.buttons) b.setAttribute('aria-pressed', String(t === tool));
  }

  name(tool: T): string {
    return this.tools.find((t) => t.id === tool)?.name ?? tool;
  }
}
