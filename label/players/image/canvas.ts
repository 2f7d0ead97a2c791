// The image canvas (Konva): four layers, as Konva advises for many shapes
// (konvajs.org/docs/performance/All_Performance_Tips.html): the image, the read-only `layers` and
// the drawn shapes never listen to the pointer (no hit canvas to redraw with every frame); the
// read-only shapes are one Konva.Shape that strokes them all as one path, and the drawn shapes one
// that fills and strokes them a path per colour, each skipping what lies outside the view (1,000
// boxes are one node, not 1,000). A click finds its shape by geometry (`shapeAt`). The selected
// shape and its handles live on a small editing layer of ordinary Konva nodes, so that dragging
// redraws only that. Zoom and pan are the stage's transform, so everything works in image pixels.
import Konva from 'konva/lib/Core';
import { Circle } from 'konva/lib/shapes/Circle';
import { Ellipse as KEllipse } from 'konva/lib/shapes/Ellipse';
import { Image as KImage } from 'konva/lib/shapes/Image';
import { Line } from 'konva/lib/shapes/Line';
import { Rect } from 'konva/lib/shapes/Rect';
import { Transformer } from 'konva/lib/shapes/Transformer';
import { boundsOf, clone, cuboidEdges, num, translate, tidy, type Pt, type Shape } from './model.ts';
import type { components } from '../../../generated/workforce.ts';

type Layers = components['schemas']['Layers'];
const contextColour = '#ffd400';

/** What the canvas tells the player while a person edits the selected shape. */
export interface EditEvents {
  /** A change begins (undo records the shapes as they are). */
  begin(): void;
  /** The change is done: the shape as it is now. */
  commit(shape: Shape): void;
  /** Vertices a polygon or line keeps at least, and may have at most. */
  vertexBounds(shape: Shape): { fewest: number; most: number };
}

const isTrue = (v: unknown) => v === true || String(v).toLowerCase() === 'true';

/** Catmull-Rom through the points, as cubic Béziers (a cardinal spline, tension 0.5). */
function splinePath(ctx: Konva.Context, p: Pt[]): void {
  const first = p[0];
  if (!first) return;
  ctx.moveTo(first.x, first.y);
  for (let i = 0; i < p.length - 1; i++) {
    const p0 = p[i - 1] ?? (p[i] as Pt);
    const p1 = p[i] as Pt;
    const p2 = p[i + 1] as Pt;
    const p3 = p[i + 2] ?? p2;
    ctx.bezierCurveTo(p1.x + (p2.x - p0.x) / 6, p1.y + (p2.y - p0.y) / 6, p2.x - (p3.x - p1.x) / 6, p2.y - (p3.y - p1.y) / 6, p2.x, p2.y);
  }
}

export class ImageCanvas {
  readonly stage: Konva.Stage;
  private readonly imageLayer = new Konva.Layer({ listening: false });
  private readonly contextLayer = new Konva.Layer({ listening: false });
  private readonly shapeLayer = new Konva.Layer({ listening: false });
  readonly editLayer = new Konva.Layer();
  /** The drawn shapes but the selected one, with their colour and bounds, in drawing order. */
  private drawn: { s: Shape; colour: string; b: Bounds }[] = [];
  private readonly drawnNode = new Konva.Shape({ listening: false, perfectDrawEnabled: false, sceneFunc: (ctx) => this.paintDrawn(ctx) });
  private contextNode: Konva.Shape | null = null;
  /** While a pan caches the layers, they are painted whole, not only the part in view. */
  private caching = false;
  private readonly transformer = new Transformer({
    keepRatio: false,
    ignoreStroke: true,
    flipEnabled: false,
    rotateEnabled: false,
    anchorSize: 9,
    borderStroke: '#fff',
    anchorStroke: '#0b57d0',
  });
  imgW = 0;
  imgH = 0;
  /** Screen pixels per image pixel when the whole image fits. */
  fit = 1;
  private selected: Shape | null = null;
  /** The selected shape's node on the editing layer. */
  private selectedNode: Konva.Shape | null = null;
  private selectedColour = '#fff';
  /** Whether the body of the selected shape can be dragged (the select tool) or only its handles. */
  private movable = true;

  constructor(
    private readonly holder: HTMLDivElement,
    /** Drawn lines are cardinal splines through their vertices. */
    private readonly splines: boolean,
    private readonly events: EditEvents,
  ) {
    this.stage = new Konva.Stage({ container: holder, width: 10, height: 10 });
    this.stage.add(this.imageLayer, this.contextLayer, this.shapeLayer, this.editLayer);
    this.shapeLayer.add(this.drawnNode);
  }

  /** The part of the image in view, in image pixels, widened by `pad` screen pixels. */
  visible(pad = 8): Bounds {
    if (this.caching) return { left: 0, top: 0, right: this.imgW, bottom: this.imgH };
    const s = this.scale;
    const left = (-this.stage.x() - pad) / s;
    const top = (-this.stage.y() - pad) / s;
    return { left, top, right: left + (this.stage.width() + 2 * pad) / s, bottom: top + (this.stage.height() + 2 * pad) / s };
  }

  get scale(): number {
    return this.stage.scaleX();
  }

  /**
   * Shows the image at the largest size that fits `maxW` × `maxH` screen pixels (at most 4 × its own).
   * A canvas may stand for the image (a video's frames are drawn into one; `redrawImage` shows the next).
   */
  setImage(image: HTMLImageElement | HTMLCanvasElement, maxW: number, maxH: number): void {
    this.imgW = image instanceof HTMLImageElement ? image.naturalWidth : image.width;
    this.imgH = image instanceof HTMLImageElement ? image.naturalHeight : image.height;
    this.fit = Math.min(maxW / this.imgW, maxH / this.imgH, 4);
    this.stage.size({ width: Math.round(this.imgW * this.fit), height: Math.round(this.imgH * this.fit) });
    this.imageLayer.add(new KImage({ image, width: this.imgW, height: this.imgH, perfectDrawEnabled: false }));
    this.view(this.fit, 0, 0);
  }

  /**
   * Fits the image to new room (the window was resized): the zoom stays the same relative to the
   * fit, and the image point in the middle of the view stays in the middle.
   */
  refit(maxW: number, maxH: number): void {
    if (!this.imgW || !this.imgH) return;
    const s = this.scale;
    const relative = s / this.fit;
    const middle = { x: (this.stage.width() / 2 - this.stage.x()) / s, y: (this.stage.height() / 2 - this.stage.y()) / s };
    this.fit = Math.min(maxW / this.imgW, maxH / this.imgH, 4);
    this.stage.size({ width: Math.round(this.imgW * this.fit), height: Math.round(this.imgH * this.fit) });
    const next = this.fit * relative;
    this.view(next, this.stage.width() / 2 - middle.x * next, this.stage.height() / 2 - middle.y * next);
  }

  /** Paints the image again (its canvas now holds another frame). */
  redrawImage(): void {
    this.imageLayer.batchDraw();
  }

  // ---- zoom and pan ------------------------------------------------------------------------

  /** Sets the view: `scale` screen pixels per image pixel, the image's top-left at (x, y) on the stage. */
  view(scale: number, x: number, y: number): void {
    const s = Math.min(Math.max(scale, this.fit), this.fit * 40, 64);
    const w = this.stage.width();
    const h = this.stage.height();
    // The image keeps the stage covered (at the fitted size there is nothing to pan).
    const cx = Math.min(0, Math.max(w - this.imgW * s, x));
    const cy = Math.min(0, Math.max(h - this.imgH * s, y));
    const rescaled = s !== this.scale;
    this.stage.scale({ x: s, y: s });
    this.stage.position({ x: cx, y: cy });
    this.holder.dataset.scale = String(s);
    this.holder.dataset.x = String(cx);
    this.holder.dataset.y = String(cy);
    if (rescaled) this.renderSelected();
  }

  /** Zooms by `factor` keeping the image point under `at` (stage pixels; default the middle) in place. */
  zoom(factor: number, at: Pt = { x: this.stage.width() / 2, y: this.stage.height() / 2 }): void {
    const s = this.scale;
    const image = { x: (at.x - this.stage.x()) / s, y: (at.y - this.stage.y()) / s };
    const next = Math.min(Math.max(s * factor, this.fit), this.fit * 40, 64);
    this.view(next, at.x - image.x * next, at.y - image.y * next);
  }

  /**
   * While the view pans, the editing layer needs no hit canvas (Konva redraws a listening layer's
   * hit canvas with every frame); it comes back when the pan ends.
   */
  panning(on: boolean): void {
    this.editLayer.listening(!on);
    // During a pan the zoom stays, so the read-only and the drawn shapes are each painted once into
    // a bitmap of the image's size at this zoom, and every frame only copies it (Konva's cache), if
    // that bitmap is of a reasonable size.
    const nodes = [this.contextNode, this.drawnNode].filter((n): n is Konva.Shape => n !== null);
    if (!on) {
      for (const n of nodes) n.clearCache();
      return;
    }
    const ratio = this.scale * (window.devicePixelRatio || 1);
    if (this.imgW * ratio > 4096 || this.imgH * ratio > 4096) return;
    this.caching = true;
    try {
      for (const n of nodes) n.cache({ x: -2, y: -2, width: this.imgW + 4, height: this.imgH + 4, pixelRatio: ratio });
    } finally {
      this.caching = false;
    }
  }

  panBy(dx: number, dy: number): void {
    this.view(this.scale, this.stage.x() + dx, this.stage.y() + dy);
  }

  /** The image point under a DOM pointer event (clamped to the image), and the stage point. */
  toImage(e: { clientX: number; clientY: number }): { image: Pt; screen: Pt } {
    const r = this.stage.content.getBoundingClientRect();
    const screen = { x: e.clientX - r.left, y: e.clientY - r.top };
    const s = this.scale;
    return {
      screen,
      image: {
        x: Math.min(Math.max(0, (screen.x - this.stage.x()) / s), this.imgW),
        y: Math.min(Math.max(0, (screen.y - this.stage.y()) / s), this.imgH),
      },
    };
  }

  // ---- read-only layers --------------------------------------------------------------------

  /** Draws the task's `layers` under the work: one node that strokes every shape as one path. */
  setContext(layers: Layers | undefined): number {
    const boxes = (layers?.boxes ?? []).map((b) => [num(b.left), num(b.top), num(b.width), num(b.height)] as const);
    const vertices = (list: { vertices?: unknown }[] | undefined) =>
      (list ?? []).map((p) =>
        (Array.isArray(p.vertices) ? p.vertices : []).map((v: { x?: unknown; y?: unknown }) => ({ x: num(v.x), y: num(v.y) })),
      );
    const polygons = vertices(layers?.polygons);
    const lines = (layers?.lines ?? []).map((l, i) => ({ points: vertices(layers?.lines)[i] as Pt[], spline: isTrue(l.spline) }));
    const cuboids = (layers?.cuboids ?? []).map((c) =>
      cuboidEdges((c.vertices ?? []).map((v) => ({ description: v.description, x: num(v.x), y: num(v.y) }))),
    );
    const count = boxes.length + polygons.length + lines.length + cuboids.length;
    if (!count) return 0;
    const view = () => this.visible();
    const boundsOfPoints = (p: Pt[]): Bounds => ({
      left: Math.min(...p.map((q) => q.x)),
      top: Math.min(...p.map((q) => q.y)),
      right: Math.max(...p.map((q) => q.x)),
      bottom: Math.max(...p.map((q) => q.y)),
    });
    const polygonBounds = polygons.map(boundsOfPoints);
    const lineBounds = lines.map((l) => boundsOfPoints(l.points));
    const cuboidBounds = cuboids.map((edges) => boundsOfPoints(edges.flat()));
    const scale = () => this.scale;
    // Dashes cost a lot on a software canvas: only a few read-only shapes are dashed.
    const dashed = count <= 100;
    this.contextNode = new Konva.Shape({
      ...(dashed ? {} : { opacity: 0.85 }),
      perfectDrawEnabled: false,
      listening: false,
      // Stroked by hand, 1.5 screen pixels wide at the current zoom (so also in a cached bitmap).
      sceneFunc(ctx) {
        const v = view();
        const s = scale();
        ctx.beginPath();
        for (const [x, y, w, h] of boxes) if (x <= v.right && y <= v.bottom && x + w >= v.left && y + h >= v.top) ctx.rect(x, y, w, h);
        polygons.forEach((p, i) => {
          if (!overlaps(polygonBounds[i] as Bounds, v)) return;
          trace(ctx, p);
          ctx.closePath();
        });
        lines.forEach((l, i) => {
          if (!overlaps(lineBounds[i] as Bounds, v)) return;
          if (l.spline) splinePath(ctx, l.points);
          else trace(ctx, l.points);
        });
        cuboids.forEach((edges, i) => {
          if (!overlaps(cuboidBounds[i] as Bounds, v)) return;
          for (const [a, b] of edges) {
            ctx.moveTo(a.x, a.y);
            ctx.lineTo(b.x, b.y);
          }
        });
        ctx.setAttr('strokeStyle', contextColour);
        ctx.setAttr('lineWidth', 1.5 / s);
        if (dashed) ctx.setLineDash([5 / s, 3 / s]);
        ctx.stroke();
      },
    });
    this.contextLayer.add(this.contextNode);
    return count;
  }

  showContext(visible: boolean): void {
    this.contextLayer.visible(visible);
  }

  get contextVisible(): boolean {
    return this.contextLayer.visible();
  }

  // ---- the drawn shapes -----------------------------------------------------------------------

  /** A node for the shape (image pixels; strokes stay 2 screen pixels wide at any zoom). */
  private nodeFor(s: Shape, colour: string): Konva.Shape {
    const common = {
      id: s.uuid,
      name: 'shape',
      stroke: colour,
      strokeWidth: 2,
      strokeScaleEnabled: false,
      perfectDrawEnabled: false,
      shadowForStrokeEnabled: false,
      hitStrokeWidth: 10,
    };
    const fill = `${colour}33`;
    switch (s.type) {
      case 'box':
        return new Rect({ ...common, x: s.left, y: s.top, width: s.width, height: s.height, fill });
      case 'point':
        return new Circle({ ...common, x: s.x, y: s.y, radius: 5 / this.scale, fill: colour, stroke: '#fff', strokeWidth: 1.5 });
      case 'ellipse':
        return new KEllipse({ ...common, x: s.x, y: s.y, radiusX: s.rx, radiusY: s.ry, rotation: s.rotation, fill });
      case 'polygon':
      case 'line':
        return new Line({
          ...common,
          points: s.vertices.flatMap((v) => [v.x, v.y]),
          closed: s.type === 'polygon',
          ...(s.type === 'line' && this.splines ? { tension: 0.5 } : {}),
          ...(s.type === 'polygon' ? { fill } : {}),
        });
      case 'cuboid': {
        const face = ['face-topleft', 'face-topright', 'face-bottomright', 'face-bottomleft'].flatMap((d) => {
          const v = s.vertices.find((c) => c.description === d);
          return v ? [v] : [];
        });
        return new Konva.Shape({
          ...common,
          fill,
          sceneFunc(ctx, shape) {
            ctx.beginPath();
            trace(ctx, face);
            ctx.closePath();
            ctx.fillShape(shape);
            ctx.beginPath();
            for (const [a, b] of cuboidEdges(s.vertices)) {
              ctx.moveTo(a.x, a.y);
              ctx.lineTo(b.x, b.y);
            }
            ctx.strokeShape(shape);
          },
          hitFunc(ctx, shape) {
            ctx.beginPath();
            trace(ctx, face);
            ctx.closePath();
            for (const [a, b] of cuboidEdges(s.vertices)) {
              ctx.moveTo(a.x, a.y);
              ctx.lineTo(b.x, b.y);
            }
            ctx.fillStrokeShape(shape);
          },
        });
      }
    }
  }

  /** Shows the shapes; the selected one goes to the editing layer with its handles. */
  render(shapes: readonly Shape[], selected: string | null, colour: (s: Shape) => string, movable: boolean): void {
    this.drawn = shapes.filter((s) => s.uuid !== selected).map((s) => ({ s, colour: colour(s), b: boundsOf(s) }));
    this.shapeLayer.batchDraw();
    const chosen = shapes.find((s) => s.uuid === selected);
    this.selected = chosen ? clone(chosen) : null;
    this.selectedColour = chosen ? colour(chosen) : '#fff';
    this.movable = movable;
    this.renderSelected();
  }

  /** The drawn shapes in view: per colour, one path of areas (filled and stroked), one of lines, one of points. */
  private paintDrawn(ctx: Konva.Context): void {
    const s = this.scale;
    const v = this.visible();
    const groups = new Map<string, Shape[]>();
    for (const d of this.drawn)
      if (overlaps(d.b, v)) {
        const list = groups.get(d.colour);
        if (list) list.push(d.s);
        else groups.set(d.colour, [d.s]);
      }
    ctx.setAttr('lineJoin', 'round');
    for (const [colour, list] of groups) {
      ctx.beginPath();
      for (const sh of list) areaPath(ctx, sh);
      ctx.setAttr('fillStyle', `${colour}33`);
      ctx.fill();
      ctx.setAttr('strokeStyle', colour);
      ctx.setAttr('lineWidth', 2 / s);
      ctx.stroke();
      ctx.beginPath();
      for (const sh of list)
        if (sh.type === 'line') {
          if (this.splines) splinePath(ctx, sh.vertices);
          else trace(ctx, sh.vertices);
        } else if (sh.type === 'cuboid')
          for (const [a, b] of cuboidEdges(sh.vertices)) {
            ctx.moveTo(a.x, a.y);
            ctx.lineTo(b.x, b.y);
          }
      ctx.stroke();
      const points = list.filter((sh): sh is Extract<Shape, { type: 'point' }> => sh.type === 'point');
      if (points.length) {
        ctx.beginPath();
        for (const p of points) {
          ctx.moveTo(p.x + 5 / s, p.y);
          ctx.arc(p.x, p.y, 5 / s, 0, Math.PI * 2);
        }
        ctx.setAttr('fillStyle', colour);
        ctx.fill();
        ctx.setAttr('strokeStyle', '#fff');
        ctx.setAttr('lineWidth', 1.5 / s);
        ctx.stroke();
      }
    }
  }

  /** The topmost drawn shape (but the selected one) at an image point, within a few screen pixels. */
  shapeAt(p: Pt): string | null {
    const tol = 6 / this.scale;
    for (let i = this.drawn.length - 1; i >= 0; i--) {
      const { s, b } = this.drawn[i] as (typeof this.drawn)[number];
      if (p.x < b.left - tol - 5 || p.x > b.right + tol + 5 || p.y < b.top - tol - 5 || p.y > b.bottom + tol + 5) continue;
      if (hits(s, p, tol)) return s.uuid;
    }
    return null;
  }

  /** The selected shape on the editing layer, with its handles: a transformer, or a dot per vertex. */
  private renderSelected(): void {
    this.transformer.nodes([]);
    this.transformer.remove();
    for (const child of [...this.editLayer.getChildren()]) if (child.name() !== 'ghost') child.destroy();
    const s = this.selected;
    this.selectedNode = null;
    if (!s) return;
    const scale = this.scale;
    const node = this.nodeFor(s, this.selectedColour);
    this.selectedNode = node;
    node.strokeWidth(s.type === 'point' ? 2 : 3);
    // With a drawing tool only the handles answer: a new shape can start inside the selected one.
    node.draggable(this.movable || s.type === 'point');
    node.listening(this.movable || s.type === 'point');
    this.editLayer.add(node);
    // Moving the whole shape: the node follows the pointer; the shape moves as far as the image lets it.
    let from: Shape | null = null;
    let origin = { x: 0, y: 0 };
    const moved = () => {
      if (!from) return s;
      const next = clone(from);
      translate(next, node.x() - origin.x, node.y() - origin.y, this.imgW, this.imgH);
      return next;
    };
    node.on('dragstart', () => {
      this.events.begin();
      from = clone(s);
      origin = node.position();
    });
    node.on('dragmove', () => {
      const next = moved();
      if (!from) return;
      const [a, b] = [anchorOf(from), anchorOf(next)];
      node.position({ x: origin.x + b.x - a.x, y: origin.y + b.y - a.y });
    });
    node.on('dragend', () => {
      const next = moved();
      from = null;
      this.events.commit(next);
    });
    if (s.type === 'box' || s.type === 'ellipse') {
      this.transformer.setAttrs({ rotateEnabled: s.type === 'ellipse', keepRatio: false });
      this.editLayer.add(this.transformer);
      this.transformer.nodes([node]);
      node.on('transformstart', () => this.events.begin());
      node.on('transformend', () => {
        const next = clone(s);
        if (next.type === 'box')
          Object.assign(next, {
            left: node.x(),
            top: node.y(),
            width: Math.max(1, node.width() * Math.abs(node.scaleX())),
            height: Math.max(1, node.height() * Math.abs(node.scaleY())),
          });
        else if (next.type === 'ellipse' && node instanceof KEllipse)
          Object.assign(next, {
            x: node.x(),
            y: node.y(),
            rx: node.radiusX() * Math.abs(node.scaleX()),
            ry: node.radiusY() * Math.abs(node.scaleY()),
            rotation: node.rotation(),
          });
        this.events.commit(tidy(next, this.imgW, this.imgH));
      });
      return;
    }
    if (s.type !== 'polygon' && s.type !== 'line' && s.type !== 'cuboid') return;
    const redraw = () => {
      if (node instanceof Line) node.points(s.vertices.flatMap((v) => [v.x, v.y]));
      this.editLayer.batchDraw();
    };
    const { fewest, most } = this.events.vertexBounds(s);
    const dot = (v: Pt, extra: Partial<Konva.ShapeConfig>) =>
      new Circle({
        x: v.x,
        y: v.y,
        radius: 6 / scale,
        fill: '#fff',
        stroke: this.selectedColour,
        strokeWidth: 2,
        strokeScaleEnabled: false,
        draggable: true,
        hitStrokeWidth: 6,
        ...extra,
      });
    const keepInside = (c: Circle) => {
      c.x(Math.min(Math.max(0, c.x()), this.imgW));
      c.y(Math.min(Math.max(0, c.y()), this.imgH));
    };
    s.vertices.forEach((v, i) => {
      const handle = dot(v, { name: 'vertex' });
      handle.on('dragstart', () => this.events.begin());
      handle.on('dragmove', () => {
        keepInside(handle);
        v.x = handle.x();
        v.y = handle.y();
        redraw();
      });
      handle.on('dragend', () => this.events.commit(tidy(clone(s), this.imgW, this.imgH)));
      handle.on('dblclick dbltap', () => {
        if (s.type === 'cuboid' || s.vertices.length <= fewest) return;
        this.events.begin();
        const next = clone(s) as typeof s;
        next.vertices.splice(i, 1);
        this.events.commit(next);
      });
      this.editLayer.add(handle);
    });
    // A dot halfway along each edge: dragging it adds a vertex there.
    if (s.type !== 'cuboid' && s.vertices.length < most) {
      const count = s.type === 'polygon' ? s.vertices.length : s.vertices.length - 1;
      for (let i = 0; i < count; i++) {
        const a = s.vertices[i] as Pt;
        const b = s.vertices[(i + 1) % s.vertices.length] as Pt;
        const handle = dot({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 }, { name: 'midpoint', radius: 4 / scale, opacity: 0.6 });
        const added: Pt = { x: handle.x(), y: handle.y() };
        handle.on('dragstart', () => {
          this.events.begin();
          s.vertices.splice(i + 1, 0, added);
        });
        handle.on('dragmove', () => {
          keepInside(handle);
          added.x = handle.x();
          added.y = handle.y();
          redraw();
        });
        handle.on('dragend', () => this.events.commit(tidy(clone(s), this.imgW, this.imgH)));
        this.editLayer.add(handle);
      }
    }
  }

  /** Starts moving the selected shape with the pointer that is down now (a press on a shape selects and drags it). */
  dragSelected(): void {
    if (this.selectedNode?.draggable()) this.selectedNode.startDrag();
  }

  destroy(): void {
    this.stage.destroy();
  }
}

interface Bounds {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** Adds straight segments through the points to the current path. */
function trace(ctx: Konva.Context, points: readonly Pt[]): void {
  points.forEach((q, j) => {
    if (j) ctx.lineTo(q.x, q.y);
    else ctx.moveTo(q.x, q.y);
  });
}

const overlaps = (a: Bounds, b: Bounds) => a.left <= b.right && a.right >= b.left && a.top <= b.bottom && a.bottom >= b.top;

/** Adds the filled part of a shape (box, polygon, ellipse, cuboid face) to the current path. */
function areaPath(ctx: Konva.Context, s: Shape): void {
  if (s.type === 'box') ctx.rect(s.left, s.top, s.width, s.height);
  else if (s.type === 'polygon') {
    trace(ctx, s.vertices);
    ctx.closePath();
  } else if (s.type === 'ellipse') {
    const t = (s.rotation * Math.PI) / 180;
    ctx.moveTo(s.x + s.rx * Math.cos(t), s.y + s.rx * Math.sin(t));
    ctx.ellipse(s.x, s.y, s.rx, s.ry, t, 0, Math.PI * 2);
  } else if (s.type === 'cuboid') {
    trace(ctx, faceOf(s.vertices));
    ctx.closePath();
  }
}

const faceOf = (vertices: Extract<Shape, { type: 'cuboid' }>['vertices']): Pt[] =>
  ['face-topleft', 'face-topright', 'face-bottomright', 'face-bottomleft'].flatMap((d) => {
    const v = vertices.find((c) => c.description === d);
    return v ? [v] : [];
  });

function nearSegment(p: Pt, a: Pt, b: Pt, tol: number): boolean {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const t = dx || dy ? Math.min(1, Math.max(0, ((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy))) : 0;
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy)) <= tol;
}

function inside(p: Pt, polygon: Pt[]): boolean {
  let odd = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i] as Pt;
    const b = polygon[j] as Pt;
    if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) odd = !odd;
  }
  return odd;
}

/** Whether a click at `p` (image pixels, `tol` of slack) is on the shape. */
function hits(s: Shape, p: Pt, tol: number): boolean {
  switch (s.type) {
    case 'box':
      return p.x >= s.left - tol && p.x <= s.left + s.width + tol && p.y >= s.top - tol && p.y <= s.top + s.height + tol;
    case 'point':
      return Math.hypot(p.x - s.x, p.y - s.y) <= tol + 5;
    case 'ellipse': {
      const t = (-s.rotation * Math.PI) / 180;
      const dx = (p.x - s.x) * Math.cos(t) - (p.y - s.y) * Math.sin(t);
      const dy = (p.x - s.x) * Math.sin(t) + (p.y - s.y) * Math.cos(t);
      return (dx / (s.rx + tol)) ** 2 + (dy / (s.ry + tol)) ** 2 <= 1;
    }
    case 'polygon':
      return inside(p, s.vertices) || s.vertices.some((a, i) => nearSegment(p, a, s.vertices[(i + 1) % s.vertices.length] as Pt, tol));
    case 'line':
      return (
        s.vertices.some((a, i) => i > 0 && nearSegment(p, s.vertices[i - 1] as Pt, a, tol)) ||
        (s.vertices.length === 1 && nearSegment(p, s.vertices[0] as Pt, s.vertices[0] as Pt, tol))
      );
    case 'cuboid':
      return inside(p, faceOf(s.vertices)) || cuboidEdges(s.vertices).some(([a, b]) => nearSegment(p, a, b, tol));
  }
}

/** A reference point of the shape that moves with it (to follow a clamped move). */
function anchorOf(s: Shape): Pt {
  if (s.type === 'box') return { x: s.left, y: s.top };
  if (s.type === 'point' || s.type === 'ellipse') return { x: s.x, y: s.y };
  return s.vertices[0] ?? { x: 0, y: 0 };
}
