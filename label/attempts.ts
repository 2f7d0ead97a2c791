// Review mode with several attempts (a task of overlap > 1 whose workers disagreed): every attempt
// side by side, each in its own read-only player, named by its number (the authors are not named).
// The reviewer picks the attempt to decide about: the one accepted, fixed or rejected (the review
// request's `attempt`). Three fit side by side at 1280 × 800; with more, a switcher shows them three
// at a time (all stay mounted, so that a pick and its pins survive switching).
import type { Draft } from './api.ts';
import type { Shortcut } from './keys.ts';
import { el, type PinScope, type Player } from './players/types.ts';

/** At most this many attempts side by side. */
const perView = 3;

const references = ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls'];

/**
 * Players name their elements as if alone on the page (ids, label `for`, radio groups by `name`):
 * each attempt's copies get the attempt's prefix, so that a label, a radio group and a click stay
 * within their attempt. Elements a player adds later (after its image loads) are renamed as they come.
 */
function scopeNames(box: HTMLElement, prefix: string): () => void {
  const rename = (root: Element) => {
    for (const e of [root, ...root.querySelectorAll('[id], [name], [for], [aria-labelledby], [aria-describedby], [aria-controls]')]) {
      if (e.id && !e.id.startsWith(prefix)) e.id = prefix + e.id;
      const name = e.getAttribute('name');
      if (name && !name.startsWith(prefix)) e.setAttribute('name', prefix + name);
      for (const attr of references) {
        const v = e.getAttribute(attr);
        if (v)
          e.setAttribute(
            attr,
            v
              .split(/\s+/)
              .map((t) => (t.startsWith(prefix) ? t : prefix + t))
              .join(' '),
          );
      }
    }
  };
  rename(box);
  const watch = new MutationObserver((changes) => {
    for (const c of changes) for (const n of c.addedNodes) if (n instanceof Element) rename(n);
  });
  watch.observe(box, { childList: true, subtree: true });
  return () => watch.disconnect();
}

export interface AttemptShown {
  response: unknown;
  active_ms?: number;
}

export interface AttemptsHost {
  /** Makes attempt `n`'s read-only player in `box` on its answer. */
  player(box: HTMLElement, answer: Draft | undefined, n: number): Player;
  /** Whether the pick may move to attempt `n` (false: it stays, the host said why). */
  mayPick(n: number): boolean;
  /** The pick moved to attempt `n` (its player is the current one). */
  picked(n: number): void;
  /** A part of attempt `n` was clicked (a shape, a field). */
  pointed(n: number, scope: PinScope): void;
  button(label: string, key: string, run: () => void, primary?: boolean): HTMLButtonElement;
}

export class AttemptsView {
  readonly shortcuts: Shortcut[];
  private readonly players: Player[] = [];
  private readonly unwatch: (() => void)[] = [];
  private readonly columns: HTMLElement[] = [];
  private readonly pickButtons: HTMLButtonElement[] = [];
  private readonly pages = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Attempts shown' });
  private page = 0;

  constructor(
    area: HTMLElement,
    attempts: AttemptShown[],
    /** The attempt the server gave to review (closest to the others). */
    proposed: number,
    public current: number,
    private readonly host: AttemptsHost,
  ) {
    const grid = el('div', { class: 'attempts compare', style: `--columns: ${Math.min(attempts.length, perView)}` });
    const intro = el(
      'p',
      { class: 'muted', id: 'attempts-intro' },
      `${attempts.length} workers attempted this task and disagreed. Compare their answers, pick the one to decide about (Shift+P picks the next), then accept it, fix it or reject it with remarks on its parts.`,
    );
    area.append(intro, this.pages, grid);
    for (const [i, attempt] of attempts.entries()) {
      const n = i + 1;
      const pick = host.button(`Pick attempt ${n}`, '', () => this.pick(n));
      pick.querySelector('kbd')?.remove();
      pick.removeAttribute('aria-keyshortcuts');
      pick.setAttribute('aria-pressed', 'false');
      this.pickButtons.push(pick);
      const box = el('div', { class: 'attempt-player' });
      const about = [
        n === proposed ? 'closest to the others' : '',
        attempt.active_ms ? `${Math.round(attempt.active_ms / 1000)} s of work` : '',
      ];
      const column = el(
        'section',
        { class: 'attempt', 'aria-labelledby': `attempt-${n}-title`, 'data-attempt': String(n) },
        el(
          'header',
          { class: 'attempt-head' },
          el('h3', { id: `attempt-${n}-title` }, `Attempt ${n}`),
          el('span', { class: 'muted' }, about.filter(Boolean).join(', ')),
          pick,
        ),
        box,
      );
      grid.append(column);
      this.columns.push(column);
      const player = host.player(box, attempt.response as Draft | undefined, n);
      this.unwatch.push(scopeNames(box, `attempt${n}-`));
      player.pinning?.onPick((scope) => {
        if (n !== this.current && !this.pick(n)) return;
        host.pointed(n, scope);
      });
      this.players.push(player);
    }
    const pageCount = Math.ceil(attempts.length / perView);
    if (pageCount > 1)
      for (let p = 0; p < pageCount; p++) {
        const first = p * perView + 1;
        const last = Math.min(attempts.length, first + perView - 1);
        const b = el(
          'button',
          { type: 'button', 'aria-pressed': 'false' },
          first === last ? `Attempt ${first}` : `Attempts ${first}–${last}`,
        );
        b.addEventListener('click', () => this.show(p));
        this.pages.append(b);
      }
    else this.pages.hidden = true;
    this.shortcuts = [
      {
        keys: ['Shift+P'],
        label: 'Review: pick the next attempt',
        run: () => this.pick((this.current % attempts.length) + 1),
      },
    ];
    this.mark();
    this.show(Math.floor((this.current - 1) / perView));
  }

  /** The picked attempt's player. */
  get player(): Player {
    return this.players[this.current - 1] as Player;
  }

  /** Moves the pick to attempt `n` (and the view to it); false when the host keeps it where it is. */
  pick(n: number): boolean {
    if (n === this.current) return true;
    if (!this.host.mayPick(n)) return false;
    this.player.pinning?.show([]);
    this.current = n;
    this.mark();
    this.show(Math.floor((n - 1) / perView));
    this.host.picked(n);
    return true;
  }

  private mark() {
    for (const [i, column] of this.columns.entries()) {
      const on = i + 1 === this.current;
      column.classList.toggle('picked', on);
      const b = this.pickButtons[i] as HTMLButtonElement;
      b.setAttribute('aria-pressed', String(on));
      b.firstChild!.textContent = on ? `Attempt ${i + 1} picked ` : `Pick attempt ${i + 1} `;
    }
  }

  private show(page: number) {
    this.page = page;
    for (const [i, column] of this.columns.entries()) column.hidden = Math.floor(i / perView) !== this.page;
    for (const [p, b] of [...this.pages.children].entries()) b.setAttribute('aria-pressed', String(p === this.page));
  }

  destroy() {
    for (const stop of this.unwatch) stop();
    for (const p of this.players) p.destroy?.();
  }
}
