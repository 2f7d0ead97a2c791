// The drawing tools and the pointer gestures on the canvas: a drag draws a box, an ellipse or a
// cuboid's face (then a click places its side, or Enter leaves it without one); a click places a
// point; clicks place the vertices of a polygon or a line (a click on the first vertex closes the
// polygon, a click on the last one or Enter finishes, Backspace takes the last one back). The
// select tool picks shapes, and a drag on the image pans; with any tool, a drag with the middle
// button or with Space held pans, and the wheel zooms around the pointer.
import Konva from 'konva/lib/Core';
import { Ellipse as KEllipse } from 'konva/lib/shapes/Ellipse';
import { Line } from 'konva/lib/shapes/Line';
import { Rect } from 'konva/lib/shapes/Rect';
import { polygonProblem } from '../../../shared/answer-rules.ts';
import type { ImageCanvas } from './canvas.ts';
import { cuboidEdges, cuboidFrom, fewestVertices, round, type Geometry, type Kind, type Pt, type Shape } from './model.ts';
import { uuidV4 } from './uuid.ts';

export type Tool = 'select' | Kind;

export interface ToolHost {
  tool(): Tool;
  geometry(kind: Kind): Geometry | undefined;
  /** The label new shapes of this geometry get. */
  label(kind: Kind): string | undefined;
  /** A finished shape: recorded for undo, added and selected. */
  add(shape: Shape): void;
  deselect(): void;
  select(uuid: string): void;
  /** Something to tell the person (the status line under the canvas). */
  say(text: string): void;
  /** The shape being drawn changed (it goes with the draft). */
  drafted(): void;
}

/** A shape being drawn, as the draft keeps it: the vertices placed so far, or a cuboid's face. */
export interface Pending {
  tool: 'polygon' | 'line' | 'cuboid';
  vertices?: Pt[];
  face?: { left: number; top: number; width: number; height: number };
}

/** Screen pixels within which a click counts as on a vertex, or a press as a click. */
const near = 8;
const distance = (a: Pt, b: Pt) => Math.hypot(a.x - b.x, a.y - b.y);

export class Drawing {
  /** Vertices of the polygon or line being drawn, or the cuboid's face while its side is placed. */
  private vertices: Pt[] = [];
  private face: { left: number; top: number; width: number; height: number } | null = null;
  private gesture: { kind: 'pan' | 'draw'; start: Pt; startScreen: Pt; last: Pt; moved: boolean } | null = null;
  private readonly ghost = new Konva.Group({ name: 'ghost', listening: false });
  spaceHeld = false;
  private readonly cleanup: (() => void)[] = [];

  constructor(
    private readonly canvas: ImageCanvas,
    private readonly host: ToolHost,
  ) {
    canvas.editLayer.add(this.ghost);
    const stage = canvas.stage;
    stage.on('pointerdown', (e) => this.down(e.evt as PointerEvent, e.target === stage));
    const holder = stage.container();
    const hover = (e: PointerEvent) => this.move(e);
    const up = (e: PointerEvent) => this.up(e);
    const wheel = (e: WheelEvent) => {
      e.preventDefault();
      const { screen } = canvas.toImage(e);
      canvas.zoom(Math.exp(-e.deltaY * 0.0015), screen);
      this.drawGhost();
    };
    const noMenu = (e: Event) => e.preventDefault();
    holder.addEventListener('wheel', wheel, { passive: false });
    holder.addEventListener('contextmenu', noMenu);
    window.addEventListener('pointermove', hover);
    window.addEventListener('pointerup', up);
    this.cleanup.push(
      () => holder.removeEventListener('wheel', wheel),
      () => holder.removeEventListener('contextmenu', noMenu),
      () => window.removeEventListener('pointermove', hover),
      () => window.removeEventListener('pointerup', up),
    );
  }

  /** Whether a shape is being drawn (Enter, Escape and Backspace then act on it). */
  get pending(): boolean {
    return this.vertices.length > 0 || this.face !== null;
  }

  private down(e: PointerEvent, onBackground: boolean): void {
    const { image, screen } = this.canvas.toImage(e);
    const tool = this.host.tool();
    if (e.button === 0 && !this.spaceHeld && tool === 'select' && onBackground) {
      // A press on a drawn shape selects it, and a drag goes on to move it.
      const hit = this.canvas.shapeAt(image);
      if (hit) {
        this.host.select(hit);
        this.canvas.dragSelected();
        return;
      }
    }
    const pan =
      e.button === 1 || e.button === 2 || (e.button === 0 && this.spaceHeld) || (e.button === 0 && tool === 'select' && onBackground);
    if (pan) {
      e.preventDefault();
      this.canvas.panning(true);
      this.gesture = { kind: 'pan', start: image, startScreen: screen, last: screen, moved: false };
      return;
    }
    if (e.button !== 0 || tool === 'select' || !onBackground) return;
    if (!this.host.label(tool)) {
      this.host.say(`This task has no ${tool} labels.`);
      return;
    }
    this.gesture = { kind: 'draw', start: image, startScreen: screen, last: screen, moved: false };
  }

  private move(e: PointerEvent): void {
    const { image, screen } = this.canvas.toImage(e);
    const g = this.gesture;
    if (g) {
      if (distance(screen, g.startScreen) >= 4) g.moved = true;
      if (g.kind === 'pan') {
        this.canvas.panBy(screen.x - g.last.x, screen.y - g.last.y);
        g.last = screen;
        return;
      }
      g.last = screen;
    } else if (!this.pending) {
      // With the select tool, the cursor says whether a press would take a shape or pan.
      // (The transformer's handles set their own.)
      const stage = this.canvas.stage;
      if (this.host.tool() !== 'select' || this.spaceHeld || e.target !== stage.content.querySelector('canvas:last-child')) return;
      const over = stage.getIntersection(screen);
      if (over?.name().includes('_anchor')) return;
      stage.container().style.cursor = over || this.canvas.shapeAt(image) ? 'move' : 'grab';
      return;
    }
    this.drawGhost(image);
  }

  private up(e: PointerEvent): void {
    const g = this.gesture;
    if (!g) return;
    this.gesture = null;
    const { image } = this.canvas.toImage(e);
    if (g.kind === 'pan') {
      this.canvas.panning(false);
      if (!g.moved && this.host.tool() === 'select') this.host.deselect();
      return;
    }
    const tool = this.host.tool();
    if (tool === 'select') return;
    const label = this.host.label(tool) as string;
    const s = this.canvas.scale;
    const rect = {
      left: Math.min(g.start.x, image.x),
      top: Math.min(g.start.y, image.y),
      width: Math.abs(image.x - g.start.x),
      height: Math.abs(image.y - g.start.y),
    };
    const big = rect.width * s >= 4 && rect.height * s >= 4;
    if (tool === 'box' || tool === 'ellipse' || (tool === 'cuboid' && !this.face)) {
      this.clearGhost();
      if (!big) return;
      if (tool === 'box') this.host.add(r({ uuid: uuidV4(), type: 'box', label, ...rect }));
      else if (tool === 'ellipse')
        this.host.add(
          r({
            uuid: uuidV4(),
            type: 'ellipse',
            label,
            x: rect.left + rect.width / 2,
            y: rect.top + rect.height / 2,
            rx: rect.width / 2,
            ry: rect.height / 2,
            rotation: 0,
          }),
        );
      else {
        this.face = rect;
        this.host.drafted();
        this.host.say('Click where the side of the cuboid ends (Enter: no side visible, Escape: cancel).');
        this.drawGhost(image);
      }
      return;
    }
    if (tool === 'cuboid' && this.face) {
      const face = this.face;
      this.face = null;
      this.clearGhost();
      this.host.add(r({ uuid: uuidV4(), type: 'cuboid', label, vertices: cuboidFrom(face, image) }));
      return;
    }
    if (tool === 'point') {
      this.host.add(r({ uuid: uuidV4(), type: 'point', label, x: g.start.x, y: g.start.y }));
      return;
    }
    // polygon, line: a click places a vertex.
    const geometry = this.host.geometry(tool);
    if (!geometry) return;
    const first = this.vertices[0];
    const last = this.vertices[this.vertices.length - 1];
    const toScreen = (p: Pt) => ({ x: p.x * s, y: p.y * s });
    const fewest = fewestVertices(geometry);
    if (tool === 'polygon' && first && this.vertices.length > 1 && distance(toScreen(first), toScreen(image)) < near) {
      // A click on the first vertex closes the polygon; too early, it says so and adds nothing (a
      // second vertex at the first one's place would make an outline that touches itself).
      if (this.vertices.length >= fewest) this.finish();
      else this.host.say(`A polygon needs at least ${fewest} vertices here; it has ${this.vertices.length}: place more before closing it.`);
      return;
    }
    if (last && distance(toScreen(last), toScreen(image)) < near) {
      // A second click on the last vertex (a double click) finishes.
      if (this.vertices.length >= fewest) this.finish();
      return;
    }
    if (tool === 'polygon' && this.vertices.some((v) => distance(toScreen(v), toScreen(image)) < near)) {
      this.host.say("That vertex is placed already: a polygon's outline may not touch itself.");
      return;
    }
    this.vertices.push(image);
    this.host.drafted();
    if (this.vertices.length >= geometry.maxVertices) this.finish();
    else {
      this.host.say(
        `${tool === 'polygon' ? 'Polygon' : 'Line'}: ${this.vertices.length} vertices. ${this.vertices.length >= fewest ? 'Enter finishes' : `At least ${fewest}`}${tool === 'polygon' ? ', a click on the first vertex closes' : ''}; Backspace takes one back, Escape cancels.`,
      );
      this.drawGhost(image);
    }
  }

  /** Finishes the polygon, line or cuboid being drawn (Enter); false when nothing is pending. */
  finish(): boolean {
    const tool = this.host.tool();
    if (this.face && tool === 'cuboid') {
      const label = this.host.label('cuboid') as string;
      this.host.add(r({ uuid: uuidV4(), type: 'cuboid', label, vertices: cuboidFrom(this.face) }));
      this.face = null;
      this.clearGhost();
      return true;
    }
    if (!this.vertices.length || (tool !== 'polygon' && tool !== 'line')) return false;
    const geometry = this.host.geometry(tool);
    const label = this.host.label(tool);
    if (!geometry || !label) return false;
    const fewest = fewestVertices(geometry);
    if (this.vertices.length < fewest) {
      this.host.say(`A ${tool} needs at least ${fewest} vertices here; it has ${this.vertices.length}.`);
      return true;
    }
    // The server's rule (answer-rules.ts): a polygon's outline neither crosses nor touches itself.
    const crossing = tool === 'polygon' ? polygonProblem(this.vertices.map((v) => ({ x: round(v.x), y: round(v.y) }))) : null;
    if (crossing) {
      this.host.say(`This polygon ${crossing}: a polygon's outline may not cross itself. Backspace takes the last vertex back.`);
      return true;
    }
    const vertices = this.vertices;
    this.vertices = [];
    this.clearGhost();
    this.host.add(r({ uuid: uuidV4(), type: tool, label, vertices }));
    return true;
  }

  /** Drops the shape being drawn (Escape); false when nothing is pending. */
  cancel(): boolean {
    if (!this.pending) return false;
    this.vertices = [];
    this.face = null;
    this.clearGhost();
    this.host.say('Drawing canceled.');
    return true;
  }

  /** Takes back the last vertex placed (Backspace); false when nothing is pending. */
  undoVertex(): boolean {
    if (!this.vertices.length) return false;
    this.vertices.pop();
    this.host.drafted();
    this.drawGhost();
    return true;
  }

  /** The shape being drawn, for the draft. */
  get state(): Pending | undefined {
    const tool = this.host.tool();
    if (this.face) return { tool: 'cuboid', face: { ...this.face } };
    if (this.vertices.length && (tool === 'polygon' || tool === 'line')) return { tool, vertices: this.vertices.map((v) => ({ ...v })) };
    return undefined;
  }

  /** Takes up a shape being drawn from a draft (the tool is already chosen). */
  resume(p: Pending): void {
    if (p.tool === 'cuboid' && p.face) this.face = { ...p.face };
    else if (p.vertices) this.vertices = p.vertices.map((v) => ({ x: Number(v.x), y: Number(v.y) }));
    this.drawGhost();
  }

  private lastPointer: Pt | null = null;

  private clearGhost(): void {
    this.ghost.destroyChildren();
    this.ghost.getLayer()?.batchDraw();
  }

  /** The shape being drawn, up to the pointer. */
  drawGhost(pointer: Pt | null = this.lastPointer): void {
    this.lastPointer = pointer;
    this.ghost.destroyChildren();
    this.ghost.moveToTop();
    const tool = this.host.tool();
    const style = { stroke: '#fff', strokeWidth: 1.5, strokeScaleEnabled: false, dash: [6, 4], listening: false };
    const g = this.gesture;
    if (g?.kind === 'draw' && pointer && (tool === 'box' || tool === 'ellipse' || (tool === 'cuboid' && !this.face))) {
      const left = Math.min(g.start.x, pointer.x);
      const top = Math.min(g.start.y, pointer.y);
      const width = Math.abs(pointer.x - g.start.x);
      const height = Math.abs(pointer.y - g.start.y);
      this.ghost.add(
        tool === 'ellipse'
          ? new KEllipse({ ...style, x: left + width / 2, y: top + height / 2, radiusX: width / 2, radiusY: height / 2 })
          : new Rect({ ...style, x: left, y: top, width, height }),
      );
    } else if (this.face && pointer) {
      const edges = cuboidEdges(cuboidFrom(this.face, pointer));
      for (const [a, b] of edges) this.ghost.add(new Line({ ...style, points: [a.x, a.y, b.x, b.y] }));
    } else if (this.vertices.length && (tool === 'polygon' || tool === 'line')) {
      const points = [...this.vertices, ...(pointer ? [pointer] : [])].flatMap((v) => [v.x, v.y]);
      this.ghost.add(new Line({ ...style, points, closed: tool === 'polygon' }));
      const s = this.canvas.scale;
      for (const [i, v] of this.vertices.entries())
        this.ghost.add(
          new Rect({ x: v.x - 3 / s, y: v.y - 3 / s, width: 6 / s, height: 6 / s, fill: i ? '#fff' : '#f0a500', listening: false }),
        );
    }
    this.ghost.getLayer()?.batchDraw();
  }

  destroy(): void {
    for (const c of this.cleanup) c();
  }
}

/** A new shape's coordinates, to hundredths of a pixel. */
function r<S extends Shape>(s: S): S {
  const out = s as Shape;
  if (out.type === 'box')
    Object.assign(out, { left: round(out.left), top: round(out.top), width: round(out.width), height: round(out.height) });
  else if (out.type === 'point') Object.assign(out, { x: round(out.x), y: round(out.y) });
  else if (out.type === 'ellipse') Object.assign(out, { x: round(out.x), y: round(out.y), rx: round(out.rx), ry: round(out.ry) });
  else for (const v of out.vertices) Object.assign(v, { x: round(v.x), y: round(v.y) });
  return s;
}
