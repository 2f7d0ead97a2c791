// Keyboard shortcuts: one table the shell and the current player add to, shown by the help
// overlay (`?`). Keys typed into a text field go to the field, except Escape, Ctrl+Enter and Alt+Enter.
export interface Shortcut {
  /** As shown and matched: `?`, `n`, `Shift+S`, `Ctrl+Enter`, `Ctrl+Z`, `1`, `Delete`, ... */
  keys: string[];
  label: string;
  run(event: KeyboardEvent): void;
  /** Whether it applies now (default: always). */
  when?(): boolean;
}

function keyName(e: KeyboardEvent): string {
  const parts: string[] = [];
  if (e.ctrlKey || e.metaKey) parts.push('Ctrl');
  if (e.altKey) parts.push('Alt');
  // A shifted printable key is already its own character (`?`, `S`); Shift is named only for letters.
  const key = e.key;
  if (e.shiftKey && (key.length > 1 || /[a-z]/i.test(key))) parts.push('Shift');
  parts.push(key.length === 1 && /[a-z]/i.test(key) ? key.toUpperCase() : key);
  return parts.join('+');
}

function inTextField(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) &&
    !(target instanceof HTMLInputElement && /^(radio|checkbox|button)$/.test(target.type))
  );
}

export class Keymap {
  private layers: Shortcut[][] = [];

  push(shortcuts: Shortcut[]): () => void {
    this.layers.push(shortcuts);
    return () => {
      this.layers = this.layers.filter((l) => l !== shortcuts);
    };
  }

  /** The shortcuts that apply now, the latest layer first. */
  active(): Shortcut[] {
    return this.layers.flat().filter((s) => s.when?.() ?? true);
  }

  handle(e: KeyboardEvent): void {
    const name = keyName(e);
    if (inTextField(e.target) && name !== 'Escape' && name !== 'Ctrl+Enter' && name !== 'Alt+Enter') return;
    // Letters are written in upper case in the table ("N", "Shift+S").
    const match = this.active()
      .reverse()
      .find((s) => s.keys.some((k) => k.toUpperCase() === name.toUpperCase()));
    if (!match) return;
    e.preventDefault();
    match.run(e);
  }
}
