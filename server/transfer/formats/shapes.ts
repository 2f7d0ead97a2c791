// The shapes of an image task's response, whatever its type, in one form for the image formats
// (COCO, YOLO, VOC): boxes, polygons (ellipses made polygons), points, masks, and the shapes no
// image format holds (lines, cuboids), named so that a format can count what it leaves out.
import { PNG } from 'pngjs';
import type { Json, Task } from '../../domain/model.ts';

export type Shape =
  | { kind: 'box'; label: string; x: number; y: number; width: number; height: number }
  | { kind: 'polygon'; label: string; points: [number, number][]; from: 'polygon' | 'ellipse' }
  | { kind: 'point'; label: string; x: number; y: number }
  | { kind: 'mask'; label: string; url: string }
  | { kind: 'line' | 'cuboid'; label: string };

const list = (v: unknown): Json[] => (Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Json[]) : []);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const vertices = (v: unknown): [number, number][] => list(v).map((p) => [num(p.x), num(p.y)]);

/** An ellipse as a polygon of `n` points (its rotation in degrees, as the contract gives it). */
function ellipsePolygon(e: Json, n = 32): [number, number][] {
  const [cx, cy, rx, ry] = [num(e.x), num(e.y), num(e.rx), num(e.ry)];
  const r = (num(e.rotation) * Math.PI) / 180;
  return Array.from({ length: n }, (_, i) => {
    const t = (2 * Math.PI * i) / n;
    const [dx, dy] = [rx * Math.cos(t), ry * Math.sin(t)];
    return [cx + dx * Math.cos(r) - dy * Math.sin(r), cy + dx * Math.sin(r) + dy * Math.cos(r)];
  });
}

/** One annotation of the newer image type (or a frame of a video track) as a shape. */
function elementShape(a: Json): Shape {
  const label = String(a.label ?? '');
  switch (a.type) {
    case 'box':
      return { kind: 'box', label, x: num(a.left), y: num(a.top), width: num(a.width), height: num(a.height) };
    case 'polygon':
      return { kind: 'polygon', label, points: vertices(a.vertices), from: 'polygon' };
    case 'ellipse':
      return { kind: 'polygon', label, points: ellipsePolygon(a), from: 'ellipse' };
    case 'point':
      return { kind: 'point', label, x: num(a.x), y: num(a.y) };
    default:
      return { kind: a.type === 'cuboid' ? 'cuboid' : 'line', label };
  }
}

/** The shapes of a completed image task's response (none for another type, or without a response). */
export function imageShapes(task: Task): Shape[] {
  const r = task.response as Json | null;
  if (!r || task.status !== 'completed' || 'error' in r) return [];
  const annotations = list(r.annotations);
  switch (task.type) {
    case 'annotation':
      return annotations.map((a) => ({
        kind: 'box',
        label: String(a.label ?? ''),
        x: num(a.left),
        y: num(a.top),
        width: num(a.width),
        height: num(a.height),
      }));
    case 'polygonannotation':
      return annotations.map((a) => ({ kind: 'polygon', label: String(a.label ?? ''), points: vertices(a.vertices), from: 'polygon' }));
    case 'pointannotation':
      return annotations.map((a) => ({ kind: 'point', label: String(a.label ?? ''), x: num(a.x), y: num(a.y) }));
    case 'lineannotation':
      return annotations.map((a) => ({ kind: 'line', label: String(a.label ?? '') }));
    case 'imageannotation':
      return annotations.map(elementShape);
    case 'segmentannotation': {
      const labeled = ((r.annotations as Json | undefined)?.labeled ?? {}) as Json;
      return Object.entries(labeled).flatMap(([label, urls]) =>
        (Array.isArray(urls) ? urls : [urls])
          .filter((u): u is string => typeof u === 'string')
          .map((url) => ({ kind: 'mask' as const, label, url })),
      );
    }
    default:
      return [];
  }
}

/** The labels a task's parameters list (objects_to_annotate, geometries, labels), in their order. */
export function paramLabels(task: Task): string[] {
  const p = task.params;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const out = [...strings(p.objects_to_annotate), ...strings(p.labels), ...strings(p.instance_labels)];
  for (const spec of Object.values((p.geometries ?? {}) as Json)) out.push(...strings((spec as Json | null)?.objects_to_annotate));
  return out;
}

/** A mask given inline (`data:image/png;base64,...`, as the labeling app answers): its pixels on (not black), or null. */
export function decodeMask(url: string): { width: number; height: number; on: Uint8Array } | null {
  const prefix = 'data:image/png;base64,';
  if (!url.startsWith(prefix)) return null;
  try {
    const png = PNG.sync.read(Buffer.from(url.slice(prefix.length), 'base64'));
    const on = new Uint8Array(png.width * png.height);
    for (let i = 0; i < on.length; i++) {
      const [r, g, b] = [png.data[4 * i]!, png.data[4 * i + 1]!, png.data[4 * i + 2]!];
      on[i] = r + g + b > 0 ? 1 : 0;
    }
    return { width: png.width, height: png.height, on };
  } catch {
    return null;
  }
}

/** COCO's uncompressed RLE of a mask: run lengths in column-major order, starting with a run of 0s. */
export function rle(mask: { width: number; height: number; on: Uint8Array }): {
  counts: number[];
  size: [number, number];
  area: number;
  bbox: [number, number, number, number];
} {
  const counts: number[] = [];
  let current = 0;
  let run = 0;
  let area = 0;
  let [minX, minY, maxX, maxY] = [Infinity, Infinity, -1, -1];
  for (let x = 0; x < mask.width; x++) {
    for (let y = 0; y < mask.height; y++) {
      const v = mask.on[y * mask.width + x]!;
      if (v) {
        area++;
        minX = Math.min(minX, x);
        minY = Math.min(minY, y);
        maxX = Math.max(maxX, x);
        maxY = Math.max(maxY, y);
      }
      if (v === current) run++;
      else {
        counts.push(run);
        current = v;
        run = 1;
      }
    }
  }
  counts.push(run);
  const bbox: [number, number, number, number] = area > 0 ? [minX, minY, maxX - minX + 1, maxY - minY + 1] : [0, 0, 0, 0];
  return { counts, size: [mask.height, mask.width], area, bbox };
}

/** The shoelace area of a polygon. */
export function polygonArea(points: [number, number][]): number {
  let sum = 0;
  for (let i = 0; i < points.length; i++) {
    const [x1, y1] = points[i]!;
    const [x2, y2] = points[(i + 1) % points.length]!;
    sum += x1 * y2 - x2 * y1;
  }
  return Math.abs(sum) / 2;
}

export function boundingBox(points: [number, number][]): [number, number, number, number] {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const [x, y] = [Math.min(...xs), Math.min(...ys)];
  return [x, y, Math.max(...xs) - x, Math.max(...ys) - y];
}

/** A label list in first-seen order, numbered from `first`. */
export class Categories {
  readonly ids = new Map<string, number>();
  constructor(
    initial: string[],
    private readonly first: number,
  ) {
    for (const l of initial) this.idOf(l);
  }
  idOf(label: string): number {
    let id = this.ids.get(label);
    if (id === undefined) {
      id = this.ids.size + this.first;
      this.ids.set(label, id);
    }
    return id;
  }
}
