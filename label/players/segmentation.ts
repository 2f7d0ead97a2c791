// segmentannotation: the person paints the image so that each pixel gets one of `labels`, each
// instance of an `instance_labels` label its own class, with a brush (B), a fill of the region under
// the pointer (F) and an eraser (E); zoom and pan as in the image player (its ImageCanvas). The
// answer is the contract's SegmentAnnotationResponse with the masks as PNG data URLs made here
// (segmentation/mask.ts): a mask per label, one per painted instance, the unlabeled pixels (only
// when the task allows them), the combined image and the indexed image, with labelMapping and
// instances to match. The draft is the painted map, run-length coded.
import { Circle } from 'konva/lib/shapes/Circle';
import { Image as KImage } from 'konva/lib/shapes/Image';
import Konva from 'konva/lib/Core';
import { checkAnswer } from '../../shared/answer-rules.ts';
import { asBoolean, isRecord } from '../../shared/json.ts';
import type { Shortcut } from '../keys.ts';
import { ImageCanvas } from './image/canvas.ts';
import type { Pt } from './image/model.ts';
import { binaryPng, combinedPng, type Dirty, indexedPng, LabelMap, paintOverlay, rgb, type SegClass } from './segmentation/mask.ts';
import { el, type PlayerFactory } from './types.ts';
import { Undo, undoKeys } from '../undo.ts';
import { keepFocus, ToolBar, type ToolDef } from './toolbar.ts';

type Tool = 'brush' | 'fill' | 'eraser';
const tools: ToolDef<Tool>[] = [
  { id: 'brush', key: 'B', name: 'Brush' },
  { id: 'fill', key: 'F', name: 'Fill the region' },
  { id: 'eraser', key: 'E', name: 'Eraser' },
];
const palette = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#bfef45', '#469990', '#9a6324'];
const brushSizes = [1, 2, 3, 5, 8, 12, 20, 32, 50];
const HISTORY = 30;
/** The most characters of painting a draft carries (the contract allows 1 MB a draft). */
const DRAFT_BUDGET = 900_000;

/** A colour no class has yet: the palette first, then hues a golden angle apart (never black, which is unlabeled). */
function freshColour(taken: readonly SegClass[], seed: number): string {
  const used = new Set(taken.map((c) => c.colour));
  for (const c of palette) if (!used.has(c)) return c;
  for (let i = seed; ; i++) {
    const hue = (i * 137.508) % 360;
    const light = 45 + (i % 3) * 10;
    const c = hslHex(hue, 70, light);
    if (!used.has(c)) return c;
  }
}

function hslHex(h: number, s: number, l: number): string {
  const a = (s / 100) * Math.min(l / 100, 1 - l / 100);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const v = l / 100 - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(v * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? [...new Set(v.filter((x): x is string => typeof x === 'string'))] : []);

export const segmentation: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Record<string, unknown>;
  const labels = strings(params.labels);
  const instanceLabels = strings(params.instance_labels).filter((l) => !labels.includes(l));
  const allLabels = [...labels, ...instanceLabels];
  const allowUnlabeled = asBoolean(params.allow_unlabeled, false);
  const isInstance = (label: string) => instanceLabels.includes(label);

  /** The classes; a pixel's value is 1 + its class's index. Every label has one; instances are added as the person asks. */
  let classes: SegClass[] = [];
  for (const label of labels) classes.push({ label, colour: freshColour(classes, classes.length) });
  let map: LabelMap | null = null;
  let tool: Tool = 'brush';
  let label = allLabels[0] ?? '';
  /** The instance of each instance label that the brush paints now. */
  const instanceOf = new Map<string, number>();
  let radius = 8;
  let spaceHeld = false;
  let maskShown = true;
  let draftTooLarge = false;

  // ---- the page ------------------------------------------------------------------------------
  const toolBar = new ToolBar(tools, (t) => pickTool(t));
  const sizeOut = el('output', { class: 'brush-size', 'aria-live': 'polite' });
  const sizeLabel = el('span', { class: 'brush-size-label' }, el('kbd', {}, '['), ' ', el('kbd', {}, ']'), ' brush ', sizeOut);
  toolBar.element.append(sizeLabel);
  const labelBar = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Label' });
  const instanceBar = el('div', { class: 'seg-instances muted', 'aria-live': 'polite' });
  const holder = el('div', {
    class: 'stage',
    role: 'img',
    'aria-label': 'The image: paint it with the chosen tool and label; the wheel zooms, Space and drag pans',
  });
  const size = el('span', { class: 'image-size' }, 'Loading the image…');
  const zoomText = el('span', { class: 'zoom' });
  const message = el('span', { class: 'message', 'aria-live': 'polite' });
  const status = el('p', { class: 'muted image-status' }, size, ' · ', zoomText, ' · ', message);
  const list = el('ul', { class: 'seg-classes', 'aria-label': 'Pixels per label' });
  container.append(
    toolBar.element,
    labelBar,
    instanceBar,
    el(
      'div',
      { class: 'image-player' },
      el('div', { class: 'image-main' }, holder, status),
      el('div', { class: 'image-side' }, el('h2', {}, 'Labels'), list),
    ),
  );
  const say = (text: string) => {
    message.textContent = text;
  };

  const canvas = new ImageCanvas(holder, false, {
    begin: () => undefined,
    commit: () => undefined,
    vertexBounds: () => ({ fewest: 1, most: 1 }),
  });
  const maskLayer = new Konva.Layer({ listening: false, opacity: 0.55 });
  const cursorLayer = new Konva.Layer({ listening: false });
  const cursor = new Circle({ radius, stroke: '#fff', strokeWidth: 1, visible: false, listening: false });
  cursorLayer.add(cursor);
  canvas.stage.add(maskLayer, cursorLayer);
  const overlay = document.createElement('canvas');
  const overlayCtx = overlay.getContext('2d') as CanvasRenderingContext2D;
  let pixels: ImageData | null = null;

  const pixelValue = (c: SegClass) => classes.indexOf(c) + 1;
  /** The class the brush and the fill paint with: the label's, or the current instance's (made when first needed). */
  function paintClass(): number {
    if (!isInstance(label)) return classes.findIndex((c) => c.label === label && c.instance === undefined) + 1;
    const n = instanceOf.get(label) ?? 1;
    let c = classes.find((x) => x.label === label && x.instance === n);
    if (!c) {
      c = { label, instance: n, colour: freshColour(classes, classes.length) };
      classes.push(c);
      pixels && paintAll();
    }
    return pixelValue(c);
  }

  function redraw(dirty: Dirty) {
    if (!map || !pixels) return;
    paintOverlay(map, classes, pixels, dirty);
    overlayCtx.putImageData(pixels, 0, 0, dirty.left, dirty.top, dirty.right - dirty.left, dirty.bottom - dirty.top);
    maskLayer.batchDraw();
  }
  const paintAll = () => map && redraw({ left: 0, top: 0, right: map.width, bottom: map.height });

  function render() {
    toolBar.show(tool);
    sizeOut.textContent = `${radius * 2} px`;
    labelBar.replaceChildren(
      ...allLabels.map((l, i) => {
        const colour = classes.find((c) => c.label === l)?.colour ?? palette[i % palette.length];
        const b = el(
          'button',
          { type: 'button', 'aria-pressed': String(l === label), style: `border-left: 6px solid ${colour}` },
          i < 9 ? el('kbd', {}, String(i + 1)) : '',
          ` ${l}${isInstance(l) ? ' (instances)' : ''}`,
        );
        b.addEventListener('click', () => pickLabel(i));
        keepFocus(b);
        return b;
      }),
    );
    if (isInstance(label)) {
      const n = instanceOf.get(label) ?? 1;
      const add = el('button', { type: 'button' }, el('kbd', {}, 'I'), ' New instance');
      add.addEventListener('click', newInstance);
      keepFocus(add);
      instanceBar.replaceChildren(`Painting ${label} #${n} · `, add);
    } else instanceBar.replaceChildren();
    cursor.radius(radius);
    zoomText.textContent = `zoom ${Math.round((canvas.scale / canvas.fit) * 100)} %`;
    const counts = map?.counts(classes.length) ?? [];
    list.replaceChildren(
      ...classes.map((c, i) =>
        el(
          'li',
          { 'data-label': c.label, style: `border-left: 6px solid ${c.colour}` },
          `${c.label}${c.instance ? ` #${c.instance}` : ''}: ${counts[i + 1] ?? 0} px`,
        ),
      ),
      el('li', { 'data-label': '' }, `unlabeled: ${counts[0] ?? 0} px`),
    );
  }

  function changed() {
    render();
    context.changed();
  }

  function pickTool(t: Tool) {
    tool = t;
    say(`${toolBar.name(t)}${t === 'eraser' ? '' : `: ${label}`}`);
    render();
  }

  function pickLabel(i: number) {
    const l = allLabels[i];
    if (!l) return;
    label = l;
    if (tool === 'eraser') tool = 'brush';
    say(`${toolBar.name(tool)}: ${label}`);
    render();
  }

  function newInstance() {
    if (!isInstance(label)) return say(`${label} has no instances: only ${instanceLabels.join(', ') || 'no label'} has.`);
    const next = Math.max(0, ...classes.filter((c) => c.label === label).map((c) => c.instance ?? 0)) + 1;
    instanceOf.set(label, next);
    paintClass();
    say(`New instance: ${label} #${next}.`);
    changed();
  }

  // Undo and redo over snapshots of the mask: each stroke or fill one step.
  const history = Undo.snapshot(
    () => (map as LabelMap).data,
    (data) => {
      map?.data.set(data);
      paintAll();
    },
    (data) => data.slice(),
    HISTORY,
  );
  function record() {
    if (!map) return;
    history.record();
  }
  function restore(what: 'undo' | 'redo') {
    if (!map || !history[what]()) return say(`Nothing to ${what}.`);
    say(what === 'undo' ? 'Undone.' : 'Redone.');
    changed();
  }

  // ---- pointer -----------------------------------------------------------------------------
  let gesture: { kind: 'pan' | 'paint'; last: Pt; value: number } | null = null;
  const stageEl = canvas.stage.container();
  const imagePoint = (e: MouseEvent) => canvas.toImage(e);
  function down(e: PointerEvent) {
    if (!map) return;
    const { image, screen } = imagePoint(e);
    if (e.button === 1 || e.button === 2 || (e.button === 0 && spaceHeld)) {
      e.preventDefault();
      canvas.panning(true);
      gesture = { kind: 'pan', last: screen, value: 0 };
      return;
    }
    if (e.button !== 0) return;
    const x = Math.min(map.width - 1, Math.floor(image.x));
    const y = Math.min(map.height - 1, Math.floor(image.y));
    if (tool === 'fill') {
      const value = paintClass();
      record();
      const dirty = map.fill(x, y, value);
      if (!dirty) {
        history.forget();
        return say('That region has this label already.');
      }
      redraw(dirty);
      say(`Filled with ${label}.`);
      changed();
      return;
    }
    const value = tool === 'eraser' ? 0 : paintClass();
    record();
    gesture = { kind: 'paint', last: image, value };
    redraw(map.stroke(image, image, radius, value));
  }
  function move(e: PointerEvent) {
    const { image, screen } = imagePoint(e);
    cursor.visible(tool !== 'fill' && e.target instanceof Node && stageEl.contains(e.target));
    cursor.position(image);
    cursor.strokeWidth(1 / canvas.scale);
    cursorLayer.batchDraw();
    if (!gesture || !map) return;
    if (gesture.kind === 'pan') {
      canvas.panBy(screen.x - gesture.last.x, screen.y - gesture.last.y);
      gesture.last = screen;
      return;
    }
    redraw(map.stroke(gesture.last, image, radius, gesture.value));
    gesture.last = image;
  }
  function up() {
    if (!gesture) return;
    if (gesture.kind === 'pan') canvas.panning(false);
    else changed();
    gesture = null;
    render();
  }
  const wheel = (e: WheelEvent) => {
    e.preventDefault();
    canvas.zoom(Math.exp(-e.deltaY * 0.0015), imagePoint(e).screen);
    render();
  };
  const noMenu = (e: Event) => e.preventDefault();
  stageEl.addEventListener('pointerdown', down);
  stageEl.addEventListener('wheel', wheel, { passive: false });
  stageEl.addEventListener('contextmenu', noMenu);
  window.addEventListener('pointermove', move);
  window.addEventListener('pointerup', up);
  const spaceKey = (e: KeyboardEvent) => {
    if (e.key !== ' ' || (e.target instanceof HTMLElement && e.target.closest('input, textarea, select, button'))) return;
    e.preventDefault();
    spaceHeld = e.type === 'keydown';
    holder.style.cursor = spaceHeld ? 'grab' : 'crosshair';
  };
  document.addEventListener('keydown', spaceKey);
  document.addEventListener('keyup', spaceKey);

  // ---- the image and the draft -------------------------------------------------------------
  const image = new Image();
  image.alt = '';
  image.onload = () => {
    const maxW = Math.max(320, holder.parentElement?.clientWidth ?? container.clientWidth - 24);
    const maxH = Math.max(240, window.innerHeight - 260);
    canvas.setImage(image, maxW, maxH);
    const w = canvas.imgW;
    const h = canvas.imgH;
    map = new LabelMap(w, h);
    const saved = isRecord(draft) && isRecord(draft.segmentation) ? draft.segmentation : undefined;
    if (saved && saved.width === w && saved.height === h && Array.isArray(saved.classes)) {
      const back = saved.classes.filter(isRecord).map(
        (c): SegClass => ({
          label: String(c.label),
          colour: typeof c.colour === 'string' && /^#[0-9a-f]{6}$/.test(c.colour) ? c.colour : '#ffffff',
          ...(typeof c.instance === 'number' ? { instance: c.instance } : {}),
        }),
      );
      const restored = LabelMap.fromRuns(w, h, saved.runs);
      if (restored && back.every((c) => allLabels.includes(c.label)) && restored.data.every((v) => v <= back.length)) {
        classes = back;
        map = restored;
        for (const c of classes) if (c.instance) instanceOf.set(c.label, Math.max(instanceOf.get(c.label) ?? 0, c.instance));
        say('Your painting is back: go on.');
      }
    }
    overlay.width = w;
    overlay.height = h;
    pixels = overlayCtx.createImageData(w, h);
    maskLayer.add(new KImage({ image: overlay, width: w, height: h, listening: false }));
    paintAll();
    size.textContent = `${w} × ${h} px`;
    render();
  };
  image.onerror = () => {
    size.textContent = 'The image could not be loaded. Skip the task with a reason if it does not come back.';
    status.className = 'notice bad';
  };
  image.src = context.media(typeof params.attachment === 'string' ? params.attachment : '');
  render();

  // ---- the answer --------------------------------------------------------------------------
  function answer(): ReturnType<ReturnType<PlayerFactory>['getResponse']> {
    if (!map) return { ok: false, problem: 'The image is not loaded yet.' };
    const m = map;
    const counts = m.counts(classes.length);
    if (!allowUnlabeled && (counts[0] ?? 0) > 0)
      return {
        ok: false,
        problem: `${counts[0]} pixels are not labeled yet: every pixel needs a label in this task (F fills a region).`,
      };
    const indexes = new Map<number, number>();
    const colours = new Map<number, readonly [number, number, number]>();
    let next = 0;
    const entry = (c: SegClass) => {
      next += 1;
      indexes.set(pixelValue(c), next);
      colours.set(pixelValue(c), rgb(c.colour));
      return { color: c.colour, index: next };
    };
    const mask = (c: SegClass) => binaryPng(m, new Set([pixelValue(c)]));
    const labeled: Record<string, string | string[]> = {};
    const labelMapping: Record<string, unknown> = {};
    const instances: Record<string, number> = {};
    for (const l of labels) {
      const c = classes.find((x) => x.label === l && x.instance === undefined) as SegClass;
      labeled[l] = mask(c);
      labelMapping[l] = entry(c);
    }
    for (const l of instanceLabels) {
      const found = classes.filter((c) => c.label === l && c.instance !== undefined && (counts[pixelValue(c)] ?? 0) > 0);
      labeled[l] = found.map(mask);
      labelMapping[l] = found.map(entry);
      instances[l] = found.length;
    }
    const response = {
      annotations: {
        unlabeled: allowUnlabeled && (counts[0] ?? 0) > 0 ? binaryPng(m, new Set([0])) : null,
        labeled,
        combined: { image: combinedPng(m, colours), indexedImage: indexedPng(m, indexes) },
      },
      labelMapping,
      instances,
    };
    const [rule] = checkAnswer({ type: 'segmentannotation', params }, response);
    if (rule) return { ok: false, problem: rule };
    return { ok: true, response: response as never };
  }

  const noDialog = () => !document.querySelector('.overlay:not([hidden])');
  const resize = (step: number) => {
    const i = brushSizes.indexOf(radius);
    radius = brushSizes[Math.min(brushSizes.length - 1, Math.max(0, (i < 0 ? 4 : i) + step))] as number;
    say(`Brush ${radius * 2} px.`);
    render();
  };
  const zoom = (factor: number) => {
    if (factor) canvas.zoom(factor);
    else canvas.view(canvas.fit, 0, 0);
    render();
  };
  const shortcuts: Shortcut[] = [
    ...toolBar.shortcuts,
    { keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'], label: 'Choose label 1-9', run: (e) => pickLabel(Number(e.key) - 1) },
    { keys: ['I'], label: 'New instance of the chosen instance label', run: newInstance },
    { keys: ['['], label: 'Smaller brush', run: () => resize(-1) },
    { keys: [']'], label: 'Larger brush', run: () => resize(1) },
    ...undoKeys(
      () => restore('undo'),
      () => restore('redo'),
    ),
    { keys: ['+', '='], label: 'Zoom in (also the wheel)', run: () => zoom(1.25) },
    { keys: ['-'], label: 'Zoom out', run: () => zoom(0.8) },
    { keys: ['0'], label: 'Fit the image', run: () => zoom(0) },
    { keys: ['Space'], label: 'Hold and drag to pan (also the middle button)', run: () => undefined },
    {
      keys: ['H'],
      label: 'Hide or show the painted labels',
      when: noDialog,
      run: () => {
        maskShown = !maskShown;
        maskLayer.visible(maskShown);
        say(maskShown ? 'Labels shown.' : 'Labels hidden (H shows them).');
      },
    },
  ];

  return {
    shortcuts,
    getDraft: () => {
      if (!map) return isRecord(draft) ? draft : {};
      const runs = map.toRuns();
      // A draft is at most 1 MB (the contract): a painting too detailed for that is not kept in it.
      if (runs.length > DRAFT_BUDGET) {
        if (!draftTooLarge) say('The painting is too detailed to be saved as a draft: submit it before you leave.');
        draftTooLarge = true;
        return { segmentation: { width: map.width, height: map.height, tooLarge: true } };
      }
      draftTooLarge = false;
      return {
        segmentation: {
          width: map.width,
          height: map.height,
          classes: classes.map((c) => ({ label: c.label, colour: c.colour, ...(c.instance ? { instance: c.instance } : {}) })),
          runs,
        },
      };
    },
    getResponse: answer,
    destroy() {
      stageEl.removeEventListener('pointerdown', down);
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      document.removeEventListener('keydown', spaceKey);
      document.removeEventListener('keyup', spaceKey);
      canvas.destroy();
    },
  };
};
