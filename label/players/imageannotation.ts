// imageannotation, boxes: drag on the image to draw a box with the current label; click a box to
// select it, drag to move it, pull its handles to resize; Delete removes it, Ctrl+Z undoes, 1-9
// picks the label (and relabels the selected box), [ and ] cycle through the boxes. Read-only
// `layers` (boxes, polygons, lines) are drawn underneath. Coordinates are image pixels, as the
// contract counts them. Konva draws; the other geometries are not in this app yet.
import Konva from 'konva/lib/Core';
import { Image as KImage } from 'konva/lib/shapes/Image';
import { Line } from 'konva/lib/shapes/Line';
import { Rect } from 'konva/lib/shapes/Rect';
import { Transformer } from 'konva/lib/shapes/Transformer';
import type { components } from '../../generated/workforce.ts';
import type { Shortcut } from '../keys.ts';
import { el, type PlayerFactory } from './types.ts';

type Params = components['schemas']['ImageAnnotationParams'];
type GeometrySpec = components['schemas']['GeometrySpec'];
/** `Geometries` as the contract has it (its generated type is an open union). */
type Geometries = Partial<Record<'box' | 'polygon' | 'line' | 'point' | 'cuboid' | 'ellipse', GeometrySpec>>;
export interface Box {
  uuid: string;
  type: 'box';
  label: string;
  left: number;
  top: number;
  width: number;
  height: number;
}

const palette = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324', '#469990'];

export function uuidV4(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const num = (v: unknown, fallback = 0) => (v === undefined || v === null || v === '' ? fallback : Number(v));
const round = (v: number) => Math.round(v * 100) / 100;

function boxesOf(value: unknown): Box[] {
  const list = (value as { annotations?: unknown } | undefined)?.annotations;
  if (!Array.isArray(list)) return [];
  return list
    .filter((a): a is Box => a?.type === 'box' && typeof a.uuid === 'string' && typeof a.label === 'string')
    .map((a) => ({
      uuid: a.uuid,
      type: 'box',
      label: a.label,
      left: num(a.left),
      top: num(a.top),
      width: num(a.width),
      height: num(a.height),
    }));
}

export const imageannotation: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Params;
  const geometries = (params.geometries ?? {}) as Geometries;
  const spec = geometries.box;
  const labels = spec?.objects_to_annotate ?? [];
  const minWidth = num(spec?.min_width);
  const minHeight = num(spec?.min_height);
  const others = Object.keys(geometries).filter((g) => g !== 'box');
  let boxes: Box[] = draft ? boxesOf(draft) : boxesOf(params.hypothesis);
  let current = labels[0] ?? '';
  let selected: string | null = null;
  const history: Box[][] = [];

  if (others.length)
    container.append(
      el(
        'p',
        { class: 'notice warn' },
        `This app draws boxes only so far; this task also asks for ${others.join(', ')}, which cannot be drawn here yet.`,
      ),
    );
  const labelBar = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Box label' });
  const labelButtons = labels.map((label, i) => {
    const button = el(
      'button',
      { type: 'button', 'aria-pressed': 'false', style: `border-left: 6px solid ${palette[i % palette.length]}` },
      i < 9 ? el('kbd', {}, String(i + 1)) : '',
      ` ${label}`,
    );
    button.addEventListener('click', () => pickLabel(i));
    labelBar.append(button);
    return button;
  });
  const holder = el('div', { class: 'stage', role: 'img', 'aria-label': 'The image: drag to draw a box with the chosen label' });
  const status = el('p', { class: 'muted', 'aria-live': 'polite' }, 'Loading the image…');
  const list = el('ol', { class: 'shapes', 'aria-label': 'Boxes drawn' });
  container.append(labelBar, holder, status, list);

  const stage = new Konva.Stage({ container: holder, width: 10, height: 10 });
  const imageLayer = new Konva.Layer({ listening: false });
  const layersLayer = new Konva.Layer({ listening: false });
  const work = new Konva.Layer();
  stage.add(imageLayer, layersLayer, work);
  const transformer = new Transformer({ rotateEnabled: false, keepRatio: false, ignoreStroke: true, flipEnabled: false });
  work.add(transformer);
  let imgW = 0;
  let imgH = 0;
  let scale = 1;

  const colour = (label: string) => palette[Math.max(0, labels.indexOf(label)) % palette.length] as string;
  const clampBox = (b: Box): Box => {
    const left = Math.min(Math.max(0, b.left), imgW);
    const top = Math.min(Math.max(0, b.top), imgH);
    return {
      ...b,
      left: round(left),
      top: round(top),
      width: round(Math.min(b.width, imgW - left)),
      height: round(Math.min(b.height, imgH - top)),
    };
  };
  const record = () => {
    history.push(boxes.map((b) => ({ ...b })));
    if (history.length > 200) history.shift();
  };
  const changed = () => {
    draw();
    context.changed();
  };

  function pickLabel(i: number) {
    const label = labels[i];
    if (label === undefined) return;
    current = label;
    const box = boxes.find((b) => b.uuid === selected);
    if (box && box.label !== label) {
      record();
      box.label = label;
      changed();
    } else draw();
  }

  function draw() {
    labelButtons.forEach((b, i) => {
      b.setAttribute('aria-pressed', String(labels[i] === current));
    });
    for (const node of work.find('.box')) node.destroy();
    for (const box of boxes) {
      const rect = new Rect({
        name: 'box',
        id: box.uuid,
        x: box.left,
        y: box.top,
        width: box.width,
        height: box.height,
        stroke: colour(box.label),
        strokeWidth: 2 / scale,
        fill: `${colour(box.label)}22`,
        draggable: box.uuid === selected,
        strokeScaleEnabled: true,
      });
      rect.on('pointerdown', (e) => {
        e.cancelBubble = true;
        if (selected !== box.uuid) {
          selected = box.uuid;
          current = box.label;
          draw();
        }
      });
      rect.dragBoundFunc((pos) => {
        const abs = { x: pos.x / scale, y: pos.y / scale };
        return { x: Math.min(Math.max(0, abs.x), imgW - box.width) * scale, y: Math.min(Math.max(0, abs.y), imgH - box.height) * scale };
      });
      rect.on('dragstart transformstart', record);
      rect.on('dragend', () => {
        Object.assign(box, clampBox({ ...box, left: rect.x(), top: rect.y() }));
        changed();
      });
      rect.on('transformend', () => {
        const next = clampBox({
          ...box,
          left: rect.x(),
          top: rect.y(),
          width: rect.width() * rect.scaleX(),
          height: rect.height() * rect.scaleY(),
        });
        Object.assign(box, next);
        changed();
      });
      work.add(rect);
    }
    const sel = selected ? work.findOne((node: Konva.Node) => node.id() === selected) : undefined;
    transformer.nodes(sel ? [sel] : []);
    transformer.moveToTop();
    list.replaceChildren(
      ...boxes.map((b, i) => {
        const item = el(
          'li',
          { 'aria-selected': String(b.uuid === selected), 'data-uuid': b.uuid },
          `${b.label}: ${Math.round(b.left)}, ${Math.round(b.top)}, ${Math.round(b.width)} × ${Math.round(b.height)} px`,
        );
        item.addEventListener('click', () => {
          selected = b.uuid;
          draw();
        });
        item.title = `Box ${i + 1}`;
        return item;
      }),
    );
  }

  // Drawing: a drag that starts outside every box.
  let start: { x: number; y: number } | null = null;
  const ghost = new Rect({ visible: false, stroke: '#fff', dash: [6, 4], listening: false });
  work.add(ghost);
  const pointer = () => {
    const p = stage.getPointerPosition() ?? { x: 0, y: 0 };
    return { x: Math.min(Math.max(0, p.x / scale), imgW), y: Math.min(Math.max(0, p.y / scale), imgH) };
  };
  stage.on('pointerdown', (e) => {
    if (e.target !== stage && e.target.getLayer() !== imageLayer && !(e.target instanceof KImage)) return;
    if (selected) {
      selected = null;
      draw();
    }
    if (!current) return;
    start = pointer();
    ghost.setAttrs({ x: start.x, y: start.y, width: 0, height: 0, strokeWidth: 1.5 / scale, visible: true });
  });
  stage.on('pointermove', () => {
    if (!start) return;
    const p = pointer();
    ghost.setAttrs({
      x: Math.min(start.x, p.x),
      y: Math.min(start.y, p.y),
      width: Math.abs(p.x - start.x),
      height: Math.abs(p.y - start.y),
    });
  });
  const finish = () => {
    if (!start) return;
    const p = pointer();
    const box: Box = {
      uuid: uuidV4(),
      type: 'box',
      label: current,
      left: round(Math.min(start.x, p.x)),
      top: round(Math.min(start.y, p.y)),
      width: round(Math.abs(p.x - start.x)),
      height: round(Math.abs(p.y - start.y)),
    };
    start = null;
    ghost.visible(false);
    // A click or a slip of a few screen pixels is no box.
    if (box.width * scale < 4 || box.height * scale < 4) return draw();
    record();
    boxes.push(box);
    selected = box.uuid;
    changed();
  };
  stage.on('pointerup', finish);
  stage.on('pointerleave', finish);

  const image = new Image();
  image.alt = '';
  image.onload = () => {
    imgW = image.naturalWidth;
    imgH = image.naturalHeight;
    const maxW = Math.max(320, container.clientWidth - 24);
    const maxH = Math.max(240, window.innerHeight - 260);
    scale = Math.min(maxW / imgW, maxH / imgH, 4);
    stage.size({ width: Math.round(imgW * scale), height: Math.round(imgH * scale) });
    for (const layer of [imageLayer, layersLayer, work]) layer.scale({ x: scale, y: scale });
    imageLayer.add(new KImage({ image, width: imgW, height: imgH }));
    const layers = params.layers;
    for (const b of layers?.boxes ?? [])
      layersLayer.add(
        new Rect({
          x: num(b.left),
          y: num(b.top),
          width: num(b.width),
          height: num(b.height),
          stroke: '#ffd400',
          strokeWidth: 1.5 / scale,
          dash: [4 / scale, 3 / scale],
        }),
      );
    for (const p of [
      ...(layers?.polygons ?? []).map((p) => ({ ...p, closed: true })),
      ...(layers?.lines ?? []).map((l) => ({ ...l, closed: false })),
    ])
      layersLayer.add(
        new Line({
          points: p.vertices.flatMap((v) => [num(v.x), num(v.y)]),
          closed: p.closed,
          stroke: '#ffd400',
          strokeWidth: 1.5 / scale,
          dash: [4 / scale, 3 / scale],
        }),
      );
    status.textContent = `${imgW} × ${imgH} px${labels.length ? '' : ' — this task has no box labels'}`;
    draw();
  };
  image.onerror = () => {
    status.textContent = 'The image could not be loaded. Skip the task with a reason if it does not come back.';
    status.className = 'notice bad';
  };
  image.src = params.attachment ?? '';

  const cycle = (step: number) => {
    if (!boxes.length) return;
    const i = boxes.findIndex((b) => b.uuid === selected);
    selected = (boxes[(i + step + boxes.length) % boxes.length] as Box).uuid;
    draw();
  };
  const shortcuts: Shortcut[] = [
    {
      keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
      label: 'Choose label 1-9 (relabels the selected box)',
      run: (e) => pickLabel(Number(e.key) - 1),
    },
    {
      keys: ['Delete', 'Backspace'],
      label: 'Delete the selected box',
      run: () => {
        if (!selected) return;
        record();
        boxes = boxes.filter((b) => b.uuid !== selected);
        selected = null;
        changed();
      },
    },
    {
      keys: ['Ctrl+Z'],
      label: 'Undo',
      run: () => {
        const previous = history.pop();
        if (!previous) return;
        boxes = previous;
        if (!boxes.some((b) => b.uuid === selected)) selected = null;
        changed();
      },
    },
    { keys: [']'], label: 'Select the next box', run: () => cycle(1) },
    { keys: ['['], label: 'Select the previous box', run: () => cycle(-1) },
    {
      keys: ['Escape'],
      label: 'Deselect',
      run: () => {
        selected = null;
        draw();
      },
    },
  ];

  return {
    shortcuts,
    getDraft: () => ({ annotations: boxes.map((b) => ({ ...b })) }),
    getResponse() {
      const small = boxes.findIndex((b) => b.width < minWidth || b.height < minHeight);
      if (small >= 0)
        return { ok: false, problem: `Box ${small + 1} is smaller than the task allows (at least ${minWidth} × ${minHeight} px).` };
      return { ok: true, response: { annotations: boxes.map((b) => ({ ...b })) } };
    },
    destroy: () => stage.destroy(),
  };
};
