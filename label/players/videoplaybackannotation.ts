// videoplaybackannotation: objects tracked through the frames of a video or of a sequence of frame
// images, and events with their first and last frame. The image player's parts do the drawing on
// each frame (image/canvas.ts: Konva layers, zoom and pan, editing handles; image/tools.ts: the
// gestures; image/attributes.ts: the attributes, asked once per track). A shape drawn on a frame
// starts a track there; moving or reshaping it on another frame makes that frame a keyframe, and the
// frames between keyframes are interpolated (video/tracks.ts). The answer lists every track's shape
// in each frame it is visible in, and the events ordered by start; the server's own answer rules
// (bundled) run before submit.
import { checkAnswer } from '../../shared/answer-rules.ts';
import { asRecord, strings } from '../../shared/json.ts';
import type { Shortcut } from '../keys.ts';
import { Undo, undoKeys } from '../undo.ts';
import { applicable, attributeDefs, attributeForm, attributesOut, missingAttribute } from './image/attributes.ts';
import { ImageCanvas } from './image/canvas.ts';
import {
  clone,
  describe,
  fewestVertices,
  geometriesOf,
  num,
  shapeProblem,
  tidy,
  translate,
  type Kind,
  type Params,
  type Shape,
} from './image/model.ts';
import { Drawing, type Pending, type Tool } from './image/tools.ts';
import { Frames } from './video/frames.ts';
import { labelButtons, palette, toolDefs, toolKeys } from './imageannotation.ts';
import { keepFocus, ToolBar } from './toolbar.ts';
import {
  eventsOf,
  hypothesisTracks,
  isKeyframe,
  setKeyframe,
  shapeAt,
  trackDraft,
  trackOut,
  tracksOf,
  type Track,
  type VideoEvent,
} from './video/tracks.ts';
import { el, type PlayerFactory } from './types.ts';

interface State {
  tracks: Track[];
  events: VideoEvent[];
}

export const videoplaybackannotation: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Params & Record<string, unknown>;
  const geometries = geometriesOf(params);
  const geometry = (kind: Kind) => geometries.find((g) => g.kind === kind);
  const defs = attributeDefs(params.annotation_attributes);
  const allLabels = [...new Set(geometries.flatMap((g) => g.labels))];
  const eventLabels = strings(params.events_to_annotate);
  const rate = Math.min(60, Math.max(1, Math.round(num(params.frame_rate, 1))));
  const urls = strings(params.attachments);
  const videoUrl = typeof params.attachment === 'string' && !urls.length ? params.attachment : undefined;
  const colour = (s: { label: string }) => palette[Math.max(0, allLabels.indexOf(s.label)) % palette.length] as string;

  const saved = asRecord(draft);
  // A draft is where the worker left off; without one the task's pre-labels are the start.
  let state: State =
    draft === undefined || draft === null
      ? { tracks: hypothesisTracks(params.hypothesis, geometries), events: eventsOf(params.hypothesis, eventLabels) }
      : { tracks: tracksOf(saved, geometries), events: eventsOf(saved, eventLabels) };
  let frame = Math.max(0, Math.round(num(saved.frame)));
  let count = 1;
  let selected: string | null = null;
  let tool: Tool = geometries[0]?.kind ?? 'select';
  const current = new Map<Kind, string>(geometries.flatMap((g) => (g.labels[0] ? [[g.kind, g.labels[0]] as const] : [])));
  let eventLabel = eventLabels[0];
  const pendingSaved = asRecord(saved.eventStart);
  let eventStart: { label: string; frame: number } | null =
    typeof pendingSaved.label === 'string' && eventLabels.includes(pendingSaved.label)
      ? { label: pendingSaved.label, frame: Math.round(num(pendingSaved.frame)) }
      : null;
  let ready = false;
  let playing: ReturnType<typeof setInterval> | null = null;

  // ---- the page ------------------------------------------------------------------------------
  const tools: Tool[] = ['select', ...geometries.map((g) => g.kind)];
  const toolBar = new ToolBar(toolDefs(tools), (t) => pickTool(t));
  const labelBar = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Label' });
  const holder = el('div', {
    class: 'stage',
    role: 'img',
    'aria-label': 'The frame: draw with the chosen tool and label; the wheel zooms, the middle button pans',
  });
  const button = (text: string, key: string, run: () => void, extra: Record<string, string> = {}) => {
    const b = el('button', { type: 'button', ...extra }, el('kbd', {}, key), ` ${text}`);
    b.addEventListener('click', run);
    keepFocus(b);
    return b;
  };
  const slider = el('input', { type: 'range', min: '0', max: '0', step: '1', value: '0', 'aria-label': 'Frame', class: 'frame-slider' });
  slider.addEventListener('input', () => go(Number(slider.value)));
  const frameText = el('span', { class: 'frame-text', 'aria-live': 'polite' });
  const playButton = button('Play', 'Space', () => togglePlay(), { 'aria-pressed': 'false', class: 'play' });
  const keyButton = button('Keyframe', 'Shift+K', () => toggleKeyframe());
  const endButton = button('End track here', 'X', () => endTrack());
  const timeline = el('div', { class: 'timeline', 'aria-hidden': 'true' });
  const frameBar = el(
    'div',
    { class: 'frame-bar', role: 'group', 'aria-label': 'Frames' },
    button('Previous', '←', () => go(frame - 1)),
    playButton,
    button('Next', '→', () => go(frame + 1)),
    slider,
    frameText,
    keyButton,
    endButton,
  );
  const size = el('span', { class: 'image-size' }, 'Loading the frames…');
  const zoomText = el('span', { class: 'zoom' });
  const message = el('span', { class: 'message', 'aria-live': 'polite' });
  const status = el('p', { class: 'muted image-status' }, size, ' · ', zoomText, ' · ', message);
  const attributesBox = el('section', { class: 'panel attributes-panel', 'aria-label': 'Attributes', hidden: '' });
  const list = el('ol', { class: 'shapes', 'aria-label': 'Tracks' });
  const eventBar = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Event' });
  const markButton = button('Mark event start', 'M', () => markEvent());
  const eventList = el('ol', { class: 'events', 'aria-label': 'Events marked' });
  const eventsBox = el(
    'section',
    { class: 'events-panel', 'aria-label': 'Events' },
    el('h2', {}, 'Events'),
    eventBar,
    markButton,
    eventList,
  );
  if (!eventLabels.length) eventsBox.hidden = true;
  container.append(
    toolBar.element,
    labelBar,
    el(
      'div',
      { class: 'image-player video-player' },
      el('div', { class: 'image-main' }, holder, frameBar, timeline, status),
      el('div', { class: 'image-side' }, attributesBox, el('h2', { class: 'shapes-title' }, 'Tracks'), list, eventsBox),
    ),
  );
  const say = (text: string) => {
    message.textContent = text;
  };

  // ---- undo ----------------------------------------------------------------------------------
  // Over snapshots of the tracks and events: each change of the person's one step.
  const history = Undo.snapshot(
    () => state,
    (before) => {
      drawing.cancel();
      state = before;
    },
  );
  const record = () => history.record();
  function undoRedo(what: 'undo' | 'redo') {
    if (!history[what]()) return say(`Nothing to ${what}.`);
    changed();
    say(`${what === 'undo' ? 'Undone' : 'Redone'}.`);
  }

  const track = (uuid: string | null) => state.tracks.find((t) => t.uuid === uuid);
  const lastFrame = () => count - 1;

  const canvas = new ImageCanvas(holder, false, {
    begin: record,
    // An edit on a frame makes it a keyframe of the track, with the shape as it is now.
    commit(shape) {
      const t = track(shape.uuid);
      if (t) {
        setKeyframe(t, frame, tidy(clone(shape), canvas.imgW, canvas.imgH));
        say(`Frame ${frame} is a keyframe of ${t.label}.`);
      }
      changed();
    },
    vertexBounds: (shape) => {
      const g = geometry(shape.type);
      return { fewest: g ? fewestVertices(g) : 1, most: g?.maxVertices ?? Number.POSITIVE_INFINITY };
    },
  });
  const drawing = new Drawing(canvas, {
    tool: () => tool,
    geometry,
    label: (kind) => current.get(kind),
    add(shape) {
      record();
      const s = tidy(shape, canvas.imgW, canvas.imgH);
      state.tracks.push({
        uuid: s.uuid,
        type: s.type,
        label: s.label,
        ...(defs.length ? { attributes: {} } : {}),
        keys: [{ frame, shape: s }],
        end: null,
      });
      selected = s.uuid;
      say(`${s.label}: a track from frame ${frame}. Go to a later frame and move it there to make a keyframe.`);
      changed();
    },
    deselect: () => select(null),
    select,
    say,
    drafted: () => context.changed(),
  });

  // ---- showing the state ---------------------------------------------------------------------
  const visibleShapes = () => state.tracks.flatMap((t) => shapeAt(t, frame) ?? []);
  const labelKind = (): Kind | undefined => track(selected)?.type ?? (tool === 'select' ? geometries[0]?.kind : tool);

  function renderAttributes() {
    const t = track(selected);
    const shape = t ? (shapeAt(t, frame) ?? shapeAt({ ...t, end: null }, t.keys[0]?.frame ?? 0)) : null;
    attributesBox.hidden = !t || !shape || !defs.length;
    if (!t || !shape || !defs.length) return attributesBox.replaceChildren();
    const form = attributeForm(defs, shape, visibleShapes(), record, (name, value) => {
      const attributes = { ...(t.attributes ?? {}) };
      if (value === undefined) delete attributes[name];
      else attributes[name] = value;
      t.attributes = attributes;
      context.changed();
      // The form changes only when another attribute is asked (conditions).
      const asked = applicable(defs, { ...shape, attributes }).length;
      if (asked !== applicable(defs, shape).length) renderAttributes();
    });
    attributesBox.replaceChildren(el('h2', {}, `Attributes: ${t.label}`), form);
  }

  function renderTimeline() {
    const pos = (f: number) => `${count > 1 ? (f / (count - 1)) * 100 : 0}%`;
    const marks: HTMLElement[] = [el('span', { class: 'now', style: `left: ${pos(frame)}` })];
    const t = track(selected);
    if (t) {
      const to = Math.min(t.end ?? lastFrame(), lastFrame());
      const from = t.keys[0]?.frame ?? 0;
      marks.push(
        el('span', { class: 'span', style: `left: ${pos(from)}; width: calc(${pos(to)} - ${pos(from)}); background: ${colour(t)}55` }),
        ...t.keys.map((k) => el('span', { class: 'key', style: `left: ${pos(k.frame)}`, title: `keyframe ${k.frame}` })),
      );
    }
    // Events along the bottom, a row each (overlapping events stay apart).
    for (const [i, e] of sortedEvents().entries())
      marks.push(
        el('span', {
          class: 'event',
          style: `left: ${pos(e.start)}; width: calc(${pos(e.end)} - ${pos(e.start)} + 3px); bottom: ${(i % 3) * 4}px`,
        }),
      );
    timeline.replaceChildren(...marks);
  }

  function render() {
    if (!ready) return;
    const shapes = visibleShapes();
    canvas.render(shapes, selected, colour, tool === 'select');
    holder.style.cursor = tool === 'select' ? 'default' : 'crosshair';
    toolBar.show(tool);
    const kind = labelKind();
    const labels = (kind && geometry(kind)?.labels) || [];
    const chosen = track(selected)?.label ?? (kind ? current.get(kind) : undefined);
    labelBar.setAttribute('aria-label', `${kind ?? ''} label`);
    labelBar.replaceChildren(...labelButtons(labels, chosen, allLabels, pickLabel));
    zoomText.textContent = `zoom ${Math.round((canvas.scale / canvas.fit) * 100)} %`;
    slider.max = String(lastFrame());
    slider.value = String(frame);
    slider.setAttribute('aria-valuetext', `Frame ${frame} of ${lastFrame()}`);
    const t = track(selected);
    frameText.textContent = `Frame ${frame} of ${lastFrame()} · ${(frame / rate).toFixed(2)} s${t && isKeyframe(t, frame) ? ' · keyframe' : ''}`;
    keyButton.setAttribute('aria-pressed', String(Boolean(t && isKeyframe(t, frame))));
    keyButton.disabled = !t;
    endButton.disabled = !t;
    list.replaceChildren(
      ...state.tracks.map((tr, i) => {
        const here = shapeAt(tr, frame);
        const to = tr.end ?? lastFrame();
        const pick = el(
          'button',
          { type: 'button', class: 'link', style: `border-left: 4px solid ${colour(tr)}` },
          `${tr.label} (${tr.type}): frames ${tr.keys[0]?.frame ?? 0}–${to}, ${tr.keys.length} keyframe${tr.keys.length === 1 ? '' : 's'}${here ? `; here ${describe(here)}` : '; not in this frame'}`,
        );
        pick.addEventListener('click', () => select(tr.uuid));
        return el(
          'li',
          { 'aria-selected': String(tr.uuid === selected), 'data-uuid': tr.uuid, 'data-type': tr.type, title: `Track ${i + 1}` },
          pick,
        );
      }),
    );
    renderEvents();
    renderAttributes();
    renderTimeline();
  }

  function renderEvents() {
    eventBar.replaceChildren(
      ...eventLabels.map((label, i) => {
        const b = el(
          'button',
          { type: 'button', 'aria-pressed': String(label === eventLabel) },
          i < 9 ? el('kbd', {}, `Alt+${i + 1}`) : '',
          ` ${label}`,
        );
        b.addEventListener('click', () => pickEvent(i));
        keepFocus(b);
        return b;
      }),
    );
    markButton.lastChild?.replaceWith(
      eventStart ? ` End “${eventStart.label}” (from frame ${eventStart.frame}) here` : ' Mark event start',
    );
    eventList.replaceChildren(
      ...sortedEvents().map((e) => {
        const remove = el(
          'button',
          { type: 'button', class: 'link', 'aria-label': `Remove ${e.label}, frames ${e.start} to ${e.end}` },
          '×',
        );
        remove.addEventListener('click', () => {
          record();
          state.events = state.events.filter((x) => x !== e);
          changed();
        });
        const seek = el('button', { type: 'button', class: 'link' }, `${e.label}: frames ${e.start}–${e.end}`);
        seek.addEventListener('click', () => go(e.start));
        return el('li', {}, seek, ' ', remove);
      }),
    );
  }

  const sortedEvents = () => [...state.events].sort((a, b) => a.start - b.start || a.end - b.end);

  function changed() {
    if (selected && !track(selected)) selected = null;
    render();
    context.changed();
  }

  function select(uuid: string | null) {
    if (selected === uuid) return;
    selected = uuid;
    const t = track(uuid);
    if (t) current.set(t.type, t.label);
    render();
  }

  function pickTool(t: Tool) {
    if (!toolBar.has(t)) return;
    drawing.cancel();
    tool = t;
    say(t === 'select' ? 'Click a shape to select its track; drag the frame to pan.' : `${toolKeys[t][1]}: ${current.get(t) ?? ''}`);
    render();
  }

  function pickLabel(i: number) {
    const kind = labelKind();
    const label = kind && geometry(kind)?.labels[i];
    if (!kind || !label) return;
    current.set(kind, label);
    const t = track(selected);
    if (t && t.label !== label) {
      record();
      t.label = label;
      changed();
    } else render();
  }

  function pickEvent(i: number) {
    const label = eventLabels[i];
    if (!label) return;
    eventLabel = label;
    say(`Event: ${label}. M marks its start, M again its end.`);
    render();
  }

  /** M: starts the chosen event at this frame; the second M ends it here (before the start: the two swap). */
  function markEvent() {
    if (!eventLabel) return say('This task names no events.');
    if (!eventStart) {
      eventStart = { label: eventLabel, frame };
      say(`“${eventLabel}” starts at frame ${frame}. Go to its last frame and press M.`);
      context.changed();
      return render();
    }
    record();
    const [start, end] = [Math.min(eventStart.frame, frame), Math.max(eventStart.frame, frame)];
    state.events.push({ label: eventStart.label, start, end });
    say(`“${eventStart.label}”: frames ${start}–${end}.`);
    eventStart = null;
    changed();
  }

  /** Shift+K: makes this frame a keyframe of the selected track (its shape as shown), or removes it if it is one. */
  function toggleKeyframe() {
    const t = track(selected);
    if (!t) return say('Select a track first.');
    record();
    if (isKeyframe(t, frame)) {
      if (t.keys.length === 1) {
        history.forget();
        return say('A track keeps at least one keyframe (Delete removes the track).');
      }
      t.keys = t.keys.filter((k) => k.frame !== frame);
      say(`Frame ${frame} is no longer a keyframe of ${t.label}.`);
    } else {
      const first = t.keys[0]?.frame ?? 0;
      const shape = shapeAt({ ...t, end: null }, Math.max(first, frame)) as Shape;
      setKeyframe(t, frame, shape);
      say(`Frame ${frame} is a keyframe of ${t.label}.`);
    }
    changed();
  }

  /** X: the selected track ends at this frame (it is not in the frames after); again: it goes on to the end. */
  function endTrack() {
    const t = track(selected);
    if (!t) return say('Select a track first.');
    const first = t.keys[0]?.frame ?? 0;
    if (frame < first) return say(`The track starts at frame ${first}.`);
    record();
    t.end = t.end === frame ? null : frame;
    say(t.end === null ? `${t.label} goes on to the last frame.` : `${t.label} ends at frame ${frame}.`);
    changed();
  }

  function remove() {
    if (!selected) return;
    record();
    const gone = selected;
    state.tracks = state.tracks.filter((t) => t.uuid !== gone);
    for (const t of state.tracks)
      if (t.attributes) for (const [name, value] of Object.entries(t.attributes)) if (value === gone) delete t.attributes[name];
    selected = null;
    changed();
  }

  /** Alt+arrows: moves the selected track's shape in this frame, which becomes a keyframe. */
  function nudge(e: KeyboardEvent) {
    const step = e.shiftKey ? 10 : 1;
    const [dx, dy] = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key] ?? [0, 0];
    const t = track(selected);
    const shape = t && shapeAt(t, frame);
    if (!t || !shape) return say('Select a shape in this frame first.');
    record();
    const moved = clone(shape);
    translate(moved, dx as number, dy as number, canvas.imgW, canvas.imgH);
    setKeyframe(t, frame, moved);
    changed();
  }

  const cycle = (step: number) => {
    const shown = visibleShapes();
    if (!shown.length) return;
    const i = shown.findIndex((s) => s.uuid === selected);
    select((shown[(i + step + shown.length) % shown.length] as Shape).uuid);
  };

  // ---- frames and playback -------------------------------------------------------------------
  const frames = new Frames(urls.map(context.media), videoUrl === undefined ? undefined : context.media(videoUrl), rate);
  function go(f: number) {
    const next = Math.min(Math.max(0, Math.round(f)), lastFrame());
    if (!ready || next === frame) return;
    frame = next;
    render();
    context.changed();
    frames.show(frame).then(
      (shown) => {
        if (shown) canvas.redrawImage();
      },
      () => say(`Frame ${next} could not be loaded.`),
    );
  }
  function togglePlay(on = playing === null) {
    if (playing) clearInterval(playing);
    playing = null;
    if (on && ready) {
      if (frame >= lastFrame()) go(0);
      playing = setInterval(() => {
        if (frames.shown !== frame) return; // the frame is still loading: wait for it
        if (frame >= lastFrame()) togglePlay(false);
        else go(frame + 1);
      }, 1000 / rate);
    }
    playButton.setAttribute('aria-pressed', String(playing !== null));
    playButton.lastChild?.replaceWith(playing ? ' Pause' : ' Play');
  }

  frames.open().then(
    ({ width, height, count: n }) => {
      count = n;
      frame = Math.min(frame, lastFrame());
      const maxW = Math.max(320, holder.parentElement?.clientWidth ?? container.clientWidth - 24);
      const maxH = Math.max(240, window.innerHeight - 290);
      canvas.setImage(frames.canvas, maxW, maxH);
      for (const t of state.tracks) for (const k of t.keys) tidy(k.shape, width, height);
      size.textContent = `${width} × ${height} px, ${n} frame${n === 1 ? '' : 's'} at ${rate} per second${geometries.length ? '' : ' — this task names no geometry'}`;
      ready = true;
      const pending = (draft as { drawing?: Pending } | undefined)?.drawing;
      if (frame)
        frames.show(frame).then(
          () => canvas.redrawImage(),
          () => undefined,
        );
      if (pending && toolBar.has(pending.tool)) {
        tool = pending.tool;
        render();
        drawing.resume(pending);
        say(`The ${pending.tool} you were drawing is back: go on.`);
      } else render();
    },
    () => {
      size.textContent = 'The frames could not be loaded. Skip the task with a reason if they do not come back.';
      status.className = 'notice bad';
    },
  );

  // ---- keys ----------------------------------------------------------------------------------
  // Space plays and pauses (on a button or in a field it keeps its own meaning).
  const space = (e: KeyboardEvent) => {
    if (e.key !== ' ' || e.ctrlKey || e.altKey || e.metaKey) return;
    if (e.target instanceof HTMLElement && e.target.closest('input, textarea, select, button, [contenteditable]')) return;
    if (document.querySelector('.overlay:not([hidden])')) return;
    e.preventDefault();
    if (e.type === 'keydown' && !e.repeat) togglePlay();
  };
  document.addEventListener('keydown', space);
  function zoom(factor: number) {
    if (factor) canvas.zoom(factor);
    else canvas.view(canvas.fit, 0, 0);
    render();
  }
  const noDialog = () => !document.querySelector('.overlay:not([hidden])');
  const shortcuts: Shortcut[] = [
    ...toolBar.shortcuts,
    {
      keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
      label: 'Choose label 1-9 of the tool (relabels the selected track)',
      run: (e) => pickLabel(Number(e.key) - 1),
    },
    { keys: ['ArrowRight', '.'], label: 'Next frame', run: () => go(frame + 1) },
    { keys: ['ArrowLeft', ','], label: 'Previous frame', run: () => go(frame - 1) },
    { keys: ['Shift+ArrowRight', '>'], label: 'Seek 10 frames forward', run: () => go(frame + 10) },
    { keys: ['Shift+ArrowLeft', '<'], label: 'Seek 10 frames back', run: () => go(frame - 10) },
    {
      keys: ['Alt+ArrowLeft', 'Alt+ArrowRight', 'Alt+ArrowUp', 'Alt+ArrowDown'],
      label: 'Move the selected shape by 1 px (Shift: 10 px); this frame becomes a keyframe',
      run: nudge,
    },
    {
      keys: ['Alt+Shift+ArrowLeft', 'Alt+Shift+ArrowRight', 'Alt+Shift+ArrowUp', 'Alt+Shift+ArrowDown'],
      label: 'Move the selected shape by 10 px',
      run: nudge,
    },
    { keys: ['Home'], label: 'First frame', run: () => go(0) },
    { keys: ['End'], label: 'Last frame', run: () => go(lastFrame()) },
    { keys: ['Space'], label: 'Play or pause', run: () => togglePlay() },
    { keys: ['Shift+K'], label: 'Make this frame a keyframe of the selected track, or no longer one', run: toggleKeyframe },
    { keys: ['X'], label: 'End the selected track at this frame (again: it goes on to the end)', run: endTrack },
    ...(eventLabels.length
      ? [
          {
            keys: ['Alt+1', 'Alt+2', 'Alt+3', 'Alt+4', 'Alt+5', 'Alt+6', 'Alt+7', 'Alt+8', 'Alt+9'],
            label: 'Choose event 1-9',
            run: (e: KeyboardEvent) => pickEvent(Number(e.code.replace('Digit', '')) - 1),
          },
          { keys: ['M'], label: "Mark the chosen event's start at this frame; again: its end", run: markEvent },
        ]
      : []),
    { keys: ['Enter'], label: 'Finish the polygon, line or cuboid being drawn', when: () => drawing.pending, run: () => drawing.finish() },
    {
      keys: ['Delete', 'Backspace'],
      label: 'Delete the selected track (while drawing: take back the last vertex)',
      run: (e) => {
        if (drawing.pending) {
          if (e.key === 'Backspace') drawing.undoVertex();
          return;
        }
        remove();
      },
    },
    ...undoKeys(
      () => undoRedo('undo'),
      () => undoRedo('redo'),
    ),
    { keys: [']'], label: 'Select the next shape in this frame', run: () => cycle(1) },
    { keys: ['['], label: 'Select the previous shape in this frame', run: () => cycle(-1) },
    { keys: ['+', '='], label: 'Zoom in (also the wheel)', run: () => zoom(1.25) },
    { keys: ['-'], label: 'Zoom out', run: () => zoom(0.8) },
    { keys: ['0'], label: 'Fit the frame', run: () => zoom(0) },
    {
      keys: ['Escape'],
      label: 'Cancel the shape being drawn or the event being marked, or deselect',
      when: () => noDialog() && (drawing.pending || selected !== null || eventStart !== null),
      run: () => {
        if (drawing.cancel()) return;
        if (eventStart) {
          eventStart = null;
          say('Event canceled.');
          render();
          context.changed();
        } else select(null);
      },
    },
  ];
  canvas.stage.on('wheel', () => {
    zoomText.textContent = `zoom ${Math.round((canvas.scale / canvas.fit) * 100)} %`;
  });

  return {
    shortcuts,
    getDraft: () => {
      const pending = drawing.state;
      return {
        tracks: state.tracks.map(trackDraft),
        events: state.events,
        frame,
        ...(eventStart ? { eventStart } : {}),
        ...(pending ? { drawing: pending } : {}),
      };
    },
    getResponse() {
      if (!ready) return { ok: false, problem: 'The frames are still loading.' };
      if (eventStart)
        return {
          ok: false,
          problem: `The event “${eventStart.label}” has a start (frame ${eventStart.frame}) but no end: press M on its last frame.`,
        };
      const annotations: Record<string, unknown>[] = [];
      for (const [i, t] of state.tracks.entries()) {
        const where = `Track ${i + 1} (${t.type}, ${t.label})`;
        for (const k of t.keys) {
          const problem = shapeProblem({ ...k.shape, label: t.label }, geometry(t.type));
          if (problem) return { ok: false, problem: `${where}, frame ${k.frame}: ${problem}.` };
        }
        const probe = { ...(t.keys[0]?.shape as Shape), label: t.label, ...(t.attributes ? { attributes: t.attributes } : {}) } as Shape;
        const missing = missingAttribute(defs, probe);
        if (missing) return { ok: false, problem: `${where}: answer "${missing.question}".` };
        const out = trackOut(t, lastFrame());
        if (!(out.frames as unknown[]).length) continue;
        const attributes = attributesOut(defs, probe);
        annotations.push(attributes ? { ...out, attributes } : out);
      }
      const response = { annotations, events: sortedEvents().map((e) => ({ label: e.label, start: e.start, end: e.end })) };
      const [rule] = checkAnswer({ type: 'videoplaybackannotation', params }, response);
      if (rule) return { ok: false, problem: rule };
      return { ok: true, response: response as never };
    },
    destroy() {
      togglePlay(false);
      document.removeEventListener('keydown', space);
      drawing.destroy();
      canvas.destroy();
      frames.destroy();
    },
  };
};
