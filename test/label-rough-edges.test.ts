// The labeling app's smaller faults (issue 32, item 13), each as a worker meets it: Chromium against
// the real server in this process (PGlite), live tasks of the customer's own workforce.
import { createServer, request as httpRequest, type Server } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import axeCore from 'axe-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { petsAccount } from './support/accounts.ts';
import { takeAndSubmit } from './support/assignments.ts';
import { testBrowser } from './support/browser.ts';
import { expireLapsedLeases } from '../server/domain/workforce/work.ts';
import { clickOnImage, logInThroughForm, screenshot, street, whereIs } from './support/label.ts';
import { client, startTestServer, type TestServer } from './support/server.ts';
import { createWorker, workerClient, type TestWorker } from './support/workers.ts';

let server: TestServer;
let browser: Browser;
let worker: TestWorker;
let customer: ReturnType<typeof client>;
/** The customer's host: the street image (the server passes it on to the app). */
let host: Server;
let streetUrl: string;
const poll = { timeout: 20_000 };

beforeAll(async () => {
  host = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(street));
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  streetUrl = `http://127.0.0.1:${(host.address() as { port: number }).port}/street.svg`;
  [server, browser] = await Promise.all([
    startTestServer('pglite', { ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0' }),
    testBrowser(inject('browserEndpoint')),
  ]);
  customer = client(server, 'current', server.dev.live_key);
  worker = await createWorker(server, { accountId: server.dev.account_id, displayName: 'Ana Lima' });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (host) await new Promise((r) => host.close(r));
});

/** A live task of the customer made through the API (no callback is delivered here); its id. */
async function liveTask(type: string, params: Record<string, unknown>): Promise<string> {
  const r = await customer('POST', `/v1/task/${type}`, { json: { callback_url: 'https://example.com/hook', ...params } });
  expect(r.status, r.text).toBe(200);
  return r.body.task_id as string;
}

/** The task as the customer reads it once the worker submitted. */
async function completed(taskId: string): Promise<any> {
  let task: any;
  await expect
    .poll(async () => {
      task = (await customer('GET', `/v1/task/${taskId}`)).body;
      return task.status;
    }, poll)
    .toBe('completed');
  return task.response;
}

/** A GET as a client sends it with exactly these headers (fetch would ask for gzip itself and undo it). */
function rawGet(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A fresh page (1280 × 800 unless told), logged in through the form; script errors are collected. */
async function openApp(
  viewport = { width: 1280, height: 800 },
  who: { worker: TestWorker; name: string } = { worker, name: 'Ana Lima' },
  query = '',
): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${server.url}/label/${query}`);
  await logInThroughForm(page, who.worker.email, who.worker.password, who.name);
  return { page, problems };
}

describe('the app’s files', () => {
  it('come compressed to a browser, brotli to a client asking for it, gzip to a client asking only for it, plain to one that does not ask', async () => {
    const page = await browser.newPage();
    try {
      const app = page.waitForResponse((r) => r.url().endsWith('/label/app.js'));
      await page.goto(`${server.url}/label/`);
      const res = await app;
      expect(res.status()).toBe(200);
      // Brotli where the browser lists it (Chromium does on loopback), gzip otherwise.
      const asked = (await res.request().allHeaders())['accept-encoding'] ?? '';
      expect(res.headers()['content-encoding']).toBe(asked.includes('br') ? 'br' : 'gzip');
      expect(res.headers().vary).toMatch(/accept-encoding/i);
      await page.getByRole('button', { name: 'Log in' }).waitFor();
    } finally {
      await page.close();
    }
    const plain = await rawGet('/label/app.js');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    const code = plain.body.toString('utf8');
    expect(code).toContain('humantask.label.token');
    const br = await rawGet('/label/app.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.body.length).toBeLessThan(plain.body.length / 2);
    expect(brotliDecompressSync(br.body).toString('utf8')).toBe(code);
    const gz = await rawGet('/label/app.js', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString('utf8')).toBe(code);
    // The page, its style and pdf.js alike; a revalidation of the page is answered 304.
    for (const path of ['/label/', '/label/style.css', '/label/vendor/pdf.worker.min.mjs']) {
      const got = await rawGet(path, { 'accept-encoding': 'br' });
      expect(got.status, path).toBe(200);
      expect(got.headers['content-encoding'], path).toBe('br');
      const again = await rawGet(path, { 'accept-encoding': 'br', 'if-none-match': String(got.headers.etag) });
      expect(again.status, path).toBe(304);
    }
    const folder = await rawGet('/label?workforce=operator');
    expect(folder.status).toBe(301);
    expect(folder.headers.location).toBe('/label/?workforce=operator');
  });
});

describe('the image player', () => {
  it('adds no vertex when the first is clicked too early, and closes no polygon whose outline crosses itself', async () => {
    const taskId = await liveTask('imageannotation', {
      instruction: 'Outline the car.',
      attachment: streetUrl,
      attachment_type: 'image',
      geometries: { polygon: { objects_to_annotate: ['car'], min_vertices: 3 } },
    });
    const { page, problems } = await openApp();
    try {
      await page.getByText('640 × 400 px').waitFor(poll);
      const message = page.locator('.image-status .message');
      await clickOnImage(page, 640, [200, 200]);
      await clickOnImage(page, 640, [380, 200]);
      // The first vertex again, with two placed: not closed, and no third vertex at its place.
      await clickOnImage(page, 640, [200, 200]);
      await expect.poll(() => message.textContent(), poll).toContain('A polygon needs at least 3 vertices here; it has 2');
      await clickOnImage(page, 640, [380, 290]);
      await clickOnImage(page, 640, [200, 200]);
      await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);
      // A bow-tie: Enter does not close it, and says why.
      for (const at of [
        [420, 40],
        [600, 180],
        [600, 40],
        [420, 180],
      ] as [number, number][])
        await clickOnImage(page, 640, at);
      await page.keyboard.press('Enter');
      await expect.poll(() => message.textContent(), poll).toMatch(/This polygon crosses itself at \(510, 110\)/);
      expect(await page.locator('.shapes li').count()).toBe(1);
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+Enter');
      const response = await completed(taskId);
      expect(response.annotations).toHaveLength(1);
      const [polygon] = response.annotations;
      expect(polygon.vertices).toHaveLength(3);
      const want = [
        [200, 200],
        [380, 200],
        [380, 290],
      ];
      polygon.vertices.forEach((v: { x: number; y: number }, i: number) => {
        expect(Math.abs(v.x - want[i]![0]!)).toBeLessThan(2);
        expect(Math.abs(v.y - want[i]![1]!)).toBeLessThan(2);
      });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
  it('shows the zoom the wheel just made, and fits the image again when the window grows', async () => {
    const taskId = await liveTask('imageannotation', {
      instruction: 'Draw a box around every car.',
      attachment: streetUrl,
      attachment_type: 'image',
      geometries: { box: { objects_to_annotate: ['car'] } },
    });
    const { page, problems } = await openApp({ width: 900, height: 700 });
    try {
      await page.getByText('640 × 400 px').waitFor(poll);
      const zoom = page.locator('.image-status .zoom');
      expect(await zoom.textContent()).toBe('zoom 100 %');
      const canvas = page.locator('.stage canvas').first();
      const small = (await canvas.boundingBox())!;
      await page.mouse.move(small.x + small.width / 2, small.y + small.height / 2);
      // One notch of the wheel: exp(0.0015 × 200) ≈ 1.35.
      await page.mouse.wheel(0, -200);
      await expect.poll(() => zoom.textContent(), poll).toBe('zoom 135 %');
      await page.keyboard.press('0');
      await page.setViewportSize({ width: 1400, height: 1000 });
      await expect.poll(async () => (await canvas.boundingBox())!.width, poll).toBeGreaterThan(small.width * 1.2);
      const grown = (await canvas.boundingBox())!;
      // The whole image, at its proportions, fills the new room.
      expect(Math.abs(grown.width / grown.height - 640 / 400)).toBeLessThan(0.02);
      expect(await zoom.textContent()).toBe('zoom 100 %');
      await page.keyboard.press('Control+Enter');
      await page.getByRole('alertdialog').waitFor(poll);
      await page.keyboard.press('Enter');
      expect(await completed(taskId)).toEqual({ annotations: [] });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('the shell', () => {
  it('asks before an empty answer goes: Escape goes back to the task, Enter submits it', async () => {
    const taskId = await liveTask('imageannotation', {
      instruction: 'Draw a box around every car.',
      attachment: streetUrl,
      attachment_type: 'image',
      geometries: { box: { objects_to_annotate: ['car'] } },
    });
    const { page, problems } = await openApp();
    try {
      await page.getByText('640 × 400 px').waitFor(poll);
      const sent: string[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/submit')) sent.push(r.url());
      });
      const dialog = page.getByRole('alertdialog', { name: 'Submit an empty answer?' });
      await page.keyboard.press('Control+Enter');
      await dialog.waitFor(poll);
      expect(await dialog.textContent()).toContain('Your answer has nothing in it');
      await screenshot(page, 'empty-answer');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached', ...poll });
      expect(sent).toEqual([]);
      expect((await customer('GET', `/v1/task/${taskId}`)).body.status).toBe('pending');
      await page.getByRole('button', { name: /^Submit/ }).click();
      await dialog.waitFor(poll);
      await page.keyboard.press('Enter');
      expect(await completed(taskId)).toEqual({ annotations: [] });
      expect(sent).toHaveLength(1);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('a lapsed lease', () => {
  it('keeps the work done after it: offered as a file, and back when the task comes back to this browser', async () => {
    const taskId = await liveTask('categorization', {
      instruction: 'Which team should answer this message?',
      attachment_type: 'text',
      attachment: 'My invoice shows the wrong address.',
      categories: ['Billing', 'Technical problem', 'Account access'],
    });
    const { page, problems } = await openApp();
    try {
      await page.locator('.instruction').waitFor(poll);
      await page.keyboard.press('1');
      // The lease lapses on the server; the worker, not yet told, changes the answer and submits it:
      // the submit is refused (a heartbeat would be, too).
      expect(await expireLapsedLeases(server.uow, new Date(Date.now() + 3_600_000))).toBeGreaterThanOrEqual(1);
      await page.keyboard.press('3');
      await page.keyboard.press('Control+Enter');
      await page.locator('#lease-lost').waitFor(poll);
      expect(await page.locator('#lease-lost').textContent()).toContain('if the task comes back to you here, it opens with this work');
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download my work' }).click()]);
      expect(file.suggestedFilename()).toBe(`task-${taskId}-my-work.json`);
      const chunks: Buffer[] = [];
      for await (const c of (await file.createReadStream()) as AsyncIterable<Buffer>) chunks.push(c);
      expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toMatchObject({ category: 'Account access' });
      // The task comes back: with the work done after the lapse.
      await page.keyboard.press('N');
      await page.getByText('Your work from when the lease on this task was lost is back').waitFor(poll);
      expect(await page.getByLabel('Account access').isChecked()).toBe(true);
      await page.keyboard.press('Control+Enter');
      expect(await completed(taskId)).toEqual({ category: 'Account access' });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('the form players', () => {
  it('an untouched slider answers nothing: a required one blocks the submit, an optional one is left out', async () => {
    const taskId = await liveTask('textcollection', {
      instruction: 'Rate the recording.',
      attachments: [{ type: 'text', content: 'A short interview about the harbour.' }],
      fields: [
        { type: 'number', field_id: 'clarity', title: 'Clarity', use_slider: true, min: 1, max: 5, step: 1, required: true },
        { type: 'number', field_id: 'noise', title: 'Background noise', use_slider: true, min: 0, max: 10, step: 1 },
      ],
    });
    const { page, problems } = await openApp();
    try {
      const clarity = page.getByLabel('Clarity');
      await clarity.waitFor(poll);
      expect(await clarity.getAttribute('aria-valuetext')).toBe('not set');
      await page.keyboard.press('Control+Enter');
      await page.locator('.notice.bad', { hasText: 'Clarity: move the slider to the value (it is not set yet).' }).waitFor(poll);
      expect((await customer('GET', `/v1/task/${taskId}`)).body.status).toBe('pending');
      await clarity.focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      expect(await clarity.getAttribute('aria-valuetext')).toBeNull();
      expect(await page.getByLabel('Background noise').getAttribute('aria-valuetext')).toBe('not set');
      await page.keyboard.press('Control+Enter');
      expect(await completed(taskId)).toEqual({ annotations: { clarity: '3' } });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('opens an image attachment in a viewer that zooms: + and - and the wheel, 0 fits, Escape closes', async () => {
    const taskId = await liveTask('categorization', {
      instruction: 'Is there a car in the street?',
      attachment: streetUrl,
      attachment_type: 'image',
      categories: ['Yes', 'No'],
    });
    const { page, problems } = await openApp();
    try {
      const opener = page.getByRole('button', { name: 'Zoom: The image to categorize' });
      await opener.waitFor(poll);
      await opener.click();
      const viewer = page.getByRole('dialog', { name: 'Zoomed: The image to categorize' });
      await viewer.waitFor(poll);
      const level = viewer.locator('output.zoom');
      await expect.poll(() => level.textContent(), poll).toBe('100 %');
      const image = viewer.locator('img');
      const fitted = (await image.boundingBox())!.width;
      await page.keyboard.press('+');
      await page.keyboard.press('+');
      await expect.poll(() => level.textContent(), poll).toBe('156 %');
      await screenshot(page, 'image-viewer');
      expect((await image.boundingBox())!.width).toBeGreaterThan(fitted * 1.5);
      const box = (await viewer.locator('.viewer-image').boundingBox())!;
      await page.mouse.move(box.x + 50, box.y + 50);
      await page.mouse.wheel(0, 200);
      await expect.poll(() => level.textContent(), poll).not.toBe('156 %');
      await page.keyboard.press('0');
      await expect.poll(() => level.textContent(), poll).toBe('100 %');
      // Escape closes the viewer, and only the viewer: the task is still open.
      await page.keyboard.press('Escape');
      await viewer.waitFor({ state: 'detached', ...poll });
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Zoom: The image to categorize');
      await page.getByLabel('Yes').check();
      await page.keyboard.press('Control+Enter');
      expect(await completed(taskId)).toEqual({ category: 'Yes' });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
  it('heads the columns of repeated values with what they are called, not their keys', async () => {
    const taskId = await liveTask('transcription', {
      instruction: 'Transcribe the receipt.',
      attachment_type: 'image',
      attachment: streetUrl,
      fields: { shop: 'The name of the shop' },
      repeatable_fields: { item: 'The line item', unit: { description: 'The unit', choices: ['piece', 'cup'] } },
    });
    const { page, problems } = await openApp();
    try {
      const table = page.locator('table.rows');
      await table.waitFor(poll);
      expect(await table.locator('th[scope=col]').allTextContents()).toEqual(['The line item', 'The unit']);
      await page.keyboard.press('Control+Enter');
      await page.getByText('Fill in: The name of the shop.').waitFor(poll);
      await page.getByLabel('The name of the shop').fill('Harbour Café');
      await page.keyboard.press('Control+Enter');
      expect(await completed(taskId)).toEqual({ fields: { shop: 'Harbour Café' }, repeatable_fields: [] });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('the named-entity player', () => {
  it('puts the caret where the text is clicked, and undoes and redoes spans', async () => {
    const taskId = await liveTask('namedentityrecognition', {
      instruction: 'Label the people.',
      text: 'Ana Lima met Bo Chen in Lisbon.',
      labels: [{ name: 'PERSON', display_name: 'Person' }],
    });
    const { page, problems } = await openApp();
    try {
      const text = page.locator('.ner-text');
      await text.waitFor(poll);
      const spans = () => page.locator('[data-span]').allTextContents();
      // A click just before "Bo", then Shift+→ twice and Enter: the span is "Bo".
      const bo = await whereIs(page, 'Bo');
      await page.mouse.click(bo.x1 - 1, bo.y1);
      await page.keyboard.press('Shift+ArrowRight');
      await page.keyboard.press('Shift+ArrowRight');
      await page.keyboard.press('Enter');
      await expect.poll(spans, poll).toEqual([expect.stringContaining('“Bo”')]);
      // Undo takes it back, redo brings it again; a removed span comes back with undo.
      await page.keyboard.press('Control+Z');
      await expect.poll(spans, poll).toEqual([]);
      await page.keyboard.press('Control+Shift+Z');
      await expect.poll(spans, poll).toEqual([expect.stringContaining('“Bo”')]);
      await page.keyboard.press(']');
      await page.keyboard.press('Delete');
      await expect.poll(spans, poll).toEqual([]);
      await page.keyboard.press('Control+Z');
      await expect.poll(spans, poll).toEqual([expect.stringContaining('“Bo”')]);
      await page.keyboard.press('Control+Enter');
      const response = await completed(taskId);
      expect(response.annotations).toEqual([expect.objectContaining({ start: 13, end: 15, text: 'Bo', label: 'PERSON' })]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('review mode', () => {
  it('shows the reviewer of a redo the remarks of the review it answers', async () => {
    const { secrets, live, newTask } = await petsAccount(server, 'rough-edges-review', 'https://example.com/hook');
    const author = await createWorker(server, { accountId: secrets.account_id });
    const first = await createWorker(server, { accountId: secrets.account_id, roles: ['reviewer'] });
    const second = await createWorker(server, { accountId: secrets.account_id, roles: ['reviewer'], displayName: 'Bo Chen' });
    const staffed = await live('PUT', '/v1/projects/pets/staffing', {
      json: { attempt: [author.workerId], review: [first.workerId, second.workerId], review_sampling: { new_worker_tasks: 10, rate: 0 } },
    });
    expect(staffed.status, staffed.text).toBe(200);
    const taskId = await newTask();
    await takeAndSubmit(workerClient(server, author.token), taskId, { category: 'dog' });
    const reviewer = workerClient(server, first.token);
    const review = await reviewer('POST', '/v1/assignments/next', { role: 'review' });
    expect(review.body.task.task_id).toBe(taskId);
    const remark = { category: 'wrong_label', text: 'The text says cat.', scope: { field: 'category' } };
    const rejected = await reviewer('POST', `/v1/assignments/${review.body.assignment_id}/review`, {
      lease_token: review.body.lease_token,
      active_ms: 1000,
      result: 'rejected',
      feedback_items: [remark],
    });
    expect(rejected.status, rejected.text).toBe(200);
    await takeAndSubmit(workerClient(server, author.token), taskId, { category: 'cat' });

    const { page, problems } = await openApp(undefined, { worker: second, name: 'Bo Chen' });
    try {
      const earlier = page.getByRole('status').filter({ hasText: 'This answer is a redo.' });
      await earlier.waitFor(poll);
      expect(await earlier.textContent()).toContain('The text says cat.');
      expect(await axeViolations(page), 'review mode').toEqual([]);
      await page.keyboard.press('Shift+A');
      await expect.poll(async () => (await live('GET', `/v1/task/${taskId}`)).body.status, poll).toBe('completed');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

/** axe-core's rules run in the page (evaluated over the DevTools protocol, so the app's policy allows it). */
const axeSource = axeCore.source;
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(): Promise<{ violations: { id: string; help: string; nodes: { target: string[] }[] }[] }> } }
    ).axe;
    return (await axe.run()).violations;
  });
  return found.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

describe('accessibility', () => {
  it('has no axe-core violation on the log-in form, the idle screen, a task and its empty-answer question', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await page.goto(`${server.url}/label/`);
      await page.getByRole('button', { name: 'Log in' }).waitFor(poll);
      expect(await axeViolations(page)).toEqual([]);
    } finally {
      await page.close();
    }
    const taskId = await liveTask('imageannotation', {
      instruction: 'Draw a box around every **car**.',
      attachment: streetUrl,
      attachment_type: 'image',
      geometries: { box: { objects_to_annotate: ['car', 'truck'] } },
    });
    const { page: work, problems } = await openApp();
    try {
      await work.getByText('640 × 400 px').waitFor(poll);
      expect(await axeViolations(work)).toEqual([]);
      await work.keyboard.press('Control+Enter');
      await work.getByRole('alertdialog').waitFor(poll);
      expect(await axeViolations(work)).toEqual([]);
      await work.keyboard.press('Enter');
      expect(await completed(taskId)).toEqual({ annotations: [] });
      // Form and text players, each skipped once checked (a skipped task is not offered again).
      const kinds: [string, Record<string, unknown>, string][] = [
        ['categorization', { attachment_type: 'image', attachment: streetUrl, categories: ['street', 'park'] }, 'street'],
        [
          'namedentityrecognition',
          { text: 'Ana Lima met Bo Chen in Lisbon.', labels: [{ name: 'PERSON', display_name: 'Person' }] },
          'Ana Lima met',
        ],
        [
          'textcollection',
          {
            attachments: [{ type: 'image', content: streetUrl }],
            fields: [
              { type: 'number', field_id: 'cars', title: 'Cars', use_slider: true, min: 0, max: 5, step: 1 },
              { type: 'boolean', field_id: 'night', title: 'Night' },
              {
                type: 'category',
                field_id: 'weather',
                title: 'Weather',
                choices: [
                  { label: 'Sun', value: 'sun' },
                  { label: 'Rain', value: 'rain' },
                ],
              },
              { type: 'text', field_id: 'note', title: 'Note' },
            ],
          },
          'Weather',
        ],
        [
          'transcription',
          {
            attachment_type: 'image',
            attachment: streetUrl,
            fields: { street: 'The street name' },
            repeatable_fields: { plate: 'A number plate' },
          },
          'The street name',
        ],
      ];
      for (const [type, params, shown] of kinds) {
        await liveTask(type, { instruction: `A ${type} task.`, ...params });
        await work.keyboard.press('N');
        await work.getByText(shown).first().waitFor(poll);
        await work.locator('.instruction').waitFor(poll);
        expect(await axeViolations(work), type).toEqual([]);
        await work.keyboard.press('Shift+S');
        await work.getByLabel(/Why\?/).fill('Checked for accessibility.');
        await work.keyboard.press('Control+Enter');
        await work.getByRole('button', { name: /Stop waiting/ }).waitFor(poll);
        await work.keyboard.press('Escape');
      }
      await work.getByRole('button', { name: /Take the next task/ }).waitFor(poll);
      await work.getByRole('button', { name: /Take the next task/ }).waitFor(poll);
      expect(await axeViolations(work)).toEqual([]);
      await work.keyboard.press('?');
      await work.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor(poll);
      expect(await axeViolations(work), 'the shortcuts').toEqual([]);
      await work.keyboard.press('Escape');
      await work.keyboard.press('Shift+H');
      await work.getByRole('button', { name: /Back to work/ }).waitFor(poll);
      await work.locator('table').first().waitFor(poll);
      expect(await axeViolations(work), 'my history').toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await work.close();
    }
  });
});
