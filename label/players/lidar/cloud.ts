// The lidar player's model, free of the DOM and of three.js: a frame file read into coordinates,
// the labels of a frame kept compact in drafts (run-length coded), undo and redo as the points a
// change touched, and the lasso's test (which projected points lie inside a screen polygon).
import type { Step } from '../../undo.ts';

/** A point left without a label, as the contract writes it. */
export const UNLABELED = -1;

/** The points of a frame file (`{"points": [{"x", "y", "z"}, ...]}`) as x, y, z triples, or why not. */
export function readFrame(body: unknown): Float32Array | string {
  const points = body && typeof body === 'object' ? (body as { points?: unknown }).points : undefined;
  if (!Array.isArray(points)) return 'the file has no "points" array';
  const out = new Float32Array(points.length * 3);
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as { x?: unknown; y?: unknown; z?: unknown } | null;
    const x = p?.x;
    const y = p?.y;
    const z = p?.z;
    if (typeof x !== 'number' || typeof y !== 'number' || typeof z !== 'number' || !Number.isFinite(x + y + z))
      return `point ${i} has no finite x, y and z`;
    out[i * 3] = x;
    out[i * 3 + 1] = y;
    out[i * 3 + 2] = z;
  }
  return out;
}

// ---- drafts: labels run-length coded, as unsigned LEB128 varints (label + 1, run length), in base64.
// A frame labelled with a few lassos is a few hundred runs, whatever its size; even alternating
// labels stay near 2.7 bytes a point, under the draft's 1 MB for frames of 100,000 points.

export function encodeLabels(labels: Int16Array): string {
  const bytes: number[] = [];
  const varint = (n: number) => {
    while (n >= 0x80) {
      bytes.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    bytes.push(n);
  };
  for (let i = 0; i < labels.length; ) {
    const value = labels[i] as number;
    let j = i + 1;
    while (j < labels.length && labels[j] === value) j++;
    varint(value + 1);
    varint(j - i);
    i = j;
  }
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.slice(i, i + 0x8000));
  return btoa(text);
}

/** The labels of `count` points from a draft, or undefined when it does not fit (another file, labels beyond `labelCount`). */
export function decodeLabels(coded: string, count: number, labelCount: number): Int16Array | undefined {
  let text: string;
  try {
    text = atob(coded);
  } catch {
    return undefined;
  }
  const out = new Int16Array(count);
  let at = 0;
  let filled = 0;
  const varint = (): number | undefined => {
    let n = 0;
    for (let shift = 0; at < text.length && shift < 35; shift += 7) {
      const b = text.charCodeAt(at++);
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
    }
    return undefined;
  };
  while (at < text.length) {
    const value = varint();
    const run = varint();
    if (value === undefined || run === undefined || value > labelCount || filled + run > count) return undefined;
    out.fill(value - 1, filled, filled + run);
    filled += run;
  }
  return filled === count ? out : undefined;
}

// ---- undo and redo: a step is the points one lasso changed, with their labels before and after
// (pushed on the player's Undo, label/undo.ts; a frame's labels are too many to copy per lasso).

export interface LassoStep extends Step {
  frame: number;
  indices: Uint32Array;
  before: Int16Array;
  after: number;
}

/**
 * Gives `indices` of `labels` (frame `frame`'s) the label `after`, remembering what they had; the
 * step, which undoes and redoes itself on `labelsOf(frame)`, or undefined when nothing changed.
 */
export function applyLasso(
  frame: number,
  labels: Int16Array,
  indices: Uint32Array,
  after: number,
  labelsOf: (frame: number) => Int16Array | undefined,
): LassoStep | undefined {
  const changed = indices.filter((i) => labels[i] !== after);
  if (changed.length === 0) return undefined;
  const before = new Int16Array(changed.length);
  changed.forEach((p, k) => {
    before[k] = labels[p] as number;
    labels[p] = after;
  });
  return {
    frame,
    indices: changed,
    before,
    after,
    undo() {
      const now = labelsOf(frame);
      if (now)
        changed.forEach((p, k) => {
          now[p] = before[k] as number;
        });
    },
    redo() {
      const now = labelsOf(frame);
      if (now) for (const p of changed) now[p] = after;
    },
  };
}

// ---- the lasso

/**
 * Projects points (x y z triples) onto a `width` × `height` screen with `matrix`, the camera's
 * projection times view matrix (column-major, as three.js keeps it): calls `each` with a point's
 * index and screen position for every point in front of the camera and within its depth range.
 */
export function projectPoints(
  positions: Float32Array,
  matrix: ArrayLike<number>,
  width: number,
  height: number,
  each: (i: number, sx: number, sy: number) => void,
): void {
  const [
    m0 = 0,
    m1 = 0,
    m2 = 0,
    m3 = 0,
    m4 = 0,
    m5 = 0,
    m6 = 0,
    m7 = 0,
    m8 = 0,
    m9 = 0,
    m10 = 0,
    m11 = 0,
    m12 = 0,
    m13 = 0,
    m14 = 0,
    m15 = 0,
  ] = Array.from(matrix);
  const count = positions.length / 3;
  for (let i = 0; i < count; i++) {
    const x = positions[3 * i] as number;
    const y = positions[3 * i + 1] as number;
    const z = positions[3 * i + 2] as number;
    const w = m3 * x + m7 * y + m11 * z + m15;
    if (w <= 0) continue;
    const depth = (m2 * x + m6 * y + m10 * z + m14) / w;
    if (depth < -1 || depth > 1) continue;
    each(i, ((m0 * x + m4 * y + m8 * z + m12) / w + 1) * 0.5 * width, (1 - (m1 * x + m5 * y + m9 * z + m13) / w) * 0.5 * height);
  }
}

/**
 * The points whose projection lies inside the closed polygon `lasso` (screen pixels, x y pairs),
 * in front of the camera and within its depth range (see projectPoints). Points of `keep` only,
 * when given (e.g. the unlabelled ones).
 */
export function insideLasso(
  positions: Float32Array,
  matrix: ArrayLike<number>,
  width: number,
  height: number,
  lasso: ArrayLike<number>,
  keep?: (i: number) => boolean,
): Uint32Array {
  const n = lasso.length / 2;
  if (n < 3) return new Uint32Array(0);
  let minX = Number.POSITIVE_INFINITY;
  let minY = Number.POSITIVE_INFINITY;
  let maxX = Number.NEGATIVE_INFINITY;
  let maxY = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < n; k++) {
    const x = lasso[2 * k] as number;
    const y = lasso[2 * k + 1] as number;
    minX = Math.min(minX, x);
    maxX = Math.max(maxX, x);
    minY = Math.min(minY, y);
    maxY = Math.max(maxY, y);
  }
  const found: number[] = [];
  projectPoints(positions, matrix, width, height, (i, sx, sy) => {
    if (sx < minX || sx > maxX || sy < minY || sy > maxY) return;
    // Even-odd rule: a ray to the right crosses the polygon's edges an odd number of times.
    let inside = false;
    for (let a = 0, b = n - 1; a < n; b = a++) {
      const ax = lasso[2 * a] as number;
      const ay = lasso[2 * a + 1] as number;
      const bx = lasso[2 * b] as number;
      const by = lasso[2 * b + 1] as number;
      if (ay > sy !== by > sy && sx < ((bx - ax) * (sy - ay)) / (by - ay) + ax) inside = !inside;
    }
    if (inside && (!keep || keep(i))) found.push(i);
  });
  return Uint32Array.from(found);
}
