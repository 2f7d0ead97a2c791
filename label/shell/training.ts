// After a training answer: its score and what differed, pinned on the answer shown read-only, and
// the expected answer on Shift+E. The task's files come from the addresses the work used (the
// browser kept them: the lease has ended).
import type { Assignment, Draft } from '../api.ts';
import { differencePins, trainingSummary } from '../feedback.ts';
import type { Keymap } from '../keys.ts';
import type { MediaAddress } from '../media.ts';
import { el, type Player } from '../players/types.ts';
import { button, main } from './ui.ts';
import { makePlayer } from './work.ts';

/** Shows the training feedback of `done`; returns what ends it (its player and its keys). */
export function showTrainingFeedback(done: Assignment, media: MediaAddress, keymap: Keymap, takeNext: () => void): () => void {
  const training = done.training;
  const feedback = training?.feedback;
  if (!training || !feedback) return () => undefined;
  let shown: { player: Player; drop(): void } | null = null;
  let viewKeys: (() => void) | null = null;
  const area = el('section', { class: 'player', 'aria-label': 'Your training answer' });
  const caption = el('p', { class: 'muted', id: 'shown-answer' });
  const show = (expected: boolean) => {
    shown?.drop();
    area.replaceChildren();
    const answer = (expected ? feedback.expected_response : done.response) as Draft | undefined;
    const player = makePlayer(area, done, answer, { changed: () => undefined, activeMs: () => done.active_ms, readOnly: true, media });
    if (!player.readOnly) area.setAttribute('inert', '');
    if (!expected) player.pinning?.show(differencePins(feedback));
    caption.textContent = expected ? 'Shown: the expected answer.' : 'Shown: your answer, with what differed on its parts.';
    const drop = keymap.push(player.shortcuts);
    shown = {
      player,
      drop() {
        drop();
        player.destroy?.();
      },
    };
  };
  let expected = false;
  const toggle = button('Show the expected answer', 'Shift+E', () => {
    expected = !expected;
    show(expected);
    toggle.firstChild!.textContent = expected ? 'Show my answer ' : 'Show the expected answer ';
  });
  const next = button('Take the next task', 'N', takeNext, true);
  main.replaceChildren(
    el(
      'div',
      { class: 'work' },
      el(
        'aside',
        { class: 'side' },
        trainingSummary(training.project, feedback),
        el('section', { class: 'panel actions', 'aria-label': 'Actions' }, next, ...(feedback.expected_response ? [toggle] : []), caption),
      ),
      area,
    ),
  );
  show(false);
  if (feedback.expected_response)
    viewKeys = keymap.push([{ keys: ['Shift+E'], label: 'Show the expected answer or mine', run: () => toggle.click() }]);
  next.focus();
  return () => {
    shown?.drop();
    viewKeys?.();
  };
}
