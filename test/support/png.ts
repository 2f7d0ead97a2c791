// Reads the PNG masks of a segmentannotation answer (data URLs made by the labeling app) in Node,
// independently of the browser that made them: 8-bit, non-interlaced, grey or RGB with or without
// alpha, every scanline filter. The pixels come back as RGB triples.
import { inflateSync } from 'node:zlib';

export interface Png {
  width: number;
  height: number;
  /** Red, green and blue of pixel i at 3i, 3i + 1, 3i + 2. */
  rgb: Uint8Array;
}

function decodePngDataUrl(url: string): Png {
  const prefix = 'data:image/png;base64,';
  if (!url.startsWith(prefix)) throw new Error(`not a PNG data URL: ${url.slice(0, 40)}`);
  const buf = Buffer.from(url.slice(prefix.length), 'base64');
  if (buf.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (at < buf.length) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const body = buf.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colourType, , , interlace] = [body[8], body[9], body[10], body[11], body[12]];
      if (depth !== 8 || interlace !== 0) throw new Error(`unsupported PNG: depth ${depth}, interlace ${interlace}`);
      channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colourType as number] ?? 0;
      if (!channels) throw new Error(`unsupported PNG colour type ${colourType}`);
    } else if (type === 'IDAT') idat.push(body);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x] as number;
      const a = x >= channels ? (pixels[y * stride + x - channels] as number) : 0;
      const b = y > 0 ? (pixels[(y - 1) * stride + x] as number) : 0;
      const c = x >= channels && y > 0 ? (pixels[(y - 1) * stride + x - channels] as number) : 0;
      let p: number;
      if (filter === 0) p = 0;
      else if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else {
        const e = a + b - c;
        const [pa, pb, pc] = [Math.abs(e - a), Math.abs(e - b), Math.abs(e - c)];
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = (v + p) & 255;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++)
    for (let k = 0; k < 3; k++) rgb[i * 3 + k] = pixels[i * channels + (channels < 3 ? 0 : k)] as number;
  return { width, height, rgb };
}

/** The pixels where a binary mask is white (non-zero red), as a bit per pixel. */
function maskBits(url: string): { width: number; height: number; on: Uint8Array } {
  const { width, height, rgb } = decodePngDataUrl(url);
  const on = new Uint8Array(width * height);
  for (let i = 0; i < on.length; i++) on[i] = rgb[i * 3] ? 1 : 0;
  return { width, height, on };
}

/** A segmentannotation answer read back: which class each pixel has (`sky`, `car#0`, '' for unlabeled). */
export interface Segmentation {
  width: number;
  height: number;
  classAt(x: number, y: number): string;
  /** Pixels per class. */
  counts: Record<string, number>;
  /** The bounding box of a class's pixels (right and bottom inclusive). */
  bounds(name: string): { left: number; top: number; right: number; bottom: number } | undefined;
  /** Where the masks, the combined image, the indexed image and labelMapping disagree (empty: nowhere). */
  problems: string[];
}

const hex = (rgb: Uint8Array, i: number) =>
  `#${[rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2]].map((v) => (v as number).toString(16).padStart(2, '0')).join('')}`;

/** Decodes every mask of a segmentannotation response and checks that they tell one story. */
export function readSegmentation(response: any): Segmentation {
  const problems: string[] = [];
  const masks: [string, string][] = [];
  const mapping = new Map<string, { color: string; index: number }>();
  for (const [label, value] of Object.entries<any>(response.annotations.labeled)) {
    if (Array.isArray(value)) {
      value.forEach((url: string, i: number) => {
        masks.push([`${label}#${i}`, url]);
        mapping.set(`${label}#${i}`, response.labelMapping[label][i]);
      });
      if (response.instances[label] !== value.length)
        problems.push(`instances.${label} is ${response.instances[label]}, masks ${value.length}`);
    } else {
      masks.push([label, value as string]);
      mapping.set(label, response.labelMapping[label]);
    }
  }
  if (response.annotations.unlabeled) masks.push(['', response.annotations.unlabeled]);
  const combined = decodePngDataUrl(response.annotations.combined.image);
  const indexed = decodePngDataUrl(response.annotations.combined.indexedImage);
  const { width, height } = combined;
  const classes = new Array<string | undefined>(width * height);
  for (const [name, url] of masks) {
    const m = maskBits(url);
    if (m.width !== width || m.height !== height) problems.push(`mask ${name} is ${m.width} × ${m.height}, not ${width} × ${height}`);
    for (let i = 0; i < m.on.length; i++) {
      if (!m.on[i]) continue;
      if (classes[i] !== undefined) problems.push(`pixel ${i} is in ${String(classes[i])} and ${name}`);
      classes[i] = name;
    }
  }
  const counts: Record<string, number> = {};
  for (let i = 0; i < width * height; i++) {
    const name = classes[i];
    if (name === undefined) {
      problems.push(`pixel ${i % width}, ${Math.floor(i / width)} is in no mask`);
      if (problems.length > 20) break;
      continue;
    }
    counts[name] = (counts[name] ?? 0) + 1;
    const entry = mapping.get(name);
    const wantColour = entry ? entry.color : '#000000';
    const wantIndex = entry ? entry.index : 0;
    if (hex(combined.rgb, i) !== wantColour) problems.push(`combined pixel ${i} is ${hex(combined.rgb, i)}, ${name} is ${wantColour}`);
    const index =
      (indexed.rgb[i * 3] as number) + 256 * (indexed.rgb[i * 3 + 2] === 0 && wantIndex > 255 ? (indexed.rgb[i * 3 + 1] as number) : 0);
    if (index !== wantIndex) problems.push(`indexed pixel ${i} is ${index}, ${name} is ${wantIndex}`);
    if (problems.length > 20) break;
  }
  return {
    width,
    height,
    classAt: (x, y) => classes[y * width + x] ?? '?',
    counts,
    bounds(name) {
      let b: { left: number; top: number; right: number; bottom: number } | undefined;
      for (let i = 0; i < classes.length; i++) {
        if (classes[i] !== name) continue;
        const x = i % width;
        const y = Math.floor(i / width);
        b = b
          ? { left: Math.min(b.left, x), top: Math.min(b.top, y), right: Math.max(b.right, x), bottom: Math.max(b.bottom, y) }
          : { left: x, top: y, right: x, bottom: y };
      }
      return b;
    },
    problems,
  };
}
