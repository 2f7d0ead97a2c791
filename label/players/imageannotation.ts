// imageannotation: boxes, points, lines, polygons, cuboids and ellipses on one image, each geometry
// with its own labels (`geometries`), the task's read-only `layers` underneath, and the task's
// `annotation_attributes` asked for the selected shape. Zoom (wheel, + and -), pan (drag with the
// select tool, the middle button or Space), select, move, resize, vertex editing, delete, undo
// and redo; a key for every tool. Coordinates are image pixels, as the contract counts them.
// The parts: image/model.ts (shapes and the task's bounds), image/canvas.ts (Konva layers and
// editing handles), image/tools.ts (drawing gestures), image/attributes.ts; undo and redo over snapshots of the shapes (label/undo.ts).
import type { Shortcut } from '../keys.ts';
import { Undo, undoKeys } from '../undo.ts';
import { keepFocus, ToolBar, type ToolDef } from './toolbar.ts';
import { applicable, attributeDefs, attributeForm, attributesOut, missingAttribute } from './image/attributes.ts';
import { ImageCanvas } from './image/canvas.ts';
import {
  boundsOf,
  clone,
  describe,
  fewestVertices,
  geometriesOf,
  shapeProblem,
  shapesOf,
  tidy,
  toElement,
  translate,
  type Kind,
  type Params,
  type Shape,
} from './image/model.ts';
import { Drawing, type Pending, type Tool } from './image/tools.ts';
import { el, sameScope, type Pin, type PinScope, type PlayerFactory } from './types.ts';

export const palette = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324', '#469990', '#808000'];
/** Each tool's key and name (the image, document and video players' tool bars). */
export const toolKeys: Record<Tool, [string, string]> = {
  select: ['V', 'Select, move and pan'],
  box: ['B', 'Box'],
  polygon: ['P', 'Polygon'],
  line: ['L', 'Line'],
  point: ['K', 'Point'],
  cuboid: ['C', 'Cuboid'],
  ellipse: ['E', 'Ellipse'],
};
/** The tools in a tool bar (label/players/toolbar.ts), by `toolKeys`. */
export const toolDefs = (tools: Tool[]): ToolDef<Tool>[] => tools.map((id) => ({ id, key: toolKeys[id][0], name: toolKeys[id][1] }));

/** The label bar's buttons: keys 1-9, the label's colour (by its place in `allLabels`), the chosen one pressed. */
export function labelButtons(
  labels: string[],
  chosen: string | undefined,
  allLabels: string[],
  pick: (i: number) => void,
): HTMLButtonElement[] {
  return labels.map((label, i) => {
    const b = el(
      'button',
      {
        type: 'button',
        'aria-pressed': String(label === chosen),
        style: `border-left: 6px solid ${palette[allLabels.indexOf(label) % palette.length]}`,
      },
      i < 9 ? el('kbd', {}, String(i + 1)) : '',
      ` ${label}`,
    );
    b.addEventListener('click', () => pick(i));
    keepFocus(b);
    return b;
  });
}

/** How the image player is set up beyond the task's params. */
export interface ImageOptions {
  /** Drawn lines are cardinal splines (a lineannotation task with `splines: true`). */
  splines?: boolean;
  /** Remarks name a shape by its index in the answer (the older types), not by its `uuid`. */
  regionsByIndex?: boolean;
}

export const imageannotation: PlayerFactory = (container, assignment, draft, context) =>
  imagePlayer(container, assignment.task.params as Params, draft, context);

/** The image player for `params` in the imageannotation form; the older single-geometry types adapt theirs (legacy-image.ts). */
export function imagePlayer(
  container: HTMLElement,
  params: Params,
  draft: Parameters<PlayerFactory>[2],
  context: Parameters<PlayerFactory>[3],
  options: ImageOptions = {},
): ReturnType<PlayerFactory> {
  const geometries = geometriesOf(params);
  const geometry = (kind: Kind) => geometries.find((g) => g.kind === kind);
  const defs = attributeDefs(params.annotation_attributes);
  const allLabels = [...new Set(geometries.flatMap((g) => g.labels))];
  const colour = (s: Shape) => palette[Math.max(0, allLabels.indexOf(s.label)) % palette.length] as string;
  let shapes: Shape[] = shapesOf(draft ?? params.hypothesis, geometries);
  let selected: string | null = null;
  /**
   * The shape just drawn (selected by drawing, for its attributes, not by the person): a label chosen
   * now is the tool's label for the next shapes, and leaves it as drawn. Selecting a shape ends this.
   */
  let justDrawn: string | null = null;
  /** The shape a chosen label relabels: the one the person selected. */
  const relabeled = () => (selected && selected !== justDrawn ? shapes.find((s) => s.uuid === selected) : undefined);
  let tool: Tool = geometries[0]?.kind ?? 'select';
  const current = new Map<Kind, string>(geometries.flatMap((g) => (g.labels[0] ? [[g.kind, g.labels[0]] as const] : [])));
  // Undo and redo over snapshots of the shapes: each change of the person's one step.
  const history = Undo.snapshot(
    () => shapes,
    (before) => {
      drawing.cancel();
      shapes = before;
    },
    (state) => state.map(clone),
  );
  let ready = false;
  // Read-only (a review before "fix", a feedback view): only the select tool, and no edit is kept.
  const readOnly = context.readOnly ?? false;
  if (readOnly) tool = 'select';
  const pickers: ((scope: PinScope) => void)[] = [];
  let pins: Pin[] = [];
  const regionId = (s: Shape) => (options.regionsByIndex ? String(shapes.indexOf(s)) : s.uuid);

  // ---- the page ------------------------------------------------------------------------------
  const tools: Tool[] = readOnly ? ['select'] : ['select', ...geometries.map((g) => g.kind)];
  const toolBar = new ToolBar(toolDefs(tools), (t) => pickTool(t));
  const labelBar = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Label' });
  const holder = el('div', {
    class: 'stage',
    role: 'img',
    'aria-label': 'The image: draw with the chosen tool and label; the wheel zooms, Space and drag pans',
  });
  const size = el('span', { class: 'image-size' }, 'Loading the image…');
  const zoomText = el('span', { class: 'zoom' });
  const message = el('span', { class: 'message', 'aria-live': 'polite' });
  const status = el('p', { class: 'muted image-status' }, size, ' · ', zoomText, ' · ', message);
  const attributesBox = el('section', { class: 'panel attributes-panel', 'aria-label': 'Attributes', hidden: '' });
  const list = el('ol', { class: 'shapes', 'aria-label': 'Shapes drawn' });
  // Remarks pinned to shapes: a note beside each shape on the image (and in the list of shapes).
  const pinLayer = el('div', { class: 'pin-layer', 'aria-hidden': 'true' });
  if (readOnly) labelBar.hidden = true;
  container.append(
    toolBar.element,
    labelBar,
    el(
      'div',
      { class: 'image-player' },
      el('div', { class: 'image-main' }, holder, status),
      el('div', { class: 'image-side' }, attributesBox, el('h2', { class: 'shapes-title' }, 'Shapes'), list),
    ),
  );
  const say = (text: string) => {
    message.textContent = text;
  };

  const canvas = new ImageCanvas(holder, options.splines ?? false, {
    begin: () => history.record(),
    // The canvas's copy has the new geometry; the label and attributes may have changed since it was made.
    commit: (shape) => {
      if (readOnly) return render();
      shapes = shapes.map((s) =>
        s.uuid === shape.uuid ? ({ ...shape, label: s.label, ...(s.attributes ? { attributes: s.attributes } : {}) } as Shape) : s,
      );
      changed();
    },
    vertexBounds: (shape) => {
      const g = geometry(shape.type);
      return { fewest: g ? fewestVertices(g) : 1, most: g?.maxVertices ?? Number.POSITIVE_INFINITY };
    },
  });
  // Konva empties its container when it sets up: the notes go in after.
  holder.append(pinLayer);
  const drawing = new Drawing(canvas, {
    tool: () => tool,
    geometry,
    label: (kind) => current.get(kind),
    add(shape) {
      history.record();
      if (defs.length) shape.attributes = {};
      shapes.push(tidy(shape, canvas.imgW, canvas.imgH));
      selected = shape.uuid;
      justDrawn = shape.uuid;
      const asked = applicable(defs, shape);
      say(`${shape.label}: ${describe(shape)}.${asked.length ? ` Its attributes: ${asked.map((d) => `“${d.question}”`).join(', ')}` : ''}`);
      changed();
    },
    deselect: () => select(null),
    select,
    say,
    drafted: () => context.changed(),
  });

  // ---- showing the state ---------------------------------------------------------------------
  /** The geometry whose labels the label bar offers: the selected shape's, else the tool's. */
  const labelKind = (): Kind | undefined =>
    shapes.find((s) => s.uuid === selected)?.type ?? (tool === 'select' ? geometries[0]?.kind : tool);

  let attributesKey = '';
  function renderAttributes(force: boolean) {
    const shape = shapes.find((s) => s.uuid === selected);
    const key = shape ? `${shape.uuid}|${shape.label}|${applicable(defs, shape).map((d) => d.name)}` : '';
    if (!force && key === attributesKey) return;
    attributesKey = key;
    attributesBox.hidden = !shape || !defs.length;
    if (!shape || !defs.length) return attributesBox.replaceChildren();
    const form = attributeForm(
      defs,
      shape,
      shapes,
      () => history.record(),
      (name, value) => {
        const attributes = { ...(shape.attributes ?? {}) };
        if (value === undefined) delete attributes[name];
        else attributes[name] = value;
        shape.attributes = attributes;
        context.changed();
        renderAttributes(false);
      },
    );
    attributesBox.replaceChildren(
      el('h2', {}, `Attributes: ${shape.label}`),
      readOnly ? el('fieldset', { disabled: '', class: 'plain' }, form) : form,
    );
  }

  function render() {
    if (!ready) return;
    canvas.render(shapes, selected, colour, tool === 'select');
    holder.style.cursor = tool === 'select' ? 'default' : 'crosshair';
    toolBar.show(tool);
    const kind = labelKind();
    const labels = (kind && geometry(kind)?.labels) || [];
    const chosen = relabeled()?.label ?? (kind ? current.get(kind) : undefined);
    labelBar.setAttribute('aria-label', `${kind ?? ''} label`);
    labelBar.replaceChildren(...labelButtons(labels, chosen, allLabels, pickLabel));
    showZoom();
    list.replaceChildren(
      ...shapes.map((s, i) => {
        const notes = pins.filter((p) => sameScope(p.scope, { region_id: regionId(s) }));
        const pick = el(
          'button',
          { type: 'button', class: 'link', style: `border-left: 4px solid ${colour(s)}` },
          `${s.label}: ${describe(s)}`,
        );
        pick.addEventListener('click', () => select(s.uuid));
        return el(
          'li',
          { 'aria-selected': String(s.uuid === selected), 'data-uuid': s.uuid, 'data-type': s.type, title: `Shape ${i + 1}` },
          pick,
          ...notes.map((p) => el('p', { class: 'pin-note', role: 'note' }, el('strong', {}, `${p.title}: `), p.text)),
        );
      }),
    );
    renderAttributes(true);
    placePins();
  }

  /** The notes of pinned remarks, each at the top-left of its shape as the view is now. */
  function placePins() {
    const scale = canvas.scale;
    const [x0, y0] = [Number(holder.dataset.x ?? 0), Number(holder.dataset.y ?? 0)];
    pinLayer.replaceChildren(
      ...shapes.flatMap((s, i) => {
        const notes = pins.filter((p) => sameScope(p.scope, { region_id: regionId(s) }));
        if (!notes.length) return [];
        const b = boundsOf(s);
        const note = el(
          'div',
          { class: 'pin', 'data-uuid': s.uuid, style: `left: ${b.left * scale + x0}px; top: ${b.top * scale + y0}px` },
          el('span', { class: 'pin-mark' }, String(i + 1)),
          ...notes.map((p) => el('span', { class: 'pin-text' }, `${p.title}: ${p.text}`)),
        );
        return [note];
      }),
    );
  }
  const showZoom = () => {
    zoomText.textContent = `zoom ${Math.round((canvas.scale / canvas.fit) * 100)} %`;
  };
  // The view moves with zoom and pan (the canvas writes them on the holder): the notes and the zoom
  // shown follow, once the view has changed (a wheel listener of the stage ran before the zoom).
  const viewWatch = new MutationObserver(() => {
    placePins();
    showZoom();
  });
  viewWatch.observe(holder, { attributes: true, attributeFilter: ['data-x', 'data-y', 'data-scale'] });

  function changed() {
    if (selected && !shapes.some((s) => s.uuid === selected)) selected = null;
    render();
    context.changed();
  }

  function select(uuid: string | null) {
    const was = justDrawn;
    justDrawn = null;
    if (selected === uuid) {
      if (was) render();
      return;
    }
    selected = uuid;
    const shape = shapes.find((s) => s.uuid === uuid);
    if (shape) current.set(shape.type, shape.label);
    render();
    if (shape) for (const pick of pickers) pick({ region_id: regionId(shape) });
  }
  const shown = () => say('The answer is shown read-only.');

  function pickTool(t: Tool) {
    if (!toolBar.has(t)) return;
    drawing.cancel();
    tool = t;
    say(t === 'select' ? 'Click a shape to select it; drag the image to pan.' : `${toolKeys[t][1]}: ${current.get(t) ?? ''}`);
    render();
  }

  function pickLabel(i: number) {
    const kind = labelKind();
    const label = kind && geometry(kind)?.labels[i];
    if (!kind || !label) return;
    current.set(kind, label);
    const shape = relabeled();
    if (shape && shape.label !== label && readOnly) return shown();
    if (shape && shape.label !== label) {
      history.record();
      shapes = shapes.map((s) => (s.uuid === shape.uuid ? { ...clone(s), label } : s));
      changed();
    } else {
      if (!shape && selected) say(`Next shapes: ${label}. To relabel a shape, select it first.`);
      render();
    }
  }

  function restore(what: 'undo' | 'redo') {
    if (readOnly) return shown();
    if (!history[what]()) return say(`Nothing to ${what}.`);
    changed();
    say(`${what === 'undo' ? 'Undone' : 'Redone'}.`);
  }

  function remove() {
    if (!selected) return;
    if (readOnly) return shown();
    history.record();
    shapes = shapes.filter((s) => s.uuid !== selected);
    // Links to the deleted shape go with it.
    const gone = selected;
    for (const s of shapes)
      if (s.attributes) for (const [name, value] of Object.entries(s.attributes)) if (value === gone) delete s.attributes[name];
    selected = null;
    changed();
  }

  function nudge(dx: number, dy: number) {
    const shape = shapes.find((s) => s.uuid === selected);
    if (!shape) {
      canvas.panBy(-dx * 5, -dy * 5);
      render();
      return;
    }
    if (readOnly) return shown();
    history.record();
    const moved = clone(shape);
    translate(moved, dx, dy, canvas.imgW, canvas.imgH);
    shapes = shapes.map((s) => (s.uuid === moved.uuid ? moved : s));
    changed();
  }

  const cycle = (step: number) => {
    if (!shapes.length) return;
    const i = shapes.findIndex((s) => s.uuid === selected);
    select((shapes[(i + step + shapes.length) % shapes.length] as Shape).uuid);
  };

  // ---- the image -----------------------------------------------------------------------------
  const image = new Image();
  image.alt = '';
  /** The room the image may take: the width of its column, the window's height less the bars. */
  const room = () =>
    [Math.max(200, holder.parentElement?.clientWidth ?? container.clientWidth - 24), Math.max(240, window.innerHeight - 230)] as const;
  // The window resized: the image fits the new room, at the same zoom relative to the fit (once a frame).
  let refitFrame = 0;
  const refit = () => {
    cancelAnimationFrame(refitFrame);
    refitFrame = requestAnimationFrame(() => {
      if (!ready) return;
      canvas.refit(...room());
      render();
    });
  };
  window.addEventListener('resize', refit);
  image.onload = () => {
    canvas.setImage(image, ...room());
    const count = canvas.setContext(params.layers);
    shapes = shapes.map((s) => tidy(s, canvas.imgW, canvas.imgH));
    size.textContent = `${canvas.imgW} × ${canvas.imgH} px${count ? `, ${count} read-only shape${count === 1 ? '' : 's'} (H hides them)` : ''}${geometries.length ? '' : ' — this task names no geometry'}`;
    ready = true;
    // A shape that was being drawn when the draft was saved (a reload in the middle of a polygon).
    const pending = (draft as { drawing?: Pending } | undefined)?.drawing;
    if (pending && toolBar.has(pending.tool)) {
      tool = pending.tool;
      render();
      drawing.resume(pending);
      say(`The ${pending.tool} you were drawing is back: go on.`);
    } else render();
  };
  image.onerror = () => {
    size.textContent = 'The image could not be loaded. Skip the task with a reason if it does not come back.';
    status.className = 'notice bad';
  };
  image.src = context.media(params.attachment ?? '');

  // ---- keys ----------------------------------------------------------------------------------
  const spaceDown = (e: KeyboardEvent) => {
    if (e.key !== ' ' || (e.target instanceof HTMLElement && e.target.closest('input, textarea, select, button'))) return;
    e.preventDefault();
    drawing.spaceHeld = e.type === 'keydown';
    holder.style.cursor = drawing.spaceHeld ? 'grab' : tool === 'select' ? 'default' : 'crosshair';
  };
  document.addEventListener('keydown', spaceDown);
  document.addEventListener('keyup', spaceDown);
  /** Zooms by a factor around the middle of the view; 0 fits the whole image. */
  function zoom(factor: number) {
    if (factor) canvas.zoom(factor);
    else canvas.view(canvas.fit, 0, 0);
    render();
  }
  function arrow(e: KeyboardEvent) {
    const step = e.shiftKey ? 10 : 1;
    const [dx, dy] = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key] ?? [0, 0];
    nudge(dx as number, dy as number);
  }
  const noDialog = () => !document.querySelector('.overlay:not([hidden])');
  const shortcuts: Shortcut[] = [
    ...toolBar.shortcuts,
    {
      keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
      label: 'Choose label 1-9 of the tool (relabels a shape you selected)',
      run: (e) => pickLabel(Number(e.key) - 1),
    },
    { keys: ['Enter'], label: 'Finish the polygon, line or cuboid being drawn', when: () => drawing.pending, run: () => drawing.finish() },
    {
      keys: ['Delete', 'Backspace'],
      label: 'Delete the selected shape (while drawing: take back the last vertex)',
      run: (e) => {
        if (drawing.pending) {
          if (e.key === 'Backspace') drawing.undoVertex();
          return;
        }
        remove();
      },
    },
    ...undoKeys(
      () => restore('undo'),
      () => restore('redo'),
    ),
    { keys: [']'], label: 'Select the next shape', run: () => cycle(1) },
    { keys: ['['], label: 'Select the previous shape', run: () => cycle(-1) },
    {
      keys: ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'],
      label: 'Move the selected shape by 1 px; with none selected, pan',
      run: arrow,
    },
    {
      keys: ['Shift+ArrowLeft', 'Shift+ArrowRight', 'Shift+ArrowUp', 'Shift+ArrowDown'],
      label: 'Move the selected shape by 10 px',
      run: arrow,
    },
    { keys: ['+', '='], label: 'Zoom in (also the wheel)', run: () => zoom(1.25) },
    { keys: ['-'], label: 'Zoom out', run: () => zoom(0.8) },
    { keys: ['0'], label: 'Fit the image', run: () => zoom(0) },
    { keys: ['Space'], label: 'Hold and drag to pan (also the middle button)', run: () => undefined },
    {
      keys: ['H'],
      label: 'Hide or show the read-only layers',
      run: () => {
        canvas.showContext(!canvas.contextVisible);
        say(canvas.contextVisible ? 'Layers shown.' : 'Layers hidden (H shows them).');
      },
    },
    {
      keys: ['Escape'],
      label: 'Cancel the shape being drawn, or deselect',
      when: () => noDialog() && (drawing.pending || selected !== null),
      run: () => {
        if (!drawing.cancel()) select(null);
      },
    },
  ];

  return {
    shortcuts,
    getDraft: () => {
      const pending = drawing.state;
      return { annotations: shapes.map(toElement), ...(pending ? { drawing: pending } : {}) };
    },
    getResponse() {
      for (const [i, s] of shapes.entries()) {
        const problem = shapeProblem(s, geometry(s.type));
        if (problem) return { ok: false, problem: `Shape ${i + 1} (${s.type}, ${s.label}): ${problem}.` };
        const missing = missingAttribute(defs, s);
        if (missing) return { ok: false, problem: `Shape ${i + 1} (${s.type}, ${s.label}): answer "${missing.question}".` };
      }
      const annotations = shapes.map((s) => {
        const attributes = attributesOut(defs, s);
        const { attributes: _all, ...element } = toElement(s);
        return attributes ? { ...element, attributes } : element;
      });
      return { ok: true, response: { annotations } as never };
    },
    readOnly: true,
    pinning: {
      targets: () => shapes.map((s, i) => ({ scope: { region_id: regionId(s) }, label: `Shape ${i + 1}: ${s.label} ${s.type}` })),
      onPick: (pick) => {
        pickers.push(pick);
      },
      show(next) {
        pins = next;
        render();
      },
    },
    destroy() {
      viewWatch.disconnect();
      window.removeEventListener('resize', refit);
      cancelAnimationFrame(refitFrame);
      document.removeEventListener('keydown', spaceDown);
      document.removeEventListener('keyup', spaceDown);
      drawing.destroy();
      canvas.destroy();
    },
  };
}
