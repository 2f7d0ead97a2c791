// lidarsegmentation: the task's point-cloud frames in 3D (three.js; lidar/view.ts), turned with the
// mouse or the keys, and a lasso that gives the points inside it the chosen label (or takes it
// off). The answer labels every point of every frame by its index in the task's `labels`, -1 for a
// point left unlabeled, in the order of the frame file's points (the contract's format). Undo and
// redo per lasso; the draft keeps the labels run-length coded (lidar/cloud.ts), so that a reload
// brings them back. The frames are read from the task's attachments (JSON, `{"points": [...]}`):
// the one shown first, then the others in the background, since the answer needs every frame's
// point count. three.js comes with the view (lidar/view.ts), a chunk of its own that the app loads
// only when a lidar task opens: the other players do without it.
import { checkAnswer } from '../../shared/answer-rules.ts';
import { isRecord } from '../../shared/json.ts';
import type { components } from '../../generated/workforce.ts';
import type { Shortcut } from '../keys.ts';
import { applyLasso, decodeLabels, encodeLabels, insideLasso, type LassoStep, readFrame, UNLABELED } from './lidar/cloud.ts';
import { Undo, undoKeys } from '../undo.ts';
import { keepFocus, ToolBar } from './toolbar.ts';
import type { CloudView, Mode } from './lidar/view.ts';
import { el, type PlayerFactory } from './types.ts';

type Params = components['schemas']['LidarSegmentationParams'];

interface Frame {
  url: string;
  positions?: Float32Array;
  labels?: Int16Array;
  /** The draft's labels of this frame, until its file is read. */
  pending?: string;
  error?: string;
  loading?: Promise<void>;
  /** Lowest and highest z, for the height shading of unlabeled points. */
  zRange?: [number, number];
}

const palette = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324', '#469990', '#808000'];
const rgb = (hex: string): [number, number, number] => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as never;
/** Points kept in memory for frames not shown (about 12 bytes each); beyond it, frames far from the shown one are read again when shown. */
const KEPT_POINTS = 4_000_000;
const ERASE = UNLABELED;
const number = (n: number) => n.toLocaleString('en-US');

export const lidarsegmentation: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Params;
  const labelNames = params.labels ?? [];
  const colours = labelNames.map((_, i) => rgb(palette[i % palette.length] as string));
  const frames: Frame[] = (params.attachments ?? []).map((url) => ({ url }));
  const history = new Undo<LassoStep>(100);
  const aborter = new AbortController();
  let current = 0;
  let chosen = labelNames.length ? 0 : ERASE;
  let onlyUnlabeled = false;
  let pointSize = 3;
  let shownColors: Uint8Array | null = null;
  let fitted = false;
  let mode: Mode = 'lasso';
  /** The view, once its chunk (three.js) is loaded. */
  let view: CloudView | undefined;

  // The draft (ours), or an earlier answer of the task (a redo): labels by frame.
  if (isRecord(draft) && isRecord(draft.coded_labels)) {
    for (const [k, v] of Object.entries(draft.coded_labels)) {
      const frame = frames[Number(k)];
      if (frame && typeof v === 'string') frame.pending = v;
    }
    if (typeof draft.frame === 'number' && frames[draft.frame]) current = draft.frame;
  } else if (isRecord(draft) && Array.isArray(draft.frames) && Array.isArray(draft.labels)) {
    const names = draft.labels as unknown[];
    for (const f of draft.frames) {
      if (!isRecord(f) || typeof f.frame !== 'number' || !Array.isArray(f.point_labels) || !frames[f.frame]) continue;
      const mapped = Int16Array.from(f.point_labels as number[], (l) => labelNames.indexOf(String(names[l] ?? '')));
      (frames[f.frame] as Frame).pending = encodeLabels(mapped);
    }
  }

  // ---- the page ------------------------------------------------------------------------------
  const labelBar = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Label' });
  const labelButtons = [...labelNames.map((name, i) => [i, name] as const), [ERASE, 'Unlabel'] as const].map(([value, name], i) => {
    const key = value === ERASE ? 'X' : i < 9 ? String(i + 1) : '';
    const swatch = el('span', { class: 'swatch', 'aria-hidden': 'true' });
    swatch.style.background = value === ERASE ? '#9a9a9a' : (palette[value % palette.length] as string);
    const b = el('button', { type: 'button', 'aria-pressed': 'false', 'data-label': String(value) }, swatch);
    if (key) b.append(el('kbd', {}, key));
    b.append(` ${name}`);
    b.addEventListener('click', () => pickLabel(value));
    keepFocus(b);
    labelBar.append(b);
    return [value, b] as const;
  });
  const toolBar = new ToolBar<Mode>(
    [
      { id: 'lasso', key: 'L', name: 'Lasso', help: 'Tool: lasso (drag around points)' },
      { id: 'view', key: 'V', name: 'Turn the view', help: 'Tool: turn the view with the mouse' },
    ],
    (m) => pickMode(m),
  );
  const onlyBox = el('input', { type: 'checkbox', id: 'lidar-only-unlabeled' });
  onlyBox.addEventListener('change', () => setOnlyUnlabeled(onlyBox.checked));
  const reset = el('button', { type: 'button' }, el('kbd', {}, '0'), ' Reset the view');
  reset.addEventListener('click', () => view?.resetView());
  keepFocus(reset);
  toolBar.element.append(
    el('span', { class: 'choice' }, onlyBox, el('label', { for: onlyBox.id }, el('kbd', {}, 'U'), ' Lasso only unlabeled points')),
    reset,
  );
  const frameBar = el('div', { class: 'inline lidar-frames', role: 'group', 'aria-label': 'Frame' });
  const previous = el('button', { type: 'button', 'aria-keyshortcuts': ',' }, el('kbd', {}, ','), ' Previous frame');
  const next = el('button', { type: 'button', 'aria-keyshortcuts': '.' }, el('kbd', {}, '.'), ' Next frame');
  const frameText = el('span', { class: 'frame-text', 'aria-live': 'polite' });
  previous.addEventListener('click', () => void show(current - 1));
  next.addEventListener('click', () => void show(current + 1));
  if (frames.length > 1) frameBar.append(previous, next);
  frameBar.prepend(frameText);
  const hint = el(
    'p',
    { class: 'muted', id: 'lidar-hint' },
    'Lasso: drag around points to give them the chosen label. Turn the view: drag (or the arrow keys); ',
    'pan: right button or Shift+drag; zoom: the wheel, + and -.',
  );
  const holder = el('div', {
    class: 'stage lidar-stage',
    role: 'application',
    tabindex: '0',
    'aria-label': 'The point cloud',
    'aria-describedby': 'lidar-hint',
  });
  const message = el('span', { class: 'message', 'aria-live': 'polite' });
  const counts = el('ul', { class: 'lidar-counts', 'aria-label': 'Points per label in this frame' });
  const sizeInput = el('input', { type: 'range', id: 'lidar-point-size', min: '1', max: '8', step: '1', value: String(pointSize) });
  sizeInput.addEventListener('input', () => setPointSize(Number(sizeInput.value)));
  container.append(
    labelBar,
    toolBar.element,
    el(
      'div',
      { class: 'image-player lidar-player' },
      el('div', { class: 'image-main' }, holder, el('p', { class: 'muted image-status lidar-status' }, frameText, message), hint),
      el(
        'div',
        { class: 'image-side' },
        frameBar,
        el('h2', {}, 'Points per label'),
        counts,
        el('label', { for: sizeInput.id }, 'Point size ', el('kbd', {}, '['), ' ', el('kbd', {}, ']')),
        sizeInput,
      ),
    ),
  );
  const say = (text: string) => {
    message.textContent = text;
  };

  // `?lidar=webgl` or `?lidar=2d` chooses the drawing; by default WebGL unless it runs in software.
  const asked = new URLSearchParams(location.search).get('lidar');
  const viewReady = import('./lidar/view.ts').then(
    ({ CloudView }) => {
      if (aborter.signal.aborted) return;
      view = new CloudView(holder, { lasso: onLasso }, asked === 'webgl' || asked === '2d' ? asked : 'auto');
      view.setMode(mode);
      view.setPointSize(pointSize);
      holder.dataset.renderer = view.fallback ? '2d' : 'webgl';
      if (view.fallback) hint.append(` Drawn in 2D: ${view.fallback}.`);
    },
    (err: unknown) => say(`The 3D view could not be loaded (${err instanceof Error ? err.message : String(err)}): reload the page.`),
  );

  // ---- frames --------------------------------------------------------------------------------
  function load(i: number): Promise<void> {
    const frame = frames[i] as Frame;
    if (frame.positions || frame.error) return Promise.resolve();
    frame.loading ??= (async () => {
      try {
        const res = await fetch(context.media(frame.url), { signal: aborter.signal, credentials: 'omit', referrerPolicy: 'no-referrer' });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        const read = readFrame(await res.json());
        if (typeof read === 'string') throw new Error(read);
        const count = read.length / 3;
        if (frame.labels && frame.labels.length !== count) throw new Error('the file changed since it was first read');
        if (!frame.labels) {
          const saved = frame.pending === undefined ? undefined : decodeLabels(frame.pending, count, labelNames.length);
          if (frame.pending !== undefined && !saved) say(`The saved labels of frame ${i + 1} do not fit its file; it starts unlabeled.`);
          frame.labels = saved ?? new Int16Array(count).fill(UNLABELED);
          delete frame.pending;
        }
        let low = Number.POSITIVE_INFINITY;
        let high = Number.NEGATIVE_INFINITY;
        for (let k = 2; k < read.length; k += 3) {
          const z = read[k] as number;
          if (z < low) low = z;
          if (z > high) high = z;
        }
        frame.zRange = [low, high];
        frame.positions = read;
        forget();
      } catch (err) {
        if (aborter.signal.aborted) return;
        frame.error = `frame ${i + 1} (${frame.url}) could not be read: ${err instanceof Error ? err.message : String(err)}`;
      } finally {
        delete frame.loading;
        renderStatus();
      }
    })();
    return frame.loading;
  }

  /** Drops the coordinates of frames far from the shown one while more than KEPT_POINTS are held (their labels stay). */
  function forget() {
    let held = frames.reduce((n, f) => n + (f.positions ? f.positions.length / 3 : 0), 0);
    const order = frames.map((_, i) => i).sort((a, b) => Math.abs(b - current) - Math.abs(a - current));
    for (const i of order) {
      if (held <= KEPT_POINTS || i === current) break;
      const f = frames[i] as Frame;
      if (!f.positions) continue;
      held -= f.positions.length / 3;
      delete f.positions;
    }
  }

  /** Shows frame `i` once it is read; `moved`: the person went there (the draft keeps the frame shown). */
  async function show(i: number, moved = true) {
    if (i < 0 || i >= frames.length) return;
    current = i;
    shownColors = null;
    renderStatus();
    await Promise.all([load(i), viewReady]);
    if (current !== i || !view) return;
    const frame = frames[i] as Frame;
    if (!frame.positions) return renderStatus();
    shownColors = paint(frame);
    view.setPoints(frame.positions, shownColors, !fitted);
    fitted = true;
    holder.setAttribute(
      'aria-label',
      `The point cloud of frame ${i + 1} of ${frames.length}: ${number(frame.positions.length / 3)} points`,
    );
    renderStatus();
    if (moved) context.changed();
  }

  /** Reads every frame (one at a time, after the shown one), so that the answer knows each frame's points. */
  async function loadAll() {
    await show(current, false);
    for (let i = 0; i < frames.length; i++) if (!aborter.signal.aborted) await load(i);
    // Frames read in the background keep their coordinates only within the budget.
    forget();
  }

  // ---- colours and counts --------------------------------------------------------------------
  function paint(frame: Frame, only?: Uint32Array, into?: Uint8Array): Uint8Array {
    const labels = frame.labels as Int16Array;
    const positions = frame.positions as Float32Array;
    const [low, high] = frame.zRange ?? [0, 1];
    const span = high - low || 1;
    const out = into ?? new Uint8Array(labels.length * 3);
    const one = (p: number) => {
      const l = labels[p] as number;
      const c = colours[l];
      if (c) {
        out[3 * p] = c[0];
        out[3 * p + 1] = c[1];
        out[3 * p + 2] = c[2];
      } else {
        // Unlabeled: grey, lighter with height, so that the shape reads in 3D.
        const g = 90 + Math.round((((positions[3 * p + 2] as number) - low) / span) * 130);
        out[3 * p] = g;
        out[3 * p + 1] = g;
        out[3 * p + 2] = g;
      }
    };
    if (only) for (const p of only) one(p);
    else for (let p = 0; p < labels.length; p++) one(p);
    return out;
  }

  function renderStatus() {
    const frame = frames[current] as Frame;
    const read = frames.filter((f) => f.labels).length;
    const parts = [`Frame ${current + 1} of ${frames.length}`];
    if (frame.error) parts.push(frame.error);
    else if (!frame.positions) parts.push('loading…');
    else parts.push(`${number(frame.positions.length / 3)} points`);
    if (read < frames.length && !frames.some((f) => f.error)) parts.push(`${read} of ${frames.length} frames read`);
    frameText.textContent = parts.join(' · ');
    previous.disabled = current === 0;
    next.disabled = current === frames.length - 1;
    for (const [value, b] of labelButtons) b.setAttribute('aria-pressed', String(value === chosen));
    toolBar.show(mode);
    onlyBox.checked = onlyUnlabeled;
    const tally = new Array<number>(labelNames.length + 1).fill(0);
    for (const l of frame.labels ?? []) tally[l + 1] = (tally[l + 1] as number) + 1;
    counts.replaceChildren(
      ...labelNames.map((name, i) =>
        el(
          'li',
          { 'data-label': String(i) },
          el('span', { class: 'swatch', style: `background:${palette[i % palette.length]}` }),
          ` ${name}: ${number(tally[i + 1] as number)}`,
        ),
      ),
      el(
        'li',
        { 'data-label': String(UNLABELED) },
        el('span', { class: 'swatch', style: 'background:#9a9a9a' }),
        ` unlabeled: ${number(tally[0] as number)}`,
      ),
    );
  }

  // ---- labelling -----------------------------------------------------------------------------
  function onLasso(polygon: Float32Array, matrix: Float32Array, width: number, height: number) {
    const frame = frames[current] as Frame;
    if (!frame.positions || !frame.labels) return;
    const labels = frame.labels;
    const inside = insideLasso(frame.positions, matrix, width, height, polygon, onlyUnlabeled ? (p) => labels[p] === UNLABELED : undefined);
    const step = applyLasso(current, labels, inside, chosen, (f) => frames[f]?.labels);
    if (step) history.push(step);
    const what = chosen === ERASE ? 'unlabeled' : `labeled ${labelNames[chosen]}`;
    if (!step) return say(inside.length ? `Those ${number(inside.length)} points were ${what} already.` : 'No point inside the lasso.');
    recolour(step.indices);
    say(`${number(step.indices.length)} points ${what}.`);
    context.changed();
  }

  function recolour(indices: Uint32Array) {
    const frame = frames[current] as Frame;
    if (shownColors && frame.positions && view) {
      paint(frame, indices, shownColors);
      view.colorsChanged();
    }
    renderStatus();
  }

  async function undoRedo(which: 'undo' | 'redo') {
    const step = history[which]();
    if (!step) return say(`Nothing to ${which}.`);
    if (step.frame !== current) await show(step.frame);
    else recolour(step.indices);
    say(`${which === 'undo' ? 'Undone' : 'Redone'}: ${number(step.indices.length)} points.`);
    context.changed();
  }

  function pickLabel(value: number) {
    if (value !== ERASE && !labelNames[value]) return;
    chosen = value;
    if (mode !== 'lasso') pickMode('lasso');
    say(value === ERASE ? 'The lasso takes labels off.' : `The lasso labels ${labelNames[value]}.`);
    renderStatus();
  }
  function pickMode(chosenMode: Mode) {
    mode = chosenMode;
    view?.setMode(mode);
    renderStatus();
  }
  function setOnlyUnlabeled(on: boolean) {
    onlyUnlabeled = on;
    say(on ? 'The lasso takes only unlabeled points.' : 'The lasso takes every point inside it.');
    renderStatus();
  }
  function setPointSize(px: number) {
    pointSize = Math.min(8, Math.max(1, px));
    sizeInput.value = String(pointSize);
    view?.setPointSize(pointSize);
  }

  const turn = Math.PI / 12;
  const shortcuts: Shortcut[] = [
    {
      keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
      label: 'Choose label 1-9 for the lasso',
      run: (e) => pickLabel(Number(e.key) - 1),
    },
    { keys: ['X'], label: 'Lasso takes labels off (unlabel)', run: () => pickLabel(ERASE) },
    ...toolBar.shortcuts,
    { keys: ['U'], label: 'Lasso only unlabeled points (on or off)', run: () => setOnlyUnlabeled(!onlyUnlabeled) },
    ...undoKeys(
      () => void undoRedo('undo'),
      () => void undoRedo('redo'),
      'Undo the last lasso',
    ),
    { keys: ['0'], label: 'Reset the view', run: () => view?.resetView() },
    {
      keys: ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'],
      label: 'Turn the view (also a drag with the view tool)',
      run: (e) =>
        view?.orbit(
          e.key === 'ArrowLeft' ? turn : e.key === 'ArrowRight' ? -turn : 0,
          e.key === 'ArrowUp' ? turn : e.key === 'ArrowDown' ? -turn : 0,
        ),
    },
    {
      keys: ['Shift+ArrowLeft', 'Shift+ArrowRight', 'Shift+ArrowUp', 'Shift+ArrowDown'],
      label: 'Pan the view (also the right button, or Shift+drag)',
      run: (e) =>
        view?.pan(
          e.key === 'ArrowLeft' ? 40 : e.key === 'ArrowRight' ? -40 : 0,
          e.key === 'ArrowUp' ? 40 : e.key === 'ArrowDown' ? -40 : 0,
        ),
    },
    { keys: ['+', '='], label: 'Zoom in (also the wheel)', run: () => view?.zoom(1.25) },
    { keys: ['-'], label: 'Zoom out', run: () => view?.zoom(0.8) },
    { keys: ['['], label: 'Smaller points', run: () => setPointSize(pointSize - 1) },
    { keys: [']'], label: 'Larger points', run: () => setPointSize(pointSize + 1) },
    { keys: [','], label: 'Previous frame', when: () => frames.length > 1, run: () => void show(current - 1) },
    { keys: ['.'], label: 'Next frame', when: () => frames.length > 1, run: () => void show(current + 1) },
  ];

  pickMode('lasso');
  renderStatus();
  void loadAll();

  return {
    shortcuts,
    getDraft() {
      const coded: Record<string, string> = {};
      frames.forEach((f, i) => {
        const saved = f.labels ? (f.labels.some((l) => l !== UNLABELED) ? encodeLabels(f.labels) : undefined) : f.pending;
        if (saved !== undefined) coded[i] = saved;
      });
      return { frame: current, coded_labels: coded };
    },
    getResponse() {
      const broken = frames.find((f) => f.error);
      if (broken) return { ok: false, problem: `The ${broken.error}. Skip the task with that reason.` };
      const unread = frames.findIndex((f) => !f.labels);
      if (unread >= 0) return { ok: false, problem: `Frame ${unread + 1} is still loading; submit once every frame is read.` };
      if (!frames.some((f) => f.labels?.some((l) => l !== UNLABELED)))
        return { ok: false, problem: 'No point has a label yet: choose a label and draw a lasso around its points.' };
      const response = {
        labels: [...labelNames],
        frames: frames.map((f, i) => ({ frame: i, point_labels: Array.from(f.labels as Int16Array) })),
      };
      // The server's own rules, so that what it would refuse is said here first.
      const [rule] = checkAnswer({ type: 'lidarsegmentation', params }, response);
      if (rule) return { ok: false, problem: rule };
      return { ok: true, response };
    },
    destroy() {
      aborter.abort();
      view?.destroy();
    },
  };
};

/** A click on a button leaves the focus where it was (the view keeps the keys). */
