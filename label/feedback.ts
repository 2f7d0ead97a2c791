// What a worker is told about their work: the reviewer's remarks on a redo (listed, and pinned on
// their shapes and fields by the player's pinning hook), and after a training task its score, what
// differed (pinned too) and where their training stands (the contract's Assignment.training).
import type { Assignment, FeedbackItem } from './api.ts';
import { el, type Pin, type PinScope, type Player } from './players/types.ts';

type Training = NonNullable<NonNullable<Assignment['training']>['feedback']>;

const categories: Record<FeedbackItem['category'], string> = {
  missing: 'Missing',
  extra: 'Extra',
  wrong_label: 'Wrong label',
  wrong_geometry: 'Wrong shape or position',
  wrong_attribute: 'Wrong attribute',
  wrong_text: 'Wrong text',
  instructions: 'Instructions not followed',
  other: 'Other',
};
export const categoryNames = categories;

/** The part a remark is about, named as the player names it ("Shape 2: car box"), else from the scope. */
export function scopeName(scope: PinScope | undefined, player: Player | undefined): string {
  if (!scope || (scope.region_id === undefined && scope.field === undefined && !scope.frames)) return 'The whole answer';
  const named = player?.pinning?.targets().find((t) => JSON.stringify(t.scope) === JSON.stringify(scope));
  if (named) return named.label;
  if (scope.region_id !== undefined) return `Region ${scope.region_id}`;
  if (scope.field !== undefined) return `Field ${scope.field}`;
  return scope.frames ? `Frames ${scope.frames.start}–${scope.frames.end}` : 'The whole answer';
}

export const itemPins = (items: FeedbackItem[]): Pin[] =>
  items.flatMap((f) => (f.scope && Object.keys(f.scope).length ? [{ scope: f.scope, title: categories[f.category], text: f.text }] : []));

/** The list of remarks, each with the part it is about. */
function remarkList(items: FeedbackItem[], player: Player | undefined): HTMLElement {
  return el(
    'ul',
    { class: 'remarks' },
    ...items.map((f) =>
      el(
        'li',
        {},
        el('strong', {}, `${categories[f.category]}`),
        ` — ${scopeName(f.scope, player)}: `,
        el('span', { class: 'remark-text' }, f.text),
      ),
    ),
  );
}

/** The notice on a redo: the review rejected the earlier answer, with the reviewer's remarks. */
export function redoNotice(items: FeedbackItem[], player: Player | undefined): HTMLElement {
  return el(
    'div',
    { class: 'notice warn feedback', role: 'status', id: 'redo-feedback' },
    el('strong', {}, 'Your earlier answer was rejected. '),
    items.length ? 'The reviewer says (remarks on a shape or field are shown on it too):' : 'The reviewer left no remark.',
    remarkList(items, player),
  );
}

/** In review mode, when the answer is a redo: the remarks of the reviews it answers, oldest first. */
export function earlierReviewsNotice(reviews: { feedback_items: FeedbackItem[] }[], player: Player | undefined): HTMLElement {
  return el(
    'section',
    { class: 'notice warn feedback', role: 'status', id: 'earlier-reviews', 'aria-label': 'Earlier reviews' },
    el('strong', {}, 'This answer is a redo. '),
    reviews.length === 1
      ? 'The review it answers said (check that each remark was dealt with):'
      : `The ${reviews.length} reviews it answers said, oldest first (check that each remark was dealt with):`,
    ...reviews.map((r, i) =>
      el(
        'div',
        {},
        ...(reviews.length > 1 ? [el('p', {}, `Review ${i + 1}:`)] : []),
        r.feedback_items.length ? remarkList(r.feedback_items, player) : el('p', { class: 'muted' }, 'No remark.'),
      ),
    ),
  );
}

const percent = (v: number) => `${Math.round(v * 100)} %`;

/** Differences a training score found, as pins on the worker's answer (those about a region or a field). */
export const differencePins = (t: Training): Pin[] =>
  t.differences.flatMap((d) => {
    const scope: PinScope | null =
      d.region_id !== undefined ? { region_id: d.region_id } : d.field !== undefined ? { field: d.field } : null;
    return scope && d.kind !== 'missing' ? [{ scope, title: d.kind, text: d.message }] : [];
  });

/** The training feedback: score, pass or not, what differed, and the standing in the project. */
export function trainingSummary(project: string, t: Training): HTMLElement {
  const p = t.progress;
  const standing: Record<typeof p.state, string> = {
    training: `Training: ${p.scored} of ${p.required} training tasks scored in this try.`,
    qualified: 'Qualified: live work on this project follows.',
    waiting: `Not passed this time; the next try may begin ${p.retry_after ? new Date(p.retry_after).toLocaleString() : 'later'}.`,
    failed: 'No try is left; the customer can reset your training.',
    paused: 'Paused: your accuracy on this project fell below its mark.',
  };
  return el(
    'section',
    { class: 'panel training', 'aria-labelledby': 'training-title', id: 'training-feedback' },
    el('h2', { id: 'training-title' }, `Training feedback (${project})`),
    el(
      'p',
      { class: `notice ${t.passed ? 'good' : 'warn'}` },
      el('strong', { id: 'training-score' }, `Score ${percent(t.score)}`),
      t.passed ? ' — passed.' : ` — below the pass mark${p.pass_score !== undefined ? ` of ${percent(p.pass_score)}` : ''}.`,
    ),
    el(
      'dl',
      { class: 'meters' },
      el('dt', {}, 'Standing'),
      el('dd', {}, standing[p.state]),
      ...(p.mean_score !== undefined ? [el('dt', {}, 'Mean score'), el('dd', {}, percent(p.mean_score))] : []),
      el('dt', {}, 'Tries'),
      el('dd', {}, `${p.tries} of ${p.max_tries}`),
    ),
    el('h3', {}, t.differences.length ? 'What differed' : 'Nothing differed: a perfect answer.'),
    el(
      'ul',
      { class: 'differences' },
      ...t.differences.map((d) =>
        el(
          'li',
          {},
          el('strong', {}, d.kind),
          d.label ? ` (${d.label})` : '',
          d.score !== undefined ? ` ${percent(d.score)}` : '',
          `: ${d.message}`,
        ),
      ),
    ),
  );
}
