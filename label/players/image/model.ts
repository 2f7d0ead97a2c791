// The shapes of an imageannotation answer (ImageAnnotationElement in the contract), in image
// pixels: read from a draft or the task's hypothesis, kept inside the image, checked against the
// task's bounds (min_width/min_height, min_vertices/max_vertices) before submit, written back as
// the contract's elements.
import type { components } from '../../../generated/workforce.ts';
import { polygonProblem } from '../../../shared/answer-rules.ts';
import { isRecord } from '../../../shared/json.ts';

export type Params = components['schemas']['ImageAnnotationParams'];
type GeometrySpec = components['schemas']['GeometrySpec'];
export const kinds = ['box', 'polygon', 'line', 'point', 'cuboid', 'ellipse'] as const;
export type Kind = (typeof kinds)[number];
export const cuboidCorners = [
  'face-topleft',
  'face-bottomleft',
  'face-topright',
  'face-bottomright',
  'side-topcorner',
  'side-bottomcorner',
] as const;
export type Corner = (typeof cuboidCorners)[number];

export interface Pt {
  x: number;
  y: number;
}
export type AttributeValue = string | number | string[];
interface Base {
  uuid: string;
  label: string;
  attributes?: Record<string, AttributeValue>;
}
export type Box = Base & { type: 'box'; left: number; top: number; width: number; height: number };
export type Poly = Base & { type: 'polygon' | 'line'; vertices: Pt[] };
export type Point = Base & { type: 'point'; x: number; y: number };
export type Cuboid = Base & { type: 'cuboid'; vertices: (Pt & { description: Corner })[] };
export type Ellipse = Base & { type: 'ellipse'; x: number; y: number; rx: number; ry: number; rotation: number };
export type Shape = Box | Poly | Point | Cuboid | Ellipse;

/** One geometry of the task: its labels and bounds, numbers whether given as numbers or digit strings. */
export interface Geometry {
  kind: Kind;
  labels: string[];
  minWidth: number;
  minHeight: number;
  minVertices: number;
  maxVertices: number;
}

export const num = (v: unknown, fallback = 0): number => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : fallback;
};
/** Coordinates go out with two decimals: well under a pixel, and short. */
export const round = (v: number) => Math.round(v * 100) / 100;
const clamp = (v: number, lo: number, hi: number) => Math.min(Math.max(lo, v), hi);

export function geometriesOf(params: Params): Geometry[] {
  const given = (params.geometries ?? {}) as Partial<Record<Kind, GeometrySpec>>;
  // In the customer's order (the tools, labels and colours follow it); keys that are no geometry are left out.
  return Object.keys(given).flatMap((key) => {
    const kind = kinds.find((k) => k === key);
    const spec = kind && given[kind];
    if (!kind || !spec) return [];
    return [
      {
        kind,
        labels: (spec.objects_to_annotate ?? []).filter((l): l is string => typeof l === 'string'),
        minWidth: num(spec.min_width),
        minHeight: num(spec.min_height),
        minVertices: Math.max(1, num(spec.min_vertices, 1)),
        maxVertices: num(spec.max_vertices, Number.POSITIVE_INFINITY),
      },
    ];
  });
}

/** How many vertices a drawn polygon or line needs before it can be finished. */
export function fewestVertices(g: Geometry): number {
  return Math.min(g.maxVertices, Math.max(g.minVertices, g.kind === 'polygon' ? 3 : 2));
}

const pt = (v: unknown): Pt => (isRecord(v) ? { x: num(v.x), y: num(v.y) } : { x: 0, y: 0 });

/** The shapes of a draft or hypothesis (`{annotations: [...]}`); what is not a shape of the task is left out. */
export function shapesOf(value: unknown, geometries: Geometry[]): Shape[] {
  const list = isRecord(value) ? value.annotations : undefined;
  if (!Array.isArray(list)) return [];
  const given = new Set(geometries.map((g) => g.kind));
  return list.flatMap((a): Shape[] => {
    if (!isRecord(a) || typeof a.uuid !== 'string' || typeof a.label !== 'string') return [];
    const type = a.type as Kind;
    if (!given.has(type)) return [];
    const base: Base = {
      uuid: a.uuid,
      label: a.label,
      ...(isRecord(a.attributes) ? { attributes: { ...(a.attributes as Record<string, AttributeValue>) } } : {}),
    };
    const vertices = Array.isArray(a.vertices) ? a.vertices : [];
    switch (type) {
      case 'box':
        return [{ ...base, type, left: num(a.left), top: num(a.top), width: num(a.width), height: num(a.height) }];
      case 'point':
        return [{ ...base, type, x: num(a.x), y: num(a.y) }];
      case 'ellipse':
        return [{ ...base, type, x: num(a.x), y: num(a.y), rx: num(a.rx), ry: num(a.ry), rotation: num(a.rotation) }];
      case 'polygon':
      case 'line':
        return [{ ...base, type, vertices: vertices.map(pt) }];
      case 'cuboid':
        return [
          {
            ...base,
            type,
            vertices: vertices.flatMap((v) =>
              isRecord(v) && cuboidCorners.includes(v.description as Corner) ? [{ description: v.description as Corner, ...pt(v) }] : [],
            ),
          },
        ];
      default:
        return [];
    }
  });
}

export const clone = (s: Shape): Shape => structuredClone(s);

/** The smallest axis-aligned box around the shape. */
export function boundsOf(s: Shape): { left: number; top: number; right: number; bottom: number } {
  switch (s.type) {
    case 'box':
      return { left: s.left, top: s.top, right: s.left + s.width, bottom: s.top + s.height };
    case 'point':
      return { left: s.x, top: s.y, right: s.x, bottom: s.y };
    case 'ellipse': {
      const t = (s.rotation * Math.PI) / 180;
      const w = Math.hypot(s.rx * Math.cos(t), s.ry * Math.sin(t));
      const h = Math.hypot(s.rx * Math.sin(t), s.ry * Math.cos(t));
      return { left: s.x - w, top: s.y - h, right: s.x + w, bottom: s.y + h };
    }
    default: {
      const xs = s.vertices.map((v) => v.x);
      const ys = s.vertices.map((v) => v.y);
      return { left: Math.min(...xs), top: Math.min(...ys), right: Math.max(...xs), bottom: Math.max(...ys) };
    }
  }
}

/** Moves the whole shape by (dx, dy), as far as the image allows (the shape keeps its size). */
export function translate(s: Shape, dx: number, dy: number, w: number, h: number): void {
  const b = boundsOf(s);
  const mx = clamp(dx, -b.left, w - b.right);
  const my = clamp(dy, -b.top, h - b.bottom);
  if (s.type === 'box') {
    s.left += mx;
    s.top += my;
  } else if (s.type === 'point' || s.type === 'ellipse') {
    s.x += mx;
    s.y += my;
  } else
    for (const v of s.vertices) {
      v.x += mx;
      v.y += my;
    }
  tidy(s, w, h);
}

/** Keeps every coordinate inside the image (0..w, 0..h), rounded to hundredths of a pixel. */
export function tidy(s: Shape, w: number, h: number): Shape {
  if (s.type === 'box') {
    const left = clamp(s.left, 0, w);
    const top = clamp(s.top, 0, h);
    s.width = round(clamp(s.width + Math.min(0, s.left), 0, w - left));
    s.height = round(clamp(s.height + Math.min(0, s.top), 0, h - top));
    s.left = round(left);
    s.top = round(top);
  } else if (s.type === 'point' || s.type === 'ellipse') {
    s.x = round(clamp(s.x, 0, w));
    s.y = round(clamp(s.y, 0, h));
    if (s.type === 'ellipse') {
      s.rx = round(Math.abs(s.rx));
      s.ry = round(Math.abs(s.ry));
      s.rotation = round(((s.rotation % 360) + 360) % 360) % 360;
    }
  } else
    for (const v of s.vertices) {
      v.x = round(clamp(v.x, 0, w));
      v.y = round(clamp(v.y, 0, h));
    }
  return s;
}

/** Why the shape cannot go out as it is (the server's own rules), or null. */
export function shapeProblem(s: Shape, g: Geometry | undefined): string | null {
  if (!g) return `the task has no ${s.type} geometry`;
  if (!g.labels.includes(s.label)) return `its label "${s.label}" is not one of the task's ${s.type} labels`;
  if (s.type === 'box' && (s.width < g.minWidth || s.height < g.minHeight))
    return `it is smaller than the task allows (at least ${g.minWidth} × ${g.minHeight} px)`;
  if (s.type === 'polygon' || s.type === 'line') {
    if (s.vertices.length < g.minVertices) return `it has ${s.vertices.length} vertices, fewer than the task's ${g.minVertices}`;
    if (s.vertices.length > g.maxVertices) return `it has ${s.vertices.length} vertices, more than the task's ${g.maxVertices}`;
    // The server's rule, shared (answer-rules.ts): a polygon's outline neither crosses nor touches itself.
    const crossing = s.type === 'polygon' ? polygonProblem(s.vertices) : null;
    if (crossing) return `it ${crossing}; a polygon's outline may not cross or touch itself`;
  }
  if (s.type === 'cuboid') {
    const faces = s.vertices.filter((v) => v.description.startsWith('face-')).length;
    if (faces !== 4 || s.vertices.length > 6) return 'a cuboid needs the four corners of its face';
  }
  return null;
}

/** The contract's element for the shape: its own keys in the contract's order. */
export function toElement(s: Shape): Record<string, unknown> {
  const head = { uuid: s.uuid, type: s.type, label: s.label, ...(s.attributes ? { attributes: { ...s.attributes } } : {}) };
  switch (s.type) {
    case 'box':
      return { ...head, left: s.left, top: s.top, width: s.width, height: s.height };
    case 'point':
      return { ...head, x: s.x, y: s.y };
    case 'ellipse':
      return { ...head, x: s.x, y: s.y, rx: s.rx, ry: s.ry, rotation: s.rotation };
    case 'cuboid':
      return { ...head, vertices: s.vertices.map((v) => ({ description: v.description, x: v.x, y: v.y })) };
    default:
      return { ...head, vertices: s.vertices.map((v) => ({ x: v.x, y: v.y })) };
  }
}

/** A cuboid from its face (a box) and, if given, the point where its side's top corner is. */
export function cuboidFrom(face: { left: number; top: number; width: number; height: number }, side?: Pt): Cuboid['vertices'] {
  const { left, top, width, height } = face;
  const out: Cuboid['vertices'] = [
    { description: 'face-topleft', x: left, y: top },
    { description: 'face-bottomleft', x: left, y: top + height },
    { description: 'face-topright', x: left + width, y: top },
    { description: 'face-bottomright', x: left + width, y: top + height },
  ];
  if (side) {
    // The side's edge is parallel to the face's, shortened by the depth as in a perspective drawing.
    const depth = Math.abs(side.x - (side.x >= left + width / 2 ? left + width : left));
    const edge = Math.max(1, height - depth * (height / Math.max(width, 1)) * 0.5);
    out.push({ description: 'side-topcorner', x: side.x, y: side.y }, { description: 'side-bottomcorner', x: side.x, y: side.y + edge });
  }
  return out;
}

/** The corners a cuboid's edges join, by description (face edges, the side's edges to the nearer face edge). */
export function cuboidEdges(vertices: Cuboid['vertices']): [Pt, Pt][] {
  const at = new Map(vertices.map((v) => [v.description, v]));
  const pairs: [Corner, Corner][] = [
    ['face-topleft', 'face-topright'],
    ['face-topright', 'face-bottomright'],
    ['face-bottomright', 'face-bottomleft'],
    ['face-bottomleft', 'face-topleft'],
  ];
  const st = at.get('side-topcorner');
  const tl = at.get('face-topleft');
  const tr = at.get('face-topright');
  if (st && tl && tr) {
    const right = Math.abs(st.x - tr.x) <= Math.abs(st.x - tl.x);
    pairs.push(
      [right ? 'face-topright' : 'face-topleft', 'side-topcorner'],
      [right ? 'face-bottomright' : 'face-bottomleft', 'side-bottomcorner'],
      ['side-topcorner', 'side-bottomcorner'],
    );
  }
  return pairs.flatMap(([a, b]) => {
    const p = at.get(a);
    const q = at.get(b);
    return p && q ? [[p, q] as [Pt, Pt]] : [];
  });
}

/** A short description for the list of shapes. */
export function describe(s: Shape): string {
  const r = Math.round;
  switch (s.type) {
    case 'box':
      return `box at ${r(s.left)}, ${r(s.top)}, ${r(s.width)} × ${r(s.height)} px`;
    case 'point':
      return `point at ${r(s.x)}, ${r(s.y)}`;
    case 'ellipse':
      return `ellipse at ${r(s.x)}, ${r(s.y)}, radii ${r(s.rx)} × ${r(s.ry)}, ${r(s.rotation)}°`;
    case 'cuboid':
      return `cuboid, ${s.vertices.length} corners`;
    default:
      return `${s.type}, ${s.vertices.length} vertices`;
  }
}
