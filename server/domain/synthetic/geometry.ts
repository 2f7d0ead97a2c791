// Test mode's synthetic answers (synthetic.ts): shapes inside a canvas, in pixels from its
// top-left corner, rounded to 0.1 px, for the image and video types; and which shapes to draw for
// a task's `geometries` (imageannotation, videoplaybackannotation).
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import { asCount, asRecord, decimalNumber, distinctStrings, isRecord } from '../../../shared/json.ts';
import { NOMINAL_IMAGE } from './nominal.ts';
import { clamp, coveringLabels, range, round1, type SeededRandom } from './random.ts';

type Schemas = components['schemas'];

export interface Size {
  width: number;
  height: number;
}
interface Point {
  x: number;
  y: number;
}
interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}
type CuboidCorner = Schemas['CuboidVertex']['description'];
interface CuboidVertex extends Point {
  description: CuboidCorner;
}
interface Ellipse extends Point {
  rx: number;
  ry: number;
  rotation: number;
}
export type GeometryKind = Schemas['ImageAnnotationElement']['type'];
const GEOMETRY_KINDS: readonly GeometryKind[] = ['box', 'polygon', 'line', 'point', 'cuboid', 'ellipse'];

export type Shape =
  | ({ type: 'box' } & Box)
  | { type: 'polygon'; vertices: Point[] }
  | { type: 'line'; vertices: Point[] }
  | ({ type: 'point' } & Point)
  | { type: 'cuboid'; vertices: CuboidVertex[] }
  | ({ type: 'ellipse' } & Ellipse);

/** The size and vertex bounds of one geometry (older types: the task's; newer: the GeometrySpec's). */
export interface ShapeBounds {
  minWidth: number;
  minHeight: number;
  minVertices: number;
  maxVertices: number | undefined;
}

export function shapeBounds(spec: Json): ShapeBounds {
  const maxVertices = decimalNumber(spec.max_vertices);
  return {
    minWidth: asCount(spec.min_width, 0),
    minHeight: asCount(spec.min_height, 0),
    minVertices: asCount(spec.min_vertices, 1, 1),
    maxVertices: maxVertices === undefined ? undefined : Math.max(1, Math.floor(maxVertices)),
  };
}

/**
 * The image boxes are drawn on: the nominal image, widened or heightened when the task asks for
 * boxes larger than it (then the real image must be at least that large). The size bounds apply
 * to boxes only, so every other shape stays on the nominal image.
 */
export function canvasFor(kind: GeometryKind, bounds: Pick<ShapeBounds, 'minWidth' | 'minHeight'>): Size {
  if (kind !== 'box') return NOMINAL_IMAGE;
  return {
    width: Math.max(NOMINAL_IMAGE.width, bounds.minWidth),
    height: Math.max(NOMINAL_IMAGE.height, bounds.minHeight),
  };
}

/** A vertex count in the task's inclusive bounds, near `preferred` when the bounds allow. */
export function vertexCount(rng: SeededRandom, bounds: ShapeBounds, preferred: readonly [number, number]): number {
  const max = Math.max(bounds.maxVertices ?? Number.POSITIVE_INFINITY, bounds.minVertices);
  return clamp(rng.int(preferred[0], preferred[1]), bounds.minVertices, max);
}

/** An axis-aligned box of at least the minimum size, whole pixels, inside the canvas. */
export function randomBox(rng: SeededRandom, canvas: Size, bounds: ShapeBounds): Box {
  const side = (min: number, extent: number) => {
    const lo = Math.max(min, Math.min(16, extent));
    return rng.int(lo, clamp(Math.floor(extent / 2), lo, extent));
  };
  const width = side(bounds.minWidth, canvas.width);
  const height = side(bounds.minHeight, canvas.height);
  return { left: rng.int(0, canvas.width - width), top: rng.int(0, canvas.height - height), width, height };
}

export function randomPoint(rng: SeededRandom, canvas: Size): Point {
  return { x: rng.decimal(0, canvas.width), y: rng.decimal(0, canvas.height) };
}

/** A star-shaped (so never self-crossing) polygon: corners at increasing angles around a centre. */
export function randomPolygon(rng: SeededRandom, canvas: Size, count: number): Point[] {
  const cx = rng.decimal(canvas.width * 0.25, canvas.width * 0.75);
  const cy = rng.decimal(canvas.height * 0.25, canvas.height * 0.75);
  const reach = Math.min(cx, canvas.width - cx, cy, canvas.height - cy) * 0.9; // Stryker disable next-line all: the random first angle; every start gives a valid polygon
  const start = rng.next() * 2 * Math.PI;
  const step = (2 * Math.PI) / count;
  return range(count).map((i) => {
    const angle = start + step * (i + (rng.next() - 0.5) * 0.6);
    const radius = reach * (0.5 + rng.next() * 0.5);
    return {
      x: clamp(round1(cx + radius * Math.cos(angle)), 0, canvas.width),
      y: clamp(round1(cy + radius * Math.sin(angle)), 0, canvas.height),
    };
  });
}

/** A polyline running from left to right with random heights. */
export function randomPolyline(rng: SeededRandom, canvas: Size, count: number): Point[] {
  const x0 = rng.decimal(0, canvas.width / 2);
  const x1 = rng.decimal(x0, canvas.width);
  return range(count).map((i) => ({
    x: clamp(round1(count === 1 ? x0 : x0 + ((x1 - x0) * i) / (count - 1)), 0, canvas.width),
    y: rng.decimal(0, canvas.height),
  }));
}

/** The projection of a 3D box: a front face, plus the side's two corners when a side shows. */
function randomCuboid(rng: SeededRandom, canvas: Size): CuboidVertex[] {
  const depthX = rng.int(0, Math.floor(canvas.width * 0.1));
  const depthY = rng.int(0, Math.floor(canvas.height * 0.1));
  const face = randomBox(rng, { width: canvas.width - depthX, height: canvas.height - depthY }, shapeBounds({}));
  const top = face.top + depthY;
  const right = face.left + face.width;
  const bottom = top + face.height;
  const vertices: CuboidVertex[] = [
    { description: 'face-topleft', x: face.left, y: top },
    { description: 'face-bottomleft', x: face.left, y: bottom },
    { description: 'face-topright', x: right, y: top },
    { description: 'face-bottomright', x: right, y: bottom },
  ]; // Stryker disable next-line all: whether a side shows is the random draw; both answers are valid
  if (rng.chance(0.7)) {
    vertices.push(
      { description: 'side-topcorner', x: right + depthX, y: top - depthY },
      { description: 'side-bottomcorner', x: right + depthX, y: bottom - depthY },
    );
  }
  return vertices;
}

/** An ellipse whose every rotation stays inside the canvas (its radii fit the nearest edge). */
function randomEllipse(rng: SeededRandom, canvas: Size): Ellipse {
  const x = rng.decimal(canvas.width * 0.2, canvas.width * 0.8);
  const y = rng.decimal(canvas.height * 0.2, canvas.height * 0.8);
  const reach = Math.floor(Math.min(x, canvas.width - x, y, canvas.height - y));
  return { x, y, rx: rng.int(Math.ceil(reach * 0.2), reach), ry: rng.int(Math.ceil(reach * 0.2), reach), rotation: rng.int(0, 359) };
}

export function randomShape(rng: SeededRandom, kind: GeometryKind, canvas: Size, bounds: ShapeBounds): Shape {
  switch (kind) {
    case 'box':
      return { type: 'box', ...randomBox(rng, canvas, bounds) };
    case 'polygon':
      return { type: 'polygon', vertices: randomPolygon(rng, canvas, vertexCount(rng, bounds, [3, 8])) };
    case 'line':
      return { type: 'line', vertices: randomPolyline(rng, canvas, vertexCount(rng, bounds, [2, 6])) };
    case 'point':
      return { type: 'point', ...randomPoint(rng, canvas) };
    case 'cuboid':
      return { type: 'cuboid', vertices: randomCuboid(rng, canvas) };
    case 'ellipse':
      return { type: 'ellipse', ...randomEllipse(rng, canvas) };
  }
}

/** The smallest axis-aligned rectangle holding the shape (an ellipse at any rotation). */
function extentOf(shape: Shape): { minX: number; minY: number; maxX: number; maxY: number } {
  switch (shape.type) {
    case 'box':
      return { minX: shape.left, minY: shape.top, maxX: shape.left + shape.width, maxY: shape.top + shape.height };
    case 'point':
      return { minX: shape.x, minY: shape.y, maxX: shape.x, maxY: shape.y };
    case 'ellipse': {
      const r = Math.max(shape.rx, shape.ry);
      return { minX: shape.x - r, minY: shape.y - r, maxX: shape.x + r, maxY: shape.y + r };
    }
    default: {
      // A loop, not Math.min(...xs): a task may ask for more vertices than a call takes arguments.
      const extent = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
      for (const { x, y } of shape.vertices) {
        extent.minX = Math.min(extent.minX, x);
        extent.minY = Math.min(extent.minY, y);
        extent.maxX = Math.max(extent.maxX, x);
        extent.maxY = Math.max(extent.maxY, y);
      }
      return extent;
    }
  }
}

/** The shape moved by (dx, dy) whole pixels, the move shortened so that it stays inside the canvas. */
export function moveWithin(shape: Shape, dx: number, dy: number, canvas: Size): Shape {
  const extent = extentOf(shape);
  const mx = clamp(dx, Math.ceil(-extent.minX), Math.floor(canvas.width - extent.maxX));
  const my = clamp(dy, Math.ceil(-extent.minY), Math.floor(canvas.height - extent.maxY));
  const x = (v: number) => clamp(round1(v + mx), 0, canvas.width);
  const y = (v: number) => clamp(round1(v + my), 0, canvas.height);
  switch (shape.type) {
    case 'box':
      return { ...shape, left: x(shape.left), top: y(shape.top) };
    case 'point':
    case 'ellipse':
      return { ...shape, x: x(shape.x), y: y(shape.y) };
    case 'cuboid':
      return { ...shape, vertices: shape.vertices.map((v) => ({ ...v, x: x(v.x), y: y(v.y) })) };
    default:
      return { ...shape, vertices: shape.vertices.map((v) => ({ x: x(v.x), y: y(v.y) })) };
  }
}

// ---------------------------------------------------------------------------------------------
// imageannotation and videoplaybackannotation: several geometries, each with its own labels.

export interface GeometryPlan {
  kind: GeometryKind;
  label: string;
  bounds: ShapeBounds;
}

/** Which shapes to draw: for each geometry given, each of its labels at least once, a few more. */
export function geometryPlans(rng: SeededRandom, geometries: unknown): GeometryPlan[] {
  const given = asRecord(geometries);
  return GEOMETRY_KINDS.flatMap((kind) => {
    const spec = given[kind];
    if (!isRecord(spec)) return [];
    const labels = distinctStrings(spec.objects_to_annotate);
    const bounds = shapeBounds(spec);
    return coveringLabels(rng, labels, labels.length + rng.int(0, 1)).map((label) => ({ kind, label, bounds }));
  });
}

/** The box an `offset` attribute measures: box shapes only. */
export const boxOfShape = (shape: Shape): Size | undefined => (shape.type === 'box' ? shape : undefined);
