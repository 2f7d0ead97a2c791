// A work session: one assignment open in the shell (working on it, or reviewing it). It shows the
// instruction, the player of the task's type (or, in review mode, the answer under review with the
// review panel, or several attempts side by side), the active time and the lease, and the task's
// actions; it keeps the draft in this browser on every change and heartbeats it to the server. The
// shell (label/main.ts) decides what the actions do and when the session ends (`stop`).
import { ActiveTime, trackActivity } from '../activity.ts';
import type { Assignment, Draft } from '../api.ts';
import { AttemptsView } from '../attempts.ts';
import { earlierReviewsNotice, itemPins, redoNotice } from '../feedback.ts';
import { instructionHtml } from '../instruction.ts';
import type { Keymap } from '../keys.ts';
import { mediaThroughServer, type MediaAddress } from '../media.ts';
import { uuidV4 } from '../players/image/uuid.ts';
import { players } from '../players/index.ts';
import { el, type Player, type PlayerContext } from '../players/types.ts';
import { asReviewDraft, ReviewPanel } from '../review.ts';
import type { TabLock } from '../tablock.ts';
import { button, fmt, main, notice, say } from './ui.ts';

export interface Work {
  assignment: Assignment;
  readonly player: Player;
  /** Review mode's remarks and decision (review assignments only). */
  readonly review: ReviewPanel | undefined;
  /** What heartbeats save: the player's draft, or in review mode the remarks and the fix. */
  draft(): Draft;
  timer: ActiveTime;
  leaseToken: string;
  /** Where the task's files load from: the assignment's media route, opened by this lease. */
  media: MediaAddress;
  leaseExpiresAt: number;
  idempotencyKey: string;
  lost: boolean;
  busy: boolean;
  /** The question open over the task (before an empty answer goes): its close, else null. */
  dialog: (() => void) | null;
  stop(): void;
}

/** What a work session asks of the shell: its keys, the tab lock, and the actions its buttons run. */
export interface WorkShell {
  keymap: Keymap;
  tabs: TabLock;
  /** The notices over the task (a refused answer, the lease lost, the remarks of a redo). */
  notices: HTMLElement;
  heartbeatMs: number;
  heartbeat(w: Work): void;
  submit(): void;
  decide(result: 'accepted' | 'fixed' | 'rejected'): void;
  askSkip(): void;
  release(): void;
  help(): void;
}

export const localDraftKey = (id: string) => `humantask.label.draft.${id}`;
/** The work on a task whose lease was lost, kept for when the task comes back to this browser. */
export const lostWorkKey = (taskId: string) => `humantask.label.lost.${taskId}`;

/** The player of the assignment's type (or a notice that this app cannot do the type yet). */
export function makePlayer(area: HTMLElement, assignment: Assignment, draft: Draft | undefined, context: PlayerContext): Player {
  const factory = players[assignment.task.type];
  if (factory) return factory(area, assignment, draft, context);
  area.append(
    notice('warn', `Tasks of type ${assignment.task.type} cannot be done in this app yet. Skip it with a reason, or release it.`),
  );
  return {
    shortcuts: [],
    getDraft: () => draft ?? {},
    getResponse: () => ({ ok: false, problem: `This app cannot answer ${assignment.task.type} tasks yet.` }),
  };
}

export function openWork(assignment: Assignment, shell: WorkShell): Work {
  const { keymap, notices: workNotices } = shell;
  const id = assignment.assignment_id;
  shell.tabs.hold(id);
  const reviewing = assignment.role === 'review';
  const local = localStorage.getItem(localDraftKey(id));
  // Work done on this task after its lease lapsed (in this browser) is newer than the server's draft.
  const lost = reviewing || local ? null : localStorage.getItem(lostWorkKey(assignment.task.task_id));
  localStorage.removeItem(lostWorkKey(assignment.task.task_id));
  // The local copy is at least as new as the server's (each heartbeat sends what was saved locally).
  const draft: Draft | undefined =
    local || lost
      ? (JSON.parse((local ?? lost) as string) as Draft)
      : (assignment.draft ?? (reviewing ? undefined : (assignment.previous_response as Draft | undefined)));
  if (lost) localStorage.setItem(localDraftKey(id), lost);
  const timer = new ActiveTime(undefined, undefined, document.visibilityState === 'visible');
  // Taking the task was input: the time spent reading it counts.
  timer.input();
  const untrack = trackActivity(timer);
  const area = el('section', { class: 'player', 'aria-label': `Task: ${assignment.task.type}${reviewing ? ' (review)' : ''}` });
  const meters = el('dl', { class: 'meters' });
  const actions = el('div', { class: 'actions', role: 'toolbar', 'aria-label': 'Task actions' });
  const media = mediaThroughServer(id, assignment.lease_token ?? '');
  const instruction = el('div', { class: 'instruction' });
  instruction.innerHTML = instructionHtml(assignment.task.instruction, media);
  const instructionPanel = el(
    'section',
    { class: 'panel', 'aria-labelledby': 'instruction-title' },
    el('h2', { id: 'instruction-title' }, 'Instruction'),
    instruction,
  );
  const side = el(
    'aside',
    { class: 'side' },
    workNotices,
    instructionPanel,
    el('section', { class: 'panel', 'aria-label': 'Time and lease' }, meters),
    el('section', { class: 'panel', 'aria-label': 'Actions' }, actions),
  );
  workNotices.replaceChildren(
    ...(lost ? [notice('good', 'Your work from when the lease on this task was lost is back: go on from it.')] : []),
  );
  main.replaceChildren(el('div', { class: 'work' }, side, area));

  let player: Player = { shortcuts: [], getDraft: () => ({}), getResponse: () => ({ ok: false, problem: '' }) };
  let dropPlayerKeys = () => {};
  let review: ReviewPanel | undefined;
  /** Review mode with several attempts: each in its own read-only player, until one is fixed. */
  let attemptsView: AttemptsView | null = null;
  const saveLocal = () => localStorage.setItem(localDraftKey(id), JSON.stringify(current.draft()));
  const clear = () => {
    dropPlayerKeys();
    if (attemptsView) attemptsView.destroy();
    else player.destroy?.();
    attemptsView = null;
    area.replaceChildren();
    area.removeAttribute('inert');
  };
  /** Shows the player on `answer`; read-only: a player that cannot show without editing is made inert. */
  const mount = (answer: Draft | undefined, readOnly: boolean) => {
    clear();
    player = makePlayer(area, assignment, answer, {
      changed: () => {
        saveLocal();
        // What was missing or refused may be mended now: its notice goes.
        for (const n of workNotices.querySelectorAll('.notice.bad')) n.remove();
        say('Unsaved changes');
      },
      activeMs: () => assignment.active_ms + timer.total,
      readOnly,
      media,
    });
    if (readOnly && !player.readOnly) area.setAttribute('inert', '');
    player.pinning?.onPick((scope) => review?.picked(scope));
    dropPlayerKeys = keymap.push(player.shortcuts);
  };

  let dropReviewKeys = () => {};
  const current: Work = {
    assignment,
    get player() {
      return player;
    },
    get review() {
      return review;
    },
    draft: () => (review ? ({ ...review.draft(review.fixing ? player.getDraft() : undefined) } as Draft) : player.getDraft()),
    timer,
    leaseToken: assignment.lease_token ?? '',
    media,
    leaseExpiresAt: Date.parse(assignment.lease_expires_at ?? '') || Date.now(),
    idempotencyKey: uuidV4(),
    lost: false,
    busy: false,
    dialog: null,
    stop() {
      clearInterval(tick);
      clearInterval(beat);
      untrack();
      clear();
      dropReviewKeys();
      shell.tabs.release();
    },
  };

  if (reviewing) {
    // Review mode: the answer under review in the player, read-only until the reviewer fixes it;
    // with several attempts, all of them side by side until the reviewer fixes the one picked.
    const saved = asReviewDraft(draft);
    const under = assignment.under_review;
    const attempts = under?.attempts && under.attempts.length > 1 ? under.attempts : null;
    let picked = attempts ? Math.min(attempts.length, saved?.review.attempt ?? under?.attempt ?? 1) : undefined;
    const answerOf = () => (attempts && picked ? attempts[picked - 1]?.response : under?.response) as Draft | undefined;
    const fixingNote = () => {
      if (picked)
        area.prepend(
          el('p', { class: 'notice good', id: 'fixing-attempt' }, `Fixing attempt ${picked}: your fix becomes the task's answer.`),
        );
    };
    const showAttempts = (list: NonNullable<typeof attempts>, at: number) => {
      clear();
      const view = new AttemptsView(area, list, under?.attempt ?? 1, at, {
        player: (box, answer) => {
          const p = makePlayer(box, assignment, answer, {
            changed: () => undefined,
            activeMs: () => assignment.active_ms + timer.total,
            readOnly: true,
            media,
          });
          if (!p.readOnly) box.setAttribute('inert', '');
          return p;
        },
        mayPick: () => {
          if (!review?.items.length) return true;
          workNotices.replaceChildren(
            notice('warn', `Your remarks are about attempt ${picked}: remove them, or send your decision on it, before you pick another.`),
          );
          return false;
        },
        picked: (n) => {
          picked = n;
          use(view);
          if (review) {
            review.attempt = n;
            review.render();
          }
          saveLocal();
          say(`Attempt ${n} picked`);
        },
        pointed: (_n, scope) => review?.picked(scope),
        button,
      });
      attemptsView = view;
      use(view);
    };
    /** The picked attempt's player is the one remarks point into; its keys and the switcher's apply. */
    const use = (view: AttemptsView) => {
      dropPlayerKeys();
      player = view.player;
      dropPlayerKeys = keymap.push([...view.shortcuts, ...player.shortcuts]);
    };
    if (attempts && picked && !saved?.review.fixing) showAttempts(attempts, picked);
    else {
      mount(saved?.review.fixing ? (saved.answer ?? answerOf()) : answerOf(), !saved?.review.fixing);
      if (saved?.review.fixing) fixingNote();
    }
    review = new ReviewPanel(
      {
        player: () => player,
        changed: () => {
          saveLocal();
          for (const n of workNotices.querySelectorAll('.notice.bad')) n.remove();
        },
        fix: () => {
          if (!review || review.fixing || current.lost) return;
          review.fixing = true;
          mount(answerOf(), false);
          fixingNote();
          review.render();
          saveLocal();
          say('Fixing: change the answer, then submit the fix (Ctrl+Enter).');
        },
        decide: (result) => shell.decide(result),
        button,
      },
      saved,
      under?.active_ms,
      picked,
      under?.final === true,
    );
    instructionPanel.after(review.element);
    // A redo under review: the remarks it was to deal with, for this reviewer to check.
    if (under?.earlier_reviews?.length) workNotices.append(earlierReviewsNotice(under.earlier_reviews, player));
    dropReviewKeys = keymap.push(review.shortcuts);
  } else {
    mount(draft, false);
    if (assignment.role === 'redo' && assignment.feedback) {
      // The reviewer's remarks: listed here, and on their shapes and fields in the player.
      const items = assignment.feedback.feedback_items ?? [];
      workNotices.append(redoNotice(items, player));
      player.pinning?.show(itemPins(items));
    }
  }

  actions.append(
    ...(reviewing ? [] : [button('Submit', 'Ctrl+Enter', () => shell.submit(), true)]),
    button('Skip…', 'Shift+S', () => shell.askSkip()),
    button('Release', 'Shift+R', () => shell.release()),
    button('Help', '?', () => shell.help()),
  );
  const baseActive = assignment.active_ms;
  const renderMeters = () => {
    const left = current.leaseExpiresAt - Date.now();
    const lease = current.lost ? 'lost' : left > 0 ? fmt(left) : 'expired — it may go to someone else';
    meters.replaceChildren(
      el('dt', {}, 'Active time'),
      el('dd', { id: 'active-time' }, fmt(baseActive + timer.total)),
      el('dt', {}, 'Lease'),
      el('dd', { id: 'lease', class: current.lost || left < 60_000 ? 'low' : '' }, lease),
    );
  };
  renderMeters();
  const tick = setInterval(() => {
    timer.tick();
    renderMeters();
  }, 1000);
  const beat = setInterval(() => {
    if (timer.active) shell.heartbeat(current);
  }, shell.heartbeatMs);
  say(`Task ${assignment.task.task_id} (${assignment.task.type}${assignment.role === 'attempt' ? '' : `, ${assignment.role}`})`);
  area.focus();
  return current;
}
