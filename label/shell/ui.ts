// The page the shell draws on (index.html: the status line, who is logged in, the main area) and
// the small pieces every screen of the shell uses: a notice, a button with its key, a duration.
import { el } from '../players/types.ts';

export const main = document.getElementById('app') as HTMLElement;
const statusLine = document.getElementById('status') as HTMLElement;
export const who = document.getElementById('who') as HTMLElement;

/** The status line at the top. */
export function say(text: string): void {
  statusLine.textContent = text;
}

export function notice(kind: 'good' | 'warn' | 'bad', text: string): HTMLElement {
  return el('p', { class: `notice ${kind}`, role: kind === 'bad' ? 'alert' : 'status' }, text);
}

/** A button that names its key (the key itself is a shortcut of the keymap). */
export function button(label: string, key: string, run: () => void, primary = false): HTMLButtonElement {
  const b = el(
    'button',
    { type: 'button', class: primary ? 'primary' : '', 'aria-keyshortcuts': key.replace('Ctrl', 'Control') },
    `${label} `,
    el('kbd', {}, key),
  );
  b.addEventListener('click', run);
  return b;
}

/** A duration as people read it: 4:05, 1:02:03. */
export function fmt(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h ? 2 : 1, '0');
  return `${h ? `${h}:` : ''}${mm}:${String(s % 60).padStart(2, '0')}`;
}
