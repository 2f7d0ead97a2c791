// The shell's two questions: before an empty answer goes, and the reason for a skip. Each is a
// modal overlay with its own keys (pushed on the keymap while it is open).
import type { Keymap } from '../keys.ts';
import { el } from '../players/types.ts';

/**
 * Whether an answer holds nothing the person gave: no shape, label, span, text or choice (every list
 * empty, every text blank). The time a datacollection answer carries is measured, not given.
 */
export function isEmptyAnswer(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.every(isEmptyAnswer);
  if (typeof value === 'object') return Object.entries(value).every(([key, v]) => key === 'time_spent_in_seconds' || isEmptyAnswer(v));
  return typeof value === 'string' && value.trim() === '';
}

/** The question before an empty answer goes: Enter (or the button) submits it, Escape goes back to the task. Returns its close. */
export function confirmEmpty(keymap: Keymap, go: () => void, closed: () => void): () => void {
  const send = el('button', { type: 'button', class: 'primary' }, 'Submit it ', el('kbd', {}, 'Enter'));
  const back = el('button', { type: 'button' }, 'Go back ', el('kbd', {}, 'Esc'));
  const overlay = el(
    'div',
    { class: 'overlay', role: 'alertdialog', 'aria-modal': 'true', 'aria-labelledby': 'empty-title', 'aria-describedby': 'empty-text' },
    el(
      'div',
      { class: 'dialog' },
      el('h2', { id: 'empty-title' }, 'Submit an empty answer?'),
      el(
        'p',
        { id: 'empty-text' },
        'Your answer has nothing in it: no shape, label or text. Submit it only if the task has nothing to answer; go back to do the work.',
      ),
      el('div', { class: 'actions' }, send, back),
    ),
  );
  const close = () => {
    overlay.remove();
    dropKeys();
    closed();
  };
  const yes = () => {
    close();
    go();
  };
  const dropKeys = keymap.push([
    { keys: ['Enter', 'Ctrl+Enter'], label: 'Submit the empty answer', run: yes },
    { keys: ['Escape'], label: 'Go back to the task', run: close },
  ]);
  send.addEventListener('click', yes);
  back.addEventListener('click', close);
  document.body.append(overlay);
  back.focus();
  return close;
}

/** Asks why the task is skipped; `skip` gets the reason (Ctrl+Enter or the button), Escape cancels. */
export function askSkipReason(keymap: Keymap, skip: (reason: string) => void): void {
  const reason = el('textarea', { id: 'skip-reason', maxlength: '1000', required: '' });
  const error = el('p', { class: 'error', role: 'alert' });
  const cancel = el('button', { type: 'button' }, 'Cancel ', el('kbd', {}, 'Esc'));
  const ok = el('button', { type: 'submit', class: 'primary' }, 'Skip the task ', el('kbd', {}, 'Ctrl+Enter'));
  const form = el(
    'form',
    { class: 'dialog' },
    el('h2', { id: 'skip-title' }, 'Skip this task'),
    el('label', { for: 'skip-reason' }, 'Why? (the task will not be offered to you again)'),
    reason,
    error,
    el('div', { class: 'actions' }, ok, cancel),
  );
  const overlay = el('div', { class: 'overlay', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'skip-title' }, form);
  const close = () => {
    overlay.remove();
    dropKeys();
  };
  const dropKeys = keymap.push([
    { keys: ['Escape'], label: 'Cancel the skip', run: close },
    { keys: ['Ctrl+Enter'], label: 'Skip with this reason', run: () => form.requestSubmit() },
  ]);
  cancel.addEventListener('click', close);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!reason.value.trim()) {
      error.textContent = 'Give a reason.';
      return;
    }
    close();
    skip(reason.value.trim());
  });
  document.body.append(overlay);
  reason.focus();
}
