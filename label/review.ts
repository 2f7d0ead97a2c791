// Review mode's panel: the reviewer's remarks (each about the whole answer or pinned to a part the
// player names: a shape, a field, frames) and the decision: accept, fix (edit the answer in the
// player, then submit the fix) or reject with remarks. A click on a shape or a field in the player
// points the next remark at it. The panel's state goes into the assignment's draft, so a reload
// keeps the remarks and the fix in progress. With several attempts (attempts.ts) the decision and
// the remarks are about the attempt picked (`attempt`).
import type { FeedbackItem } from './api.ts';
import { categoryNames, itemPins, scopeName } from './feedback.ts';
import type { Shortcut } from './keys.ts';
import { el, type PinScope, type Player } from './players/types.ts';

/** What a review assignment's draft holds: the remarks so far, the attempt picked, and the fixed answer once fixing. */
export interface ReviewDraft {
  review: { fixing: boolean; items: FeedbackItem[]; attempt?: number };
  answer?: Record<string, unknown>;
}

export function asReviewDraft(draft: unknown): ReviewDraft | undefined {
  const r = (draft as Partial<ReviewDraft> | undefined)?.review;
  return r && Array.isArray(r.items) ? (draft as ReviewDraft) : undefined;
}

export interface ReviewHost {
  player(): Player;
  /** The remarks or the fixing state changed (saved with the draft). */
  changed(): void;
  fix(): void;
  decide(result: 'accepted' | 'fixed' | 'rejected'): void;
  button(label: string, key: string, run: () => void, primary?: boolean): HTMLButtonElement;
}

export class ReviewPanel {
  readonly element: HTMLElement;
  readonly shortcuts: Shortcut[];
  items: FeedbackItem[];
  fixing: boolean;
  /** The attempt picked among several (its number), else undefined. */
  attempt: number | undefined;
  private readonly about = el('select', { id: 'remark-about' });
  private readonly category = el('select', { id: 'remark-category' });
  private readonly text = el('textarea', { id: 'remark-text', maxlength: '5000', rows: '3' });
  private readonly list = el('ol', { class: 'remarks', 'aria-label': 'Your remarks' });
  private readonly decisions = el('div', { class: 'actions', role: 'toolbar', 'aria-label': 'Decision' });
  private scopes: (PinScope | undefined)[] = [];

  constructor(
    private readonly host: ReviewHost,
    saved: ReviewDraft | undefined,
    authorMs: number | undefined,
    attempt?: number,
    /** A final review (reviewers rejected the task's work as often as they may): accept or fix, no reject. */
    private readonly final = false,
  ) {
    this.items = saved?.review.items ?? [];
    this.fixing = saved?.review.fixing ?? false;
    this.attempt = attempt;
    for (const [value, name] of Object.entries(categoryNames)) this.category.append(el('option', { value }, name));
    const add = el('button', { type: 'submit' }, 'Add the remark');
    const form = el(
      'form',
      { class: 'remark-form', 'aria-label': 'A remark' },
      el('label', { for: 'remark-about' }, 'About'),
      this.about,
      el('label', { for: 'remark-category' }, 'Kind of mistake'),
      this.category,
      el('label', { for: 'remark-text' }, 'Remark (Enter adds it, Escape leaves it)'),
      this.text,
      add,
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.addRemark();
    });
    this.text.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
        e.preventDefault();
        this.addRemark();
      }
      // Escape leaves the remark, so that the decision keys (Shift+A, Shift+X) work again.
      if (e.key === 'Escape') this.text.blur();
    });
    // The parts change while fixing (a shape added): the list is made again when it is opened.
    this.about.addEventListener('focus', () => this.fillAbout());
    this.about.addEventListener('mousedown', () => this.fillAbout());
    const worked = authorMs === undefined ? '' : ` (its author worked on it for ${Math.round(authorMs / 1000)} s)`;
    const check = final
      ? `This review is final: reviewers rejected this task's work as often as they may. Accept the answer${worked} or fix it yourself.`
      : attempt === undefined
        ? `Check the answer${worked}. Accept it, fix it, or reject it with remarks: click a shape or a field to point a remark at it.`
        : 'Decide about the attempt picked: accept it, fix it, or reject it with remarks (its author redoes it): click a shape or a field of it to point a remark at it.';
    this.element = el(
      'section',
      { class: 'panel review', 'aria-labelledby': 'review-title' },
      el('h2', { id: 'review-title' }, 'Review'),
      el('p', { class: 'muted' }, check),
      this.decisions,
      form,
      this.list,
    );
    this.shortcuts = [
      { keys: ['Shift+A'], label: 'Review: accept the answer', run: () => host.decide('accepted') },
      { keys: ['Shift+F'], label: 'Review: fix the answer (edit it, then Ctrl+Enter)', when: () => !this.fixing, run: () => host.fix() },
      ...(final ? [] : [{ keys: ['Shift+X'], label: 'Review: reject the answer (with your remarks)', run: () => host.decide('rejected') }]),
      { keys: ['Shift+M'], label: 'Review: write a remark (about the part last clicked)', run: () => this.text.focus() },
    ];
    this.render();
  }

  /** Points the next remark at a part the reviewer picked in the player. */
  picked(scope: PinScope): void {
    this.fillAbout(scope);
    if (!this.fixing) this.text.focus();
  }

  private fillAbout(select?: PinScope): void {
    const keep = select ?? this.scopes[this.about.selectedIndex];
    const targets = this.host.player().pinning?.targets() ?? [];
    this.scopes = [undefined, ...targets.map((t) => t.scope)];
    this.about.replaceChildren(
      el('option', { value: '' }, 'The whole answer'),
      ...targets.map((t, i) => el('option', { value: String(i + 1) }, t.label)),
    );
    const at = keep ? this.scopes.findIndex((s) => JSON.stringify(s) === JSON.stringify(keep)) : 0;
    this.about.selectedIndex = Math.max(0, at);
  }

  private addRemark(): void {
    const text = this.text.value.trim();
    if (!text) {
      this.text.focus();
      return;
    }
    const scope = this.scopes[this.about.selectedIndex];
    this.items = [...this.items, { ...(scope ? { scope } : {}), category: this.category.value as FeedbackItem['category'], text }];
    this.text.value = '';
    this.render();
    this.host.changed();
  }

  /** Shows the decisions that apply and the remarks, and pins the remarks on their parts. */
  render(): void {
    const h = this.host;
    const of = this.attempt === undefined ? '' : ` attempt ${this.attempt}`;
    this.decisions.replaceChildren(
      ...(this.fixing
        ? [h.button(`Submit the fix${of && ` of${of}`}`, 'Ctrl+Enter', () => h.decide('fixed'), true)]
        : [h.button(`Accept${of}`, 'Shift+A', () => h.decide('accepted'), true), h.button(`Fix${of}…`, 'Shift+F', () => h.fix())]),
      ...(this.final ? [] : [h.button(`Reject${of}`, 'Shift+X', () => h.decide('rejected'))]),
    );
    this.fillAbout();
    const player = h.player();
    this.list.replaceChildren(
      ...this.items.map((f, i) => {
        const remove = el('button', { type: 'button', class: 'remove', 'aria-label': `Remove remark ${i + 1}` }, '✕');
        remove.addEventListener('click', () => {
          this.items = this.items.filter((x) => x !== f);
          this.render();
          this.host.changed();
        });
        return el('li', {}, el('strong', {}, categoryNames[f.category]), ` — ${scopeName(f.scope, player)}: ${f.text} `, remove);
      }),
    );
    player.pinning?.show(itemPins(this.items));
  }

  draft(answer: Record<string, unknown> | undefined): ReviewDraft {
    return {
      review: { fixing: this.fixing, items: this.items, ...(this.attempt === undefined ? {} : { attempt: this.attempt }) },
      ...(this.fixing && answer ? { answer } : {}),
    };
  }
}
