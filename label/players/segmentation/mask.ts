// The painted label map of a segmentannotation task: one value per image pixel, 0 = unlabeled, else
// 1 + the index of a class (a label of `labels`, or one instance of an `instance_labels` label) in
// the player's class list. A brush stroke paints the pixels near its path, the fill replaces a 4-connected region of one
// value, and the answer's masks are PNGs made from the map (canvas.toDataURL, so the browser's own
// PNG encoder): binary masks white on black, the combined image in the labelMapping colours, the
// indexed image with the labelMapping index as each pixel's value (red channel; see maskPngs).

/** A class a pixel can get: a label, or instance `instance` (from 1) of an instance label. */
export interface SegClass {
  label: string;
  instance?: number;
  colour: string;
}

/** Which pixels changed, as a rectangle of image pixels (right and bottom exclusive). */
export interface Dirty {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export class LabelMap {
  readonly data: Uint16Array;

  constructor(
    readonly width: number,
    readonly height: number,
    data?: Uint16Array,
  ) {
    this.data = data ?? new Uint16Array(width * height);
  }

  /**
   * A brush stroke from one point to the next: the pixels whose middle lies within `r` of the
   * segment between them (a capsule), and at least the pixel under each end.
   */
  stroke(from: { x: number; y: number }, to: { x: number; y: number }, r: number, value: number): Dirty {
    const left = Math.max(0, Math.floor(Math.min(from.x, to.x) - r));
    const right = Math.min(this.width, Math.ceil(Math.max(from.x, to.x) + r) + 1);
    const top = Math.max(0, Math.floor(Math.min(from.y, to.y) - r));
    const bottom = Math.min(this.height, Math.ceil(Math.max(from.y, to.y) + r) + 1);
    const vx = to.x - from.x;
    const vy = to.y - from.y;
    const length2 = vx * vx + vy * vy;
    for (let y = top; y < bottom; y++)
      for (let x = left; x < right; x++) {
        const px = x + 0.5 - from.x;
        const py = y + 0.5 - from.y;
        const t = length2 ? Math.min(1, Math.max(0, (px * vx + py * vy) / length2)) : 0;
        const dx = px - t * vx;
        const dy = py - t * vy;
        if (dx * dx + dy * dy <= r * r) this.data[y * this.width + x] = value;
      }
    for (const p of [from, to]) {
      const x = Math.min(this.width - 1, Math.max(0, Math.floor(p.x)));
      const y = Math.min(this.height - 1, Math.max(0, Math.floor(p.y)));
      this.data[y * this.width + x] = value;
    }
    return { left, top, right, bottom };
  }

  /** Fills the 4-connected region of equal value around (x, y) with `value` (a scanline fill); null when nothing changes. */
  fill(x: number, y: number, value: number): Dirty | null {
    const { width: w, height: h, data } = this;
    if (x < 0 || y < 0 || x >= w || y >= h) return null;
    const old = data[y * w + x];
    if (old === undefined || old === value) return null;
    const dirty: Dirty = { left: x, top: y, right: x + 1, bottom: y + 1 };
    const stack: number[] = [x, y];
    while (stack.length) {
      const sy = stack.pop() as number;
      const sx = stack.pop() as number;
      if (data[sy * w + sx] !== old) continue;
      let l = sx;
      while (l > 0 && data[sy * w + l - 1] === old) l--;
      let r = sx;
      while (r < w - 1 && data[sy * w + r + 1] === old) r++;
      data.fill(value, sy * w + l, sy * w + r + 1);
      dirty.left = Math.min(dirty.left, l);
      dirty.right = Math.max(dirty.right, r + 1);
      dirty.top = Math.min(dirty.top, sy);
      dirty.bottom = Math.max(dirty.bottom, sy + 1);
      for (const ny of [sy - 1, sy + 1]) {
        if (ny < 0 || ny >= h) continue;
        let inRun = false;
        for (let i = l; i <= r; i++) {
          const same = data[ny * w + i] === old;
          if (same && !inRun) stack.push(i, ny);
          inRun = same;
        }
      }
    }
    return dirty;
  }

  /** How many pixels have each value (index = value). */
  counts(classes: number): number[] {
    const out = new Array<number>(classes + 1).fill(0);
    for (const v of this.data) out[v] = (out[v] ?? 0) + 1;
    return out;
  }

  /**
   * The map for the draft, run-length coded: each run its value and its length as unsigned
   * LEB128 varints (a byte per 7 bits), the bytes in base64.
   */
  toRuns(): string {
    const bytes: number[] = [];
    const varint = (n: number) => {
      while (n >= 0x80) {
        bytes.push((n & 0x7f) | 0x80);
        n = Math.floor(n / 128);
      }
      bytes.push(n);
    };
    let i = 0;
    while (i < this.data.length) {
      const v = this.data[i] as number;
      let j = i + 1;
      while (j < this.data.length && this.data[j] === v) j++;
      varint(v);
      varint(j - i);
      i = j;
    }
    let text = '';
    for (let k = 0; k < bytes.length; k += 0x8000) text += String.fromCharCode(...bytes.slice(k, k + 0x8000));
    return btoa(text);
  }

  /** The map of a draft's runs, or null when they are not runs that cover exactly this size. */
  static fromRuns(width: number, height: number, runs: unknown): LabelMap | null {
    if (typeof runs !== 'string') return null;
    let bytes: string;
    try {
      bytes = atob(runs);
    } catch {
      return null;
    }
    const map = new LabelMap(width, height);
    let k = 0;
    const varint = (): number | null => {
      let n = 0;
      let scale = 1;
      for (;;) {
        if (k >= bytes.length) return null;
        const b = bytes.charCodeAt(k++);
        n += (b & 0x7f) * scale;
        if (b < 0x80) return n;
        scale *= 128;
      }
    };
    let at = 0;
    while (k < bytes.length) {
      const v = varint();
      const n = varint();
      if (v === null || n === null || v > 0xffff || n < 1 || at + n > map.data.length) return null;
      map.data.fill(v, at, at + n);
      at += n;
    }
    return at === map.data.length ? map : null;
  }
}

export const rgb = (hex: string): [number, number, number] => [
  Number.parseInt(hex.slice(1, 3), 16),
  Number.parseInt(hex.slice(3, 5), 16),
  Number.parseInt(hex.slice(5, 7), 16),
];

/** Paints the map's `dirty` part into `pixels` (RGBA of the whole image): each class in its colour, unlabeled transparent. */
export function paintOverlay(map: LabelMap, classes: readonly SegClass[], pixels: ImageData, dirty: Dirty): void {
  const colours = [[0, 0, 0, 0], ...classes.map((c) => [...rgb(c.colour), 255])];
  const out = pixels.data;
  for (let y = dirty.top; y < dirty.bottom; y++)
    for (let x = dirty.left; x < dirty.right; x++) {
      const i = y * map.width + x;
      const c = colours[map.data[i] as number] ?? colours[0];
      out.set(c as number[], i * 4);
    }
}

/** A PNG data URL of a width × height image whose pixel i is `colour(i)` (RGB, opaque). */
function png(width: number, height: number, colour: (i: number) => readonly [number, number, number]): string {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d') as CanvasRenderingContext2D;
  const image = ctx.createImageData(width, height);
  for (let i = 0; i < width * height; i++) {
    const [r, g, b] = colour(i);
    image.data[i * 4] = r;
    image.data[i * 4 + 1] = g;
    image.data[i * 4 + 2] = b;
    image.data[i * 4 + 3] = 255;
  }
  ctx.putImageData(image, 0, 0);
  return canvas.toDataURL('image/png');
}

const WHITE = [255, 255, 255] as const;
const BLACK = [0, 0, 0] as const;

/** A binary mask: white where the map has one of `values`, black elsewhere. */
export function binaryPng(map: LabelMap, values: ReadonlySet<number>): string {
  return png(map.width, map.height, (i) => (values.has(map.data[i] as number) ? WHITE : BLACK));
}

/** The combined image: each pixel in the colour of its class (`colours` by map value), unlabeled black. */
export function combinedPng(map: LabelMap, colours: ReadonlyMap<number, readonly [number, number, number]>): string {
  return png(map.width, map.height, (i) => colours.get(map.data[i] as number) ?? BLACK);
}

/**
 * The indexed image: each pixel's labelMapping index (0 = unlabeled) as its red, green and blue
 * value; an index above 255 (more than 255 labels and instances) as red + 256 × green, blue 0.
 */
export function indexedPng(map: LabelMap, indexes: ReadonlyMap<number, number>): string {
  return png(map.width, map.height, (i) => {
    const n = indexes.get(map.data[i] as number) ?? 0;
    return n <= 255 ? [n, n, n] : [n & 255, n >> 8, 0];
  });
}
