// What a scripted person does in the labeling app (/label/), shared by the Chromium tests: log in
// through the form, drag a box on the image canvas, find a piece of text on the page (to select it
// with the mouse), and a small street image that needs no network.
import type { Page } from 'playwright-core';

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
