// The labeling app (/label/) in real Chromium, against the Prism mock of the worker API. A small
// front in this test serves the app (the server's own /label/ router), a same-origin test image,
// and `assignments/next` from a queue of assignments that validate against the contract (Prism
// answers every call with the same example, a categorization, and keeps no state); every other
// /worker/v1 call goes to Prism, which checks the request against the contract, and is recorded
// here. A test can make Prism answer one operation with another documented status (`Prefer`).
// Files of other origins come through the front's stand-in of the media route, as the server passes
// them on; the page asks nothing of any other origin.
import { createServer, type Server } from 'node:http';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, inject } from 'vitest';
import type { components } from '../generated/workforce.ts';
import { labelApp } from '../server/label.ts';
import { startServer, type RunningServer } from '../server/main.ts';
import { readConfig } from '../server/config.ts';
import { startWorkerMock, type RunningMock } from '../server/mock.ts';
import { testBrowser } from './support/browser.ts';
import { driveFrame, invoice, lassoAround, lidarFrame, pdfDocument, screenshot, street, toneWav, whereIs } from './support/label.ts';
import { readSegmentation } from './support/png.ts';
import { webmFromFrames } from './support/webm.ts';
import { asGeneration, makeValidator } from './support/spec.ts';
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
/** A two-page letter: a reference on the first page, a signature on the second. */
const letterPdf = pdfDocument([
  [
    [40, 40, 'Reference: HT-7731'],
    [40, 120, 'Dear customer,'],
  ],
  [[40, 200, 'Yours, Ana Lima']],
]);
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
/** Answers this front gives itself instead of Prism, by operation (the last path segment), from the request body (null for a GET). */
let answers: Record<string, (body: any) => unknown> = {};
/** While set, `assignments/next` answers only once it resolves (a test holds the question). */
let nextGate: Promise<void> | null = null;

/** Prism and the browser answer slowly on a loaded machine: polls wait up to 20 s. */
const poll = { timeout: 20_000 };

const zeroCounts = { issued: 0, submitted: 0, skipped: 0, released: 0, expired: 0, accepted: 0, fixed: 0, rejected: 0, reviews: 0 };

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
  app.get('/fixtures/invoice.svg', (_req, res) => {
    res.type('image/svg+xml').send(invoice);
  });
  app.get('/fixtures/letter.pdf', (_req, res) => {
    res.type('application/pdf').send(letterPdf);
  });
  // The media route as the server answers it, without its rules (this front keeps no leases): the
  // file named by `url`, fetched here and passed on with its status, type and byte ranges.
  app.get('/worker/v1/assignments/:id/media', async (req, res) => {
    const range = req.get('range');
    const got = await fetch(String(req.query.url), range ? { headers: { range } } : {});
    calls.push({ method: 'GET', path: `/worker/v1/assignments/${req.params.id}/media`, body: String(req.query.url), status: got.status });
    res.status(got.status);
    for (const h of ['content-type', 'content-length', 'content-range', 'accept-ranges'])
      if (got.headers.get(h)) res.setHeader(h, got.headers.get(h) as string);
    res.send(Buffer.from(await got.arrayBuffer()));
  });
  app.use(express.raw({ type: () => true, limit: '2mb' }));
  app.post('/worker/v1/assignments/next', async (req, res) => {
    if (nextGate) await nextGate;
    const next = queue.shift();
    // The long poll's `wait` is kept with the call (this front answers at once, as Prism does).
    calls.push({ method: 'POST', path: req.path, body: { wait: req.query.wait ?? null }, status: next ? 200 : 204 });
    if (next) res.json(next);
    else res.status(204).set('retry-after', '2').end();
  });
  app.use('/worker', async (req, res) => {
    const raw = Buffer.isBuffer(req.body) && req.body.length ? req.body : undefined;
    const headers: Record<string, string> = {};
    for (const h of ['authorization', 'content-type', 'idempotency-key']) if (req.headers[h]) headers[h] = String(req.headers[h]);
    const op = req.path.split('/').pop() ?? '';
    const own = answers[op];
    if (own && (raw || req.method === 'GET')) {
      const body = raw ? JSON.parse(raw.toString()) : null;
      calls.push({ method: req.method, path: `/worker${req.path}`, body, status: 200 });
      res.json(own(body));
      return;
    }
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
  browser = await testBrowser(inject('browserEndpoint'));
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
  answers = {};
  nextGate = null;
});

/** The pages `open` made in this test: what each requested from other origins, and the origins allowed (the work's files). */
let opened: { foreign: string[]; allowed: string[] }[] = [];

/**
 * A page at 1280 × 800 that records every request leaving the origin (after the test: none, but
 * to the `allowed` origins, where a task's files are kept) and the paths it asked of its own origin.
 */
async function open(query = '', allowed: string[] = []): Promise<{ page: Page; foreign: string[]; own: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const watched = watch(page, allowed);
  await page.goto(`${origin}/label/${query}`);
  return { page, ...watched };
}

/** Records the requests of a page made otherwise (another context, a clock installed first) as `open` does. */
function watch(page: Page, allowed: string[] = []): { foreign: string[]; own: string[] } {
  const foreign: string[] = [];
  const own: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== origin) foreign.push(r.url());
    else if (u.origin === origin) own.push(u.pathname);
  });
  opened.push({ foreign, allowed });
  return { foreign, own };
}

// No request leaves the origin, on every page of every player (the lazy chunks included).
afterEach(() => {
  const pages = opened;
  opened = [];
  for (const { foreign, allowed } of pages) expect(foreign.filter((url) => !allowed.includes(new URL(url).origin))).toEqual([]);
});

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

/** Page coordinates of an image pixel, under the stage's current zoom and pan (image, video, segmentation players). */
async function stagePoint(page: Page, x: number, y: number): Promise<[number, number]> {
  const view = await page.locator('.stage').evaluate((h) => ({
    scale: Number((h as HTMLElement).dataset.scale),
    x: Number((h as HTMLElement).dataset.x),
    y: Number((h as HTMLElement).dataset.y),
  }));
  const frame = await page.locator('.stage canvas').first().boundingBox();
  if (!frame) throw new Error('no canvas');
  return [frame.x + view.x + x * view.scale, frame.y + view.y + y * view.scale];
}
const at = stagePoint;

/** A mouse drag on the stage between two image pixels. */
async function drag(page: Page, from: [number, number], to: [number, number]) {
  await page.mouse.move(...(await stagePoint(page, ...from)));
  await page.mouse.down();
  const end = await stagePoint(page, ...to);
  await page.mouse.move(end[0], end[1], { steps: 6 });
  await page.mouse.up();
}

describe('the labeling app', () => {
  it('logs in, categorizes a text, draws a box on an image, submits both, and then waits for work', async () => {
    const [first, second] = [assignment(categorizationTask()), assignment(boxTask())];
    queue = [first, second];
    const { page, foreign, own } = await open('?heartbeat=1');
    await logIn(page);
    expect(calls[0]).toMatchObject({ path: '/worker/v1/session', body: { email: 'ana@example.com' }, status: 200 });
    expect(await page.evaluate(() => sessionStorage.getItem('humantask.label.token'))).toMatch(/^wks_/);

    // The instruction: Markdown rendered, script and event handlers gone.
    await expect.poll(() => page.locator('.instruction strong').textContent(), poll).toBe('team');
    // The shell's state (label/shell/state.ts) is on the page: working on the task now.
    expect(await page.locator('#app').getAttribute('data-state')).toBe('working');
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
    await screenshot(page, 'categorization');
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
    await screenshot(page, 'imageannotation');

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
    expect(await page.locator('#app').getAttribute('data-state')).toBe('waiting');
    // Every question for work is the long poll (this front, as Prism, answers at once: Retry-After is kept).
    expect(calls.filter((c) => c.path.endsWith('/next')).map((c) => c.body)).toContainEqual({ wait: '25' });
    expect(calls.filter((c) => c.path.endsWith('/next') && c.body.wait !== '25')).toEqual([]);
    expect(foreign).toEqual([]);
    // three.js (the lidar player's view, a chunk of its own) and pdf.js are loaded only for the tasks that need them.
    expect(own.filter((p) => p.startsWith('/label/chunks/view-') || p.startsWith('/label/vendor/'))).toEqual([]);
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
    await page.getByText('Fill in: The total due.').waitFor();
    await page.getByLabel('The total due').fill('1,250.00 EUR');
    expect(await page.getByText('Fill in: The total due.').count()).toBe(0);
    await page.keyboard.press('Alt+Enter');
    await page.keyboard.type('Consulting');
    await page.getByLabel('The unit (row 1)').selectOption('hour');
    await page.getByRole('button', { name: /Add a row/ }).click();
    await page.getByLabel('The line item (row 2)').fill('Travel');
    await page.getByLabel('The unit (row 2)').selectOption('piece');
    await screenshot(page, 'transcription');
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
    await page.locator('.notice', { hasText: 'The answer was not accepted: body.lease_token is required' }).waitFor();
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
    expect(await page.locator('#app').getAttribute('data-state')).toBe('lease-lost');
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
    await page.locator('.instruction').waitFor();
    await page.keyboard.press('2');
    expect(await page.getByLabel('Technical problem').isChecked()).toBe(true);
    await page.reload();
    await page.locator('.instruction').waitFor();
    expect(await page.getByLabel('Technical problem').isChecked()).toBe(true);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const other = await context.newPage();
    watch(other);
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
    const { own } = watch(page);
    await page.clock.install();
    await page.goto(`${origin}/label/`);
    await logIn(page);
    await page.locator('.instruction').waitFor();
    await page.keyboard.press('1');
    const beats = () => calls.filter((c) => c.path.endsWith('/heartbeat'));
    // Every heartbeat the page has sent so far has reached the server: the page's requests are seen in
    // the order it sends them, so once a marker is seen, so is each heartbeat sent before it.
    let markers = 0;
    const settled = async () => {
      const marker = `/label/marker-${++markers}`;
      await page.evaluate((m) => fetch(m).then((r) => r.status), marker);
      await expect.poll(() => own.includes(marker), poll).toBe(true);
      const issued = own.filter((p) => p.endsWith('/heartbeat')).length;
      await expect.poll(() => beats().length, poll).toBe(issued);
      return issued;
    };
    // Five minutes pass with no more input: two of them count.
    for (let i = 0; i < 10; i++) await page.clock.runFor(30_000);
    await expect.poll(() => page.locator('#active-time').textContent(), poll).toMatch(/^2:0\d$/);
    const sent = await settled();
    expect(sent).toBeGreaterThanOrEqual(5);
    expect(sent).toBeLessThanOrEqual(7);
    for (const b of beats()) expect(validAgainst('HeartbeatRequest', b.body)).toBe('valid');
    const reported = beats().reduce((sum, b) => sum + b.body.active_ms, 0);
    expect(reported).toBeGreaterThan(90_000);
    expect(reported).toBeLessThanOrEqual(130_000);
    // Idle: the clock runs on, no heartbeat goes out (the lease may lapse, as the contract wants).
    for (let i = 0; i < 4; i++) await page.clock.runFor(30_000);
    expect(await settled()).toBe(sent);
    await page.close();
  });

  it('asks for one task at a time: N pressed twice while asking opens one work session, and only its lease heartbeats', async () => {
    const { page } = await open('?heartbeat=1');
    await logIn(page);
    await page.getByRole('button', { name: /Stop waiting/ }).click();
    await page.getByRole('button', { name: /Take the next task/ }).waitFor();
    const [first, second] = [assignment(categorizationTask()), assignment(categorizationTask())];
    queue = [first, second];
    let answer = () => {};
    nextGate = new Promise((r) => {
      answer = r;
    });
    const asked: string[] = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    await page.keyboard.press('n');
    await page.keyboard.press('n');
    // The page's requests are seen in the order they are sent: once this marker is seen, so is every question sent before it.
    await page.evaluate(() => fetch('/label/?marker').then((r) => r.ok));
    await expect.poll(() => asked.includes('/label/'), poll).toBe(true);
    expect(asked.filter((p) => p.endsWith('/assignments/next'))).toHaveLength(1);
    nextGate = null;
    answer();
    await page.locator('.instruction').waitFor();
    // Heartbeats come every second: a few of them, all for the one task shown.
    await expect.poll(() => calls.filter((c) => c.path.endsWith('/heartbeat')).length, poll).toBeGreaterThanOrEqual(3);
    const beats = calls.filter((c) => c.path.endsWith('/heartbeat')).map((c) => c.body.lease_token);
    expect(new Set(beats)).toEqual(new Set([first.lease_token]));
    expect(queue).toEqual([second]);
    expect(await page.locator('#lease-lost').count()).toBe(0);
    await page.close();
  });

  it('shows a PDF attachment of a categorization page by page with pdf.js, not in a frame Chromium blocks', async () => {
    const task = categorizationTask();
    task.params = { ...task.params, attachment_type: 'pdf', attachment: `${origin}/fixtures/letter.pdf` };
    queue = [assignment(task)];
    const { page, own } = await open();
    await logIn(page);
    const pages = page.getByRole('group', { name: 'The PDF document' }).getByRole('img');
    await expect.poll(() => pages.count(), poll).toBe(2);
    expect(await pages.evaluateAll((imgs) => imgs.map((i) => i.getAttribute('alt')))).toEqual([
      'Page 1 of 2 of the PDF',
      'Page 2 of 2 of the PDF',
    ]);
    // Drawn (a page is 400 × 300 points), from the file the server passed on.
    await expect.poll(() => pages.evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).naturalWidth)), poll).toEqual([400, 400]);
    expect(await page.locator('.attachment iframe').count()).toBe(0);
    // (A file of the app's own origin, as this one, is read as it is; another host's through the media route.)
    expect(own).toEqual(expect.arrayContaining(['/label/vendor/pdf.min.mjs', '/fixtures/letter.pdf']));
    await screenshot(page, 'categorization-pdf');
    await page.keyboard.press('1');
    await page.keyboard.press('Control+Enter');
    await waitForCall((c) => c.path.endsWith('/submit') && c.status === 200);
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

  it("shows my figures by project, two accounts' projects of the same name apart", async () => {
    const counts = (submitted: number) => ({ ...zeroCounts, issued: submitted, submitted });
    const stats: components['schemas']['WorkerStats'] = {
      since: '2026-10-26T10:00:00.000Z',
      as_of: '2026-11-25T10:00:00.000Z',
      counts: counts(12),
      active_ms: 60_000,
      projects: [
        { project: 'pets', account: 'acw_5e6f7a8b9c0d1e2f3a4b5c6d', counts: counts(5), active_ms: 30_000 },
        { project: 'street-scenes', account: 'acw_5e6f7a8b9c0d1e2f3a4b5c6d', counts: counts(4), active_ms: 20_000 },
        { project: 'pets', account: 'acw_0a1b2c3d4e5f6a7b8c9d0e1f', counts: counts(3), active_ms: 10_000 },
      ],
    };
    expect(validAgainst('WorkerStats', stats)).toBe('valid');
    answers = { stats: () => stats };
    const { page } = await open();
    await logIn(page);
    await page.keyboard.press('Shift+H');
    const rows = page.locator('#stats tbody tr');
    await expect.poll(() => rows.count(), poll).toBe(3);
    expect(await rows.allTextContents()).toEqual([
      expect.stringMatching(/^pets · account 5e6f7a5/),
      expect.stringMatching(/^street-scenes4/),
      expect.stringMatching(/^pets · account 0a1b2c3/),
    ]);
    expect(await rows.nth(2).getAttribute('data-account')).toBe('acw_0a1b2c3d4e5f6a7b8c9d0e1f');
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

/**
 * In review mode: clicks the categorization's question (within `where`: the page, or one attempt),
 * writes a wrong-label remark about it, adds it, and leaves the remark box.
 */
async function remarkOnTheCategory(page: Page, where: Pick<Page, 'locator'>) {
  await where.locator('legend', { hasText: 'Choose the category that fits' }).click();
  await expect
    .poll(() => page.getByLabel('About').locator('option:checked').textContent(), poll)
    .toBe('Field: Choose the category that fits');
  await page.getByLabel('Kind of mistake').selectOption('wrong_label');
  await page.getByLabel(/^Remark/).fill('A double charge is a billing matter.');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
}

describe('review mode and the feedback views', () => {
  const invoiceTask = (): Assignment['task'] => ({
    task_id: '65f1c0a2b3c4d5e6f7a8b9c7',
    type: 'transcription',
    instruction: 'Copy the invoice.',
    params: {
      attachment_type: 'image',
      attachment: `${origin}/fixtures/street.svg`,
      fields: { invoice_number: 'The invoice number', total: 'The total due' },
    },
  });

  it('reviews fields read-only, rejects with a remark pinned to a field (none without a remark), and the redo shows it on the field', async () => {
    const remark = { scope: { field: 'invoice_number' }, category: 'wrong_text' as const, text: 'The number reads INV-1041.' };
    const earlier = { fields: { invoice_number: 'INV-1014', total: '1,250.00 EUR' } };
    const review = assignment(invoiceTask(), { role: 'review', under_review: { response: earlier, active_ms: 30_000 } });
    queue = [
      review,
      assignment(invoiceTask(), {
        role: 'redo',
        feedback: { result: 'rejected', feedback_items: [remark], reviewed_at: new Date().toISOString() },
        previous_response: earlier,
      }),
    ];
    const { page, foreign } = await open();
    await logIn(page);
    await page.locator('#review-title').waitFor();
    const number = page.getByLabel('The invoice number');
    expect(await number.inputValue()).toBe('INV-1014');
    expect(await number.isEditable()).toBe(false);
    // Rejecting needs a remark first.
    await page.keyboard.press('Shift+X');
    await page.getByText('Say what is wrong first').waitFor();
    expect(calls.filter((c) => c.path.endsWith('/review'))).toEqual([]);
    await number.click();
    await expect.poll(() => page.getByLabel('About').locator('option:checked').textContent(), poll).toBe('Field: The invoice number');
    await page.getByLabel('Kind of mistake').selectOption('wrong_text');
    await page.getByLabel(/^Remark/).fill(remark.text);
    await page.keyboard.press('Enter');
    await page.locator('[data-field-id="invoice_number"] .pin-note', { hasText: remark.text }).waitFor();
    await screenshot(page, 'review-fields');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Shift+X');
    const decided = await waitForCall((c) => c.path.endsWith('/review'));
    expect(validAgainst('ReviewRequest', decided.body)).toBe('valid');
    expect(decided.body).toMatchObject({ lease_token: review.lease_token, result: 'rejected', feedback_items: [remark] });
    expect(decided.body.response).toBeUndefined();
    expect(decided.status).toBe(200);

    // The redo: the remark is listed and shown under the field; the field is editable again.
    await page.locator('#redo-feedback').waitFor(poll);
    expect(await page.locator('#redo-feedback').textContent()).toContain(`Field: The invoice number: ${remark.text}`);
    expect(await page.locator('[data-field-id="invoice_number"] .pin-note').textContent()).toBe(`Wrong text: ${remark.text}`);
    await number.fill('INV-1041');
    await page.keyboard.press('Control+Enter');
    const redone = await waitForCall((c) => c.path.endsWith('/submit'));
    expect(redone.body.response).toEqual({ fields: { invoice_number: 'INV-1041', total: '1,250.00 EUR' } });
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('fixes a categorization: read-only until Shift+F, then key 1 and Ctrl+Enter send the fixed answer with a remark on the field', async () => {
    const review = assignment(categorizationTask(), {
      role: 'review',
      under_review: { response: { category: 'Technical problem', category_id: 'c2' }, active_ms: 12_000 },
    });
    queue = [review];
    const { page, foreign } = await open();
    await logIn(page);
    await page.locator('#review-title').waitFor();
    // The help overlay lists review mode's keys.
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    for (const action of ['Review: accept the answer', 'Review: fix the answer', 'Review: reject the answer', 'Review: write a remark'])
      expect(await help.textContent()).toContain(action);
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden' });
    const [billing, technical] = [page.getByLabel('Billing'), page.getByLabel('Technical problem')];
    expect(await technical.isChecked()).toBe(true);
    expect(await billing.isDisabled()).toBe(true);
    await page.keyboard.press('1');
    expect(await billing.isChecked()).toBe(false);
    await remarkOnTheCategory(page, page);
    await page.keyboard.press('Shift+F');
    await expect.poll(() => billing.isDisabled(), poll).toBe(false);
    await page.keyboard.press('1');
    expect(await billing.isChecked()).toBe(true);
    await page.keyboard.press('Control+Enter');
    const decided = await waitForCall((c) => c.path.endsWith('/review'));
    expect(validAgainst('ReviewRequest', decided.body)).toBe('valid');
    expect(decided.body).toMatchObject({
      lease_token: review.lease_token,
      result: 'fixed',
      response: { category: 'Billing', category_id: 'c1' },
      feedback_items: [{ scope: { field: 'category' }, category: 'wrong_label', text: 'A double charge is a billing matter.' }],
    });
    expect(decided.status).toBe(200);
    await page.getByText(/Nothing to do right now/).waitFor(poll);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('reviews four attempts of a categorization: three side by side and a switcher, each its own choice; Shift+P picks, remarks hold the pick, the reject names the attempt', async () => {
    const answersGiven = ['Billing', 'Technical problem', 'Account access', 'Billing'];
    const ids: Record<string, string> = { Billing: 'c1', 'Technical problem': 'c2', 'Account access': 'c3' };
    const attempts = answersGiven.map((category, i) => ({
      response: { category, category_id: ids[category] },
      active_ms: 10_000 + i * 1000,
    }));
    const review = assignment(categorizationTask(), {
      role: 'review',
      under_review: { response: attempts[0]!.response, active_ms: 10_000, attempt: 1, attempts },
    });
    queue = [review];
    const { page, foreign } = await open();
    await logIn(page);
    await page.locator('#attempts-intro').waitFor(poll);
    const column = (n: number) => page.locator(`.attempt[data-attempt="${n}"]`);
    // Each attempt shows its own choice: the radio groups of the four players are apart.
    for (const [i, category] of answersGiven.entries())
      expect(
        await column(i + 1)
          .getByLabel(category)
          .isChecked(),
        category,
      ).toBe(true);
    expect(await column(1).textContent()).toContain('closest to the others');
    expect(await Promise.all([1, 2, 3, 4].map((n) => column(n).isVisible()))).toEqual([true, true, true, false]);
    await page.getByRole('button', { name: 'Attempt 4', exact: true }).click();
    expect(await Promise.all([1, 2, 3, 4].map((n) => column(n).isVisible()))).toEqual([false, false, false, true]);
    await page.getByRole('button', { name: 'Attempts 1–3' }).click();

    await page.keyboard.press('Shift+P');
    await page.getByRole('button', { name: /^Attempt 2 picked/ }).waitFor();
    await page.getByRole('button', { name: /^Reject attempt 2/ }).waitFor();
    await remarkOnTheCategory(page, column(2));
    await column(2).locator('.pin-note', { hasText: 'A double charge' }).waitFor();
    // The remark is about attempt 2: the pick stays there until it is removed or sent.
    await page.getByRole('button', { name: 'Pick attempt 3' }).click();
    await page.getByText('Your remarks are about attempt 2').waitFor();
    expect(await column(2).getAttribute('class')).toContain('picked');
    await page.keyboard.press('Shift+X');
    const decided = await waitForCall((c) => c.path.endsWith('/review'));
    expect(validAgainst('ReviewRequest', decided.body)).toBe('valid');
    expect(decided.body).toMatchObject({
      lease_token: review.lease_token,
      result: 'rejected',
      attempt: 2,
      feedback_items: [{ scope: { field: 'category' }, category: 'wrong_label', text: 'A double charge is a billing matter.' }],
    });
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('after a training task: the score, what differed pinned on the shape, the standing, the expected answer on Shift+E, then the next task', async () => {
    const a = assignment(boxTask(), { training: { project: 'street-scenes' } });
    queue = [a];
    answers.submit = (body) => {
      const { lease_token: _t, lease_expires_at: _e, hard_deadline: _h, ...rest } = a;
      const uuid = body.response.annotations[0].uuid as string;
      const done = {
        ...rest,
        status: 'submitted',
        response: body.response,
        active_ms: 4000,
        submitted_at: new Date().toISOString(),
        ended_at: new Date().toISOString(),
        training: {
          project: 'street-scenes',
          feedback: {
            score: 0.4,
            passed: false,
            differences: [
              {
                kind: 'mismatch',
                region_id: uuid,
                label: 'car',
                score: 0.8,
                message: 'The box of this car overlaps the expected one by 80 %.',
              },
              { kind: 'missing', label: 'car', message: 'A car the expected answer has (at left 400, top 210) is missing.' },
            ],
            expected_response: {
              annotations: [
                { uuid: '1f0e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b', type: 'box', label: 'car', left: 200, top: 200, width: 180, height: 90 },
                { uuid: '2a1b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d', type: 'box', label: 'car', left: 400, top: 210, width: 120, height: 70 },
              ],
            },
            progress: { state: 'training', scored: 1, required: 5, mean_score: 0.4, pass_score: 0.8, tries: 1, max_tries: 3 },
          },
        },
      };
      expect(validAgainst('SubmitRequest', body)).toBe('valid');
      expect(validAgainst('Assignment', done)).toBe('valid');
      return done;
    };
    const { page, foreign } = await open();
    await logIn(page);
    await page.getByText('640 × 400 px').waitFor();
    const frame = await page.locator('.stage canvas').first().boundingBox();
    if (!frame) throw new Error('no canvas');
    const scale = frame.width / 640;
    await page.mouse.move(frame.x + 200 * scale, frame.y + 200 * scale);
    await page.mouse.down();
    await page.mouse.move(frame.x + 350 * scale, frame.y + 260 * scale, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);
    await page.keyboard.press('Control+Enter');

    await page.locator('#training-feedback').waitFor(poll);
    expect(await page.locator('#training-score').textContent()).toBe('Score 40 %');
    const text = await page.locator('#training-feedback').textContent();
    expect(text).toContain('below the pass mark of 80 %');
    expect(text).toContain('Training: 1 of 5 training tasks scored in this try.');
    expect(await page.locator('.differences li').allTextContents()).toEqual([
      'mismatch (car) 80 %: The box of this car overlaps the expected one by 80 %.',
      'missing (car): A car the expected answer has (at left 400, top 210) is missing.',
    ]);
    await page.getByText('640 × 400 px').waitFor();
    await page.locator('.pin', { hasText: 'mismatch: The box of this car overlaps the expected one by 80 %.' }).waitFor();
    // Read-only: no drawing tool.
    expect(await page.locator('button[data-tool="box"]').count()).toBe(0);
    await screenshot(page, 'training-feedback');
    await page.keyboard.press('Shift+E');
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(2);
    expect(await page.locator('#shown-answer').textContent()).toBe('Shown: the expected answer.');
    await page.keyboard.press('N');
    await page.getByText(/Nothing to do right now/).waitFor(poll);
    expect(foreign).toEqual([]);
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
    // Revalidated on every load (the process may have been restarted with another version).
    expect(bundle.headers.get('cache-control')).toBe('no-cache');
    const code = await bundle.text();
    expect(code).toContain('humantask.label.token');
    expect(code).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.(?:com|net|org|io)\/[^"'\s]*\.(?:js|css)/);
    // three.js is not in it: the lidar player imports its view, a chunk named by the hash of its contents, cached for good.
    expect(code).not.toContain('WebGLRenderer');
    const chunk = /import\("\.\/(chunks\/view-[\w-]+\.js)"\)/.exec(code)?.[1];
    expect(chunk).toBeDefined();
    const view = await fetch(`${server.url}/label/${chunk}`);
    expect(view.status).toBe(200);
    expect(view.headers.get('content-type')).toMatch(/javascript/);
    expect(view.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await view.text()).toContain('WebGLRenderer');
    expect((await fetch(`${server.url}/label/chunks/view-NOSUCH.js`)).status).toBe(404);
  });

  it('boots in Chromium from the server under its policy: the log-in form, no script error, no policy violation', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`${m.text()} (${m.location().url})`);
    });
    await page.goto(`${server.url}/label/`);
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
    expect(problems).toEqual([]);
    await page.close();
  });
});

// The form and text players: textcollection (every field type, conditions, forms, hypothesis),
// comparison, categorization of several, transcription rows, and named entities with exact offsets.
// Each answer the person gives is checked against the contract's response schema of its type and
// against the server's own answer rules, and compared with what was entered.
describe('the form and text players', () => {
  let checkAnswer: (task: { type: string; params: any }, response: any) => string[];
  beforeAll(async () => {
    ({ checkAnswer } = (await import('../shared/answer-rules.ts')) as any);
  });

  /** The response submitted for this assignment: valid for the contract and for the server's rules. */
  async function submitted(a: Assignment, schemaName: string) {
    const call = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === a.lease_token);
    expect(validAgainst('SubmitRequest', call.body)).toBe('valid');
    expect(validAgainst(schemaName, call.body.response)).toBe('valid');
    expect(checkAnswer({ type: a.task.type, params: a.task.params }, call.body.response)).toEqual([]);
    expect(call.status).toBe(200);
    return call.body.response;
  }
  const field = (page: Page, id: string) => page.locator(`[data-field-id="${id}"]`);

  const podcast = (): Assignment['task'] => ({
    task_id: '65f1c0a2b3c4d5e6f7a8b9d0',
    type: 'textcollection',
    instruction: 'Review the **episode** and its thumbnails.',
    params: {
      title: 'Podcast episode review',
      description: 'Read the show notes, look at the thumbnails, and answer every question shown.',
      attachments: [
        { type: 'markdown', content: '**Show notes.** Episode 112 covers the *Champions League* final.' },
        { type: 'image', content: `${origin}/fixtures/street.svg` },
        { type: 'text', content: 'Thumbnail C: the hosts in the studio.' },
      ],
      fields: [
        {
          type: 'category',
          field_id: 'contains_ads',
          title: 'Does the episode contain an advertisement?',
          required: true,
          choices: [
            { label: 'Yes', value: 'yes' },
            { label: 'No', value: 'no' },
          ],
        },
        {
          type: 'time_range',
          field_id: 'ad_segment',
          title: 'Where is the advertisement?',
          default_seconds: [0, 30],
          increment_seconds: 5,
          conditions: [{ contains_ads: 'yes' }],
        },
        {
          type: 'time_range',
          field_id: 'ad_repeat',
          title: 'Where is it read again?',
          default_seconds: [0, 30],
          default_from_field: 'ad_segment',
          conditions: [{ contains_ads: 'yes' }],
        },
        { type: 'text', field_id: 'why_no_ads', title: 'How did you check there is none?', conditions: [{ contains_ads: { not: 'yes' } }] },
        {
          type: 'category',
          field_id: 'topic',
          title: 'Topic',
          max_choices: 2,
          choices: [
            {
              label: 'Sports',
              value: 'sports',
              subchoices: [
                { label: 'Football', value: 'football' },
                { label: 'Tennis', value: 'tennis', hint: 'Includes padel.' },
              ],
            },
            { label: 'News', value: 'news' },
            { label: 'Comedy', value: 'comedy' },
          ],
        },
        {
          type: 'text',
          field_id: 'match',
          title: 'Which match?',
          conditions: [{ topic: ['football', 'tennis'], contains_ads: 'yes' }, { topic: 'comedy' }],
        },
        { type: 'number', field_id: 'audio_quality', title: 'Audio quality', use_slider: true, min: 1, max: 5, step: 0.5 },
        { type: 'number', field_id: 'speakers', title: 'How many speakers?', min: 1, max: 10, required: true },
        { type: 'boolean', field_id: 'explicit', title: 'Explicit language' },
        { type: 'datetime', field_id: 'recorded_on', title: 'Recording date', include: ['year', 'month', 'day'], defaults: { year: 2026 } },
        { type: 'select', field_id: 'language', title: 'Spoken language', choices: ['English', 'German', 'French'] },
        { type: 'select', field_id: 'main_topic', title: 'The main topic', choices_from_field: 'topic' },
        {
          type: 'ranking_order',
          field_id: 'best_thumbnail',
          title: 'Rank the attachments',
          first_label: 'Most engaging',
          last_label: 'Least engaging',
          num_items_to_rank: 2,
        },
        { type: 'text', field_id: 'summary', title: 'Summary', max_characters: 500, hint: 'Two sentences at most.' },
        { type: 'text', field_id: 'guest', title: 'Guest', max_responses_required: 3 },
      ],
      hypothesis: {
        annotations: {
          contains_ads: { type: 'category', field_id: 'contains_ads', response: [['no']] },
          summary: { type: 'text', field_id: 'summary', response: ['The hosts review the final.'] },
        },
      },
    },
  });

  const products = (): Assignment['task'] => ({
    task_id: '65f1c0a2b3c4d5e6f7a8b9d1',
    type: 'textcollection',
    instruction: 'Note the episode and every product it advertises.',
    params: {
      attachments: [
        { type: 'text', content: 'Episode 7: a talk with the founder of Acme.' },
        { type: 'text', content: 'Ad read: the Acme Anvil, 49 EUR; the Acme Rocket, 120.50 USD.', forms: ['product_form'] },
      ],
      fields: [
        {
          type: 'form',
          field_id: 'episode',
          title: 'Episode',
          fields: [
            {
              type: 'category',
              field_id: 'kind',
              title: 'Kind',
              choices: [
                { label: 'Interview', value: 'interview' },
                { label: 'Solo', value: 'solo' },
              ],
            },
            { type: 'text', field_id: 'guest_name', title: 'Guest name', conditions: [{ kind: 'interview' }] },
          ],
        },
        {
          type: 'form',
          field_id: 'product_form',
          title: 'Product',
          max_responses_required: 2,
          fields: [
            { type: 'text', field_id: 'product_name', title: 'Product name', required: true },
            {
              type: 'fieldset',
              title: 'Price',
              incline: true,
              fields: [
                { type: 'number', field_id: 'price', title: 'Amount', min: 0 },
                { type: 'select', field_id: 'currency', title: 'Currency', choices: ['EUR', 'USD'] },
              ],
            },
            { type: 'text', field_id: 'guest_quote', title: 'What the guest says about it', conditions: [{ kind: 'interview' }] },
          ],
        },
      ],
      hypothesis: {
        annotations: {
          product_form: {
            type: 'form',
            field_id: 'product_form',
            response: [{ product_name: { type: 'text', field_id: 'product_name', response: ['Acme Anvil'] } }],
          },
        },
      },
    },
  });

  it('textcollection: every field type, conditions (AND, OR, NOT), subchoices, ranking, forms and fieldsets, the hypothesis pre-filled', async () => {
    // The forms task is a redo: it starts from the earlier answer (which wins over the hypothesis).
    const [a, b] = [
      assignment(podcast()),
      assignment(products(), {
        role: 'redo',
        previous_response: {
          annotations: { episode: { kind: ['solo'] }, product_form: [{ product_name: 'Acme Anvil', price: '45', currency: ['EUR'] }] },
        },
      }),
    ];
    for (const x of [a, b]) expect(validAgainst('TextCollectionParams', x.task.params)).toBe('valid');
    // (a is asked for twice: a reload resumes it.)
    queue = [a, a, b];
    const { page, foreign } = await open();
    await logIn(page);

    // The hypothesis: "No" chosen, so the NOT field shows and the ad's range does not.
    const ads = page.getByRole('radiogroup', { name: 'Does the episode contain an advertisement?' });
    await ads.waitFor();
    expect(await ads.getByLabel('No').isChecked()).toBe(true);
    expect(await page.getByLabel('Summary').inputValue()).toBe('The hosts review the final.');
    expect(await field(page, 'why_no_ads').isVisible()).toBe(true);
    expect(await field(page, 'ad_segment').isHidden()).toBe(true);
    expect(await field(page, 'match').isHidden()).toBe(true);
    await page.getByLabel('How did you check there is none?').fill('Listened to all of it.');

    await ads.getByLabel('Yes').check();
    expect(await field(page, 'ad_segment').isVisible()).toBe(true);
    expect(await field(page, 'why_no_ads').isHidden()).toBe(true);
    const range = page.getByRole('group', { name: 'Where is the advertisement?' });
    expect(await range.getByLabel('from (s)').inputValue()).toBe('0');
    await range.getByLabel('from (s)').fill('750');
    await range.getByLabel('to (s)').fill('810');
    // The second range follows the first (its default_from_field) until it is edited.
    const again = page.getByRole('group', { name: 'Where is it read again?' });
    expect(await again.getByLabel('from (s)').inputValue()).toBe('750');
    await again.getByLabel('from (s)').fill('1500');
    await again.getByLabel('to (s)').fill('1560');

    // Subchoices: Sports only opens its choices (keyboard: the summary toggles with Enter).
    const topic = page.getByRole('group', { name: 'Topic' });
    await topic.getByText('Sports').focus();
    await page.keyboard.press('Enter');
    await topic.getByLabel('Football').check();
    // AND (a sport and the ad) holds: the match is asked for; OR between the sets.
    expect(await field(page, 'match').isVisible()).toBe(true);
    await topic.getByLabel('News').check();
    await page.getByLabel('Which match?').fill('The final in Munich');
    // A reload brings the form back as it was, conditions included.
    await page.reload();
    await page.getByLabel('Which match?').waitFor();
    expect(await page.getByLabel('Which match?').inputValue()).toBe('The final in Munich');
    expect(await page.getByRole('group', { name: 'Topic' }).getByLabel('Football').isChecked()).toBe(true);
    expect(await page.getByRole('group', { name: 'Where is the advertisement?' }).getByLabel('to (s)').inputValue()).toBe('810');
    expect(await field(page, 'why_no_ads').isHidden()).toBe(true);

    // The slider from the keyboard: 1 → 2.5 in steps of 0.5.
    await page.getByLabel('Audio quality').focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
    // Submitting with a field missing names it and sends nothing.
    await page.keyboard.press('Control+Enter');
    await page.locator('.notice.bad', { hasText: 'How many speakers?: write a number' }).waitFor();
    await page.getByLabel('How many speakers?').fill('3');
    await page.getByRole('radiogroup', { name: 'Explicit language' }).getByLabel('No').check();
    const date = page.getByRole('group', { name: 'Recording date' });
    expect(await date.getByLabel('year').inputValue()).toBe('2026');
    await date.getByLabel('month').fill('11');
    await date.getByLabel('day').fill('21');
    await page.getByLabel('Spoken language').selectOption('German');
    // The select's options are the topics chosen above.
    expect(await page.getByLabel('The main topic').locator('option').allTextContents()).toEqual(['—', 'football', 'news']);
    await page.getByLabel('The main topic').selectOption({ label: 'news' });
    // Ranking: the third attachment moved to the top with Alt+↑.
    await page.locator('.ranking li', { hasText: 'Attachment 3' }).focus();
    await page.keyboard.press('Alt+ArrowUp');
    await page.keyboard.press('Alt+ArrowUp');
    await page.getByLabel('Guest 1', { exact: true }).fill('Ana');
    await page.getByRole('button', { name: 'Add an answer: Guest' }).click();
    await page.getByLabel('Guest 2', { exact: true }).fill('Ben');
    await page.locator('.player').evaluate((e) => e.scrollTo(0, 0));
    await screenshot(page, 'textcollection');
    await page.keyboard.press('Control+Enter');
    expect(await submitted(a, 'TextCollectionResponse')).toEqual({
      annotations: {
        contains_ads: ['yes'],
        ad_segment: { from_seconds: 750, to_seconds: 810 },
        ad_repeat: { from_seconds: 1500, to_seconds: 1560 },
        topic: ['football', 'news'],
        match: 'The final in Munich',
        audio_quality: '2.5',
        speakers: '3',
        explicit: false,
        recorded_on: { year: 2026, month: 11, day: 21 },
        language: ['German'],
        main_topic: ['news'],
        best_thumbnail: [2, 0],
        summary: 'The hosts review the final.',
        guest: ['Ana', 'Ben'],
      },
    });

    // Forms: a condition inside a form, and one across forms; two fillings; a FieldSet.
    expect(await page.getByRole('radiogroup', { name: 'Kind' }).getByLabel('Solo').isChecked()).toBe(true);
    expect(await page.getByLabel('Product name (Product 1)').inputValue()).toBe('Acme Anvil');
    expect(await page.getByLabel('Amount (Product 1)').inputValue()).toBe('45');
    expect(await field(page, 'guest_name').isHidden()).toBe(true);
    expect(await field(page, 'guest_quote').isHidden()).toBe(true);
    await page.getByRole('radiogroup', { name: 'Kind' }).getByLabel('Interview').check();
    await page.getByLabel('Guest name').fill('Ada');
    await page.getByLabel('Amount (Product 1)').fill('49');
    await page.getByLabel('Currency (Product 1)').selectOption('EUR');
    await page.getByLabel('What the guest says about it (Product 1)').fill('It rings true.');
    await page.getByRole('button', { name: 'Add a filling: Product' }).click();
    await page.getByLabel('Product name (Product 2)').fill('Acme Rocket');
    await page.getByLabel('Amount (Product 2)').fill('120.5');
    await page.getByLabel('Currency (Product 2)').selectOption('USD');
    await page.getByLabel('What the guest says about it (Product 2)').fill('Fast.');
    await screenshot(page, 'textcollection-forms');
    await page.keyboard.press('Control+Enter');
    expect(await submitted(b, 'TextCollectionResponse')).toEqual({
      annotations: {
        episode: { kind: ['interview'], guest_name: 'Ada' },
        product_form: [
          { product_name: 'Acme Anvil', price: '49', currency: ['EUR'], guest_quote: 'It rings true.' },
          { product_name: 'Acme Rocket', price: '120.5', currency: ['USD'], guest_quote: 'Fast.' },
        ],
      },
    });
    expect(foreign).toEqual([]);
    await page.close();
  });
});

describe('the form and text players: comparison, categorization, rows, named entities', () => {
  let checkAnswer: (task: { type: string; params: any }, response: any) => string[];
  beforeAll(async () => {
    ({ checkAnswer } = (await import('../shared/answer-rules.ts')) as any);
  });
  async function submitted(a: Assignment, schemaName: string) {
    const call = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === a.lease_token);
    expect(validAgainst('SubmitRequest', call.body)).toBe('valid');
    expect(validAgainst(schemaName, call.body.response)).toBe('valid');
    expect(checkAnswer({ type: a.task.type, params: a.task.params }, call.body.response)).toEqual([]);
    expect(call.status).toBe(200);
    return call.body.response;
  }
  /** A second of silence as an 8 kHz WAV: an audio attachment the browser plays without any network. */
  const wav = () => {
    const data = Buffer.alloc(8000, 128);
    const head = Buffer.alloc(44);
    head.write('RIFF', 0);
    head.writeUInt32LE(36 + data.length, 4);
    head.write('WAVEfmt ', 8);
    head.writeUInt32LE(16, 16);
    head.writeUInt16LE(1, 20);
    head.writeUInt16LE(1, 22);
    head.writeUInt32LE(8000, 24);
    head.writeUInt32LE(8000, 28);
    head.writeUInt16LE(1, 32);
    head.writeUInt16LE(8, 34);
    head.write('data', 36);
    head.writeUInt32LE(data.length, 40);
    return Buffer.concat([head, data]);
  };

  it('compares two images with a choice and a field, categorizes a sound with several categories, and removes a transcribed row', async () => {
    const compare = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9e0',
      type: 'comparison',
      instruction: 'Which photo shows the car better?',
      params: {
        attachment_type: 'image',
        attachments: [`${origin}/fixtures/street.svg`, `${origin}/fixtures/street.svg?crop=2`],
        choices: ['The first is better', 'The second is better', 'They are equally good'],
        fields: { differences: 'Describe what differs between the two photos.' },
      },
    });
    const sound = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9e1',
      type: 'categorization',
      instruction: 'What can you hear?',
      params: {
        attachment_type: 'audio',
        attachment: `${origin}/fixtures/clip.wav`,
        categories: ['Speech', 'Music', 'Silence'],
        category_ids: { s1: 'Speech', s2: 'Music', s3: 'Silence' },
        allow_multiple: true,
      },
    });
    const rows = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9e2',
      type: 'transcription',
      instruction: 'Copy the receipt.',
      params: {
        attachment_type: 'image',
        attachment: `${origin}/fixtures/street.svg`,
        fields: { shop: 'The shop' },
        repeatable_fields: { item: 'The item' },
      },
    });
    expect(validAgainst('ComparisonParams', compare.task.params)).toBe('valid');
    expect(validAgainst('CategorizationParams', sound.task.params)).toBe('valid');
    queue = [compare, sound, rows];
    const { page, foreign } = await open();
    await page.route('**/fixtures/clip.wav', (r) => r.fulfill({ contentType: 'audio/wav', body: wav() }));
    await logIn(page);

    await expect.poll(() => page.locator('.compare .attachment img').count(), poll).toBe(2);
    expect(await page.locator('.compare figcaption').allTextContents()).toEqual(['1 of 2', '2 of 2']);
    await page.keyboard.press('Control+Enter');
    await page.getByText('Choose an answer.').waitFor();
    await page.keyboard.press('2');
    expect(await page.getByLabel('The second is better').isChecked()).toBe(true);
    await page.getByLabel('Describe what differs between the two photos.').fill('The second is cropped closer to the car.');
    await screenshot(page, 'comparison');
    await page.keyboard.press('Control+Enter');
    expect(await submitted(compare, 'ComparisonResponse')).toEqual({
      choice: 'The second is better',
      fields: { differences: 'The second is cropped closer to the car.' },
    });

    // The sound is an audio element (with controls), and both categories go with their ids.
    await page.locator('.attachment audio[controls]').waitFor();
    expect(await page.locator('.attachment audio').getAttribute('src')).toBe(`${origin}/fixtures/clip.wav`);
    await page.keyboard.press('1');
    await page.keyboard.press('2');
    await page.keyboard.press('Control+Enter');
    expect(await submitted(sound, 'CategorizationResponse')).toEqual({ category: ['Speech', 'Music'], category_id: ['s1', 's2'] });

    await page.getByLabel('The shop').fill('Corner Deli');
    for (const item of ['Bread', 'Mistake', 'Milk']) {
      await page.keyboard.press('Alt+Enter');
      await page.keyboard.type(item);
    }
    await page.getByRole('button', { name: 'Remove row 2' }).click();
    expect(await page.getByLabel('The item (row 2)').inputValue()).toBe('Milk');
    await page.keyboard.press('Control+Enter');
    expect(await submitted(rows, 'TranscriptionResponse')).toEqual({
      fields: { shop: 'Corner Deli' },
      repeatable_fields: [{ item: 'Bread' }, { item: 'Milk' }],
    });
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('namedentityrecognition: spans by mouse and keyboard with exact code-point offsets after an emoji, attributes, named and unnamed relationships', async () => {
    // An emoji (two UTF-16 units, one code point) before the spans, and "é" written as e + a combining accent (two code points).
    const text = 'Hello 👋! Andre\u0301 Müller works for Acme Corp in Zürich.\nAcme Corp makes anvils.';
    const entities = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9f0',
      type: 'namedentityrecognition',
      instruction: 'Label the people, organizations and places, and how they relate.',
      params: {
        text,
        labels: [
          {
            name: 'PERSON',
            display_name: 'Person',
            attributes: {
              role: {
                type: 'select',
                display_name: 'Role',
                options: [
                  { value: 'executive', display_name: 'Executive' },
                  { value: 'employee', display_name: 'Employee' },
                ],
              },
            },
          },
          { name: 'ORG', display_name: 'Organization' },
          { name: 'LOCATION', display_name: 'Location', children: [{ name: 'CITY', display_name: 'City' }] },
        ],
        relationships: [
          { name: 'works_for', display_name: 'works for', is_directed: true, source_label: 'PERSON', target_label: 'ORG' },
          { name: 'located_in', display_name: 'located in', source_label: 'ORG', target_label: 'CITY' },
        ],
      },
    });
    const unnamed = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9f1',
      type: 'namedentityrecognition',
      instruction: 'Label the people and link those who met.',
      params: {
        text: 'Anna met Bob in Rome.',
        labels: [{ name: 'PERSON' }],
        relationships: [{ source_label: 'PERSON', target_label: 'PERSON' }],
      },
    });
    for (const x of [entities, unnamed]) expect(validAgainst('NamedEntityRecognitionParams', x.task.params)).toBe('valid');
    queue = [entities, unnamed];
    const { page, foreign } = await open();
    await logIn(page);
    const box = page.locator('.ner-text');
    await box.waitFor();
    const codePoints = (s: string) => Array.from(s).length;
    const offsets = (piece: string, from = 0) => {
      const units = text.indexOf(piece, from);
      return { start: codePoints(text.slice(0, units)), end: codePoints(text.slice(0, units)) + codePoints(piece) };
    };

    // The mouse: drag over the name with Person (label 1, the first) chosen.
    const name = 'Andre\u0301 Müller';
    const at = await whereIs(page, name);
    await page.mouse.move(at.x1, at.y1);
    await page.mouse.down();
    await page.mouse.move(at.x2, at.y2, { steps: 6 });
    await page.mouse.up();
    await expect.poll(() => page.locator('.spans li[data-span]').count(), poll).toBe(1);
    await page.getByRole('combobox', { name: /^Role of/ }).selectOption('executive');

    // The keyboard: the caret from the start, by graphemes, Shift+→ over "Acme Corp", then 2 (Organization).
    await page.keyboard.press('Escape');
    await box.focus();
    await page.keyboard.press('Home');
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    const before = [...segmenter.segment(text.slice(0, text.indexOf('Acme Corp')))].length;
    for (let i = 0; i < before; i++) await page.keyboard.press('ArrowRight');
    for (let i = 0; i < 'Acme Corp'.length; i++) await page.keyboard.press('Shift+ArrowRight');
    await page.keyboard.press('2');
    await expect.poll(() => page.locator('.spans li[data-span]').count(), poll).toBe(2);

    // A double-click on a word, with City (label 4) chosen after deselecting.
    await page.keyboard.press('Escape');
    await page.keyboard.press('4');
    expect(await page.getByRole('button', { name: /City/ }).getAttribute('aria-pressed')).toBe('true');
    const city = await whereIs(page, 'Zürich');
    await page.mouse.dblclick((city.x1 + city.x2) / 2, city.y1);
    await expect.poll(() => page.locator('.spans li[data-span]').count(), poll).toBe(3);

    // Relationships: a directed one the wrong way round is refused; then two that fit.
    const relate = async (from: string, kind: string, to: string) => {
      await page.getByLabel('Relationship from').selectOption(from);
      await page.getByLabel('Relationship kind').selectOption(kind);
      await page.getByLabel('Relationship to').selectOption(to);
      await page.getByRole('button', { name: 'Add the relationship' }).click();
    };
    await relate('a2', 'works_for', 'a1');
    await page.getByText('cannot go from a Organization to a Person').waitFor();
    await relate('a1', 'works_for', 'a2');
    await relate('a2', 'located_in', 'a3');
    expect(await page.locator('.relations li').count()).toBe(2);

    await page.keyboard.press('?');
    const help = await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).textContent();
    for (const line of ['Select the previous or next span', 'Remove the selected span', 'Label the selection with the current label'])
      expect(help).toContain(line);
    await page.keyboard.press('Escape');
    await screenshot(page, 'ner');

    await page.keyboard.press('Control+Enter');
    const response = await submitted(entities, 'NamedEntityRecognitionResponse');
    expect(response).toEqual({
      annotations: [
        { id: 'a1', ...offsets(name), text: name, label: 'PERSON', attributes: { role: 'executive' } },
        { id: 'a2', ...offsets('Acme Corp'), text: 'Acme Corp', label: 'ORG' },
        { id: 'a3', ...offsets('Zürich'), text: 'Zürich', label: 'CITY' },
      ],
      relationships: [
        { id: 'r1', source_ref: 'a1', target_ref: 'a2', name: 'works_for' },
        { id: 'r2', source_ref: 'a2', target_ref: 'a3', name: 'located_in' },
      ],
    });
    // Code points, not UTF-16 units: the emoji counts once, the accent once more.
    expect(response.annotations[0].start).toBe(text.indexOf(name) - 1);
    expect(response.annotations[0].end - response.annotations[0].start).toBe(13);

    // Unnamed relationships: no name in the answer.
    await page.locator('.ner-text').waitFor();
    for (const word of ['Anna', 'Bob']) {
      const w = await whereIs(page, word);
      await page.mouse.dblclick((w.x1 + w.x2) / 2, w.y1);
    }
    await expect.poll(() => page.locator('.spans li[data-span]').count(), poll).toBe(2);
    await page.getByLabel('Relationship from').selectOption('a1');
    await page.getByLabel('Relationship to').selectOption('a2');
    await page.getByRole('button', { name: 'Add the relationship' }).click();
    await page.keyboard.press('Control+Enter');
    expect(await submitted(unnamed, 'NamedEntityRecognitionResponse')).toEqual({
      annotations: [
        { id: 'a1', start: 0, end: 4, text: 'Anna', label: 'PERSON' },
        { id: 'a2', start: 9, end: 12, text: 'Bob', label: 'PERSON' },
      ],
      relationships: [{ id: 'r1', source_ref: 'a1', target_ref: 'a2' }],
    });
    expect(foreign).toEqual([]);
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
    await screenshot(page, 'imageannotation-geometries');

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

  it('a label chosen after drawing is for the next shape: 1, draw, 2, draw leaves the first box a car; a selected box is relabeled', async () => {
    const { a, page } = await start(geometryTask());
    await page.keyboard.press('1');
    await drag(page, [200, 195], [385, 292]);
    await expect.poll(() => shapeCount(page), poll).toBe(1);
    await page.keyboard.press('2');
    await drag(page, [420, 180], [600, 300]);
    await expect.poll(() => shapeCount(page), poll).toBe(2);
    expect(await page.locator('.shapes li').allTextContents()).toEqual([expect.stringMatching(/^car:/), expect.stringMatching(/^truck:/)]);
    // Selected by the person (the list, or a click), a shape takes the label chosen.
    await page.locator('.shapes li button').first().click();
    await page.keyboard.press('2');
    await page.locator('.shapes li button').nth(1).click();
    await page.keyboard.press('1');
    const [first, second] = await submitted(page, a);
    expect([first.label, second.label]).toEqual(['truck', 'car']);
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
    await screenshot(page, 'imageannotation-attributes');
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

describe('the lidar player', () => {
  // Frame 0: a patch of road, a car above it and off to one side, a tree further away; frame 1: a
  // kerb. Served, as a customer's storage would, from another loopback origin, and passed on to
  // the page by the media route (the page asks nothing of that origin).
  const first = lidarFrame([
    { from: [-14, -6, 0], to: [-4, 6, 0.05], count: 1500 },
    { from: [6, -1, 0.3], to: [10, 1, 1.6], count: 400 },
    { from: [-1, 14, 0], to: [1, 16, 5], count: 300 },
  ]);
  const second = lidarFrame([{ from: [-3, -3, 0], to: [3, 3, 0.3], count: 200 }]);
  const [road, car, tree] = first.ranges as [[number, number], [number, number], [number, number]];
  let storage: Server;
  let cloudOrigin: string;
  const fetched: string[] = [];

  beforeAll(async () => {
    storage = createServer((req, res) => {
      fetched.push(req.url ?? '');
      const body = req.url === '/drive/0000.json' ? first : req.url === '/drive/0001.json' ? second : null;
      if (!body) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ points: body.points }));
    });
    await new Promise<void>((r) => storage.listen(0, '127.0.0.1', r));
    cloudOrigin = `http://127.0.0.1:${(storage.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => storage?.close(r)));

  const lidarTask = (): Assignment['task'] =>
    ({
      task_id: '65f1c0a2b3c4d5e6f7a8b9e1',
      type: 'lidarsegmentation',
      instruction: 'Label the **road**, the vehicles and the vegetation.',
      params: {
        attachments: [`${cloudOrigin}/drive/0000.json`, `${cloudOrigin}/drive/0001.json`],
        attachment_type: 'json',
        labels: ['road', 'vehicle', 'vegetation'],
      },
    }) as unknown as Assignment['task'];
  const counts = (page: Page) => page.locator('.lidar-counts').textContent();
  const matrix = (page: Page) => page.locator('.lidar-stage').getAttribute('data-matrix');
  const frameShown = (page: Page, text: string) => page.locator('.lidar-player .frame-text').filter({ hasText: text }).waitFor();

  it('labels points with a lasso from two views and two frames, undoes and redoes, keeps the draft over a reload, and submits a label per point', async () => {
    const a = assignment(lidarTask());
    // Asked again while the assignment is active, the server answers it again (a reload resumes it).
    queue = [a, a];
    // three.js's WebGL drawing, even where it runs in software (this browser: SwiftShader), which by itself would choose the 2D view.
    const { page, own } = await open('?lidar=webgl');
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await logIn(page);
    await frameShown(page, 'Frame 1 of 2 · 2,200 points');
    // The view (three.js) came as a chunk of the app's own, when the task opened.
    expect(own.filter((p) => p.startsWith('/label/chunks/view-'))).toHaveLength(1);
    await expect.poll(() => page.locator('.lidar-stage').getAttribute('data-renderer'), poll).toBe('webgl');
    await expect.poll(() => matrix(page), poll).toBeTruthy();

    // Key 2 (vehicle), a lasso around the car: its 400 points, and nothing else.
    await page.keyboard.press('2');
    await lassoAround(page, first.points, car);
    await expect.poll(() => counts(page), poll).toContain('vehicle: 400');
    // Key 1 (road) around the road; undone, redone.
    await page.keyboard.press('1');
    await lassoAround(page, first.points, road);
    await expect.poll(() => counts(page), poll).toContain('road: 1,500');
    await page.keyboard.press('Control+z');
    await expect.poll(() => counts(page), poll).toContain('road: 0');
    expect(await counts(page)).toContain('vehicle: 400');
    await page.keyboard.press('Control+Shift+z');
    await expect.poll(() => counts(page), poll).toContain('road: 1,500');
    // The screenshot for docs/: the road and the car labelled, the tree not yet (grey, lighter with height).
    await screenshot(page, 'lidarsegmentation');

    // The view turned with the mouse (tool V) and the arrow keys; then the tree with key 3 in the new view.
    const before = await matrix(page);
    await page.keyboard.press('v');
    const stage = await page.locator('.lidar-overlay').boundingBox();
    if (!stage) throw new Error('no view');
    await page.mouse.move(stage.x + stage.width / 2, stage.y + stage.height / 2);
    await page.mouse.down();
    await page.mouse.move(stage.x + stage.width / 2 + 120, stage.y + stage.height / 2 + 20, { steps: 8 });
    await page.mouse.up();
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => matrix(page), poll).not.toBe(before);
    expect(await counts(page)).toContain('unlabeled: 300');
    await page.keyboard.press('l');
    await page.keyboard.press('3');
    await lassoAround(page, first.points, tree);
    await expect.poll(() => counts(page), poll).toContain('vegetation: 300');
    expect(await counts(page)).toContain('unlabeled: 0');

    // Frame 2: the kerb as road, only unlabeled points (U) — all of them here.
    await page.keyboard.press('.');
    await frameShown(page, 'Frame 2 of 2 · 200 points');
    await page.keyboard.press('u');
    await page.keyboard.press('1');
    await expect.poll(() => matrix(page), poll).toBeTruthy();
    await lassoAround(page, second.points, [0, 200]);
    await expect.poll(() => counts(page), poll).toContain('road: 200');

    // A reload: the draft comes back (this browser's copy), on the frame the person was on.
    await page.reload();
    await frameShown(page, 'Frame 2 of 2 · 200 points');
    await expect.poll(() => counts(page), poll).toContain('road: 200');
    await page.keyboard.press(',');
    await frameShown(page, 'Frame 1 of 2 · 2,200 points');
    await expect.poll(() => counts(page), poll).toContain('vehicle: 400');
    expect(await counts(page)).toContain('road: 1,500');

    // The shortcuts are in the help overlay.
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    for (const line of [
      'Tool: lasso (drag around points)',
      'Undo the last lasso',
      'Reset the view',
      'Next frame',
      'Choose label 1-9 for the lasso',
    ])
      await help.getByText(line).waitFor();
    await page.keyboard.press('Escape');

    await page.keyboard.press('Control+Enter');
    const call = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === a.lease_token);
    expect(validAgainst('SubmitRequest', call.body)).toBe('valid');
    expect(validAgainst('LidarSegmentationResponse', call.body.response)).toBe('valid');
    expect(call.status).toBe(200);
    const want = (ranges: [number, number][], labels: number[], total: number) =>
      Array.from({ length: total }, (_, i) => {
        const k = ranges.findIndex(([from, to]) => i >= from && i < to);
        return k >= 0 ? (labels[k] as number) : -1;
      });
    expect(call.body.response).toEqual({
      labels: ['road', 'vehicle', 'vegetation'],
      frames: [
        { frame: 0, point_labels: want([road, car, tree], [0, 1, 2], 2200) },
        { frame: 1, point_labels: want([[0, 200]], [0], 200) },
      ],
    });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('in 2D (no WebGL, or WebGL in software) paints the points on a canvas where the lasso works the same; a frame that cannot be read stops the submit with its reason', async () => {
    const task = lidarTask();
    (task.params as { attachments: string[] }).attachments = [`${cloudOrigin}/drive/0000.json`, `${cloudOrigin}/drive/missing.json`];
    queue = [assignment(task)];
    const { page } = await open('?lidar=2d');
    await logIn(page);
    await frameShown(page, 'Frame 1 of 2 · 2,200 points');
    await expect.poll(() => page.locator('.lidar-stage').getAttribute('data-renderer'), poll).toBe('2d');
    // The points are painted: the road's colour (unlabeled: grey) shows on the canvas.
    const painted = () =>
      page.locator('.lidar-overlay').evaluate((c) => {
        const canvas = c as HTMLCanvasElement;
        const data = (canvas.getContext('2d') as CanvasRenderingContext2D).getImageData(0, 0, canvas.width, canvas.height).data;
        let green = 0;
        let grey = 0;
        for (let i = 0; i < data.length; i += 4) {
          const [r, g, b] = [data[i] as number, data[i + 1] as number, data[i + 2] as number];
          if (r === 0x3c && g === 0xb4 && b === 0x4b) green++;
          else if (r === g && g === b && r >= 90) grey++;
        }
        return { green, grey };
      });
    await expect.poll(async () => (await painted()).grey, poll).toBeGreaterThan(1000);
    await page.keyboard.press('2');
    await expect.poll(() => matrix(page), poll).toBeTruthy();
    await lassoAround(page, first.points, car);
    await expect.poll(() => counts(page), poll).toContain('vehicle: 400');
    await expect.poll(async () => (await painted()).green, poll).toBeGreaterThan(100);
    await page.keyboard.press('Control+Enter');
    await page.getByText(/frame 2 \(.*missing\.json\) could not be read: HTTP 404\. Skip the task with that reason\./).waitFor();
    expect(calls.filter((c) => c.path.endsWith('/submit'))).toEqual([]);
    await page.close();
  });

  it('starts a redo from the earlier answer: its labels shown and sent again unless changed', async () => {
    const earlier = {
      labels: ['road', 'vehicle', 'vegetation'],
      frames: [
        { frame: 0, point_labels: first.points.map((_, i) => (i >= car[0] && i < car[1] ? 1 : -1)) },
        { frame: 1, point_labels: second.points.map(() => 0) },
      ],
    };
    const a = assignment(lidarTask(), {
      role: 'redo',
      previous_response: earlier,
      feedback: {
        result: 'rejected',
        feedback_items: [{ category: 'missing', text: 'The tree is vegetation.' }],
        reviewed_at: new Date().toISOString(),
      },
    });
    queue = [a];
    const { page } = await open('?lidar=2d');
    await logIn(page);
    await frameShown(page, 'Frame 1 of 2 · 2,200 points');
    await expect.poll(() => counts(page), poll).toContain('vehicle: 400');
    expect(await counts(page)).toContain('unlabeled: 1,800');
    await page.getByText('The tree is vegetation.').waitFor();
    await page.keyboard.press('3');
    await lassoAround(page, first.points, tree);
    await expect.poll(() => counts(page), poll).toContain('vegetation: 300');
    await page.keyboard.press('Control+Enter');
    const call = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === a.lease_token);
    expect(validAgainst('LidarSegmentationResponse', call.body.response)).toBe('valid');
    const labels = call.body.response.frames[0].point_labels as number[];
    expect(labels.slice(...car).every((l) => l === 1)).toBe(true);
    expect(labels.slice(...tree).every((l) => l === 2)).toBe(true);
    expect(labels.slice(...road).every((l) => l === -1)).toBe(true);
    expect(call.body.response.frames[1]).toEqual(earlier.frames[1]);
    await page.close();
  });
});

describe('the video and audio players', () => {
  let checkAnswer: (task: { type: string; params: any }, response: any) => string[];
  let videoTask: () => Assignment['task'];
  beforeAll(async () => {
    ({ checkAnswer } = (await import('../shared/answer-rules.ts')) as any);
    videoTask = () =>
      ({
        task_id: '65f1c0a2b3c4d5e6f7a8b9f1',
        type: 'videoplaybackannotation',
        instruction: 'Track every **vehicle** and mark the events.',
        params: {
          attachments: [0, 1, 2, 3, 4].map((f) => `${origin}/fixtures/drive-${f}.svg`),
          attachment_type: 'image',
          frame_rate: 2,
          geometries: {
            box: { objects_to_annotate: ['car', 'truck'], min_width: 5, min_height: 5 },
            point: { objects_to_annotate: ['light'] },
          },
          events_to_annotate: ['lane change', 'hard braking'],
          annotation_attributes: { occluded: { description: 'Is it occluded?', choices: ['no', 'yes'] } },
        },
      }) as unknown as Assignment['task'];
  });
  async function submitted(a: Assignment, schemaName: string) {
    const call = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === a.lease_token);
    expect(validAgainst('SubmitRequest', call.body)).toBe('valid');
    expect(validAgainst(schemaName, call.body.response)).toBe('valid');
    expect(checkAnswer({ type: a.task.type, params: a.task.params }, call.body.response)).toEqual([]);
    expect(call.status).toBe(200);
    return call.body.response;
  }
  const frameShown = (page: Page) => page.locator('.frame-text').textContent();

  it('videoplaybackannotation: a box tracked over frames with keyframes and interpolation, a track ended, events, playback, a reload', async () => {
    const a = assignment(videoTask());
    queue = [a, a];
    const { page, foreign } = await open();
    // The frames, answered by the test in the browser (same origin; nothing leaves the loopback).
    await page.route('**/fixtures/drive-*.svg', (r) =>
      r.fulfill({ contentType: 'image/svg+xml', body: driveFrame(Number(/drive-(\d+)/.exec(r.request().url())?.[1])) }),
    );
    await logIn(page);
    await page.getByText('320 × 200 px, 5 frames at 2 per second').waitFor();
    await page.keyboard.press('?');
    const help = await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).textContent();
    for (const line of [
      'Next frame',
      'Previous frame',
      'Seek 10 frames',
      'Play or pause',
      'keyframe of the selected track',
      'End the selected track',
      'Mark the chosen event',
    ])
      expect(help).toContain(line);
    await page.keyboard.press('Escape');

    // Frame 0: the car is at (40, 120), 80 × 40. A box around it starts a track.
    await drag(page, [40, 120], [120, 160]);
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);
    const panel = page.getByRole('group', { name: 'Attributes of the selected shape' });
    await panel.getByRole('group', { name: 'Is it occluded?' }).getByLabel('no').check();
    // To frame 4 (four times →): the box stays where it was drawn; moved onto the car (at 200), frame 4 is a keyframe.
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowRight');
    await expect.poll(() => frameShown(page), poll).toMatch(/^Frame 4 of 4 · 2\.00 s/);
    await page.keyboard.press('V');
    await drag(page, [80, 140], [240, 140]);
    await expect.poll(() => frameShown(page), poll).toContain('keyframe');
    // Frame 2 (Home, → →): interpolated halfway, at 120.
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.locator('.shapes li').first().textContent(), poll).toContain('here box at 120, 120, 80 × 40 px');
    // Events: "hard braking" (Alt+2) from frame 1 to 3, "lane change" (Alt+1) from 2 to 3 (marked backwards: 3, then 2).
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Alt+2');
    await page.keyboard.press('M');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('M');
    await page.keyboard.press('Alt+1');
    await page.keyboard.press('M');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('M');
    await expect
      .poll(() => page.locator('.events li').allTextContents(), poll)
      .toEqual([expect.stringContaining('hard braking: frames 1–3'), expect.stringContaining('lane change: frames 2–3')]);
    // The track ends at frame 3 (X there): it is not in frame 4.
    await page.keyboard.press('ArrowRight');
    await page.locator('.shapes li button').first().click();
    await page.keyboard.press('X');
    await expect.poll(() => page.locator('.shapes li').first().textContent(), poll).toContain('frames 0–3, 2 keyframes');
    await screenshot(page, 'videoplaybackannotation');

    // Space plays from the start (the last frame was shown) and stops at the end; Space pauses.
    await page.keyboard.press('Home');
    await page.keyboard.press(' ');
    await expect.poll(() => page.locator('button.play').getAttribute('aria-pressed'), poll).toBe('true');
    await expect.poll(() => frameShown(page), poll).toMatch(/^Frame [1-4] /);
    await page.keyboard.press(' ');
    expect(await page.locator('button.play').getAttribute('aria-pressed')).toBe('false');

    // A reload brings the tracks and events back from the draft.
    await page.reload();
    await page.getByText('320 × 200 px, 5 frames at 2 per second').waitFor();
    await expect.poll(() => page.locator('.events li').count(), poll).toBe(2);
    expect(await page.locator('.shapes li').first().textContent()).toContain('frames 0–3, 2 keyframes');

    await page.keyboard.press('Control+Enter');
    const response = await submitted(a, 'VideoPlaybackAnnotationResponse');
    expect(response.events).toEqual([
      { label: 'hard braking', start: 1, end: 3 },
      { label: 'lane change', start: 2, end: 3 },
    ]);
    const [track, ...more] = response.annotations;
    expect(more).toEqual([]);
    expect(track).toMatchObject({ type: 'box', label: 'car', attributes: { occluded: 'no' } });
    expect(track.frames.map((f: any) => f.frame)).toEqual([0, 1, 2, 3]);
    for (const f of track.frames) {
      expect(Math.abs(f.left - (40 + 40 * f.frame)), `frame ${f.frame}: ${f.left}`).toBeLessThanOrEqual(1.5);
      expect(Math.abs(f.top - 120)).toBeLessThanOrEqual(1.5);
      expect(Math.abs(f.width - 80)).toBeLessThanOrEqual(1.5);
    }
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('one undo and one tool bar in every player: the video player undoes and redoes with the same keys, and the help lists its tools and undo from the keymap', async () => {
    const a = assignment(videoTask());
    queue = [a];
    const { page } = await open();
    await page.route('**/fixtures/drive-*.svg', (r) =>
      r.fulfill({ contentType: 'image/svg+xml', body: driveFrame(Number(/drive-(\d+)/.exec(r.request().url())?.[1])) }),
    );
    await logIn(page);
    await page.getByText('320 × 200 px, 5 frames at 2 per second').waitFor();
    // Each tool's button names its key; the help lists the same key for the same tool (label/players/toolbar.ts).
    const tools = await page
      .getByRole('toolbar', { name: 'Tool' })
      .locator('button')
      .evaluateAll((bs) => bs.map((b) => [b.querySelector('kbd')?.textContent ?? '', (b.lastChild?.textContent ?? '').trim()]));
    expect(tools).toEqual([
      ['V', 'Select, move and pan'],
      ['B', 'Box'],
      ['K', 'Point'],
    ]);
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    const rows = await help
      .locator('tr')
      .evaluateAll((rs) => rs.map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent)));
    for (const [key, name] of tools) expect(rows).toContainEqual([key, `Tool: ${name}`]);
    // Undo and redo: the same keys and words in every player that has them (label/undo.ts).
    expect(rows).toContainEqual(['Ctrl+Z', 'Undo']);
    expect(rows).toContainEqual(['Ctrl+Shift+Z Ctrl+Y', 'Redo']);
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden' });

    // B (the key the bar shows) picks the box tool; a box starts a track; undo takes it back, redo brings it again.
    await page.keyboard.press('B');
    expect(await page.locator('button[data-tool="box"]').getAttribute('aria-pressed')).toBe('true');
    await drag(page, [40, 120], [120, 160]);
    const tracks = () => page.locator('.shapes li').count();
    await expect.poll(tracks, poll).toBe(1);
    await page.keyboard.press('Control+Z');
    await expect.poll(tracks, poll).toBe(0);
    await page.keyboard.press('Control+Z');
    await expect.poll(() => page.locator('.message').textContent(), poll).toBe('Nothing to undo.');
    await page.keyboard.press('Control+Y');
    await expect.poll(tracks, poll).toBe(1);
    await page.keyboard.press('Control+Shift+Z');
    await expect.poll(() => page.locator('.message').textContent(), poll).toBe('Nothing to redo.');
    // The track redone is the one submitted (its attribute answered: the task asks it of every shape).
    await page.locator('.shapes li button').first().click();
    await page
      .getByRole('group', { name: 'Attributes of the selected shape' })
      .getByRole('group', { name: 'Is it occluded?' })
      .getByLabel('no')
      .check();
    await page.keyboard.press('Control+Enter');
    const response = await submitted(a, 'VideoPlaybackAnnotationResponse');
    expect(response.annotations).toHaveLength(1);
    expect(response.annotations[0]).toMatchObject({ type: 'box', label: 'car' });
    await page.close();
  });

  it('videoplaybackannotation starts from the pre-labels (hypothesis): tracks with their attributes and events; tools in the order of geometries', async () => {
    const task = videoTask() as Assignment['task'] & { params: Record<string, unknown> };
    const uuid = '5d6e7f80-9a1b-4c2d-8e3f-405162738495';
    // The customer listed the point before the box: the tools come in that order (issue 32, item 7).
    task.params.geometries = { point: { objects_to_annotate: ['light'] }, box: { objects_to_annotate: ['car', 'truck'] } };
    task.params.hypothesis = {
      annotations: [
        {
          uuid,
          type: 'box',
          label: 'car',
          attributes: { occluded: 'yes' },
          frames: [
            { frame: 0, left: 40, top: 120, width: 80, height: 40 },
            { frame: 2, left: 120, top: 120, width: 80, height: 40 },
          ],
        },
      ],
      events: [{ label: 'hard braking', start: 1, end: 2 }],
    };
    const a = assignment(task);
    queue = [a];
    const { page, foreign } = await open();
    await page.route('**/fixtures/drive-*.svg', (r) =>
      r.fulfill({ contentType: 'image/svg+xml', body: driveFrame(Number(/drive-(\d+)/.exec(r.request().url())?.[1])) }),
    );
    await logIn(page);
    await page.getByText('320 × 200 px, 5 frames at 2 per second').waitFor();
    const tools = await page.getByRole('toolbar', { name: 'Tool' }).locator('button').allTextContents();
    expect(tools.map((t) => t.trim())).toEqual([expect.stringContaining('Select'), 'K Point', 'B Box']);
    // The pre-labelled track and event are there before the worker does anything.
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);
    expect(await page.locator('.shapes li').first().textContent()).toContain('frames 0–2, 2 keyframes');
    expect(await page.locator('.events li').allTextContents()).toEqual([expect.stringContaining('hard braking: frames 1–2')]);
    await page.keyboard.press('Control+Enter');
    const response = await submitted(a, 'VideoPlaybackAnnotationResponse');
    expect(response.events).toEqual([{ label: 'hard braking', start: 1, end: 2 }]);
    expect(response.annotations).toHaveLength(1);
    const [track] = response.annotations;
    expect(track).toMatchObject({ uuid, type: 'box', label: 'car', attributes: { occluded: 'yes' } });
    expect(track.frames.map((f: any) => [f.frame, f.left])).toEqual([
      [0, 40],
      [1, 80],
      [2, 120],
    ]);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('videoplaybackannotation from a video file: frame n is the video at n / frame_rate seconds; a box keyframed on frames 0 and 4 is interpolated', async () => {
    const { page, foreign } = await open();
    // A WebM (VP8) of the five frames, 0.5 s each, encoded by Chromium and muxed by the test. Served
    // here without byte ranges (unseekable as it comes), so the player reads it whole.
    const video = await webmFromFrames(page, [0, 1, 2, 3, 4].map(driveFrame), 320, 200, 500);
    await page.route('**/fixtures/drive.webm', (r) => r.fulfill({ contentType: 'video/webm', body: video }));
    const a = assignment({
      ...videoTask(),
      params: {
        attachment: `${origin}/fixtures/drive.webm`,
        attachment_type: 'video',
        frame_rate: 2,
        geometries: { box: { objects_to_annotate: ['car'] } },
      },
    } as Assignment['task']);
    queue = [a];
    await logIn(page);
    await page.getByText('320 × 200 px, 5 frames at 2 per second').waitFor();
    /** Whether the frame shown is red (the car) at this frame pixel. */
    const red = async (x: number, y: number) => {
      const [px, py] = await at(page, x, y);
      return page
        .locator('.stage canvas')
        .first()
        .evaluate(
          (c: HTMLCanvasElement, [px, py]) => {
            const r = c.getBoundingClientRect();
            const [red, green] = (c.getContext('2d') as CanvasRenderingContext2D).getImageData(
              Math.round(((px as number) - r.left) * (c.width / r.width)),
              Math.round(((py as number) - r.top) * (c.height / r.height)),
              1,
              1,
            ).data as unknown as number[];
            return (red as number) > 150 && (green as number) < 100;
          },
          [px, py],
        );
    };
    await expect.poll(() => red(80, 140), poll).toBe(true);
    expect(await red(240, 140)).toBe(false);
    await drag(page, [40, 120], [120, 160]);
    await page.keyboard.press('End');
    // Frame 4 is the video at 2 s: the car is at 200.
    await expect.poll(() => red(240, 140), poll).toBe(true);
    expect(await red(80, 140)).toBe(false);
    await page.keyboard.press('V');
    await drag(page, [80, 140], [240, 140]);
    await expect.poll(() => frameShown(page), poll).toContain('keyframe');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => red(160, 140), poll).toBe(true);
    // Alt+Shift+↓ moves the box 10 px down on frame 2, which becomes a third keyframe: frames 1 and 3 follow halfway.
    await page.keyboard.press('Alt+Shift+ArrowDown');
    await expect.poll(() => page.locator('.shapes li').first().textContent(), poll).toContain('3 keyframes; here box at 120, 130');
    await page.keyboard.press('Control+Enter');
    const response = await submitted(a, 'VideoPlaybackAnnotationResponse');
    expect(response.events).toEqual([]);
    const [track] = response.annotations;
    expect(track.frames.map((f: any) => f.frame)).toEqual([0, 1, 2, 3, 4]);
    for (const f of track.frames) expect(Math.abs(f.left - (40 + 40 * f.frame)), `frame ${f.frame}: ${f.left}`).toBeLessThanOrEqual(1.5);
    expect(track.frames.map((f: any) => Math.round(f.top))).toEqual([120, 125, 130, 125, 120]);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('audiotranscription: the waveform, seeking by click and keys, play and pause while typing, timed segments; the transcript is what was typed', async () => {
    const a = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9f2',
      type: 'audiotranscription',
      instruction: 'Write down what is said.',
      params: { attachment_type: 'audio', attachment: `${origin}/fixtures/speech.wav`, language: 'en-US' },
    });
    queue = [a];
    const { page, foreign } = await open();
    await page.route('**/fixtures/speech.wav', (r) => r.fulfill({ contentType: 'audio/wav', body: toneWav(3) }));
    await logIn(page);
    await page.getByText('Spoken language: en-US').waitFor();
    const time = page.locator('.audio-time');
    await expect.poll(() => time.textContent(), poll).toBe('0:00.00 / 0:03.00');
    await page.keyboard.press('?');
    const help = await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).textContent();
    for (const line of ['Play or pause (also while typing)', 'Seek 2 s back or forward', 'A segment up to the playhead'])
      expect(help).toContain(line);
    await page.keyboard.press('Escape');

    // The waveform is drawn from the decoded audio: its columns are not all blank.
    const inked = () =>
      page.locator('canvas.waveform').evaluate((c: HTMLCanvasElement) => {
        const d = (c.getContext('2d') as CanvasRenderingContext2D).getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 2] === 216 && d[i] === 67) n++;
        return n / (c.width * c.height);
      });
    await expect.poll(inked, poll).toBeGreaterThan(0.1);

    // Served here without byte ranges, the audio plays from the bytes read for the waveform (else it could not seek).
    await expect.poll(() => page.locator('audio').evaluate((el: HTMLAudioElement) => el.src), poll).toMatch(/^blob:/);
    const wave = page.getByRole('slider', { name: 'Waveform: click to seek' });
    const box = await wave.boundingBox();
    if (!box) throw new Error('no waveform');
    const seconds = async () => Number(await page.locator('audio').evaluate((el: HTMLAudioElement) => el.currentTime));
    // A click at 40 % seeks to 1.2 s; Alt+Enter makes the segment 0–1.2 s and puts the caret in its text.
    await page.mouse.click(box.x + box.width * 0.4, box.y + box.height / 2);
    await expect.poll(seconds, poll).toBeCloseTo(1.2, 1);
    await page.keyboard.press('Alt+Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')), poll).toBe('Segment 1: text');
    await page.keyboard.type('Hello there.');
    // Escape plays while typing, and pauses again.
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('audio').evaluate((el: HTMLAudioElement) => el.paused), poll).toBe(false);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('audio').evaluate((el: HTMLAudioElement) => el.paused), poll).toBe(true);
    // At 90 %: the second segment, from where the first ended.
    await page.mouse.click(box.x + box.width * 0.9, box.y + box.height / 2);
    await expect.poll(seconds, poll).toBeCloseTo(2.7, 1);
    await page.keyboard.press('Alt+Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')), poll).toBe('Segment 2: text');
    await page.keyboard.type('General Kenobi.');
    // Alt+← (while typing) seeks 2 s back, to 0.7 s; Alt+[ makes that segment 2's start: it overlaps segment 1, and the app says so.
    await page.keyboard.press('Alt+ArrowLeft');
    await expect.poll(seconds, poll).toBeCloseTo(0.7, 1);
    await page.keyboard.press('Alt+BracketLeft');
    await expect.poll(() => page.getByLabel('Segment 2: start (seconds)').inputValue(), poll).toMatch(/^0\.[67]/);
    await page.keyboard.press('Control+Enter');
    await page.getByText('Segment 2 starts before segment 1 ends: segments do not overlap.').waitFor();
    await page.getByLabel('Segment 2: start (seconds)').fill('1.3');
    await page.getByLabel('Segment 2: start (seconds)').press('Tab');
    await screenshot(page, 'audiotranscription');

    // A time typed into a box is sent as shown when Ctrl+Enter is pressed in the box, without leaving it.
    await page.getByLabel('Segment 2: end (seconds)').fill('2.5');
    await page.getByLabel('Segment 2: end (seconds)').press('Control+Enter');
    const response = await submitted(a, 'AudioTranscriptionResponse');
    expect(response.transcript).toBe('Hello there. General Kenobi.');
    const [first, second, ...more] = response.segments;
    expect(more).toEqual([]);
    expect(first).toMatchObject({ start_seconds: 0, text: 'Hello there.' });
    expect(Math.abs(first.end_seconds - 1.2)).toBeLessThan(0.05);
    expect(second).toEqual({ start_seconds: 1.3, end_seconds: 2.5, text: 'General Kenobi.' });
    expect(foreign).toEqual([]);
    await page.close();
  });
});

describe('the segmentation and document players', () => {
  /** Page coordinates of the centre of an image pixel. */
  const at = (page: Page, x: number, y: number) => stagePoint(page, x + 0.5, y + 0.5);
  async function stroke(page: Page, points: [number, number][]) {
    const [first, ...rest] = points as [[number, number], ...[number, number][]];
    await page.mouse.move(...(await at(page, ...first)));
    await page.mouse.down();
    for (const p of rest) {
      const [x, y] = await at(page, ...p);
      await page.mouse.move(x, y, { steps: 8 });
    }
    await page.mouse.up();
  }
  async function submitted(page: Page, a: Assignment, own: string) {
    await page.keyboard.press('Control+Enter');
    const call = await waitForCall((c) => c.path.endsWith('/submit') && c.body?.lease_token === a.lease_token);
    expect(validAgainst('SubmitRequest', call.body)).toBe('valid');
    expect(validAgainst(own, call.body.response)).toBe('valid');
    expect(call.status).toBe(200);
    return call.body.response;
  }
  const segTask = (): Assignment['task'] =>
    ({
      task_id: '65f1c0a2b3c4d5e6f7a8b9e1',
      type: 'segmentannotation',
      instruction: 'Paint every pixel: the sky, the road, and each car on its own.',
      params: {
        attachment: `${origin}/fixtures/street.svg`,
        attachment_type: 'image',
        labels: ['sky', 'road'],
        instance_labels: ['car'],
        allow_unlabeled: false,
      },
    }) as unknown as Assignment['task'];

  it('segmentation: fill, brush strokes per label and per instance, undo and redo, a reload; the masks are exactly what was painted', async () => {
    const a = assignment(segTask());
    queue = [a, a];
    const { page, foreign } = await open();
    await logIn(page);
    await page.getByText('640 × 400 px').waitFor();
    await page.keyboard.press('?');
    const help = await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).textContent();
    for (const line of ['Tool: Brush', 'Tool: Fill the region', 'Tool: Eraser', 'New instance', 'Larger brush', 'Undo', 'Redo', 'Zoom in'])
      expect(help).toContain(line);
    await page.keyboard.press('Escape');

    // Nothing painted: every pixel must be, so the app says so before sending anything.
    await page.keyboard.press('Control+Enter');
    await page.getByText('256000 pixels are not labeled yet').waitFor();
    // The sky everywhere (fill), a road stroke 16 px wide, two cars.
    await page.keyboard.press('1');
    await page.keyboard.press('F');
    await page.mouse.click(...(await at(page, 10, 10)));
    await page.keyboard.press('2');
    await page.keyboard.press('B');
    await stroke(page, [
      [40, 330],
      [600, 330],
    ]);
    await page.keyboard.press('3');
    await stroke(page, [
      [230, 230],
      [350, 230],
    ]);
    await page.keyboard.press('I');
    await page.getByText('Painting car #2').waitFor();
    await page.keyboard.press(']'); // a larger brush: 24 px
    await stroke(page, [
      [500, 100],
      [560, 100],
    ]);
    // A stray stroke, undone; redo and undo again.
    await stroke(page, [
      [100, 50],
      [100, 150],
    ]);
    const stray = await page.locator('.seg-classes').textContent();
    await page.keyboard.press('Control+Z');
    await page.keyboard.press('Control+Shift+Z');
    expect(await page.locator('.seg-classes').textContent()).toBe(stray);
    await page.keyboard.press('Control+Z');
    // A reload brings the painting back from the draft.
    await page.reload();
    await page.getByText('Your painting is back').waitFor();
    await screenshot(page, 'segmentation');

    const response = await submitted(page, a, 'SegmentAnnotationResponse');
    expect(Object.keys(response.annotations.labeled)).toEqual(['sky', 'road', 'car']);
    expect(response.annotations.unlabeled).toBeNull();
    expect(response.instances).toEqual({ car: 2 });
    expect(response.labelMapping.sky.index).toBe(1);
    expect(response.labelMapping.road.index).toBe(2);
    expect(response.labelMapping.car.map((e: { index: number }) => e.index)).toEqual([3, 4]);
    const seg = readSegmentation(response);
    expect(seg.problems).toEqual([]);
    expect([seg.width, seg.height]).toEqual([640, 400]);
    const n = (name: string) => seg.counts[name] ?? 0;
    expect(n('sky') + n('road') + n('car#0') + n('car#1')).toBe(640 * 400);
    for (const [x, y, name] of [
      [10, 10, 'sky'],
      [300, 330, 'road'],
      [300, 345, 'sky'],
      [290, 230, 'car#0'],
      [530, 100, 'car#1'],
      [100, 100, 'sky'], // the undone stroke
    ] as const)
      expect(seg.classAt(x, y), `${x}, ${y}`).toBe(name);
    // The road: a 16 px brush from x 40 to 600 at y 330 (to within a pixel or two of the pointer).
    const road = seg.bounds('road');
    expect(Math.abs((road?.left ?? 0) - 32)).toBeLessThanOrEqual(2);
    expect(Math.abs((road?.right ?? 0) - 608)).toBeLessThanOrEqual(2);
    expect(Math.abs((road?.top ?? 0) - 322)).toBeLessThanOrEqual(2);
    expect(Math.abs((road?.bottom ?? 0) - 338)).toBeLessThanOrEqual(2);
    // The pixels whose middle lies within 8 px of the stroke's line: a band of about 16 rows with round ends.
    expect(Math.abs(n('road') - (560 * 16 + Math.PI * 64)) / n('road')).toBeLessThan(0.08);
    const car2 = seg.bounds('car#1');
    expect(Math.abs((car2?.top ?? 0) - 88)).toBeLessThanOrEqual(2);
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('documenttranscription: boxes per feature and for other text, their text typed, the hypothesis corrected; regions in reading order', async () => {
    const a = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9e2',
      type: 'documenttranscription',
      instruction: 'Transcribe the invoice number and the shipping address, and the total.',
      params: {
        attachment: `${origin}/fixtures/invoice.svg`,
        attachment_type: 'image',
        features: [
          { label: 'invoice_number', type: 'line', description: 'The number after INVOICE.' },
          { label: 'shipping_address', type: 'block', description: 'Whom the goods go to.', attributes: { lines: 3 } },
        ],
        hypothesis: {
          annotations: [
            { type: 'line', label: 'invoice_number', text: 'INV-2026-04I2', page: 1, left: 376, top: 40, width: 140, height: 26 },
          ],
        },
      },
    } as unknown as Assignment['task']);
    queue = [a];
    const { page, foreign } = await open();
    await logIn(page);
    await page.getByText('600 × 400 px').waitFor();
    await page.getByText('Features to transcribe (2)').waitFor();
    const panel = page.getByRole('region', { name: 'Attributes' });
    // The pre-labelled number, corrected: select it from the list, fix the text.
    await page.locator('.shapes li').first().getByRole('button').click();
    await panel.getByLabel(/^Text/).fill('INV-2026-0412');
    // The address: a block drawn with the mouse, three lines typed.
    await page.keyboard.press('Escape');
    await page.locator('button[data-tool="box"]').click();
    await page.keyboard.press('2');
    await stroke(page, [
      [36, 130],
      [160, 200],
    ]);
    await panel.getByLabel(/^Text/).fill('Muster GmbH\nHauptstr. 5\n10115 Berlin');
    // The total: text of no feature, a line (Escape first: a label key relabels the selected box).
    await page.keyboard.press('Escape');
    await page.keyboard.press('3');
    await stroke(page, [
      [36, 272],
      [240, 296],
    ]);
    await panel.getByLabel(/^Text/).fill('Total due: 1,240.00 EUR');
    // Its kind is asked (a feature's regions have the feature's kind); submitting without it is refused here.
    await page.keyboard.press('Control+Enter');
    await page.getByText('answer "Kind of region"').waitFor();
    await panel.getByRole('group', { name: 'Kind of region' }).getByLabel('line').check();
    await screenshot(page, 'documenttranscription');

    const response = await submitted(page, a, 'DocumentTranscriptionResponse');
    const [number, address, total, ...more] = response.annotations;
    expect(more).toEqual([]);
    expect(number).toEqual({
      type: 'line',
      label: 'invoice_number',
      text: 'INV-2026-0412',
      page: 1,
      left: 376,
      top: 40,
      width: 140,
      height: 26,
    });
    expect(address).toMatchObject({ type: 'block', label: 'shipping_address', text: 'Muster GmbH\nHauptstr. 5\n10115 Berlin', page: 1 });
    for (const [k, v] of Object.entries({ left: 36.5, top: 130.5, width: 124, height: 70 }))
      expect(Math.abs(address[k] - v), k).toBeLessThanOrEqual(1);
    expect(total).toMatchObject({ type: 'line', text: 'Total due: 1,240.00 EUR', page: 1 });
    expect(total.label).toBeUndefined();
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('documenttranscription of a PDF: its pages drawn by pdf.js at 72 dpi, a region on each page, page keys, a reload keeps both', async () => {
    const a = assignment({
      task_id: '65f1c0a2b3c4d5e6f7a8b9e3',
      type: 'documenttranscription',
      instruction: 'Transcribe the reference and the signature.',
      params: {
        attachment: `${origin}/fixtures/letter.pdf`,
        attachment_type: 'pdf',
        features: [
          { label: 'reference', type: 'line' },
          { label: 'signature', type: 'line' },
        ],
      },
    } as unknown as Assignment['task']);
    queue = [a, a];
    const { page, foreign, own } = await open();
    await logIn(page);
    await page.getByText('Page 1 of 2').waitFor();
    await page.getByText('400 × 300 px').waitFor();
    // pdf.js and its worker, from the app's own origin (a worker's requests are the page's too: none leaves the origin).
    expect(own).toEqual(expect.arrayContaining(['/label/vendor/pdf.min.mjs', '/label/vendor/pdf.worker.min.mjs']));
    await page.keyboard.press('?');
    const help = await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).textContent();
    for (const line of ['Next page of the document', 'Previous page of the document', 'Tool: Box', 'Undo']) expect(help).toContain(line);
    await page.keyboard.press('Escape');
    const panel = page.getByRole('region', { name: 'Attributes' });
    await page.keyboard.press('B');
    await stroke(page, [
      [36, 24],
      [200, 46],
    ]);
    await panel.getByLabel(/^Text/).fill('Reference: HT-7731');
    await page.keyboard.press('Escape');
    await page.keyboard.press('PageDown');
    await page.getByText('Page 2 of 2').waitFor();
    await page.getByText('400 × 300 px').waitFor();
    await page.keyboard.press('B');
    await page.keyboard.press('2');
    await stroke(page, [
      [36, 184],
      [180, 206],
    ]);
    await panel.getByLabel(/^Text/).fill('Yours, Ana Lima');
    await page.keyboard.press('Escape');
    // A reload: the same page, both regions back.
    await page.reload();
    await page.getByText('Page 2 of 2').waitFor();
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);
    await screenshot(page, 'documenttranscription-pdf');
    await page.keyboard.press('PageUp');
    await page.getByText('Page 1 of 2').waitFor();
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);

    const response = await submitted(page, a, 'DocumentTranscriptionResponse');
    const [reference, signature, ...more] = response.annotations;
    expect(more).toEqual([]);
    expect(reference).toMatchObject({ type: 'line', label: 'reference', text: 'Reference: HT-7731', page: 1 });
    expect(signature).toMatchObject({ type: 'line', label: 'signature', text: 'Yours, Ana Lima', page: 2 });
    for (const [k, v] of Object.entries({ left: 36.5, top: 24.5, width: 164, height: 22 }))
      expect(Math.abs(reference[k] - v), k).toBeLessThanOrEqual(1);
    for (const [k, v] of Object.entries({ left: 36.5, top: 184.5, width: 144, height: 22 }))
      expect(Math.abs(signature[k] - v), k).toBeLessThanOrEqual(1);
    expect(foreign).toEqual([]);
    await page.close();
  });
});
