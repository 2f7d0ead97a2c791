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
