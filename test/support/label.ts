// What a scripted person does in the labeling app (/label/), shared by the Chromium tests: log in
// through the form, drag a box on or click the image canvas, find a piece of text on the page (to
// select it with the mouse), a small street image that needs no network, and the screenshots of
// the app that docs/label-app.md shows.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { root } from './spec.ts';

/**
 * Takes the screenshot `docs/label-<name>.png` shows: written to test-results/label-<name>.png on
 * every run, and copied over the one in docs/ when the run has UPDATE_SCREENSHOTS=1 (then commit
 * them). Every player's test calls it once with its name, at 1280 × 800.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(root, 'test-results', `label-${name}.png`);
  mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file });
  if (process.env.UPDATE_SCREENSHOTS === '1') copyFileSync(file, path.join(root, 'docs', `label-${name}.png`));
}

/** A 640 × 400 street with a car (200, 200)-(380, 290), as SVG: an image the browser decodes without any network. */
export const street = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="400" viewBox="0 0 640 400">
<rect width="640" height="400" fill="#9fc5e8"/><rect y="260" width="640" height="140" fill="#666"/>
<rect x="200" y="200" width="180" height="70" rx="12" fill="#c0392b"/><circle cx="240" cy="272" r="18" fill="#222"/>
<circle cx="340" cy="272" r="18" fill="#222"/></svg>`;

/** Logs in through the form, as a person types it; waits until the app greets the worker by name. */
export async function logInThroughForm(page: Page, email: string, password: string, displayName: string) {
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByText(displayName).first().waitFor();
}

/**
 * Drags a box on the image player's canvas from one image pixel to another (the canvas shows the
 * image at some scale: the pixels are turned into page coordinates), in several mouse moves.
 */
export async function dragOnImage(page: Page, imageWidth: number, from: [number, number], to: [number, number]) {
  const frame = await page.locator('.stage canvas').first().boundingBox();
  if (!frame) throw new Error('no canvas');
  const scale = frame.width / imageWidth;
  const at = ([x, y]: [number, number]) => [frame.x + x * scale, frame.y + y * scale] as const;
  await page.mouse.move(...at(from));
  await page.mouse.down();
  await page.mouse.move(...at([(from[0] + to[0]) / 2, (from[1] + to[1]) / 2]), { steps: 5 });
  await page.mouse.move(...at(to), { steps: 5 });
  await page.mouse.up();
}

/** Clicks the image player's canvas at an image pixel. */
export async function clickOnImage(page: Page, imageWidth: number, [x, y]: [number, number]) {
  const frame = await page.locator('.stage canvas').first().boundingBox();
  if (!frame) throw new Error('no canvas');
  const scale = frame.width / imageWidth;
  await page.mouse.click(frame.x + x * scale, frame.y + y * scale);
}

/** Where a piece of the named-entity text is on the page: its first and last character's middle. */
export const whereIs = (page: Page, piece: string) =>
  page.locator('.ner-text').evaluate((box, sub) => {
    const nodes: Text[] = [];
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) nodes.push(walker.currentNode as Text);
    const at = (units: number): [Text, number] => {
      for (const node of nodes) {
        if (units <= node.data.length) return [node, units];
        units -= node.data.length;
      }
      throw new Error('outside the text');
    };
    const from = (box.textContent ?? '').indexOf(sub);
    const range = document.createRange();
    range.setStart(...at(from));
    range.setEnd(...at(from + sub.length));
    const rects = [...range.getClientRects()];
    const [first, last] = [rects[0] as DOMRect, rects[rects.length - 1] as DOMRect];
    return { x1: first.left + 1, y1: first.top + first.height / 2, x2: last.right - 1, y2: last.top + last.height / 2 };
  }, piece);

/** A point cloud frame (the contract's frame file) of clusters of points in boxes, with the index range of each cluster. */
export function lidarFrame(boxes: { from: [number, number, number]; to: [number, number, number]; count: number }[]) {
  const points: { x: number; y: number; z: number }[] = [];
  const ranges: [number, number][] = [];
  let seed = 7;
  const random = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  for (const { from, to, count } of boxes) {
    const start = points.length;
    for (let i = 0; i < count; i++) {
      const [x, y, z] = [0, 1, 2].map((k) => (from[k] as number) + random() * ((to[k] as number) - (from[k] as number))) as [
        number,
        number,
        number,
      ];
      points.push({ x: Math.round(x * 1000) / 1000, y: Math.round(y * 1000) / 1000, z: Math.round(z * 1000) / 1000 });
    }
    ranges.push([start, points.length]);
  }
  return { points, ranges };
}

/**
 * Draws a lasso with the mouse around the points `[from, to)` of `points` as the lidar player shows
 * them now (its camera matrix is on the view's `data-matrix`): a polygon 10 px outside their
 * projections' bounding box. Throws when a point outside the range falls in that box, so that the
 * test knows exactly which points the lasso takes.
 */
export async function lassoAround(page: Page, points: { x: number; y: number; z: number }[], [from, to]: [number, number]) {
  const stage = page.locator('.lidar-stage');
  const { matrix, size } = await stage.evaluate((h) => ({
    matrix: (h as HTMLElement).dataset.matrix ?? '',
    size: (h as HTMLElement).dataset.size ?? '',
  }));
  const m = matrix.split(',').map(Number);
  const [w, h] = size.split('x').map(Number) as [number, number];
  const screen = points.map(({ x, y, z }) => {
    const at = (r: number) => (m[r] as number) * x + (m[r + 4] as number) * y + (m[r + 8] as number) * z + (m[r + 12] as number);
    const cw = at(3);
    return [((at(0) / cw + 1) / 2) * w, ((1 - at(1) / cw) / 2) * h] as const;
  });
  const mine = screen.slice(from, to);
  const pad = 10;
  const [x1, x2] = [Math.min(...mine.map((p) => p[0])) - pad, Math.max(...mine.map((p) => p[0])) + pad];
  const [y1, y2] = [Math.min(...mine.map((p) => p[1])) - pad, Math.max(...mine.map((p) => p[1])) + pad];
  // The polygon bulges up to 4 px beyond that box: no other point may be within 5 px of it.
  const intruder = screen.findIndex(([x, y], i) => (i < from || i >= to) && x >= x1 - 5 && x <= x2 + 5 && y >= y1 - 5 && y <= y2 + 5);
  if (intruder >= 0) throw new Error(`point ${intruder} lies in the lasso around points ${from}..${to}`);
  if (x1 < 0 || y1 < 0 || x2 > w || y2 > h) throw new Error(`points ${from}..${to} are not all in sight`);
  const frame = await page.locator('.lidar-overlay').boundingBox();
  if (!frame) throw new Error('no view');
  const corners: [number, number][] = [
    [x1, y1],
    [(x1 + x2) / 2, y1 - 4],
    [x2, y1],
    [x2 + 4, (y1 + y2) / 2],
    [x2, y2],
    [(x1 + x2) / 2, y2 + 4],
    [x1, y2],
    [x1 - 4, (y1 + y2) / 2],
  ];
  const page_ = ([x, y]: [number, number]) => [frame.x + x, frame.y + y] as const;
  await page.mouse.move(...page_(corners[0] as [number, number]));
  await page.mouse.down();
  for (const c of [...corners.slice(1), corners[0] as [number, number]]) await page.mouse.move(...page_(c), { steps: 4 });
  await page.mouse.up();
}

/**
 * Frame `f` of a short drive, 320 × 200, as SVG: a red car 80 × 40 whose left side is at
 * 40 + 40·f, top at 120 (the frame number is written in the corner). Frames of a video task that need no network.
 */
export const driveFrame = (f: number) => `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200">
<rect width="320" height="200" fill="#9fc5e8"/><rect y="150" width="320" height="50" fill="#666"/>
<rect x="${40 + 40 * f}" y="120" width="80" height="40" rx="8" fill="#c0392b"/>
<text x="8" y="20" font-family="sans-serif" font-size="16">frame ${f}</text></svg>`;

/**
 * A mono 16-bit WAV at 8 kHz, `seconds` long: a 440 Hz tone whose loudness rises and falls once a
 * second, so that its waveform has a shape (an audio attachment the browser decodes without any network).
 */
export function toneWav(seconds: number): Buffer {
  const rate = 8000;
  const samples = Math.round(rate * seconds);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const t = i / rate;
    const loud = 0.15 + 0.6 * Math.abs(Math.sin(Math.PI * t));
    data.writeInt16LE(Math.round(loud * 32767 * Math.sin(2 * Math.PI * 440 * t)), i * 2);
  }
  const head = Buffer.alloc(44);
  head.write('RIFF', 0);
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8);
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20);
  head.writeUInt16LE(1, 22);
  head.writeUInt32LE(rate, 24);
  head.writeUInt32LE(rate * 2, 28);
  head.writeUInt16LE(2, 32);
  head.writeUInt16LE(16, 34);
  head.write('data', 36);
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

/** A 600 × 400 invoice page, as SVG: a document image for the transcription player, no network needed. */
export const invoice = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="400" viewBox="0 0 600 400">
<rect width="600" height="400" fill="#fff"/><text x="40" y="60" font-family="sans-serif" font-size="28" font-weight="bold">INVOICE</text>
<text x="380" y="60" font-family="monospace" font-size="18">INV-2026-0412</text>
<text x="40" y="150" font-family="sans-serif" font-size="16">Muster GmbH</text>
<text x="40" y="172" font-family="sans-serif" font-size="16">Hauptstr. 5</text>
<text x="40" y="194" font-family="sans-serif" font-size="16">10115 Berlin</text>
<line x1="40" y1="250" x2="560" y2="250" stroke="#999"/><text x="40" y="290" font-family="sans-serif" font-size="16">Total due: 1,240.00 EUR</text>
</svg>`;

/**
 * A PDF of `pages` (each a list of [x, y, text] in PDF points from the top-left, Helvetica 16 pt),
 * each page `width` × `height` points: a document for the transcription player, made here.
 */
export function pdfDocument(pages: [number, number, string][][], width = 400, height = 300): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(`<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + i * 2} 0 R`).join(' ')}] /Count ${pages.length} >>`);
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (const [i, lines] of pages.entries()) {
    const content = lines
      .map(([x, y, text]) => `BT /F1 16 Tf ${x} ${height - y} Td (${text.replace(/[()\\]/g, (c) => `\\${c}`)}) Tj ET`)
      .join('\n');
    add(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
    );
    add(`<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`);
  }
  let out = '%PDF-1.4\n';
  const offsets = objects.map((body, i) => {
    const at = Buffer.byteLength(out);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
