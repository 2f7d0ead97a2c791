// Shapes on an image: how alike two shapes of the same geometry are, and the image types' scorers
// (annotation, pointannotation, lineannotation, polygonannotation, imageannotation). Shapes are
// matched one to one per label (and geometry) by the Hungarian algorithm; a pair counts as the same
// object at similarity ≥ the threshold (0.5); score = F1 of the matching × mean matched similarity.
//   box                      IoU of the rectangles
//   polygon                  IoU of the areas (polygon-clipping; self-crossing outlines are resolved by its union)
//   cuboid                   IoU of the outlines (convex hull of the projected corners)
//   ellipse                  IoU of the ellipses, each drawn as a 32-gon
//   point                    1 − distance / tolerance (tolerance 32 px by default), at least 0
//   line                     1 − mean distance between the lines / tolerance: points sampled along each
//                            line, each one's distance to the other line, averaged both ways
import polygonClipping, { type MultiPolygon, type Pair, type Polygon } from 'polygon-clipping';
import {
  asRecord,
  type Json,
  type Match,
  matchingResult,
  matchItems,
  num,
  records,
  type ScoreResult,
  type Settings,
  sameJson,
  str,
} from './common.ts';

export type GeometryKind = 'box' | 'polygon' | 'line' | 'point' | 'cuboid' | 'ellipse';

interface XY {
  x: number;
  y: number;
}

const vertices = (shape: Json): XY[] => records(shape.vertices).map((v) => ({ x: num(v.x), y: num(v.y) }));

// ---------------------------------------------------------------------------------------------
// Areas: boxes directly, every other area through polygon clipping.

/** Signed-area sum of a multipolygon: outer rings count, holes subtract (polygon-clipping's output is oriented). */
function areaOf(shape: MultiPolygon): number {
  let total = 0;
  for (const polygon of shape) {
    polygon.forEach((ring, r) => {
      let twice = 0;
      for (let i = 0; i < ring.length; i++) {
        const [x1, y1] = ring[i] as Pair;
        const [x2, y2] = ring[(i + 1) % ring.length] as Pair;
        twice += x1 * y2 - x2 * y1;
      }
      total += (r === 0 ? 1 : -1) * Math.abs(twice / 2);
    });
  }
  return total;
}

function convexHull(points: XY[]): XY[] {
  const sorted = [...points].sort((p, q) => p.x - q.x || p.y - q.y);
  if (sorted.length < 3) return sorted;
  const cross = (o: XY, p: XY, q: XY) => (p.x - o.x) * (q.y - o.y) - (p.y - o.y) * (q.x - o.x);
  const half = (list: XY[]) => {
    const out: XY[] = [];
    for (const p of list) {
      while (out.length >= 2 && cross(out[out.length - 2] as XY, out[out.length - 1] as XY, p) <= 0) out.pop();
      out.push(p);
    }
    out.pop();
    return out;
  };
  return [...half(sorted), ...half([...sorted].reverse())];
}

const ELLIPSE_SIDES = 32;

/** The outline of an area shape as a polygon (boxes too, for mixed use), in pixels. */
function outlineOf(kind: GeometryKind, shape: Json): XY[] {
  switch (kind) {
    case 'box': {
      const [l, t, w, h] = [num(shape.left), num(shape.top), num(shape.width), num(shape.height)];
      return [
        { x: l, y: t },
        { x: l + w, y: t },
        { x: l + w, y: t + h },
        { x: l, y: t + h },
      ];
    }
    case 'cuboid':
      return convexHull(vertices(shape));
    case 'ellipse': {
      const [cx, cy, rx, ry] = [num(shape.x), num(shape.y), num(shape.rx), num(shape.ry)];
      const turn = (num(shape.rotation) * Math.PI) / 180;
      return Array.from({ length: ELLIPSE_SIDES }, (_, i) => {
        const t = (2 * Math.PI * i) / ELLIPSE_SIDES;
        const [ex, ey] = [rx * Math.cos(t), ry * Math.sin(t)];
        return { x: cx + ex * Math.cos(turn) - ey * Math.sin(turn), y: cy + ex * Math.sin(turn) + ey * Math.cos(turn) };
      });
    }
    default:
      return vertices(shape);
  }
}

interface Area {
  polygon: Polygon;
  area: number;
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  key: string;
}

/** Whether two segments cross or touch (the ends of neighbouring edges excepted by the caller). */
function segmentsMeet(p: XY, q: XY, r: XY, s: XY): boolean {
  const side = (a: XY, b: XY, c: XY) => Math.sign((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x));
  return side(p, q, r) !== side(p, q, s) && side(r, s, p) !== side(r, s, q);
}

/** Whether an outline is a simple polygon (no two non-neighbouring edges meet): its area is then the shoelace's. */
function isSimple(outline: XY[]): boolean {
  const n = outline.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 2; j < n; j++) {
      if (i === 0 && j === n - 1) continue;
      if (segmentsMeet(outline[i] as XY, outline[(i + 1) % n] as XY, outline[j] as XY, outline[(j + 1) % n] as XY)) return false;
    }
  }
  return true;
}

function areaShape(kind: GeometryKind, shape: Json): Area {
  const outline = outlineOf(kind, shape);
  const polygon: Polygon = [outline.map((p): Pair => [p.x, p.y])];
  let area = 0;
  // Hulls and ellipses are convex, and most drawn polygons simple: the shoelace formula; a
  // self-crossing outline's area is that of polygon-clipping's union of it (each part once).
  try {
    if (outline.length >= 3) area = kind !== 'polygon' || isSimple(outline) ? areaOf([polygon]) : areaOf(polygonClipping.union(polygon));
  } catch {
    area = 0;
  }
  // A loop, not Math.min(...xs): an outline may have more vertices than a call takes arguments.
  const box = {
    minX: Number.POSITIVE_INFINITY,
    minY: Number.POSITIVE_INFINITY,
    maxX: Number.NEGATIVE_INFINITY,
    maxY: Number.NEGATIVE_INFINITY,
  };
  for (const { x, y } of outline) {
    box.minX = Math.min(box.minX, x);
    box.minY = Math.min(box.minY, y);
    box.maxX = Math.max(box.maxX, x);
    box.maxY = Math.max(box.maxY, y);
  }
  return { polygon, area, ...box, key: JSON.stringify(outline) };
}

function areaIoU(p: Area, q: Area): number {
  // The same outline: exactly 1, not 1 less a rounding error of the clipping.
  if (p.key === q.key) return 1;
  if (p.area <= 0 || q.area <= 0) return 0;
  if (p.maxX <= q.minX || q.maxX <= p.minX || p.maxY <= q.minY || q.maxY <= p.minY) return 0;
  let inter = 0;
  try {
    inter = areaOf(polygonClipping.intersection(p.polygon, q.polygon));
  } catch {
    // polygon-clipping gives up on some degenerate outlines: count those as not overlapping.
    return 0;
  }
  const union = p.area + q.area - inter;
  return union <= 0 ? 0 : Math.min(1, Math.max(0, inter / union));
}

function boxIoU(a: Json, b: Json): number {
  const [al, at, aw, ah] = [num(a.left), num(a.top), num(a.width), num(a.height)];
  const [bl, bt, bw, bh] = [num(b.left), num(b.top), num(b.width), num(b.height)];
  const iw = Math.max(0, Math.min(al + aw, bl + bw) - Math.max(al, bl));
  const ih = Math.max(0, Math.min(at + ah, bt + bh) - Math.max(at, bt));
  const inter = iw * ih;
  const union = aw * ah + bw * bh - inter;
  if (union <= 0) return al === bl && at === bt && aw === bw && ah === bh ? 1 : 0;
  return inter / union;
}

// ---------------------------------------------------------------------------------------------
// Distances: points and lines.

function distanceToSegment(p: XY, a: XY, b: XY): number {
  const [dx, dy] = [b.x - a.x, b.y - a.y];
  const length2 = dx * dx + dy * dy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2));
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

function distanceToLine(p: XY, line: XY[]): number {
  if (line.length === 1) return Math.hypot(p.x - (line[0] as XY).x, p.y - (line[0] as XY).y);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + 1 < line.length; i++) best = Math.min(best, distanceToSegment(p, line[i] as XY, line[i + 1] as XY));
  return best;
}

const LINE_SAMPLES = 24;

/** Points spread evenly along a line by length, its vertices included. */
function samplesOf(line: XY[]): XY[] {
  if (line.length <= 1) return line;
  const lengths = line.slice(1).map((p, i) => Math.hypot(p.x - (line[i] as XY).x, p.y - (line[i] as XY).y));
  const total = lengths.reduce((s, l) => s + l, 0);
  const out = [...line];
  if (total === 0) return out;
  for (let k = 1; k < LINE_SAMPLES; k++) {
    let at = (total * k) / LINE_SAMPLES;
    let i = 0;
    while (i < lengths.length - 1 && at > (lengths[i] as number)) at -= lengths[i++] as number;
    const [p, q, l] = [line[i] as XY, line[i + 1] as XY, lengths[i] as number];
    const t = l === 0 ? 0 : at / l;
    out.push({ x: p.x + t * (q.x - p.x), y: p.y + t * (q.y - p.y) });
  }
  return out;
}

function meanLineDistance(a: XY[], b: XY[]): number {
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : Number.POSITIVE_INFINITY;
  const oneWay = (from: XY[], to: XY[]) => {
    const samples = samplesOf(from);
    return samples.reduce((s, p) => s + distanceToLine(p, to), 0) / samples.length;
  };
  return (oneWay(a, b) + oneWay(b, a)) / 2;
}

const closeness = (distance: number, tolerance: number) => Math.max(0, 1 - distance / tolerance);

// ---------------------------------------------------------------------------------------------
// One shape against another of the same geometry.

/** A shape read once, with what its comparisons need (areas and outlines are computed once per shape). */
export interface PreparedShape {
  kind: GeometryKind;
  label: string;
  raw: Json;
  area?: Area;
}

export function prepareShape(kind: GeometryKind, label: string, raw: Json): PreparedShape {
  const needsArea = kind === 'polygon' || kind === 'cuboid' || kind === 'ellipse';
  return { kind, label, raw, ...(needsArea ? { area: areaShape(kind, raw) } : {}) };
}

export function shapeSimilarity(a: PreparedShape, b: PreparedShape, tolerance: number): number {
  if (a.kind !== b.kind) return 0;
  switch (a.kind) {
    case 'box':
      return boxIoU(a.raw, b.raw);
    case 'point':
      return closeness(Math.hypot(num(a.raw.x) - num(b.raw.x), num(a.raw.y) - num(b.raw.y)), tolerance);
    case 'line': {
      const [va, vb] = [vertices(a.raw), vertices(b.raw)];
      // The same vertices: exactly 1 (sampling the line leaves rounding errors of 1e-14 px).
      if (JSON.stringify(va) === JSON.stringify(vb)) return 1;
      return closeness(meanLineDistance(va, vb), tolerance);
    }
    default:
      return areaIoU(a.area ?? areaShape(a.kind, a.raw), b.area ?? areaShape(b.kind, b.raw));
  }
}

const NOUNS: Record<GeometryKind, string> = {
  box: 'boxes',
  polygon: 'polygons',
  line: 'lines',
  point: 'points',
  cuboid: 'cuboids',
  ellipse: 'ellipses',
};

/** Two lists of shapes matched per geometry and label: F1 at the threshold × mean matched similarity. */
function scoreShapes(a: PreparedShape[], b: PreparedShape[], settings: Settings, noun: string): ScoreResult {
  const matching = matchItems(
    a,
    b,
    (s) => JSON.stringify([s.kind, s.label]),
    (x, y) => shapeSimilarity(x, y, settings.tolerance),
    settings.threshold,
  );
  // Annotation attributes do not change the score; a matched pair shows how many of them agree.
  const withAttributes = (m: Match): Match => {
    const [x, y] = [asRecord(a[m.a]?.raw.attributes), asRecord(b[m.b]?.raw.attributes)];
    const names = [...new Set([...Object.keys(x), ...Object.keys(y)])];
    return names.length === 0 ? m : { ...m, value: names.filter((n) => sameJson(x[n], y[n])).length / names.length };
  };
  const groups = matching.groups.map((g) => ({ ...g, matches: g.matches.map(withAttributes) }));
  return matchingResult({ ...matching, groups }, settings.threshold, noun);
}

/** The older single-geometry types: every annotation is a `kind`, grouped by its label. */
export const singleGeometry =
  (kind: GeometryKind) =>
  (_params: Json, a: Json, b: Json, settings: Settings): ScoreResult => {
    const read = (answer: Json) => records(answer.annotations).map((s) => prepareShape(kind, str(s.label), s));
    return scoreShapes(read(a), read(b), settings, NOUNS[kind]);
  };

const KINDS: readonly GeometryKind[] = ['box', 'polygon', 'line', 'point', 'cuboid', 'ellipse'];
export const kindOf = (value: unknown): GeometryKind => KINDS.find((k) => k === value) ?? 'box';

/** imageannotation: each annotation names its geometry (`type`); shapes match within geometry and label. */
export function imageAnnotation(_params: Json, a: Json, b: Json, settings: Settings): ScoreResult {
  const read = (answer: Json) => records(answer.annotations).map((s) => prepareShape(kindOf(s.type), str(s.label), s));
  return scoreShapes(read(a), read(b), settings, 'shapes');
}
