// The labeling app's shell: log in, take the next task, show its instruction and the player of its
// type, keep the lease with heartbeats that carry the active time and the draft, and submit, skip or
// release. Every action has a key (`?` lists them).
import { ActiveTime, trackActivity } from './activity.ts';
import { ApiError, createApi, type Assignment, type Draft } from './api.ts';
import { differencePins, earlierReviewsNotice, itemPins, redoNotice, trainingSummary } from './feedback.ts';
import { showHistory } from './history.ts';
import { instructionHtml } from './instruction.ts';
import { Keymap, type Shortcut } from './keys.ts';
import { mediaThroughServer, type MediaAddress } from './media.ts';
import { players } from './players/index.ts';
import { el, type Player, type PlayerContext } from './players/types.ts';
import { uuidV4 } from './players/imageannotation.ts';
import { asReviewDraft, ReviewPanel } from './review.ts';
import { AttemptsView } from './attempts.ts';
import { TabLock } from './tablock.ts';

const config = new URLSearchParams(location.search);
/** Seconds between heartbeats (the contract asks for 20 to 30; tests shorten it). */
const heartbeatMs = Math.max(1, Number(config.get('heartbeat')) || 20) * 1000;

const api = createApi();
const keymap = new Keymap();
const main = document.getElementById('app') as HTMLElement;
const statusLine = document.getElementById('status') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;
document.addEventListener('keydown', (e) => keymap.handle(e));

interface Work {
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
  stop(): void;
}
let work: Work | null = null;
let retryTimer: ReturnType<typeof setInterval> | null = null;
/**
 * The question for work in flight (a long poll), one at a time: N pressed again while it is asked
 * asks nothing more, so that one task is never opened twice (two sessions heartbeating it).
 */
let asking: AbortController | null = null;
/** Seconds the server may hold the question until work comes (the long poll; the contract allows up to 30). */
const longPollSeconds = 25;

const localDraftKey = (id: string) => `humantask.label.draft.${id}`;
/** The work on a task whose lease was lost, kept for when the task comes back to this browser. */
const lostWorkKey = (taskId: string) => `humantask.label.lost.${taskId}`;
const fmt = (ms: number) => {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h ? 2 : 1, '0');
  return `${h ? `${h}:` : ''}${mm}:${String(s % 60).padStart(2, '0')}`;
};
const say = (text: string) => {
  statusLine.textContent = text;
};
function notice(kind: 'good' | 'warn' | 'bad', text: string): HTMLElement {
  return el('p', { class: `notice ${kind}`, role: kind === 'bad' ? 'alert' : 'status' }, text);
}
function button(label: string, key: string, run: () => void, primary = false): HTMLButtonElement {
  const b = el(
    'button',
    { type: 'button', class: primary ? 'primary' : '', 'aria-keyshortcuts': key.replace('Ctrl', 'Control') },
    `${label} `,
    el('kbd', {}, key),
  );
  b.addEventListener('click', run);
  return b;
}

// ---- help overlay ---------------------------------------------------------------------------
const help = el('div', { class: 'overlay', hidden: '', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'help-title' });
document.body.append(help);
function toggleHelp(show = help.hidden) {
  if (!show) {
    help.hidden = true;
    return;
  }
  const close = el('button', { type: 'button' }, 'Close ', el('kbd', {}, 'Esc'));
  close.addEventListener('click', () => toggleHelp(false));
  const rows = keymap
    .active()
    .map((s) => el('tr', {}, el('td', {}, ...s.keys.flatMap((k, i) => [i ? ' ' : '', el('kbd', {}, k)])), el('td', {}, s.label)));
  help.replaceChildren(
    el('div', { class: 'dialog' }, el('h2', { id: 'help-title' }, 'Keyboard shortcuts'), el('table', {}, el('tbody', {}, ...rows)), close),
  );
  help.hidden = false;
  close.focus();
}
keymap.push([
  { keys: ['?'], label: 'Show or hide this help', run: () => toggleHelp() },
  { keys: ['Escape'], label: 'Close the help', when: () => !help.hidden, run: () => toggleHelp(false) },
]);

// ---- log in -------------------------------------------------------------------------------
function showLogin(message?: string) {
  stopWork();
  who.replaceChildren();
  const email = el('input', { id: 'email', type: 'email', autocomplete: 'username', required: '' });
  const password = el('input', { id: 'password', type: 'password', autocomplete: 'current-password', required: '' });
  // One address may belong to several workforces (the operator's, customers' own): the link a
  // workforce gives its workers names it (`?workforce=wkf_...`), and the field appears when the
  // server asks which one (409 workforce_required).
  const workforce = el('input', { id: 'workforce', autocomplete: 'off', value: config.get('workforce') ?? '' });
  const workforceField = el(
    'div',
    { class: 'workforce' },
    el('label', { for: 'workforce' }, 'Workforce'),
    workforce,
    el('p', { class: 'hint' }, 'The workforce id from the link your workforce gave you (wkf_...), or "operator".'),
  );
  workforceField.hidden = !workforce.value;
  const error = el('p', { class: 'error', role: 'alert' }, message ?? '');
  const form = el(
    'form',
    { class: 'login', 'aria-labelledby': 'login-title' },
    el('h2', { id: 'login-title' }, 'Log in'),
    el('label', { for: 'email' }, 'E-mail address'),
    email,
    el('label', { for: 'password' }, 'Password'),
    password,
    workforceField,
    error,
    el('button', { type: 'submit', class: 'primary' }, 'Log in'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    try {
      await api.login(email.value, password.value, workforce.value.trim() || undefined);
      void takeNext();
    } catch (err) {
      error.textContent = err instanceof ApiError ? err.message : 'The server cannot be reached.';
      if (err instanceof ApiError && err.code === 'workforce_required') {
        workforceField.hidden = false;
        workforce.focus();
      }
    }
  });
  main.replaceChildren(form);
  email.focus();
  say('');
}

function showWho() {
  const worker = api.worker();
  if (!worker) return;
  const out = el('button', { type: 'button' }, 'Log out');
  out.addEventListener('click', async () => {
    await api.logout().catch(() => undefined);
    showLogin();
  });
  const mine = el('button', { type: 'button', 'aria-keyshortcuts': 'Shift+H' }, 'My history ', el('kbd', {}, 'Shift+H'));
  mine.addEventListener('click', () => void openHistory());
  who.replaceChildren(`${worker.display_name ?? worker.email} `, mine, ' ', out);
}

/** My history and figures. An open task is left as it is (its draft is kept; N resumes it). */
async function openHistory() {
  stopWork();
  const back = button('Back to work', 'N', () => void takeNext(), true);
  say('My history');
  try {
    await showHistory(main, api, back);
    back.focus();
  } catch (err) {
    handleError(err, 'The history could not be fetched');
  }
}

// ---- no work / between tasks ----------------------------------------------------------------
function showIdle(...notices: HTMLElement[]) {
  stopWork();
  const next = button('Take the next task', 'N', () => void takeNext(), true);
  main.replaceChildren(el('section', { class: 'idle', 'aria-label': 'No task open' }, ...notices, next));
  next.focus();
}
const idleKeys: Shortcut[] = [
  { keys: ['N'], label: 'Take the next task', when: () => !work && !!api.worker(), run: () => void takeNext() },
  { keys: ['Shift+H'], label: 'My history and figures', when: () => !work && !!api.worker(), run: () => void openHistory() },
];
keymap.push(idleKeys);

/** The waiting screen: while the server holds the question (`seconds` undefined), or until it is asked again. */
function showWaiting(seconds?: number) {
  let left = seconds ?? 0;
  const text = el('p', { class: 'notice warn', role: 'status', id: 'waiting' });
  const update = () => {
    text.textContent =
      seconds === undefined
        ? 'Nothing to do right now: the next task shows here as soon as there is one.'
        : `Nothing to do right now. Asking again in ${left} s.`;
  };
  update();
  const stop = button('Stop waiting', 'Esc', () => showIdle());
  main.replaceChildren(el('section', { class: 'idle', 'aria-label': 'Waiting for work' }, text, stop));
  if (seconds === undefined) return;
  retryTimer = setInterval(() => {
    left -= 1;
    if (left <= 0) void takeNext();
    else update();
  }, 1000);
}
keymap.push([
  {
    keys: ['Escape'],
    label: 'Stop waiting for work',
    when: () => help.hidden && !work && (!!asking || !!retryTimer),
    run: () => showIdle(),
  },
]);

/**
 * Asks for the next task with the long poll: the server answers as soon as work comes (or 204 when
 * none came in `longPollSeconds`). Its Retry-After counts from when the question was asked: after a
 * held question the next goes at once; a server that answers 204 at once is asked again after it.
 */
async function takeNext() {
  if (asking) return;
  stopWork();
  showWho();
  const ask = new AbortController();
  asking = ask;
  say('Asking for the next task…');
  showWaiting();
  const asked = Date.now();
  try {
    const next = await api.next(longPollSeconds, ask.signal);
    if (asking !== ask) return;
    asking = null;
    if ('retryAfter' in next) {
      say('');
      const left = Math.ceil(next.retryAfter - (Date.now() - asked) / 1000);
      if (left > 0) showWaiting(left);
      else void takeNext();
    } else startWork(next);
  } catch (err) {
    // Stopped meanwhile (Esc, log-out, the history): the answer is not wanted.
    if (asking !== ask) return;
    asking = null;
    handleError(err, 'The next task could not be fetched');
  }
}

function handleError(err: unknown, what: string) {
  if (err instanceof ApiError && err.status === 401) return showLogin('Your session has ended; log in again.');
  const text = err instanceof ApiError ? `${what}: ${err.message}` : `${what}: the server cannot be reached.`;
  if (work) {
    say(text);
    workNotices.replaceChildren(notice('bad', text));
  } else showIdle(notice('bad', text));
}

// ---- working on an assignment -----------------------------------------------------------------
const workNotices = el('div', { 'aria-live': 'polite' });
/** A player shown outside work (the training feedback view), with its keys. */
let shown: { player: Player; drop(): void } | null = null;
/** The "take over here" action while the task is open in another tab of this browser. */
let offer: (() => void) | null = null;
/** The keys of a view outside work (the training feedback's). */
let viewKeys: (() => void) | null = null;

/** The player of the assignment's type (or a notice that this app cannot do the type yet). */
function makePlayer(area: HTMLElement, assignment: Assignment, draft: Draft | undefined, context: PlayerContext): Player {
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

function startWork(assignment: Assignment) {
  // One work session at a time: whatever was shown ends here.
  stopWork();
  const id = assignment.assignment_id;
  if (tabs.heldElsewhere(id)) return showHeldElsewhere(assignment);
  tabs.hold(id);
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
    stop() {
      clearInterval(tick);
      clearInterval(beat);
      untrack();
      clear();
      dropReviewKeys();
      tabs.release();
    },
  };
  work = current;

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
        decide: (result) => void decide(result),
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
    ...(reviewing ? [] : [button('Submit', 'Ctrl+Enter', () => void submit(), true)]),
    button('Skip…', 'Shift+S', () => askSkip()),
    button('Release', 'Shift+R', () => void release()),
    button('Help', '?', () => toggleHelp(true)),
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
    if (timer.active) void heartbeat(current);
  }, heartbeatMs);
  say(`Task ${assignment.task.task_id} (${assignment.task.type}${assignment.role === 'attempt' ? '' : `, ${assignment.role}`})`);
  area.focus();
}

/** Another tab of this browser works on the assignment: say so, and offer to take it over here. */
function showHeldElsewhere(assignment: Assignment) {
  stopWork();
  const take = async () => {
    offer = null;
    say('Taking the task over…');
    await tabs.takeOver(assignment.assignment_id);
    startWork(assignment);
  };
  const here = button('Take over here', 'T', () => void take(), true);
  main.replaceChildren(
    el(
      'section',
      { class: 'idle', 'aria-label': 'Task open in another tab', id: 'held-elsewhere' },
      notice(
        'warn',
        `Task ${assignment.task.task_id} is open in another tab of this browser, which holds its lease. Work on it there, or take it over here: the work done there comes along.`,
      ),
      here,
    ),
  );
  offer = () => void take();
  say('Open in another tab');
  here.focus();
}

/** This tab's task was taken over by another tab: its draft is saved for that tab, nothing more is sent. */
function takenAway(assignmentId: string) {
  const w = work;
  if (!w || w.assignment.assignment_id !== assignmentId) return;
  localStorage.setItem(localDraftKey(assignmentId), JSON.stringify(w.draft()));
  const assignment = w.assignment;
  w.stop();
  work = null;
  showHeldElsewhere(assignment);
  main
    .querySelector('#held-elsewhere .notice')
    ?.replaceChildren(
      `Task ${assignment.task.task_id} was taken over in another tab of this browser, with your work on it. Nothing more is sent from this tab; take it back here if you want to go on here.`,
    );
  say('Taken over in another tab');
}
const tabs = new TabLock(takenAway);

keymap.push([{ keys: ['T'], label: 'Take the task over in this tab', when: () => !!offer, run: () => offer?.() }]);

function stopWork() {
  confirming?.();
  if (retryTimer) clearInterval(retryTimer);
  retryTimer = null;
  asking?.abort();
  asking = null;
  offer = null;
  work?.stop();
  work = null;
  shown?.drop();
  shown = null;
  viewKeys?.();
  viewKeys = null;
}

/** The 409s that end the assignment (the contract's LeaseConflict codes). */
function isLeaseEnd(err: unknown): err is ApiError {
  return (
    err instanceof ApiError && err.status === 409 && ['lease_lost', 'task_canceled', 'assignment_closed'].includes(err.code ?? 'lease_lost')
  );
}

function leaseLost(w: Work, err: ApiError) {
  w.lost = true;
  confirming?.();
  // A session that is not the one shown (ended meanwhile) says nothing over the current task.
  if (w !== work) return w.stop();
  const what =
    err.code === 'task_canceled'
      ? 'The customer canceled this task.'
      : err.code === 'assignment_closed'
        ? 'This assignment is already closed.'
        : 'Your lease on this task was lost: the task may be with another worker now.';
  const next = button('Take the next task', 'N', () => void takeNext(), true);
  // The work as it is now (also what was done after the last heartbeat): kept in this browser for
  // when the task comes back here, and offered as a file.
  const saved = JSON.stringify(w.draft());
  if (w.assignment.role !== 'review') localStorage.setItem(lostWorkKey(w.assignment.task.task_id), saved);
  const download = el(
    'a',
    {
      class: 'button',
      id: 'download-work',
      href: URL.createObjectURL(new Blob([saved], { type: 'application/json' })),
      download: `task-${w.assignment.task.task_id}-my-work.json`,
    },
    'Download my work',
  );
  workNotices.replaceChildren(
    el(
      'div',
      { class: 'notice bad', role: 'alert', id: 'lease-lost' },
      el('strong', {}, what),
      ' ',
      err.message,
      ' Your work on it cannot be saved or submitted any more. It stays shown here, and in this browser: if the task comes back to you here, it opens with this work. Download it to keep a copy.',
    ),
    download,
    ' ',
    next,
  );
  main.querySelector('.player')?.setAttribute('inert', '');
  const lease = main.querySelector('#lease');
  if (lease) lease.textContent = 'lost';
  main.querySelectorAll<HTMLButtonElement>('.actions button').forEach((b) => {
    b.disabled = true;
  });
  w.stop();
  work = null;
  say('Lease lost');
  next.focus();
}

async function heartbeat(w: Work) {
  if (w.lost || w.busy) return;
  const activeMs = w.timer.take();
  try {
    const res = await api.heartbeat(w.assignment.assignment_id, {
      lease_token: w.leaseToken,
      active_ms: activeMs,
      draft: w.draft(),
    });
    w.leaseExpiresAt = Date.parse(res.lease_expires_at) || w.leaseExpiresAt;
    if (w === work) say(`Draft saved at ${new Date().toLocaleTimeString()}`);
  } catch (err) {
    w.timer.giveBack(activeMs);
    if (w !== work) return;
    if (isLeaseEnd(err)) leaseLost(w, err);
    else handleError(err, 'The draft could not be saved');
  }
}

/**
 * Whether an answer holds nothing the person gave: no shape, label, span, text or choice (every list
 * empty, every text blank). The time a datacollection answer carries is measured, not given.
 */
function isEmptyAnswer(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.every(isEmptyAnswer);
  if (typeof value === 'object') return Object.entries(value).every(([key, v]) => key === 'time_spent_in_seconds' || isEmptyAnswer(v));
  return typeof value === 'string' && value.trim() === '';
}

/** The question before an empty answer goes: Enter (or the button) submits it, Escape goes back to the task. */
let confirming: (() => void) | null = null;
function confirmEmpty(go: () => void) {
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
    confirming = null;
    dropKeys();
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
  confirming = close;
  back.focus();
}

async function submit(emptyConfirmed = false) {
  const w = work;
  if (!w || w.busy || w.lost || confirming) return;
  if (w.review) {
    if (w.review.fixing) return decide('fixed');
    workNotices.replaceChildren(notice('warn', 'Decide the review: accept (Shift+A), fix (Shift+F) or reject (Shift+X).'));
    return;
  }
  const answer = w.player.getResponse();
  if (!answer.ok) {
    workNotices.replaceChildren(notice('bad', answer.problem));
    return;
  }
  if (!emptyConfirmed && isEmptyAnswer(answer.response)) return confirmEmpty(() => void submit(true));
  w.busy = true;
  const activeMs = w.timer.take();
  try {
    const done = await api.submit(
      w.assignment.assignment_id,
      { lease_token: w.leaseToken, response: answer.response, active_ms: activeMs },
      w.idempotencyKey,
    );
    localStorage.removeItem(localDraftKey(w.assignment.assignment_id));
    stopWork();
    say('Submitted');
    // A training answer is scored at once: its feedback comes before the next task.
    if (done.training?.feedback) showTrainingFeedback(done, w.media);
    else await takeNext();
  } catch (err) {
    w.busy = false;
    w.timer.giveBack(activeMs);
    // A refused answer is final for its key: the corrected one goes with a new key (the same key with
    // another body is a 409). Lost in transit or a server error: the retry keeps the key, so that an
    // answer that did arrive is not taken twice.
    if (err instanceof ApiError && err.status < 500) w.idempotencyKey = uuidV4();
    if (isLeaseEnd(err)) leaseLost(w, err);
    else handleError(err, 'The answer was not accepted');
  }
}

/** Sends the review's decision: accepted, fixed (with the player's answer) or rejected (with remarks). */
async function decide(result: 'accepted' | 'fixed' | 'rejected') {
  const w = work;
  const review = w?.review;
  if (!w || !review || w.busy || w.lost) return;
  const items = review.items;
  if (result === 'rejected' && !items.length) {
    workNotices.replaceChildren(
      notice(
        'bad',
        'Say what is wrong first: add at least one remark (about the whole answer, or click a shape or field to pin it there).',
      ),
    );
    main.querySelector<HTMLElement>('#remark-text')?.focus();
    return;
  }
  let response: Draft | undefined;
  if (result === 'fixed') {
    const answer = w.player.getResponse();
    if (!answer.ok) {
      workNotices.replaceChildren(notice('bad', answer.problem));
      return;
    }
    response = answer.response as Draft;
  }
  w.busy = true;
  const activeMs = w.timer.take();
  try {
    await api.review(w.assignment.assignment_id, {
      lease_token: w.leaseToken,
      result,
      ...(response ? { response } : {}),
      ...(review.attempt === undefined ? {} : { attempt: review.attempt }),
      feedback_items: items,
      active_ms: activeMs,
    });
    localStorage.removeItem(localDraftKey(w.assignment.assignment_id));
    stopWork();
    say(`Review sent: ${result}`);
    await takeNext();
  } catch (err) {
    w.busy = false;
    w.timer.giveBack(activeMs);
    if (isLeaseEnd(err)) leaseLost(w, err);
    else handleError(err, 'The review was not accepted');
  }
}

/**
 * After a training answer: its score and what differed, pinned on the answer shown read-only. The
 * task's files come from the addresses the work used (the browser kept them: the lease has ended).
 */
function showTrainingFeedback(done: Assignment, media: MediaAddress) {
  const training = done.training;
  const feedback = training?.feedback;
  if (!training || !feedback) return;
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
  const next = button('Take the next task', 'N', () => void takeNext(), true);
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
}

function askSkip() {
  const w = work;
  if (!w || w.busy || w.lost) return;
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
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!reason.value.trim()) {
      error.textContent = 'Give a reason.';
      return;
    }
    close();
    w.busy = true;
    const activeMs = w.timer.take();
    try {
      await api.skip(w.assignment.assignment_id, { lease_token: w.leaseToken, reason: reason.value.trim(), active_ms: activeMs });
      localStorage.removeItem(localDraftKey(w.assignment.assignment_id));
      say('Skipped');
      await takeNext();
    } catch (err) {
      w.busy = false;
      w.timer.giveBack(activeMs);
      if (isLeaseEnd(err)) leaseLost(w, err);
      else handleError(err, 'The task could not be skipped');
    }
  });
  document.body.append(overlay);
  reason.focus();
}

async function release() {
  const w = work;
  if (!w || w.busy || w.lost) return;
  w.busy = true;
  const activeMs = w.timer.take();
  try {
    // The draft goes with a last heartbeat, so that the task comes back with it.
    await api.heartbeat(w.assignment.assignment_id, { lease_token: w.leaseToken, active_ms: activeMs, draft: w.draft() });
    await api.release(w.assignment.assignment_id, { lease_token: w.leaseToken });
    showIdle(notice('good', 'Released: the task went back to the queue, with your draft.'));
    say('Released');
  } catch (err) {
    w.busy = false;
    if (isLeaseEnd(err)) leaseLost(w, err);
    else handleError(err, 'The task could not be released');
  }
}

keymap.push([
  { keys: ['Ctrl+Enter'], label: 'Submit the answer', when: () => !!work, run: () => void submit() },
  { keys: ['Shift+S'], label: 'Skip the task (asks for a reason)', when: () => !!work, run: askSkip },
  { keys: ['Shift+R'], label: 'Release the task (hand it back)', when: () => !!work, run: () => void release() },
]);
// The player's own keys come after these (pushed per task), so they win where both match.

if (api.worker()) void takeNext();
else showLogin();
