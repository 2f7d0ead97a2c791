// The help overlay (`?`): every shortcut that applies now, as the keymap lists them (label/keys.ts),
// so that what the help shows and what the keys do come from one table.
import type { Keymap } from '../keys.ts';
import { el } from '../players/types.ts';

export class Help {
  private readonly overlay = el('div', {
    class: 'overlay',
    hidden: '',
    role: 'dialog',
    'aria-modal': 'true',
    'aria-labelledby': 'help-title',
  });

  constructor(private readonly keymap: Keymap) {
    document.body.append(this.overlay);
    keymap.push([
      { keys: ['?'], label: 'Show or hide this help', run: () => this.toggle() },
      { keys: ['Escape'], label: 'Close the help', when: () => this.open, run: () => this.toggle(false) },
    ]);
  }

  get open(): boolean {
    return !this.overlay.hidden;
  }

  toggle(show = this.overlay.hidden): void {
    if (!show) {
      this.overlay.hidden = true;
      return;
    }
    const close = el('button', { type: 'button' }, 'Close ', el('kbd', {}, 'Esc'));
    close.addEventListener('click', () => this.toggle(false));
    const rows = this.keymap
      .active()
      .map((s) => el('tr', {}, el('td', {}, ...s.keys.flatMap((k, i) => [i ? ' ' : '', el('kbd', {}, k)])), el('td', {}, s.label)));
    this.overlay.replaceChildren(
      el(
        'div',
        { class: 'dialog' },
        el('h2', { id: 'help-title' }, 'Keyboard shortcuts'),
        el('table', {}, el('tbody', {}, ...rows)),
        close,
      ),
    );
    this.overlay.hidden = false;
    close.focus();
  }
}
