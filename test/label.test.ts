// The labeling app (/label/) in real Chromium, against the Prism mock of the worker API. A small
// front in this test serves the app (the server's own /label/ router), a same-origin test image,
// and `assignments/next` from a queue of assignments that validate against the contract (Prism
// answers every call with the same example, a categorization, and keeps no state); every other
// /worker/v1 call goes to Prism, which checks the request against the contract, and is recorded
// here. A test can make Prism answer one operation with another documented status (`Prefer`).
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { components } from '../generated/workforce.ts';
import { labelApp } from '../server/label.ts';
import { startServer, type RunningServer } from '../server/main.ts';
import { readConfig } from '../server/config.ts';
import { startWorkerMock, type RunningMock } from '../server/mock.ts';
import { launchBrowser } from './support/browser.ts';
import { asGeneration, makeValidator, root } from './support/spec.ts';
import { pino } from 'pino';

type Assignment = components['schemas']['Assignment'];
interface Call {
  method: string;
  path: string;
  body: any;
  status: number;
  /** The Idempotency-Key header, if any. */
  key?: string;
}

const schema = makeValidator(asGeneration('workforce'));
const validAgainst = (name: string, value: unknown) => {
  const v = schema(`#/components/schemas/${name}`);
  return v(value) ? 'valid' : JSON.stringify(v.errors);
};

let mock: RunningMock;
let front: Server;
let origin: string;
let browser: Browser;
let queue: Assignment[] = [];
let calls: Call[] = [];
let prefer: Record<string, string> = {};

// A 640 × 400 street with a car, as SVG (an image the browser decodes without any network).
const street = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="400" viewBox="0 0 640 400">
<rect width="640" height="400" fill="#9fc5e8"/><rect y="260" width="640" height="140" fill="#666"/>
<rect x="200" y="200" width="180" height="70" rx="12" fill="#c0392b"/><circle cx="240" cy="272" r="18" fill="#222"/>
<circle cx="340" cy="272" r="18" fill="#222"/></svg>`;

/** Prism and the browser answer slowly on a loaded machine: polls wait up to 20 s. */
const poll = { timeout: 20_000 };

let serial = 0;
function assignment(task: Assignment['task'], extra: Partial<Assignment> = {}): Assignment {
  serial += 1;
  const a: Assignment = {
    assignment_id: `asg_${serial.toString(16).padStart(24, '0')}`,
    role: 'attempt',
    status: 'active',
    task,
    lease_token: `lt_${serial}`,
    lease_expires_at: new Date(Date.now() + 5 * 60_000).toISOString(),
    hard_deadline: new Date(Date.now() + 4 * 3600_000).toISOString(),
    active_ms: 0,
    created_at: new Date().toISOString(),
    ...extra,
  };
  expect(validAgainst('Assignment', a)).toBe('valid');
  return a;
}

const categorizationTask = (): Assignment['task'] => ({
  task_id: '65f1c0a2b3c4d5e6f7a8b9c0',
  type: 'categorization',
  instruction:
    'Which **team** should answer this message? See [the guide](https://example.com/guide) or [bad](javascript:alert(1)).<script>window.pwned = 1</script><img src="/fixtures/street.svg" onerror="window.pwned = 2">',
  params: {
    attachment_type: 'text',
    attachment: 'I was charged twice for my subscription this month.',
    categories: ['Billing', 'Technical problem', 'Account access'],
    category_ids: { c1: 'Billing', c2: 'Technical problem', c3: 'Account access' },
    allow_multiple: false,
  },
});

const boxTask = (): Assignment['task'] => ({
  task_id: '65f1c0a2b3c4d5e6f7a8b9c1',
  type: 'imageannotation',
  instruction: 'Draw a box around every **vehicle**.',
  params: {
    attachment: `${origin}/fixtures/street.svg`,
    attachment_type: 'image',
    geometries: { box: { objects_to_annotate: ['car', 'truck'], min_width: 10, min_height: 10 } },
    layers: { boxes: [{ left: 20, top: 20, width: 100, height: 60, label: 'sign' }] },
  },
});

beforeAll(async () => {
  mock = await startWorkerMock();
  const app = express();
  app.use('/label', labelApp());
  app.get('/fixtures/street.svg', (_req, res) => {
    res.type('image/svg+xml').send(street);
  });
  app.use(express.raw({ type: () => true, limit: '2mb' }));
  app.post('/worker/v1/assignments/next', (req, res) => {
    const next = queue.shift();
    calls.push({ method: 'POST', path: req.path, body: null, status: next ? 200 : 204 });
    if (next) res.json(next);
    else res.status(204).set('retry-after', '2').end();
  });
  app.use('/worker', async (req, res) => {
    const raw = Buffer.isBuffer(req.body) && req.body.length ? req.body : undefined;
    const headers: Record<string, string> = {};
    for (const h of ['authorization', 'content-type', 'idempotency-key']) if (req.headers[h]) headers[h] = String(req.headers[h]);
    const op = req.path.split('/').pop() ?? '';
    if (prefer[op]) headers.prefer = prefer[op];
    const answer = await fetch(`${mock.url}${req.originalUrl}`, {
      method: req.method,
      headers,
      ...(raw ? { body: new Uint8Array(raw) } : {}),
    });
    const text = await answer.text();
    calls.push({
      method: req.method,
      path: `/worker${req.path}`,
      body: raw ? JSON.parse(raw.toString()) : null,
      status: answer.status,
      ...(headers['idempotency-key'] ? { key: headers['idempotency-key'] } : {}),
    });
    res.status(answer.status);
    for (const h of ['content-type', 'retry-after']) if (answer.headers.get(h)) res.setHeader(h, answer.headers.get(h) as string);
    res.send(text);
  });
  front = createServer(app);
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(front.address() as { port: number }).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  if (front) await new Promise((r) => front.close(r));
  await mock?.stop();
});

beforeEach(() => {
  queue = [];
  calls = [];
  prefer = {};
});

/** A page at 1280 × 800 that records every request leaving the origin. */
async function open(query = ''): Promise<{ page: Page; foreign: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const foreign: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== origin) foreign.push(r.url());
  });
  await page.goto(`${origin}/label/${query}`);
  return { page, foreign };
}

async function logIn(page: Page) {
  await page.getByLabel('E-mail address').fill('ana@example.com');
  await page.getByLabel('Password').fill('correct-horse-battery-staple');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByText('Ana Lima').waitFor();
}

const waitForCall = async (predicate: (c: Call) => boolean) => {
  for (let i = 0; i < 400; i++) {
    const found = calls.find(predicate);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no such call; calls were: ${JSON.stringify(calls.map((c) => `${c.method} ${c.path} ${c.status}`))}`);
};

describe('the labeling app', () => {
  it('logs in, categorizes a text, draws a box on an image, submits both, and then waits for work', async () => {
    const [first, second] = [assignment(categorizationTask()), assignment(boxTask())];
    queue = [first, second];
    const { page, foreign } = await open('?heartbeat=1');
    await logIn(page);
    expect(calls[0]).toMatchObject({ path: '/worker/v1/session', body: { email: 'ana@example.com' }, status: 200 });
    expect(await page.evaluate(() => sessionStorage.getItem('humantask.label.token'))).toMatch(/^wks_/);

    // The instruction: Markdown rendered, script and event handlers gone.
    await expect.poll(() => page.locator('.instruction strong').textContent(), poll).toBe('team');
    expect(await page.locator('.instruction').innerHTML()).not.toMatch(/script|onerror/);
    expect(await page.evaluate(() => (window as any).pwned)).toBeUndefined();
    expect(
      await page
        .locator('.instruction a')
        .evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')])),
    ).toEqual([
      ['https://example.com/guide', '_blank', 'noopener noreferrer'],
      [null, null, null],
    ]);
    await expect
      .poll(() => page.locator('.attachment blockquote').textContent(), poll)
      .toBe('I was charged twice for my subscription this month.');

    // Key 2 chooses the second category; a heartbeat saves it as the draft.
    await page.keyboard.press('2');
    expect(await page.getByLabel('Technical problem').isChecked()).toBe(true);
    const beat = await waitForCall((c) => c.path.endsWith('/heartbeat') && c.body?.draft?.category === 'Technical problem');
    expect(validAgainst('HeartbeatRequest', beat.body)).toBe('valid');
    expect(beat.status).toBe(200);

    await page.keyboard.press('Control+Enter');
    const submitted = await waitForCall((c) => c.path.endsWith('/submit'));
    expect(validAgainst('SubmitRequest', submitted.body)).toBe('valid');
    expect(submitted.body).toMatchObject({
      lease_token: first.lease_token,
      response: { category: 'Technical problem', category_id: 'c2' },
    });
    expect(submitted.status).toBe(200);

    // The next task comes by itself: an image to draw boxes on.
    const canvas = page.locator('.stage canvas').first();
    await page.getByText('640 × 400 px').waitFor();
    const frame = await canvas.boundingBox();
    if (!frame) throw new Error('no canvas');
    const scale = frame.width / 640;
    // Drag around the car (200, 200)-(380, 290) in image pixels, with "car" (label 1) chosen.
    await page.mouse.move(frame.x + 200 * scale, frame.y + 195 * scale);
    await page.mouse.down();
    await page.mouse.move(frame.x + 300 * scale, frame.y + 250 * scale, { steps: 5 });
    await page.mouse.move(frame.x + 385 * scale, frame.y + 292 * scale, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);
    await page.locator('.shapes li').first().textContent();
    mkdirSync(path.join(root, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(root, 'test-results', 'label-imageannotation.png') });

    await page.keyboard.press('Control+Enter');
    const boxes = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === second.lease_token);
    expect(validAgainst('SubmitRequest', boxes.body)).toBe('valid');
    expect(boxes.status).toBe(200);
    const [box, ...more] = boxes.body.response.annotations;
    expect(more).toEqual([]);
    expect(box).toMatchObject({ type: 'box', label: 'car' });
    expect(box.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const [key, want] of Object.entries({ left: 200, top: 195, width: 185, height: 97 }))
      expect(Math.abs(box[key] - want), key).toBeLessThan(2);

    // Nothing more: the app says so and asks again after Retry-After.
    await page.getByText(/Nothing to do right now\. Asking again in [12] s\./).waitFor();
    await waitForCall((c) => c.path.endsWith('/next') && c.status === 204);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('transcribes fields and repeated rows, and collects data with the time spent', async () => {
    const transcription = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9c2',
      type: 'transcription',
      instruction: 'Copy the invoice.',
      params: {
        attachment_type: 'image',
        attachment: `${origin}/fixtures/street.svg`,
        fields: { invoice_number: 'The invoice number', total: 'The total due' },
        repeatable_fields: { item: 'The line item', unit: { description: 'The unit', choices: ['piece', 'hour'] } },
      },
    });
    const collection = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9c3',
      type: 'datacollection',
      instruction: 'Find the phone number.',
      params: { attachment_type: 'text', attachment: 'La Piazza, Main Street 1', fields: { phone: 'The phone number' } },
    });
    queue = [transcription, collection];
    const { page } = await open();
    await logIn(page);
    await page.getByLabel('The invoice number').fill('INV-1041');
    // Submitting with a field left empty says what is missing, and sends nothing.
    await page.keyboard.press('Control+Enter');
    await page.getByText('Fill in: total.').waitFor();
    await page.getByLabel('The total due').fill('1,250.00 EUR');
    expect(await page.getByText('Fill in: total.').count()).toBe(0);
    await page.keyboard.press('Alt+Enter');
    await page.keyboard.type('Consulting');
    await page.getByLabel('The unit (row 1)').selectOption('hour');
    await page.getByRole('button', { name: /Add a row/ }).click();
    await page.getByLabel('The line item (row 2)').fill('Travel');
    await page.getByLabel('The unit (row 2)').selectOption('piece');
    await page.screenshot({ path: path.join(root, 'test-results', 'label-transcription.png') });
    await page.keyboard.press('Control+Enter');
    const first = await waitForCall((c) => c.path.endsWith('/submit'));
    expect(validAgainst('SubmitRequest', first.body)).toBe('valid');
    expect(first.status).toBe(200);
    expect(first.body.response).toEqual({
      fields: { invoice_number: 'INV-1041', total: '1,250.00 EUR' },
      repeatable_fields: [
        { item: 'Consulting', unit: 'hour' },
        { item: 'Travel', unit: 'piece' },
      ],
    });

    await page.getByLabel('The phone number').fill('+1 555 0100');
    await page.keyboard.press('Control+Enter');
    const second = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === collection.lease_token);
    expect(validAgainst('SubmitRequest', second.body)).toBe('valid');
    expect(second.body.response).toEqual({ fields: { phone: '+1 555 0100' }, time_spent_in_seconds: expect.any(Number) });
    expect(second.status).toBe(200);
    expect(calls.filter((c) => c.path.endsWith('/submit'))).toHaveLength(2);
    await page.close();
  });

  it("shows the server's reason when it refuses an answer (400), and lets the person correct and submit again", async () => {
    const task = assignment(categorizationTask());
    queue = [task];
    prefer = { submit: 'code=400' };
    const { page } = await open();
    await logIn(page);
    await page.locator('.instruction').waitFor();
    await page.keyboard.press('1');
    await page.keyboard.press('Control+Enter');
    await page
      .locator('.notice', { hasText: "The answer was not accepted: request/body must have required property 'lease_token'" })
      .waitFor();
    expect(await page.getByLabel('Billing').isChecked()).toBe(true);
    prefer = {};
    await page.keyboard.press('Control+Enter');
    await waitForCall((c) => c.path.endsWith('/submit') && c.status === 200);
    expect(calls.filter((c) => c.path.endsWith('/submit')).map((c) => c.status)).toEqual([400, 200]);
    // A refused answer's key is not reused: the server would replay the refusal, or call another body a mismatch.
    const [refused, accepted] = calls.filter((c) => c.path.endsWith('/submit'));
    expect(refused?.key).toBeTruthy();
    expect(accepted?.key).toBeTruthy();
    expect(accepted?.key).not.toBe(refused?.key);
    await page.close();
  });

  it('says clearly that the lease was lost when a heartbeat answers 409, and stops the work', async () => {
    queue = [assignment(categorizationTask())];
    prefer = { heartbeat: 'code=409' };
    const { page } = await open('?heartbeat=1');
    await logIn(page);
    await page.keyboard.press('1');
    await page.locator('#lease-lost').waitFor();
    expect(await page.locator('#lease-lost').textContent()).toContain('Your lease on this task was lost');
    expect(await page.locator('#lease-lost').textContent()).toContain('was lost; the task may be with another worker now.');
    const lost = calls.find((c) => c.path.endsWith('/heartbeat'));
    expect(lost?.status).toBe(409);
    expect(await page.getByRole('button', { name: /Submit/ }).isDisabled()).toBe(true);
    expect(await page.locator('#lease').textContent()).toBe('lost');
    // No submit after a lost lease, whatever the keys.
    await page.keyboard.press('Control+Enter');
    expect(calls.some((c) => c.path.endsWith('/submit'))).toBe(false);
    await page.close();
  });

  it("brings the draft back: after a reload from this browser's copy, in another browser from the server's draft", async () => {
    const task = assignment(categorizationTask());
    // Asked again while the assignment is active, the server answers it again (a reload resumes it).
    // (The generated type of a draft is an empty record: the contract's `type: object` has no properties.)
    queue = [task, task, { ...task, draft: { category: 'Account access' } as unknown as Assignment['draft'] }];
    const { page } = await open();
    await logIn(page);
    await page.keyboard.press('2');
    await page.reload();
    await page.locator('.instruction').waitFor();
    expect(await page.getByLabel('Technical problem').isChecked()).toBe(true);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const other = await context.newPage();
    await other.goto(`${origin}/label/`);
    await logIn(other);
    await other.locator('.instruction').waitFor();
    expect(await other.getByLabel('Account access').isChecked()).toBe(true);
    await context.close();
    await page.close();
  });

  it('counts active time only while there was input in the last 2 minutes, and sends no heartbeat when idle', async () => {
    queue = [assignment(categorizationTask())];
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.clock.install();
    await page.goto(`${origin}/label/`);
    await logIn(page);
    await page.locator('.instruction').waitFor();
    await page.keyboard.press('1');
    // Five minutes pass with no more input: two of them count.
    for (let i = 0; i < 10; i++) await page.clock.runFor(30_000);
    await expect.poll(() => page.locator('#active-time').textContent(), poll).toMatch(/^2:0\d$/);
    const beats = () => calls.filter((c) => c.path.endsWith('/heartbeat'));
    await expect.poll(() => beats().length, poll).toBeGreaterThanOrEqual(5);
    const sent = beats().length;
    expect(sent).toBeLessThanOrEqual(7);
    for (const b of beats()) expect(validAgainst('HeartbeatRequest', b.body)).toBe('valid');
    const reported = beats().reduce((sum, b) => sum + b.body.active_ms, 0);
    expect(reported).toBeGreaterThan(90_000);
    expect(reported).toBeLessThanOrEqual(130_000);
    // Idle: the clock runs on, no heartbeat goes out (the lease may lapse, as the contract wants).
    for (let i = 0; i < 4; i++) await page.clock.runFor(30_000);
    expect(beats().length).toBe(sent);
    await page.close();
  });

  it('releases the task from the keyboard, saving the draft first', async () => {
    const task = assignment(categorizationTask());
    queue = [task];
    const { page } = await open();
    await logIn(page);
    await page.locator('.instruction').waitFor();
    await page.keyboard.press('3');
    await page.keyboard.press('Shift+R');
    await page.getByText('Released: the task went back to the queue, with your draft.').waitFor();
    const saved = calls.find((c) => c.path.endsWith('/heartbeat'));
    expect(saved?.body).toMatchObject({ lease_token: task.lease_token, draft: { category: 'Account access' } });
    const released = calls.find((c) => c.path.endsWith('/release'));
    expect(validAgainst('ReleaseRequest', released?.body)).toBe('valid');
    expect(released).toMatchObject({ status: 200, body: { lease_token: task.lease_token } });
    expect(calls.indexOf(saved as Call)).toBeLessThan(calls.indexOf(released as Call));
    await page.close();
  });

  it('shows every shortcut in a help overlay on ?, and skips with a reason from the keyboard', async () => {
    const task = assignment(categorizationTask());
    queue = [task];
    const { page } = await open();
    await logIn(page);
    await page.locator('.instruction').waitFor();
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    const text = await help.textContent();
    for (const line of [
      'Submit the answer',
      'Ctrl+Enter',
      'Skip the task',
      'Shift+S',
      'Release the task',
      'Shift+R',
      'Choose category 1-9',
    ])
      expect(text).toContain(line);
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden' });

    await page.keyboard.press('Shift+S');
    await page.getByLabel(/Why\?/).fill('The text is not in a language I read.');
    await page.keyboard.press('Control+Enter');
    const skipped = await waitForCall((c) => c.path.endsWith('/skip'));
    expect(validAgainst('SkipRequest', skipped.body)).toBe('valid');
    expect(skipped.body).toMatchObject({ lease_token: task.lease_token, reason: 'The text is not in a language I read.' });
    expect(skipped.status).toBe(200);
    await page.getByText(/Nothing to do right now/).waitFor();
    await page.close();
  });
});

describe('the server', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(readConfig({ PORT: '0', DATA_DIR: 'memory://' }), pino({ level: 'silent' }));
  });
  afterAll(() => server?.close());

  it('serves the app at /label/, its bundle built from label/ on first request, with a policy that loads scripts only from itself', async () => {
    const page = await fetch(`${server.url}/label/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="app.js"></script>');
    const bundle = await fetch(`${server.url}/label/app.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    const code = await bundle.text();
    expect(code).toContain('humantask.label.token');
    expect(code).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.(?:com|net|org|io)\/[^"'\s]*\.(?:js|css)/);
  });

  it('boots in Chromium from the server under its policy: the log-in form, no script error, no policy violation', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/favicon/.test(m.location().url)) problems.push(m.text());
    });
    await page.goto(`${server.url}/label/`);
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('the image player', () => {
  const geometryTask = (extra: Record<string, unknown> = {}): Assignment['task'] =>
    ({
      task_id: '65f1c0a2b3c4d5e6f7a8b9d1',
      type: 'imageannotation',
      instruction: 'Mark the street: vehicles, the sidewalk, the lane, the wheels.',
      params: {
        attachment: `${origin}/fixtures/street.svg`,
        attachment_type: 'image',
        geometries: {
          box: { objects_to_annotate: ['car', 'truck'], min_width: 10, min_height: 10 },
          polygon: { objects_to_annotate: ['sidewalk'], min_vertices: 3, max_vertices: 8 },
          line: { objects_to_annotate: ['lane'], min_vertices: 2 },
          point: { objects_to_annotate: ['wheel-center'] },
          cuboid: { objects_to_annotate: ['truck'] },
          ellipse: { objects_to_annotate: ['wheel'] },
        },
        layers: {
          boxes: [{ left: 20, top: 20, width: 100, height: 60, label: 'sign' }],
          polygons: [
            {
              vertices: [
                { x: 500, y: 20 },
                { x: 600, y: 20 },
                { x: 560, y: 90 },
              ],
            },
          ],
          lines: [
            {
              spline: true,
              vertices: [
                { x: 0, y: 330 },
                { x: 200, y: 310 },
                { x: 400, y: 340 },
                { x: 640, y: 320 },
              ],
            },
          ],
          cuboids: [
            {
              label: 'bus',
              vertices: [
                { description: 'face-topleft', x: 40, y: 150 },
                { description: 'face-bottomleft', x: 40, y: 240 },
                { description: 'face-topright', x: 140, y: 150 },
                { description: 'face-bottomright', x: 140, y: 240 },
                { description: 'side-topcorner', x: 180, y: 135 },
                { description: 'side-bottomcorner', x: 180, y: 215 },
              ],
            },
          ],
        },
        ...extra,
      },
    }) as unknown as Assignment['task'];

  /** Page coordinates of an image pixel, under the canvas's current zoom and pan. */
  async function at(page: Page, x: number, y: number): Promise<[number, number]> {
    const view = await page.locator('.stage').evaluate((h) => ({
      scale: Number((h as HTMLElement).dataset.scale),
      x: Number((h as HTMLElement).dataset.x),
      y: Number((h as HTMLElement).dataset.y),
    }));
    const frame = await page.locator('.stage canvas').first().boundingBox();
    if (!frame) throw new Error('no canvas');
    return [frame.x + view.x + x * view.scale, frame.y + view.y + y * view.scale];
  }
  async function drag(page: Page, from: [number, number], to: [number, number]) {
    await page.mouse.move(...(await at(page, ...from)));
    await page.mouse.down();
    const end = await at(page, ...to);
    await page.mouse.move(end[0], end[1], { steps: 6 });
    await page.mouse.up();
  }
  async function click(page: Page, x: number, y: number) {
    await page.mouse.click(...(await at(page, x, y)));
  }
  const shapeCount = (page: Page) => page.locator('.shapes li').count();
  async function start(task: Assignment['task']) {
    const a = assignment(task);
    queue = [a];
    const { page, foreign } = await open();
    await logIn(page);
    await page.getByText('640 × 400 px').waitFor();
    return { a, page, foreign };
  }
  async function submitted(page: Page, a: Assignment) {
    await page.keyboard.press('Control+Enter');
    const call = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === a.lease_token);
    expect(validAgainst('SubmitRequest', call.body)).toBe('valid');
    // And against the type's own response schema, not only the union of all types' answers.
    const own = { imageannotation: 'ImageAnnotationResponse', annotation: 'AnnotationResponse', lineannotation: 'LineAnnotationResponse' }[
      a.task.type as string
    ];
    expect(validAgainst(own ?? 'none', call.body.response)).toBe('valid');
    expect(call.status).toBe(200);
    return call.body.response.annotations as any[];
  }
  const close = (got: number, want: number) => Math.abs(got - want) <= 1;
  const expectNear = (got: Record<string, unknown>, want: Record<string, number>) => {
    for (const [k, v] of Object.entries(want)) expect(close(Number(got[k]), v), `${k}: ${String(got[k])} ≠ ${v}`).toBe(true);
  };
  const expectVertices = (got: { x: number; y: number }[], want: [number, number][]) => {
    expect(got).toHaveLength(want.length);
    for (const [i, [x, y]] of want.entries()) expectNear(got[i] as never, { x, y });
  };

  it('draws a box, a polygon, a line, a point, a cuboid and an ellipse with the mouse and keys; the answer is what was drawn', async () => {
    const { a, page, foreign } = await start(geometryTask());
    // Every tool has a key, listed in the help overlay.
    await page.keyboard.press('?');
    const help = await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).textContent();
    for (const line of [
      'Tool: Box',
      'Tool: Polygon',
      'Tool: Line',
      'Tool: Point',
      'Tool: Cuboid',
      'Tool: Ellipse',
      'Undo',
      'Redo',
      'Zoom in',
    ])
      expect(help).toContain(line);
    await page.keyboard.press('Escape');

    await page.keyboard.press('B');
    await page.keyboard.press('2');
    await drag(page, [200, 195], [385, 292]);
    await page.keyboard.press('P');
    for (const [x, y] of [
      [10, 300],
      [300, 285],
      [320, 395],
      [10, 395],
    ] as const)
      await click(page, x, y);
    await click(page, 10, 300); // on the first vertex: closes the polygon
    await page.keyboard.press('L');
    for (const [x, y] of [
      [400, 380],
      [500, 330],
      [630, 300],
    ] as const)
      await click(page, x, y);
    await page.keyboard.press('Enter');
    await page.keyboard.press('K');
    await click(page, 240, 272);
    await page.keyboard.press('C');
    await drag(page, [420, 150], [520, 250]);
    await click(page, 560, 130);
    await page.keyboard.press('E');
    await drag(page, [322, 254], [358, 290]);
    await expect.poll(() => shapeCount(page), poll).toBe(6);
    // The selected ellipse's rotation handle, 50 screen pixels above its top, dragged to its right: 90°.
    const [cx, cy] = await at(page, 340, 272);
    const [, top] = await at(page, 340, 254);
    await page.mouse.move(cx, top - 50);
    await page.mouse.down();
    await page.mouse.move(cx + 30, cy - 30, { steps: 4 });
    await page.mouse.move(cx + 80, cy, { steps: 4 });
    await page.mouse.up();
    await page
      .locator('.shapes')
      .getByText(/wheel: ellipse at 340, 272, radii 18 × 18, (89|90|91)°/)
      .waitFor();
    await page.screenshot({ path: path.join(root, 'test-results', 'label-imageannotation-geometries.png') });

    const [box, polygon, line, point, cuboid, ellipse, ...more] = await submitted(page, a);
    expect(more).toEqual([]);
    expect(box).toMatchObject({ type: 'box', label: 'truck' });
    expectNear(box, { left: 200, top: 195, width: 185, height: 97 });
    expect(polygon).toMatchObject({ type: 'polygon', label: 'sidewalk' });
    expectVertices(polygon.vertices, [
      [10, 300],
      [300, 285],
      [320, 395],
      [10, 395],
    ]);
    expect(line).toMatchObject({ type: 'line', label: 'lane' });
    expectVertices(line.vertices, [
      [400, 380],
      [500, 330],
      [630, 300],
    ]);
    expect(point).toMatchObject({ type: 'point', label: 'wheel-center' });
    expectNear(point, { x: 240, y: 272 });
    expect(cuboid).toMatchObject({ type: 'cuboid', label: 'truck' });
    const corners = Object.fromEntries(cuboid.vertices.map((v: any) => [v.description, v]));
    expectNear(corners['face-topleft'], { x: 420, y: 150 });
    expectNear(corners['face-bottomright'], { x: 520, y: 250 });
    expectNear(corners['side-topcorner'], { x: 560, y: 130 });
    expect(Object.keys(corners)).toHaveLength(6);
    expect(ellipse).toMatchObject({ type: 'ellipse', label: 'wheel' });
    expect(Math.abs(ellipse.rotation - 90)).toBeLessThanOrEqual(1.5);
    expectNear(ellipse, { x: 340, y: 272, rx: 18, ry: 18 });
    expect(new Set([box, polygon, line, point, cuboid, ellipse].map((s) => s.uuid)).size).toBe(6);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('undoes and redoes, draws in image pixels after zooming, moves, edits a vertex, and deletes', async () => {
    const { a, page } = await start(geometryTask());
    await page.keyboard.press('B');
    await drag(page, [20, 20], [120, 100]);
    await expect.poll(() => shapeCount(page), poll).toBe(1);
    await page.keyboard.press('Control+Z');
    await expect.poll(() => shapeCount(page), poll).toBe(0);
    await page.keyboard.press('Control+Shift+Z');
    await expect.poll(() => shapeCount(page), poll).toBe(1);

    // Zoom in around (320, 200) with the wheel: a drag now covers fewer image pixels.
    await page.mouse.move(...(await at(page, 320, 200)));
    await page.mouse.wheel(0, -600);
    await expect.poll(() => page.locator('.stage').evaluate((h) => Number((h as HTMLElement).dataset.scale)), poll).toBeGreaterThan(2);
    // Pan with Space held and a drag (also while the clicked tool button has the focus): the view
    // moves, and drawing still lands on image pixels.
    const panned = () => page.locator('.stage').evaluate((h) => Number((h as HTMLElement).dataset.x));
    const before = await panned();
    await page.locator('button[data-tool="box"]').click();
    await page.keyboard.down('Space');
    await drag(page, [320, 200], [300, 190]);
    await page.keyboard.up('Space');
    await expect.poll(panned, poll).toBeLessThan(before - 10);
    await drag(page, [300, 180], [340, 215]);
    await expect.poll(() => shapeCount(page), poll).toBe(2);
    await page.keyboard.press('0');

    // A triangle; then its second vertex dragged elsewhere (the selected shape shows its vertices).
    await page.keyboard.press('P');
    for (const [x, y] of [
      [400, 50],
      [600, 50],
      [500, 150],
    ] as const)
      await click(page, x, y);
    await page.keyboard.press('Enter');
    await expect.poll(() => shapeCount(page), poll).toBe(3);
    await drag(page, [600, 50], [620, 80]);
    // The handle halfway along the first edge adds a vertex; a double click on a vertex removes it.
    await drag(page, [510, 65], [510, 20]);
    await page.locator('.shapes').getByText('sidewalk: polygon, 4 vertices').waitFor();
    await page.mouse.dblclick(...(await at(page, 500, 150)));
    await page.locator('.shapes').getByText('sidewalk: polygon, 3 vertices').waitFor();

    // The select tool: a press on the first box selects it and the drag moves it by (+30, +40);
    // then a key nudges it 1 px right.
    await page.keyboard.press('V');
    await drag(page, [70, 60], [100, 100]);
    await expect.poll(() => page.locator('.shapes li[aria-selected="true"]').getAttribute('data-type'), poll).toBe('box');
    await page.keyboard.press('ArrowRight');
    // A point, then deleted with the key.
    await page.keyboard.press('K');
    await click(page, 50, 300);
    await expect.poll(() => shapeCount(page), poll).toBe(4);
    await page.keyboard.press('Delete');
    await expect.poll(() => shapeCount(page), poll).toBe(3);

    const [first, zoomed, triangle, ...more] = await submitted(page, a);
    expect(more).toEqual([]);
    expectNear(first, { left: 51, top: 60, width: 100, height: 80 });
    expectNear(zoomed, { left: 300, top: 180, width: 40, height: 35 });
    expectVertices(triangle.vertices, [
      [400, 50],
      [510, 20],
      [620, 80],
    ]);
    await page.close();
  });

  it('brings back a polygon half drawn after a reload, from the draft, and lets the person finish it', async () => {
    const a = assignment(geometryTask());
    // Asked again while the assignment is active, the server answers it again (a reload resumes it).
    queue = [a, a];
    const { page } = await open();
    await logIn(page);
    await page.getByText('640 × 400 px').waitFor();
    await page.keyboard.press('P');
    await click(page, 100, 100);
    await click(page, 300, 100);
    await page.reload();
    await page.getByText('The polygon you were drawing is back').waitFor();
    await click(page, 200, 250);
    await page.keyboard.press('Enter');
    const [polygon, ...more] = await submitted(page, a);
    expect(more).toEqual([]);
    expectVertices(polygon.vertices, [
      [100, 100],
      [300, 100],
      [200, 250],
    ]);
    await page.close();
  });

  it('does the older single-geometry types in their own answer form: boxes with a linked attribute, spline lines', async () => {
    const boxes = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9d2',
      type: 'annotation',
      instruction: 'Box the vehicles; say which one tows which.',
      params: {
        attachment: `${origin}/fixtures/street.svg`,
        attachment_type: 'image',
        objects_to_annotate: ['car', 'trailer'],
        min_width: 10,
        min_height: 10,
        annotation_attributes: { towed_by: { type: 'linked', description: 'Towed by' } },
      },
    });
    const lines = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9d3',
      type: 'lineannotation',
      instruction: 'Trace the curb.',
      params: { attachment: `${origin}/fixtures/street.svg`, attachment_type: 'image', objects_to_annotate: ['curb'], splines: true },
    });
    queue = [boxes, lines];
    const { page } = await open();
    await logIn(page);
    await page.getByText('640 × 400 px').waitFor();
    await drag(page, [200, 195], [385, 292]);
    // Deselect first: with a box selected, the key would relabel it.
    await page.keyboard.press('Escape');
    await page.keyboard.press('2');
    await drag(page, [400, 215], [480, 280]);
    await page.getByLabel('Towed by').selectOption({ index: 1 });
    const [car, trailer, ...more] = await submitted(page, boxes);
    expect(more).toEqual([]);
    expect(car).not.toHaveProperty('uuid');
    expect(car).not.toHaveProperty('type');
    expect(car).toMatchObject({ label: 'car', attributes: {} });
    expectNear(car, { left: 200, top: 195, width: 185, height: 97 });
    expect(trailer).toMatchObject({ label: 'trailer', attributes: { towed_by: 0 } });

    // The next task: a line tool (and no box tool) with the image loaded.
    await page.locator('button[data-tool="line"]').waitFor();
    await page.getByText('640 × 400 px').waitFor();
    for (const [x, y] of [
      [20, 330],
      [300, 300],
      [620, 340],
    ] as const)
      await click(page, x, y);
    await page.keyboard.press('Enter');
    const [curb] = await submitted(page, lines);
    expect(curb).toMatchObject({ label: 'curb', spline: true });
    expect(Object.keys(curb).sort()).toEqual(['label', 'spline', 'vertices']);
    expectVertices(curb.vertices, [
      [20, 330],
      [300, 300],
      [620, 340],
    ]);
    await page.close();
  });

  it('asks the annotation attributes that apply to the selected shape, with their conditions, and sends them', async () => {
    const { a, page } = await start(
      geometryTask({
        geometries: { box: { objects_to_annotate: ['car', 'truck'] } },
        annotation_attributes: {
          occluded: { description: 'Is it occluded?', choices: ['Yes', 'No'] },
          parked: { description: 'Is the car parked?', choices: ['Yes', 'No'], conditions: { label_condition: { label: 'car' } } },
          passengers: { type: 'number', description: 'How many passengers?', conditions: { attribute_conditions: [{ parked: 'No' }] } },
        },
      }),
    );
    await drag(page, [200, 195], [385, 292]);
    const panel = page.getByRole('group', { name: 'Attributes of the selected shape' });
    await panel.waitFor();
    // Unanswered: the answer is not sent, and the person is told which question is open.
    await page.keyboard.press('Control+Enter');
    await page.getByText('Shape 1 (box, car): answer "Is it occluded?".').waitFor();
    await panel.getByRole('group', { name: 'Is it occluded?' }).getByLabel('Yes').check();
    expect(await panel.getByLabel('How many passengers?').count()).toBe(0);
    await panel.getByRole('group', { name: 'Is the car parked?' }).getByLabel('No').check();
    await panel.getByLabel('How many passengers?').fill('2');
    await page.screenshot({ path: path.join(root, 'test-results', 'label-imageannotation-attributes.png') });
    // Moved afterwards, the box keeps its answers (the tool buttons: keys typed in a field stay there).
    await page.locator('button[data-tool="select"]').click();
    await drag(page, [250, 230], [260, 230]);
    await page.locator('button[data-tool="box"]').click();
    // A truck: "parked" (cars only) and so "passengers" are not asked.
    await page.keyboard.press('Escape');
    await page.keyboard.press('2');
    await drag(page, [400, 200], [600, 300]);
    await panel.getByRole('group', { name: 'Is it occluded?' }).waitFor();
    expect(await panel.getByRole('group', { name: 'Is the car parked?' }).count()).toBe(0);
    await panel.getByRole('group', { name: 'Is it occluded?' }).getByLabel('No').check();

    const [car, truck] = await submitted(page, a);
    expect(car).toMatchObject({ label: 'car', attributes: { occluded: 'Yes', parked: 'No', passengers: 2 } });
    expectNear(car, { left: 210, top: 195 });
    expect(truck).toMatchObject({ label: 'truck', attributes: { occluded: 'No' } });
    expect(Object.keys(truck.attributes)).toEqual(['occluded']);
    await page.close();
  });
});
