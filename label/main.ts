// The labeling app's shell: log in, take the next task, show its instruction and the player of its
// type, keep the lease with heartbeats that carry the active time and the draft, and submit, skip or
// release. Every action has a key (`?` lists them).
//
// Where things are (docs/label-app.md, "How the app is built"):
//   shell/state.ts       the states (logged out, idle, waiting, working, reviewing, lease lost) and their transitions
//   main.ts (this file)  the transitions: what each action asks the server, and which state it leads to
//   shell/login.ts, shell/work.ts, shell/lease-lost.ts, shell/training.ts, shell/dialogs.ts, shell/help.ts: the screens
//   players/             one player per task type (players/index.ts), with their keys and their undo (undo.ts)
//   keys.ts              the keymap: every shortcut, which the help lists
import { ApiError, createApi, type Assignment, type Draft } from './api.ts';
import { showHistory } from './history.ts';
import { Keymap, type Shortcut } from './keys.ts';
import { uuidV4 } from './players/image/uuid.ts';
import { el } from './players/types.ts';
import { TabLock } from './tablock.ts';
import { askSkipReason, confirmEmpty, isEmptyAnswer } from './shell/dialogs.ts';
import { Help } from './shell/help.ts';
import { showLeaseLost } from './shell/lease-lost.ts';
import { loginForm } from './shell/login.ts';
import { ShellMachine, type ShellState } from './shell/state.ts';
import { showTrainingFeedback } from './shell/training.ts';
import { button, main, notice, say, who } from './shell/ui.ts';
import { localDraftKey, openWork, type Work, type WorkShell } from './shell/work.ts';

const config = new URLSearchParams(location.search);
/** Seconds between heartbeats (the contract asks for 20 to 30; tests shorten it). */
const heartbeatMs = Math.max(1, Number(config.get('heartbeat')) || 20) * 1000;
/** Seconds the server may hold the question until work comes (the long poll; the contract allows up to 30). */
const longPollSeconds = 25;

const api = createApi();
const keymap = new Keymap();
document.addEventListener('keydown', (e) => keymap.handle(e));
const help = new Help(keymap);
/** Where the person is; each screen below is entered through a transition of it. */
const machine = new ShellMachine<Work>();
// The state is on the page too (for styles, and for whoever reads the page: `data-state`).
machine.onChange((state) => {
  main.dataset.state = state.name;
});
/** The notices over the open task (a refused answer, the lease lost, the remarks of a redo). */
const workNotices = el('div', { 'aria-live': 'polite' });

// ---- logged out -----------------------------------------------------------------------------
function showLogin(message?: string) {
  machine.go({ name: 'logged-out' });
  who.replaceChildren();
  const { form, focus } = loginForm(api, config.get('workforce'), () => void takeNext(), message);
  main.replaceChildren(form);
  focus();
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

// ---- idle: between tasks ----------------------------------------------------------------------
/** My history and figures. An open task is left as it is (its draft is kept; N resumes it). */
async function openHistory() {
  machine.go({ name: 'idle', view: 'history' });
  const back = button('Back to work', 'N', () => void takeNext(), true);
  say('My history');
  try {
    await showHistory(main, api, back);
    back.focus();
  } catch (err) {
    handleError(err, 'The history could not be fetched');
  }
}

function showIdle(...notices: HTMLElement[]) {
  machine.go({ name: 'idle', view: 'next' });
  const next = button('Take the next task', 'N', () => void takeNext(), true);
  main.replaceChildren(el('section', { class: 'idle', 'aria-label': 'No task open' }, ...notices, next));
  next.focus();
}
const idleKeys: Shortcut[] = [
  { keys: ['N'], label: 'Take the next task', when: () => !machine.work && !!api.worker(), run: () => void takeNext() },
  { keys: ['Shift+H'], label: 'My history and figures', when: () => !machine.work && !!api.worker(), run: () => void openHistory() },
];
keymap.push(idleKeys);

// ---- waiting for work -------------------------------------------------------------------------
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
  const countdown = setInterval(() => {
    left -= 1;
    if (left <= 0) void takeNext();
    else update();
  }, 1000);
  machine.alsoOnLeave(() => clearInterval(countdown));
}
keymap.push([{ keys: ['Escape'], label: 'Stop waiting for work', when: () => !help.open && machine.is('waiting'), run: () => showIdle() }]);

/**
 * Asks for the next task with the long poll: the server answers as soon as work comes (or 204 when
 * none came in `longPollSeconds`). Its Retry-After counts from when the question was asked: after a
 * held question the next goes at once; a server that answers 204 at once is asked again after it.
 * One question at a time: N pressed again while it is asked asks nothing more, so that one task is
 * never opened twice (two sessions heartbeating it).
 */
async function takeNext() {
  const now = machine.state;
  if (now.name === 'waiting' && now.asking) return;
  const ask = new AbortController();
  const waiting: ShellState<Work> & { name: 'waiting' } = { name: 'waiting', asking: ask };
  machine.go(waiting, () => ask.abort());
  showWho();
  say('Asking for the next task…');
  showWaiting();
  const asked = Date.now();
  try {
    const next = await api.next(longPollSeconds, ask.signal);
    // Stopped meanwhile (Esc, log-out, the history): the answer is not wanted.
    if (machine.state !== waiting) return;
    waiting.asking = null;
    if ('retryAfter' in next) {
      say('');
      const left = Math.ceil(next.retryAfter - (Date.now() - asked) / 1000);
      if (left > 0) showWaiting(left);
      else void takeNext();
    } else startWork(next);
  } catch (err) {
    if (machine.state !== waiting) return;
    waiting.asking = null;
    handleError(err, 'The next task could not be fetched');
  }
}

// A tab closed while it waits for work stops waiting, as Esc does (leaving the state withdraws the
// question): Chromium may keep a closed tab's connection open, and the server would lease the next
// task to a page that is gone until the lease lapsed. Back from the back/forward cache, it is idle.
addEventListener('pagehide', () => {
  if (machine.is('waiting')) showIdle();
});

function handleError(err: unknown, what: string) {
  if (err instanceof ApiError && err.status === 401) return showLogin('Your session has ended; log in again.');
  const text = err instanceof ApiError ? `${what}: ${err.message}` : `${what}: the server cannot be reached.`;
  if (machine.work) {
    say(text);
    workNotices.replaceChildren(notice('bad', text));
  } else showIdle(notice('bad', text));
}

// ---- working on an assignment (or reviewing it) -------------------------------------------------
const workShell: WorkShell = {
  keymap,
  tabs: new TabLock(takenAway),
  notices: workNotices,
  heartbeatMs,
  heartbeat: (w) => void heartbeat(w),
  submit: () => void submit(),
  decide: (result) => void decide(result),
  askSkip: () => askSkip(),
  release: () => void release(),
  help: () => help.toggle(true),
};

function startWork(assignment: Assignment) {
  // One work session at a time: whatever was shown ends here.
  machine.leave();
  if (workShell.tabs.heldElsewhere(assignment.assignment_id)) return showHeldElsewhere(assignment);
  const work = openWork(assignment, workShell);
  machine.go({ name: assignment.role === 'review' ? 'reviewing' : 'working', work }, () => {
    work.dialog?.();
    work.stop();
  });
}

/** Another tab of this browser works on the assignment: say so, and offer to take it over here. */
function showHeldElsewhere(assignment: Assignment) {
  const state: ShellState<Work> & { name: 'idle' } = { name: 'idle', view: 'held-elsewhere' };
  machine.go(state);
  const take = async () => {
    state.take = undefined;
    say('Taking the task over…');
    await workShell.tabs.takeOver(assignment.assignment_id);
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
  state.take = () => void take();
  say('Open in another tab');
  here.focus();
}
const heldOffer = () => {
  const s = machine.state;
  return s.name === 'idle' ? s.take : undefined;
};
keymap.push([{ keys: ['T'], label: 'Take the task over in this tab', when: () => !!heldOffer(), run: () => heldOffer()?.() }]);

/** This tab's task was taken over by another tab: its draft is saved for that tab, nothing more is sent. */
function takenAway(assignmentId: string) {
  const w = machine.work;
  if (!w || w.assignment.assignment_id !== assignmentId) return;
  localStorage.setItem(localDraftKey(assignmentId), JSON.stringify(w.draft()));
  // Leaving the work state stops the session.
  showHeldElsewhere(w.assignment);
  main
    .querySelector('#held-elsewhere .notice')
    ?.replaceChildren(
      `Task ${w.assignment.task.task_id} was taken over in another tab of this browser, with your work on it. Nothing more is sent from this tab; take it back here if you want to go on here.`,
    );
  say('Taken over in another tab');
}

// ---- the lease ----------------------------------------------------------------------------------
/** The 409s that end the assignment (the contract's LeaseConflict codes). */
function isLeaseEnd(err: unknown): err is ApiError {
  return (
    err instanceof ApiError && err.status === 409 && ['lease_lost', 'task_canceled', 'assignment_closed'].includes(err.code ?? 'lease_lost')
  );
}

function leaseLost(w: Work, err: ApiError) {
  w.lost = true;
  w.dialog?.();
  // A session that is not the one shown (ended meanwhile) says nothing over the current task.
  if (w !== machine.work) return w.stop();
  const next = button('Take the next task', 'N', () => void takeNext(), true);
  showLeaseLost(w, err, workNotices, next);
  // Leaving the work state stops the session (timers, heartbeats, keys).
  machine.go({ name: 'lease-lost' });
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
    if (w === machine.work) say(`Draft saved at ${new Date().toLocaleTimeString()}`);
  } catch (err) {
    w.timer.giveBack(activeMs);
    if (w !== machine.work) return;
    if (isLeaseEnd(err)) leaseLost(w, err);
    else handleError(err, 'The draft could not be saved');
  }
}

// ---- the task's actions: submit, a review's decision, skip, release -------------------------------
async function submit(emptyConfirmed = false) {
  const w = machine.work;
  if (!w || w.busy || w.lost || w.dialog) return;
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
  if (!emptyConfirmed && isEmptyAnswer(answer.response)) {
    w.dialog = confirmEmpty(
      keymap,
      () => void submit(true),
      () => {
        w.dialog = null;
      },
    );
    return;
  }
  w.busy = true;
  const activeMs = w.timer.take();
  try {
    const done = await api.submit(
      w.assignment.assignment_id,
      { lease_token: w.leaseToken, response: answer.response, active_ms: activeMs },
      w.idempotencyKey,
    );
    localStorage.removeItem(localDraftKey(w.assignment.assignment_id));
    machine.leave();
    say('Submitted');
    // A training answer is scored at once: its feedback comes before the next task.
    if (done.training?.feedback) {
      machine.go({ name: 'idle', view: 'feedback' });
      machine.alsoOnLeave(showTrainingFeedback(done, w.media, keymap, () => void takeNext()));
    } else await takeNext();
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
  const w = machine.work;
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
    machine.leave();
    say(`Review sent: ${result}`);
    await takeNext();
  } catch (err) {
    w.busy = false;
    w.timer.giveBack(activeMs);
    if (isLeaseEnd(err)) leaseLost(w, err);
    else handleError(err, 'The review was not accepted');
  }
}

function askSkip() {
  const w = machine.work;
  if (!w || w.busy || w.lost) return;
  askSkipReason(keymap, async (reason) => {
    w.busy = true;
    const activeMs = w.timer.take();
    try {
      await api.skip(w.assignment.assignment_id, { lease_token: w.leaseToken, reason, active_ms: activeMs });
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
}

async function release() {
  const w = machine.work;
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
  { keys: ['Ctrl+Enter'], label: 'Submit the answer', when: () => !!machine.work, run: () => void submit() },
  { keys: ['Shift+S'], label: 'Skip the task (asks for a reason)', when: () => !!machine.work, run: askSkip },
  { keys: ['Shift+R'], label: 'Release the task (hand it back)', when: () => !!machine.work, run: () => void release() },
]);
// The player's own keys come after these (pushed per task), so they win where both match.

if (api.worker()) void takeNext();
else showLogin();
