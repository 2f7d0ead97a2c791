// The labeling app end to end (issue 20): the real server in this process (PGlite), a customer's
// callback receiver on loopback, and a worker of the customer's own workforce. For every task type
// that has a player, the customer creates a LIVE task with a callback_url; a scripted person opens
// /label/ in Chromium, logs in through the form, takes the task, does the work with the mouse and
// the keyboard, and submits. Then: the receiver got exactly one callback for the task, valid for the
// contract and carrying what was drawn or typed, and GET /v1/task/{id} shows the task completed.
// A reload in the middle of a task brings the draft back from the server (the browser's own copy
// cleared first). The attachment checker stays off (ATTACHMENT_CHECK_POLL_MS=0); the customer's
// images (http(s) URLs, as the contract wants) are kept on the receiver's loopback server, and the
// server passes them on (the media route): the page loads nothing from any origin but the app's.
import { createServer, type Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { expireLapsedLeases } from '../server/domain/workforce/work.ts';
import {
  clickOnImage,
  dragOnImage,
  driveFrame,
  lassoAround,
  lidarFrame,
  logInThroughForm,
  pdfDocument,
  screenshot,
  street,
  toneWav,
  whereIs,
} from './support/label.ts';
import { client, databases, hasPostgres, startTestServer, type DatabaseKind, type TestServer } from './support/server.ts';
import { makeValidator } from './support/spec.ts';
import { readSegmentation } from './support/png.ts';
import { until } from './support/wait.ts';
import { createWorker, logIn as logInOverHttp, type TestWorker } from './support/workers.ts';

interface Received {
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

const schema = makeValidator('current');
const validAgainst = (name: string, value: unknown) => {
  const v = schema(`#/components/schemas/${name}`);
  return v(value) ? 'valid' : JSON.stringify(v.errors);
};

const poll = { timeout: 20_000 };

let server: TestServer;
let hook: Server;
let hookUrl: string;
/** The customer's images: the street, and the street at dusk (another picture to compare it with). */
let streetUrl: string;
let duskUrl: string;
/** The customer's two-page PDF letter. */
let letterUrl: string;
const letter = pdfDocument([[[40, 40, 'Reference: HT-7731']], [[40, 200, 'Yours, Ana Lima']]]);
const received: Received[] = [];
let worker: TestWorker;
let browser: Browser;
let customer: ReturnType<typeof client>;

beforeAll(async () => {
  hook = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/street')) {
      res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(req.url.includes('dusk') ? street.replace('#9fc5e8', '#f6d5a8') : street);
      return;
    }
    const media = req.method === 'GET' ? customerMedia(req.url ?? '') : undefined;
    if (media) {
      // As a media host answers: byte ranges (an <audio> seeks with them). No CORS: the page never
      // asks this origin for anything, the server does.
      const body = Buffer.from(media.body);
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
      const head = { 'content-type': media.type, 'accept-ranges': 'bytes' };
      if (!range) return void res.writeHead(200, head).end(body);
      const from = Number(range[1]);
      const to = Math.min(range[2] ? Number(range[2]) : body.length - 1, body.length - 1);
      res.writeHead(206, { ...head, 'content-range': `bytes ${from}-${to}/${body.length}` }).end(body.subarray(from, to + 1));
      return;
    }
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ body: JSON.parse(body), headers: req.headers });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hookOrigin = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
  hookUrl = `${hookOrigin}/hook`;
  streetUrl = `${hookOrigin}/street.svg`;
  duskUrl = `${hookOrigin}/street-dusk.svg`;
  letterUrl = `${hookOrigin}/letter.pdf`;
});

/** The customer's frames of a drive (`/drive-<n>.svg`), a 3 s recording (`/speech.wav`) and a letter (`/letter.pdf`). */
function customerMedia(url: string): { type: string; body: string | Buffer } | undefined {
  const frame = /^\/drive-(\d+)\.svg$/.exec(url);
  if (frame) return { type: 'image/svg+xml', body: driveFrame(Number(frame[1])) };
  if (url === '/speech.wav') return { type: 'audio/wav', body: toneWav(3) };
  if (url === '/letter.pdf') return { type: 'application/pdf', body: letter };
  return undefined;
}

afterAll(async () => {
  await browser?.close();
  if (hook) await new Promise((r) => hook.close(r));
});

/** The server of one database (with the customer's client and the worker), started with the browser. */
async function startOn(db: DatabaseKind) {
  [server, browser] = await Promise.all([
    startTestServer(db, { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0' }),
    browser ?? testBrowser(inject('browserEndpoint')),
  ]);
  customer = client(server, 'current', server.dev.live_key);
  // The app's bundle is built on its first request (esbuild, about a second): meanwhile the worker is made.
  [worker] = await Promise.all([
    createWorker(server, { accountId: server.dev.account_id, displayName: 'Ana Lima' }),
    fetch(`${server.url}/label/app.js`).then((r) => r.text()),
  ]);
}

/** A live task of this type made through the customer API, its callback to the receiver; its id. */
async function liveTask(type: string, instruction: string, params: Record<string, unknown>): Promise<string> {
  const r = await customer('POST', `/v1/task/${type}`, { json: { callback_url: hookUrl, instruction, ...params } });
  expect(r.status, r.text).toBe(200);
  expect(r.body.status).toBe('pending');
  return r.body.task_id as string;
}

/** A live task of the project: boxes around every vehicle (a car or a truck) on the street image; its id. */
const vehicleBoxes = (project: string) =>
  liveTask('imageannotation', 'Draw a box around every **vehicle**.', {
    project,
    attachment: streetUrl,
    attachment_type: 'image',
    geometries: { box: { objects_to_annotate: ['car', 'truck'], min_width: 10, min_height: 10 } },
  });

/**
 * A fresh page at 1280 × 800 (a browser of its own, or a tab of `context`), logged in through the
 * form as `who` (default: Ana Lima); records requests leaving the origin and script errors.
 */
async function openApp(query = '', who: { worker: TestWorker; name: string } = { worker, name: 'Ana Lima' }, context?: BrowserContext) {
  const page = context ? await context.newPage() : await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const foreign: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    // The attachments are the work, kept by the customer: the server passes them on.
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== server.url) foreign.push(r.url());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${server.url}/label/${query}`);
  await logInThroughForm(page, who.worker.email, who.worker.password, who.name);
  return { page, foreign, problems };
}

/**
 * After the person submitted: the receiver gets exactly one callback for the task, valid for the
 * contract (the body and the response of the type), and the task shows completed with that response.
 */
async function delivered(taskId: string, responseSchema: string): Promise<any> {
  await until(() => received.some((r) => r.body?.task_id === taskId), `the callback of task ${taskId}`, 20_000);
  // A moment for a second (duplicate) delivery to show up, were there one.
  await new Promise((r) => setTimeout(r, 100));
  const mine = received.filter((r) => r.body?.task_id === taskId);
  expect(mine).toHaveLength(1);
  const [{ body, headers }] = mine as [Received];
  expect(validAgainst('TaskCompletedCallback', body)).toBe('valid');
  const response = await withFilesRead(body.response);
  expect(validAgainst(responseSchema, response)).toBe('valid');
  expect(headers['webhook-id']).toBeTruthy();
  expect(body.task).toMatchObject({ task_id: taskId, status: 'completed' });
  const shown = await customer('GET', `/v1/task/${taskId}`);
  expect(shown.status).toBe(200);
  expect(shown.body).toMatchObject({ task_id: taskId, status: 'completed' });
  expect(await withFilesRead(shown.body.response)).toEqual(response);
  return response;
}

/** A response with the files it links (a video's tracks and events, decision record 24) read and put in place. */
async function withFilesRead(response: Record<string, any>): Promise<Record<string, any>> {
  const inline: Record<string, any> = {};
  for (const [name, value] of Object.entries(response)) {
    const link = value && typeof value === 'object' && !Array.isArray(value) && typeof value.url === 'string' && value.expires_at;
    inline[name] = link
      ? await (
          await fetch(value.url, { headers: { authorization: `Basic ${Buffer.from(`${server.dev.live_key}:`).toString('base64')}` } })
        ).json()
      : value;
  }
  return inline;
}

/** Submits from the keyboard and waits until the app has moved on (the next task, or nothing to do). */
async function submit(page: Page) {
  const done = page.waitForResponse((r) => r.url().endsWith('/submit') && r.request().method() === 'POST');
  await page.keyboard.press('Control+Enter');
  const res = await done;
  expect(res.status(), await res.text()).toBe(200);
}

// Every player on PGlite; on PostgreSQL (where the run has it) the two that cover the shell's
// round trips: an answer with its callback, and the draft kept by the server over a reload.
describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the labeling app against the real server on %s', (db) => {
  beforeAll(() => startOn(db));
  afterAll(async () => {
    // Once more at the end, when every retry has had time: each completed task was delivered once.
    try {
      const counts = new Map<string, number>();
      for (const r of received) counts.set(r.body?.task_id, (counts.get(r.body?.task_id) ?? 0) + 1);
      expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
    } finally {
      await server?.close();
    }
  });
  const onPglite = it.skipIf(db !== 'pglite');

  it('waits for work with the long poll: a task made while the app waits is the answer to the question already waiting', async () => {
    const { page, foreign, problems } = await openApp();
    await page.getByText(/Nothing to do right now/).waitFor();
    // The question is held by the server (the app asks with `wait`): the task made now answers it.
    const answered = page.waitForResponse((r) => r.url().includes('/assignments/next'));
    const taskId = await liveTask('categorization', 'Which **team** should answer this message?', {
      attachment_type: 'text',
      attachment: 'My password reset e-mail never arrives.',
      categories: ['Billing', 'Technical problem', 'Account access'],
    });
    const res = await answered;
    expect(new URL(res.url()).searchParams.get('wait')).toBe('25');
    expect(res.status()).toBe(200);
    expect((await res.json()).task.task_id).toBe(taskId);
    await expect.poll(() => page.locator('.instruction strong').textContent(), poll).toBe('team');
    await page.keyboard.press('3');
    await submit(page);
    expect(await delivered(taskId, 'CategorizationResponse')).toEqual({ category: 'Account access' });
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('categorization: key 2 chooses the category; the callback carries it with its id', async () => {
    const taskId = await liveTask('categorization', 'Which **team** should answer this message?', {
      attachment_type: 'text',
      attachment: 'I was charged twice for my subscription this month.',
      categories: ['Billing', 'Technical problem', 'Account access'],
      category_ids: { c1: 'Billing', c2: 'Technical problem', c3: 'Account access' },
    });
    const { page, foreign, problems } = await openApp();
    await expect.poll(() => page.locator('.instruction strong').textContent(), poll).toBe('team');
    await page.keyboard.press('2');
    expect(await page.getByLabel('Technical problem').isChecked()).toBe(true);
    await submit(page);
    expect(await delivered(taskId, 'CategorizationResponse')).toEqual({ category: 'Technical problem', category_id: 'c2' });
    await page.getByText(/Nothing to do right now/).waitFor();
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('imageannotation: a box dragged on the canvas; a reload in the middle brings it back from the server; the callback has the box', async () => {
    const taskId = await liveTask('imageannotation', 'Draw a box around every **vehicle**.', {
      attachment: streetUrl,
      attachment_type: 'image',
      geometries: { box: { objects_to_annotate: ['car', 'truck'], min_width: 10, min_height: 10 } },
      layers: { boxes: [{ left: 20, top: 20, width: 100, height: 60, label: 'sign' }] },
    });
    const { page, foreign, problems } = await openApp('?heartbeat=1');
    await page.getByText('640 × 400 px').waitFor();
    await dragOnImage(page, 640, [200, 195], [385, 292]);
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);

    // The server has the draft once a heartbeat carried it; the browser's own copy is then removed,
    // so that what comes back after the reload is the server's.
    await page.waitForResponse(
      (r) => r.url().endsWith('/heartbeat') && (r.request().postDataJSON()?.draft?.annotations?.length ?? 0) === 1 && r.status() === 200,
      poll,
    );
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    await page.getByText('640 × 400 px').waitFor();
    await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);

    await submit(page);
    const response = await delivered(taskId, 'ImageAnnotationResponse');
    const [box, ...more] = response.annotations;
    expect(more).toEqual([]);
    expect(box).toMatchObject({ type: 'box', label: 'car' });
    for (const [key, want] of Object.entries({ left: 200, top: 195, width: 185, height: 97 }))
      expect(Math.abs(box[key] - want), key).toBeLessThan(2);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  onPglite('transcription and datacollection: fields and repeated rows typed; the callbacks carry them (and the time spent)', async () => {
    const transcription = await liveTask('transcription', 'Copy the invoice.', {
      attachment_type: 'image',
      attachment: streetUrl,
      fields: { invoice_number: 'The invoice number', total: 'The total due' },
      repeatable_fields: { item: 'The line item', unit: { description: 'The unit', choices: ['piece', 'hour'] } },
    });
    const { page, foreign, problems } = await openApp();
    await page.getByLabel('The invoice number').fill('INV-1041');
    await page.getByLabel('The total due').fill('1,250.00 EUR');
    await page.keyboard.press('Alt+Enter');
    await page.keyboard.type('Consulting');
    await page.getByLabel('The unit (row 1)').selectOption('hour');
    await page.getByRole('button', { name: /Add a row/ }).click();
    await page.getByLabel('The line item (row 2)').fill('Travel');
    await page.getByLabel('The unit (row 2)').selectOption('piece');
    await submit(page);
    expect(await delivered(transcription, 'TranscriptionResponse')).toEqual({
      fields: { invoice_number: 'INV-1041', total: '1,250.00 EUR' },
      repeatable_fields: [
        { item: 'Consulting', unit: 'hour' },
        { item: 'Travel', unit: 'piece' },
      ],
    });

    const collection = await liveTask('datacollection', 'Find the phone number.', {
      attachment_type: 'text',
      attachment: 'La Piazza, Main Street 1',
      fields: { phone: 'The phone number' },
    });
    // Waiting for work, the app's question is held by the server: the task made now answers it.
    await page.getByLabel('The phone number').fill('+1 555 0100');
    await submit(page);
    expect(await delivered(collection, 'DataCollectionResponse')).toEqual({
      fields: { phone: '+1 555 0100' },
      time_spent_in_seconds: expect.any(Number),
    });
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  onPglite('comparison: a choice by key and a field typed; the callback carries both', async () => {
    const taskId = await liveTask('comparison', 'Which photo shows the car better?', {
      attachment_type: 'image',
      attachments: [streetUrl, duskUrl],
      choices: ['The first is better', 'The second is better', 'They are equally good'],
      fields: { differences: 'Describe what differs between the two photos.' },
    });
    const { page, foreign, problems } = await openApp();
    await expect.poll(() => page.locator('.compare .attachment img').count(), poll).toBe(2);
    await page.keyboard.press('2');
    expect(await page.getByLabel('The second is better').isChecked()).toBe(true);
    await page.getByLabel('Describe what differs between the two photos.').fill('The second is cropped closer to the car.');
    await submit(page);
    expect(await delivered(taskId, 'ComparisonResponse')).toEqual({
      choice: 'The second is better',
      fields: { differences: 'The second is cropped closer to the car.' },
    });
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  onPglite(
    'textcollection: a form with a category, a condition and a number, and a form filled twice; the callback carries them',
    async () => {
      const taskId = await liveTask('textcollection', 'Note the episode and every product it advertises.', {
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
                required: true,
                choices: [
                  { label: 'Interview', value: 'interview' },
                  { label: 'Solo', value: 'solo' },
                ],
              },
              { type: 'text', field_id: 'guest_name', title: 'Guest name', conditions: [{ kind: 'interview' }] },
              { type: 'number', field_id: 'speakers', title: 'How many speakers?', min: 1, max: 10 },
            ],
          },
          {
            type: 'form',
            field_id: 'product_form',
            title: 'Product',
            max_responses_required: 2,
            fields: [
              { type: 'text', field_id: 'product_name', title: 'Product name', required: true },
              { type: 'select', field_id: 'currency', title: 'Currency', choices: ['EUR', 'USD'] },
            ],
          },
        ],
      });
      const { page, foreign, problems } = await openApp();
      const kind = page.getByRole('radiogroup', { name: 'Kind' });
      await kind.waitFor();
      await kind.getByLabel('Interview').check();
      await page.getByLabel('Guest name').fill('Ada');
      await page.getByLabel('How many speakers?').fill('2');
      await page.getByLabel('Product name (Product 1)').fill('Acme Anvil');
      await page.getByLabel('Currency (Product 1)').selectOption('EUR');
      await page.getByRole('button', { name: 'Add a filling: Product' }).click();
      await page.getByLabel('Product name (Product 2)').fill('Acme Rocket');
      await page.getByLabel('Currency (Product 2)').selectOption('USD');
      await submit(page);
      expect(await delivered(taskId, 'TextCollectionResponse')).toEqual({
        annotations: {
          episode: { kind: ['interview'], guest_name: 'Ada', speakers: '2' },
          product_form: [
            { product_name: 'Acme Anvil', currency: ['EUR'] },
            { product_name: 'Acme Rocket', currency: ['USD'] },
          ],
        },
      });
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    },
  );

  onPglite(
    'textcollection: the other field types (time range, category with subchoices, slider, boolean, date, select, ranking), the hypothesis pre-filled',
    async () => {
      const taskId = await liveTask('textcollection', 'Review the **episode** and its thumbnails.', {
        attachments: [
          { type: 'markdown', content: '**Show notes.** Episode 112 covers the *Champions League* final.' },
          { type: 'image', content: streetUrl },
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
            type: 'text',
            field_id: 'why_no_ads',
            title: 'How did you check there is none?',
            conditions: [{ contains_ads: { not: 'yes' } }],
          },
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
                  { label: 'Tennis', value: 'tennis' },
                ],
              },
              { label: 'News', value: 'news' },
            ],
          },
          { type: 'number', field_id: 'audio_quality', title: 'Audio quality', use_slider: true, min: 1, max: 5, step: 0.5 },
          { type: 'boolean', field_id: 'explicit', title: 'Explicit language' },
          {
            type: 'datetime',
            field_id: 'recorded_on',
            title: 'Recording date',
            include: ['year', 'month', 'day'],
            defaults: { year: 2026 },
          },
          { type: 'select', field_id: 'main_topic', title: 'The main topic', choices_from_field: 'topic' },
          {
            type: 'ranking_order',
            field_id: 'best_thumbnail',
            title: 'Rank the attachments',
            first_label: 'Most engaging',
            last_label: 'Least engaging',
            num_items_to_rank: 2,
          },
          { type: 'text', field_id: 'summary', title: 'Summary', max_characters: 500 },
        ],
        hypothesis: {
          annotations: {
            contains_ads: { type: 'category', field_id: 'contains_ads', response: [['no']] },
            summary: { type: 'text', field_id: 'summary', response: ['The hosts review the final.'] },
          },
        },
      });
      const { page, foreign, problems } = await openApp();
      const ads = page.getByRole('radiogroup', { name: 'Does the episode contain an advertisement?' });
      await ads.waitFor();
      expect(await ads.getByLabel('No').isChecked()).toBe(true);
      expect(await page.getByLabel('Summary').inputValue()).toBe('The hosts review the final.');
      await ads.getByLabel('Yes').check();
      const range = page.getByRole('group', { name: 'Where is the advertisement?' });
      await range.getByLabel('from (s)').fill('750');
      await range.getByLabel('to (s)').fill('810');
      const topic = page.getByRole('group', { name: 'Topic' });
      await topic.getByText('Sports').focus();
      await page.keyboard.press('Enter');
      await topic.getByLabel('Football').check();
      await topic.getByLabel('News').check();
      await page.getByLabel('Audio quality').focus();
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
      await page.getByRole('radiogroup', { name: 'Explicit language' }).getByLabel('No').check();
      const date = page.getByRole('group', { name: 'Recording date' });
      await date.getByLabel('month').fill('11');
      await date.getByLabel('day').fill('21');
      await page.getByLabel('The main topic').selectOption({ label: 'news' });
      await page.locator('.ranking li', { hasText: 'Attachment 3' }).focus();
      await page.keyboard.press('Alt+ArrowUp');
      await page.keyboard.press('Alt+ArrowUp');
      await submit(page);
      expect(await delivered(taskId, 'TextCollectionResponse')).toEqual({
        annotations: {
          contains_ads: ['yes'],
          ad_segment: { from_seconds: 750, to_seconds: 810 },
          topic: ['football', 'news'],
          audio_quality: '2.5',
          explicit: false,
          recorded_on: { year: 2026, month: 11, day: 21 },
          main_topic: ['news'],
          best_thumbnail: [2, 0],
          summary: 'The hosts review the final.',
        },
      });
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    },
  );

  onPglite(
    'a task the customer cancels while the person works on it: the next heartbeat ends it with a clear message, nothing is submitted, no callback',
    async () => {
      const taskId = await liveTask('categorization', 'Which **team** should answer this message?', {
        attachment_type: 'text',
        attachment: 'Please close my account.',
        categories: ['Billing', 'Technical problem', 'Account access'],
      });
      const { page, problems } = await openApp('?heartbeat=1');
      await page.locator('.instruction').waitFor();
      await page.keyboard.press('3');
      const canceled = await customer('POST', `/v1/task/${taskId}/cancel`);
      expect(canceled.status, canceled.text).toBe(200);
      await page.locator('#lease-lost').waitFor(poll);
      expect(await page.locator('#lease-lost').textContent()).toContain('The customer canceled this task.');
      expect(await page.getByRole('button', { name: /Submit/ }).isDisabled()).toBe(true);
      const submits: string[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/submit')) submits.push(r.url());
      });
      await page.keyboard.press('Control+Enter');
      await new Promise((r) => setTimeout(r, 200));
      expect(submits).toEqual([]);
      expect((await customer('GET', `/v1/task/${taskId}`)).body).toMatchObject({ status: 'canceled' });
      expect(received.filter((r) => r.body?.task_id === taskId)).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    },
  );

  onPglite(
    'two tabs on one task: the second resumes it with the draft the first saved; after the second submits, the first is told the assignment is closed',
    async () => {
      const taskId = await liveTask('categorization', 'Which **team** should answer this message?', {
        attachment_type: 'text',
        attachment: 'My password reset mail never arrives.',
        categories: ['Billing', 'Technical problem', 'Account access'],
      });
      const first = await openApp('?heartbeat=1');
      await first.page.locator('.instruction').waitFor();
      await first.page.keyboard.press('3');
      await first.page.waitForResponse(
        (r) => r.url().endsWith('/heartbeat') && r.request().postDataJSON()?.draft?.category === 'Account access',
        poll,
      );
      // The second tab: a tab of its own (its own session and storage), the same worker.
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const other = await context.newPage();
      await other.goto(`${server.url}/label/?heartbeat=1`);
      await logInThroughForm(other, worker.email, worker.password, 'Ana Lima');
      await other.locator('.instruction').waitFor();
      expect(await other.getByLabel('Account access').isChecked()).toBe(true);
      await submit(other);
      expect(await delivered(taskId, 'CategorizationResponse')).toEqual({ category: 'Account access' });
      await first.page.locator('#lease-lost').waitFor(poll);
      const told = await first.page.locator('#lease-lost').textContent();
      await context.close();
      await first.page.close();
      expect(told).toContain('This assignment is already closed.');
      expect(first.problems).toEqual([]);
    },
  );

  it('review: a reject with a remark on the shape, seen on that shape in the redo; a fix reaches the callback; history and figures show it', async () => {
    const project = `reviewed-${db}`;
    const made = await customer('POST', '/v1/projects', { json: { type: 'imageannotation', name: project } });
    expect(made.status, made.text).toBe(200);
    const [rui, sofia] = await Promise.all([
      createWorker(server, { accountId: server.dev.account_id, displayName: 'Rui Costa', roles: ['reviewer'] }),
      createWorker(server, { accountId: server.dev.account_id, displayName: 'Sofia Reis', roles: ['reviewer'] }),
    ]);
    const staffed = await customer('PUT', `/v1/projects/${project}/staffing`, {
      json: { attempt: [worker.workerId], review: [rui.workerId, sofia.workerId], review_sampling: { new_worker_tasks: 5, rate: 0 } },
    });
    expect(staffed.status, staffed.text).toBe(200);
    const taskId = await vehicleBoxes(project);

    // Ana draws a box that cuts off the wheels, and submits: the answer waits for its review.
    const ana = await openApp();
    await ana.page.getByText('640 × 400 px').waitFor();
    await dragOnImage(ana.page, 640, [200, 195], [385, 262]);
    await expect.poll(() => ana.page.locator('.shapes li').count(), poll).toBe(1);
    const uuid = await ana.page.locator('.shapes li').first().getAttribute('data-uuid');
    await submit(ana.page);
    await ana.page.getByText(/Nothing to do right now/).waitFor();
    expect((await customer('GET', `/v1/task/${taskId}`)).body.status).toBe('pending');

    // Rui reviews: the answer is shown read-only (no drawing tool), he clicks the box, writes a
    // remark that is pinned to it, and rejects.
    const rui1 = await openApp('', { worker: rui, name: 'Rui Costa' });
    await rui1.page.locator('#review-title').waitFor();
    await rui1.page.getByText('640 × 400 px').waitFor();
    expect(await rui1.page.locator('button[data-tool="box"]').count()).toBe(0);
    await clickOnImage(rui1.page, 640, [290, 230]);
    await expect.poll(() => rui1.page.getByLabel('About').locator('option:checked').textContent(), poll).toBe('Shape 1: car box');
    await rui1.page.getByLabel('Kind of mistake').selectOption('wrong_geometry');
    await rui1.page.getByLabel(/^Remark/).fill('The box cuts off the wheels.');
    await rui1.page.keyboard.press('Enter');
    await rui1.page.keyboard.press('Escape');
    await rui1.page.locator('.pin', { hasText: 'The box cuts off the wheels.' }).waitFor();
    await screenshot(rui1.page, 'review');
    const decided = rui1.page.waitForResponse((r) => r.url().endsWith('/review'));
    await rui1.page.keyboard.press('Shift+X');
    const rejected = await decided;
    expect(rejected.status(), await rejected.text()).toBe(200);
    expect(rejected.request().postDataJSON()).toMatchObject({
      result: 'rejected',
      feedback_items: [{ scope: { region_id: uuid }, category: 'wrong_geometry', text: 'The box cuts off the wheels.' }],
    });
    expect(rui1.problems).toEqual([]);
    await rui1.page.close();

    // Ana's redo: the remark is listed, and shown on the box itself; she submits it again as it is.
    await ana.page.keyboard.press('N');
    await ana.page.locator('#redo-feedback').waitFor(poll);
    expect(await ana.page.locator('#redo-feedback').textContent()).toContain('Shape 1: car box: The box cuts off the wheels.');
    await ana.page.getByText('640 × 400 px').waitFor();
    expect(await ana.page.locator(`.pin[data-uuid="${uuid}"]`).textContent()).toContain(
      'Wrong shape or position: The box cuts off the wheels.',
    );
    expect(await ana.page.locator(`.shapes li[data-uuid="${uuid}"] .pin-note`).textContent()).toContain('The box cuts off the wheels.');
    await screenshot(ana.page, 'redo-feedback');
    await submit(ana.page);

    // Sofia fixes it: Shift+F makes the answer editable; she selects the box and makes it a truck.
    const sofia1 = await openApp('', { worker: sofia, name: 'Sofia Reis' });
    await sofia1.page.locator('#review-title').waitFor();
    await sofia1.page.getByText('640 × 400 px').waitFor();
    await sofia1.page.keyboard.press('Shift+F');
    await sofia1.page.locator('button[data-tool="box"]').waitFor();
    await sofia1.page.getByText('640 × 400 px').waitFor();
    await sofia1.page.keyboard.press(']');
    await sofia1.page.keyboard.press('2');
    await expect.poll(() => sofia1.page.locator('.shapes li').first().textContent(), poll).toMatch(/^truck/);
    const fixed = sofia1.page.waitForResponse((r) => r.url().endsWith('/review'));
    await sofia1.page.keyboard.press('Control+Enter');
    expect((await fixed).status()).toBe(200);
    const response = await delivered(taskId, 'ImageAnnotationResponse');
    expect(response.annotations).toEqual([expect.objectContaining({ uuid, type: 'box', label: 'truck' })]);
    expect(sofia1.problems).toEqual([]);
    await sofia1.page.close();

    // Ana's history lists the rejected attempt with the remark and the redo the reviewer fixed; her
    // figures are the server's.
    await ana.page.keyboard.press('Shift+H');
    const history = ana.page.locator('#history tbody tr');
    await expect.poll(() => history.count(), poll).toBeGreaterThanOrEqual(2);
    const [redo, attempt] = await Promise.all([history.nth(0).textContent(), history.nth(1).textContent()]);
    expect(redo).toMatch(
      /imageannotation.*redo.*reviewed.*After a rejection:Wrong shape or position — Region .+: The box cuts off the wheels\.fixed/,
    );
    expect(attempt).toMatch(
      /imageannotation.*attempt.*reviewed.*rejected.*Wrong shape or position — Region .+: The box cuts off the wheels\./,
    );
    await ana.page.locator('#stats').waitFor();
    // A session of its own: Ana's first one has ended, as her eleventh log-in of this file made room (10 at most).
    const token = await logInOverHttp(server, worker.email, worker.password);
    const figures = await fetch(`${server.url}/worker/v1/stats`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
    expect(figures.counts.fixed).toBeGreaterThanOrEqual(1);
    expect(figures.counts.rejected).toBeGreaterThanOrEqual(1);
    for (const k of ['submitted', 'fixed', 'rejected'])
      expect(await ana.page.locator(`#stats [data-count="${k}"]`).textContent(), k).toBe(String(figures.counts[k]));
    expect(await ana.page.locator('#stats').textContent()).toContain(project);
    await screenshot(ana.page, 'history');
    expect(ana.problems).toEqual([]);
    await ana.page.close();
  });

  onPglite(
    'a final review (reviewers rejected the work twice) offers accept and fix, no reject; the accept reaches the callback',
    async () => {
      const project = `final-${db}`;
      expect((await customer('POST', '/v1/projects', { json: { type: 'categorization', name: project } })).status).toBe(200);
      const [bo, rita] = await Promise.all([
        createWorker(server, { accountId: server.dev.account_id }),
        createWorker(server, { accountId: server.dev.account_id, displayName: 'Rita Alves', roles: ['reviewer'] }),
      ]);
      const staffed = await customer('PUT', `/v1/projects/${project}/staffing`, {
        json: { attempt: [bo.workerId], review: [rita.workerId], review_sampling: { new_worker_tasks: 5, rate: 0 } },
      });
      expect(staffed.status, staffed.text).toBe(200);
      const taskId = await liveTask('categorization', 'Which **team** should answer this message?', {
        project,
        attachment_type: 'text',
        attachment: 'My invoice is wrong.',
        categories: ['Billing', 'Technical problem'],
      });
      // Through the worker API: Bo answers, Rita rejects, twice.
      const as = (token: string) => async (path: string, body: unknown) =>
        (await fetch(`${server.url}/worker/v1${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then((r) => r.json())) as any;
      const [boCall, ritaCall] = [as(bo.token), as(rita.token)];
      for (let round = 0; round < 3; round++) {
        const a = await boCall('/assignments/next', {});
        expect(a.task.task_id).toBe(taskId);
        await boCall(`/assignments/${a.assignment_id}/submit`, {
          lease_token: a.lease_token,
          response: { category: 'Billing' },
          active_ms: 1000,
        });
        if (round === 2) break;
        const r = await ritaCall('/assignments/next', { role: 'review' });
        const decided = await ritaCall(`/assignments/${r.assignment_id}/review`, {
          lease_token: r.lease_token,
          result: 'rejected',
          feedback_items: [{ category: 'other', text: 'Check again.' }],
          active_ms: 1000,
        });
        expect(decided.status).toBe('reviewed');
      }

      const { page, problems } = await openApp('', { worker: rita, name: 'Rita Alves' });
      await page.locator('#review-title').waitFor();
      await page.getByText(/This review is final/).waitFor();
      expect(await page.getByRole('button', { name: /^Reject/ }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /^Accept/ }).count()).toBe(1);
      let sent = 0;
      page.on('request', (r) => void (r.url().endsWith('/review') && sent++));
      await page.keyboard.press('Shift+X');
      await page.keyboard.press('Shift+A');
      await until(() => sent > 0, 'the decision');
      expect(await delivered(taskId, 'CategorizationResponse')).toEqual({ category: 'Billing' });
      expect(sent).toBe(1);
      expect(problems).toEqual([]);
      await page.close();
    },
  );

  onPglite(
    'review of three attempts (overlap 3): side by side, the reviewer picks one, fixes it, and the callback has the fix',
    async () => {
      const project = `overlap-${db}`;
      expect((await customer('POST', '/v1/projects', { json: { type: 'imageannotation', name: project } })).status).toBe(200);
      const policy = await customer('PUT', `/v1/projects/${project}/quality_policy`, {
        json: { overlap: 3, consensus: { threshold: 0.9, max_extra: 0 } },
      });
      expect(policy.status, policy.text).toBe(200);
      const labelers = await Promise.all([0, 1, 2].map(() => createWorker(server, { accountId: server.dev.account_id })));
      const marta = await createWorker(server, { accountId: server.dev.account_id, displayName: 'Marta Sousa', roles: ['reviewer'] });
      const staffed = await customer('PUT', `/v1/projects/${project}/staffing`, {
        json: { attempt: labelers.map((w) => w.workerId), review: [marta.workerId] },
      });
      expect(staffed.status, staffed.text).toBe(200);
      const taskId = await vehicleBoxes(project);
      // Three workers answer through the worker API, and disagree: a car, a truck a little larger, a car elsewhere.
      const boxes = [
        { uuid: '0b4f3c1e-0000-4000-8000-000000000001', label: 'car', left: 200, top: 200, width: 180, height: 70 },
        { uuid: '0b4f3c1e-0000-4000-8000-000000000002', label: 'truck', left: 190, top: 185, width: 200, height: 100 },
        { uuid: '0b4f3c1e-0000-4000-8000-000000000003', label: 'car', left: 20, top: 30, width: 120, height: 60 },
      ];
      for (const [i, w] of labelers.entries()) {
        const call = (path: string, json: unknown) =>
          fetch(`${server.url}/worker${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(json),
          }).then(async (r) => ({ status: r.status, body: await r.json() }));
        const next = await call('/v1/assignments/next', { project });
        expect(next.body.task?.task_id).toBe(taskId);
        const done = await call(`/v1/assignments/${next.body.assignment_id}/submit`, {
          lease_token: next.body.lease_token,
          response: { annotations: [{ type: 'box', ...boxes[i] }] },
          active_ms: 20_000 + i * 5000,
        });
        expect(done.status, JSON.stringify(done.body)).toBe(200);
      }
      expect((await customer('GET', `/v1/task/${taskId}`)).body.status).toBe('pending');

      // Marta sees the three attempts side by side, each read-only with its box; she picks the second.
      const review = await openApp('', { worker: marta, name: 'Marta Sousa' });
      const { page } = review;
      await page.locator('#attempts-intro').waitFor(poll);
      const columns = page.locator('.attempt');
      expect(await columns.count()).toBe(3);
      await expect.poll(() => page.getByText('640 × 400 px').count(), poll).toBe(3);
      for (const [i, b] of boxes.entries())
        expect(await columns.nth(i).locator('.shapes li').first().textContent()).toMatch(new RegExp(`^${b.label}`));
      expect(await page.locator('button[data-tool="box"]').count()).toBe(0);
      for (const column of [0, 1, 2]) {
        const pos = await columns.nth(column).boundingBox();
        expect(pos!.x + pos!.width, 'every attempt fits at 1280 × 800').toBeLessThanOrEqual(1280);
      }
      await page.getByRole('button', { name: 'Pick attempt 2' }).click();
      await page.getByRole('button', { name: /^Attempt 2 picked/ }).waitFor();
      expect(await page.locator('.attempt.picked').getAttribute('data-attempt')).toBe('2');
      await screenshot(page, 'review-attempts');
      // A reload keeps the pick.
      await page.reload();
      await page.getByRole('button', { name: /^Attempt 2 picked/ }).waitFor(poll);

      // She fixes it: the truck was a car. Shift+F makes attempt 2 editable; she selects its box and relabels it.
      await page.keyboard.press('Shift+F');
      await page.locator('#fixing-attempt').waitFor();
      await page.locator('button[data-tool="box"]').waitFor();
      await page.getByText('640 × 400 px').waitFor();
      await page.keyboard.press(']');
      await page.keyboard.press('1');
      await expect.poll(() => page.locator('.shapes li').first().textContent(), poll).toMatch(/^car/);
      // A reload in the middle of the fix keeps it, and what it is a fix of.
      await page.reload();
      await page.locator('#fixing-attempt', { hasText: 'Fixing attempt 2' }).waitFor(poll);
      await page.getByText('640 × 400 px').waitFor();
      await expect.poll(() => page.locator('.shapes li').first().textContent(), poll).toMatch(/^car/);
      const sent = page.waitForResponse((r) => r.url().endsWith('/review'));
      await page.keyboard.press('Control+Enter');
      const decided = await sent;
      expect(decided.status(), await decided.text()).toBe(200);
      expect(decided.request().postDataJSON()).toMatchObject({ result: 'fixed', attempt: 2 });
      const response = await delivered(taskId, 'ImageAnnotationResponse');
      expect(response.annotations).toEqual([{ ...boxes[1], type: 'box', label: 'car' }]);
      const who = await customer('GET', `/v1/task/${taskId}/assignments`);
      expect(who.body.docs.map((d: { role: string; review_result?: string }) => [d.role, d.review_result])).toEqual([
        ['attempt', undefined],
        ['attempt', 'fixed'],
        ['attempt', undefined],
        ['review', 'fixed'],
      ]);
      expect(review.problems).toEqual([]);
      expect(review.foreign).toEqual([]);
      await page.close();
    },
  );

  onPglite(
    'a polygon half drawn comes back after a reload; a second tab of the browser sees the task held and takes it over with the work; nothing is sent from the first after',
    async () => {
      const taskId = await liveTask('imageannotation', 'Outline the **car**.', {
        attachment: streetUrl,
        attachment_type: 'image',
        geometries: { polygon: { objects_to_annotate: ['car'] } },
      });
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const first = await openApp('?heartbeat=1', undefined, context);
      await first.page.getByText('640 × 400 px').waitFor();
      await clickOnImage(first.page, 640, [200, 200]);
      await clickOnImage(first.page, 640, [380, 200]);
      await first.page.reload();
      await first.page.getByText('The polygon you were drawing is back: go on.').waitFor(poll);
      await clickOnImage(first.page, 640, [380, 290]);

      const second = await openApp('?heartbeat=1', undefined, context);
      await second.page.locator('#held-elsewhere').waitFor(poll);
      expect(await second.page.locator('#held-elsewhere').textContent()).toContain('is open in another tab of this browser');
      const late: string[] = [];
      await second.page.keyboard.press('T');
      await first.page.getByText(/was taken over in another tab/).waitFor(poll);
      first.page.on('request', (r) => late.push(r.url()));
      await second.page.getByText('The polygon you were drawing is back: go on.').waitFor(poll);
      await clickOnImage(second.page, 640, [200, 290]);
      await clickOnImage(second.page, 640, [200, 200]);
      await expect.poll(() => second.page.locator('.shapes li').count(), poll).toBe(1);
      await submit(second.page);
      const response = await delivered(taskId, 'ImageAnnotationResponse');
      const [polygon] = response.annotations;
      expect(polygon.vertices).toHaveLength(4);
      const want = [
        [200, 200],
        [380, 200],
        [380, 290],
        [200, 290],
      ];
      polygon.vertices.forEach((v: { x: number; y: number }, i: number) => {
        expect(Math.abs(v.x - (want[i]?.[0] ?? 0))).toBeLessThan(2);
        expect(Math.abs(v.y - (want[i]?.[1] ?? 0))).toBeLessThan(2);
      });
      // The first tab sent nothing after it stepped back (it was told before the second submitted).
      await new Promise((r) => setTimeout(r, 1500));
      expect(late).toEqual([]);
      expect([...first.problems, ...second.problems]).toEqual([]);
      await context.close();
    },
  );

  onPglite('the lease lapses: the app says so, sends nothing after, and the work comes back with the task', async () => {
    const taskId = await liveTask('categorization', 'Which **team** should answer this message?', {
      attachment_type: 'text',
      attachment: 'My invoice shows the wrong address.',
      categories: ['Billing', 'Technical problem', 'Account access'],
    });
    const { page, problems } = await openApp('?heartbeat=1');
    await page.locator('.instruction').waitFor();
    await page.keyboard.press('1');
    await page.waitForResponse((r) => r.url().endsWith('/heartbeat') && r.request().postDataJSON()?.draft?.category === 'Billing', poll);
    // The sweeper runs as it would an hour later: the lease has lapsed, the task is back in the queue.
    expect(await expireLapsedLeases(server.uow, new Date(Date.now() + 3_600_000))).toBeGreaterThanOrEqual(1);
    await page.locator('#lease-lost').waitFor(poll);
    expect(await page.locator('#lease-lost').textContent()).toContain('Your lease on this task was lost');
    expect(await page.locator('#lease').textContent()).toBe('lost');
    const sent: string[] = [];
    page.on('request', (r) => sent.push(r.url()));
    await page.keyboard.press('Control+Enter');
    await page.keyboard.press('Shift+R');
    await new Promise((r) => setTimeout(r, 1500));
    expect(sent).toEqual([]);
    // Nothing lost: the task comes back to Ana with her draft, and she submits it.
    await page.keyboard.press('N');
    await page.locator('.instruction').waitFor();
    await expect.poll(() => page.getByLabel('Billing').isChecked(), poll).toBe(true);
    await submit(page);
    expect(await delivered(taskId, 'CategorizationResponse')).toEqual({ category: 'Billing' });
    expect(problems).toEqual([]);
    await page.close();
  });

  onPglite(
    'namedentityrecognition: spans selected with the mouse after an emoji, a relationship; the callback counts code points',
    async () => {
      const text = 'Hello 👋! Andre\u0301 Müller works for Acme Corp.';
      const taskId = await liveTask('namedentityrecognition', 'Label the people and organizations, and how they relate.', {
        text,
        labels: [
          { name: 'PERSON', display_name: 'Person' },
          { name: 'ORG', display_name: 'Organization' },
        ],
        relationships: [{ name: 'works_for', display_name: 'works for', is_directed: true, source_label: 'PERSON', target_label: 'ORG' }],
      });
      const { page, foreign, problems } = await openApp();
      await page.locator('.ner-text').waitFor();
      const drag = async (piece: string) => {
        const at = await whereIs(page, piece);
        await page.mouse.move(at.x1, at.y1);
        await page.mouse.down();
        await page.mouse.move(at.x2, at.y2, { steps: 6 });
        await page.mouse.up();
      };
      const name = 'Andre\u0301 Müller';
      await drag(name);
      await expect.poll(() => page.locator('.spans li[data-span]').count(), poll).toBe(1);
      await page.keyboard.press('Escape');
      await page.keyboard.press('2');
      await drag('Acme Corp');
      await expect.poll(() => page.locator('.spans li[data-span]').count(), poll).toBe(2);
      await page.getByLabel('Relationship from').selectOption('a1');
      await page.getByLabel('Relationship kind').selectOption('works_for');
      await page.getByLabel('Relationship to').selectOption('a2');
      await page.getByRole('button', { name: 'Add the relationship' }).click();
      await submit(page);
      const codePoints = (s: string) => Array.from(s).length;
      const span = (piece: string) => {
        const start = codePoints(text.slice(0, text.indexOf(piece)));
        return { start, end: start + codePoints(piece), text: piece };
      };
      expect(await delivered(taskId, 'NamedEntityRecognitionResponse')).toEqual({
        annotations: [
          { id: 'a1', ...span(name), label: 'PERSON' },
          { id: 'a2', ...span('Acme Corp'), label: 'ORG' },
        ],
        relationships: [{ id: 'r1', source_ref: 'a1', target_ref: 'a2', name: 'works_for' }],
      });
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    },
  );

  onPglite(
    'lidarsegmentation: a lasso around the car and one around the road after turning the view; the callback labels exactly those points',
    async () => {
      // The customer's frame file, from storage of its own on loopback (no CORS: the server passes it on).
      const scene = lidarFrame([
        { from: [-14, -6, 0], to: [-4, 6, 0.05], count: 1200 },
        { from: [6, -1, 0.3], to: [10, 1, 1.6], count: 300 },
        { from: [-1, 14, 0], to: [1, 16, 5], count: 200 },
      ]);
      const [road, car] = scene.ranges as [[number, number], [number, number]];
      /** Who asked the storage for the frame: a browser says who it is, the server sends no user agent. */
      const fetchedBy: string[] = [];
      const storage = createServer((req, res) => {
        fetchedBy.push(req.headers['user-agent'] ? 'browser' : 'server');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ points: scene.points }));
      });
      await new Promise<void>((r) => storage.listen(0, '127.0.0.1', r));
      const frameUrl = `http://127.0.0.1:${(storage.address() as { port: number }).port}/drive-7/0000.json`;
      try {
        const taskId = await liveTask('lidarsegmentation', 'Label the **road** and the vehicles.', {
          attachments: [frameUrl],
          labels: ['road', 'vehicle', 'vegetation'],
        });
        const { page, foreign, problems } = await openApp();
        await page.locator('.lidar-player .frame-text').filter({ hasText: '1,700 points' }).waitFor(poll);
        await expect.poll(() => page.locator('.lidar-stage').getAttribute('data-matrix'), poll).toBeTruthy();
        await page.keyboard.press('2');
        await lassoAround(page, scene.points, car);
        await expect.poll(() => page.locator('.lidar-counts').textContent(), poll).toContain('vehicle: 300');
        // Turned a quarter of a turn with the keys, zoomed out once: the road from another side.
        const before = await page.locator('.lidar-stage').getAttribute('data-matrix');
        for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
        await page.keyboard.press('-');
        await expect.poll(() => page.locator('.lidar-stage').getAttribute('data-matrix'), poll).not.toBe(before);
        await page.keyboard.press('1');
        await lassoAround(page, scene.points, road);
        await expect.poll(() => page.locator('.lidar-counts').textContent(), poll).toContain('road: 1,200');
        await submit(page);
        const labels = scene.points.map((_, i) => (i >= road[0] && i < road[1] ? 0 : i >= car[0] && i < car[1] ? 1 : -1));
        expect(await delivered(taskId, 'LidarSegmentationResponse')).toEqual({
          labels: ['road', 'vehicle', 'vegetation'],
          frames: [{ frame: 0, point_labels: labels }],
        });
        // The frame file is the work: the server fetched it for the page, which asked no other origin.
        expect(foreign).toEqual([]);
        expect(fetchedBy).toEqual(['server']);
        expect(problems).toEqual([]);
        await page.close();
      } finally {
        await new Promise((r) => storage.close(r));
      }
    },
  );

  onPglite(
    'videoplaybackannotation: a box drawn on the first frame and moved on the last; the callback has it interpolated in between, and the event',
    async () => {
      const media = new URL(streetUrl).origin;
      const taskId = await liveTask('videoplaybackannotation', 'Track the **car** and mark the lane change.', {
        attachments: [0, 1, 2, 3, 4].map((f) => `${media}/drive-${f}.svg`),
        attachment_type: 'image',
        frame_rate: 2,
        geometries: { box: { objects_to_annotate: ['car', 'truck'], min_width: 5, min_height: 5 } },
        events_to_annotate: ['lane change'],
      });
      const { page, foreign, problems } = await openApp();
      await page.getByText('320 × 200 px, 5 frames at 2 per second').waitFor();
      // Frame 0: the car is at (40, 120), 80 × 40; on the last frame (End) at (200, 120).
      await dragOnImage(page, 320, [40, 120], [120, 160]);
      await expect.poll(() => page.locator('.shapes li').count(), poll).toBe(1);
      await page.keyboard.press('End');
      await expect.poll(() => page.locator('.frame-text').textContent(), poll).toMatch(/^Frame 4 of 4/);
      await page.keyboard.press('V');
      await dragOnImage(page, 320, [80, 140], [240, 140]);
      await expect.poll(() => page.locator('.frame-text').textContent(), poll).toContain('keyframe');
      // The lane change: M on frame 1, M on frame 3.
      await page.keyboard.press('Home');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('M');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('M');
      await page.locator('.events li').first().waitFor();
      await submit(page);
      const response = await delivered(taskId, 'VideoPlaybackAnnotationResponse');
      expect(response.events).toEqual([{ label: 'lane change', start: 1, end: 3 }]);
      const [track, ...more] = response.annotations;
      expect(more).toEqual([]);
      expect(track).toMatchObject({ type: 'box', label: 'car' });
      expect(track.frames.map((f: any) => f.frame)).toEqual([0, 1, 2, 3, 4]);
      // The middle frame was never touched: its box is halfway, on the car.
      const middle = track.frames[2];
      for (const [key, want] of Object.entries({ left: 120, top: 120, width: 80, height: 40 }))
        expect(Math.abs(middle[key] - want), `${key}: ${middle[key]}`).toBeLessThanOrEqual(1.5);
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    },
  );

  onPglite(
    'audiotranscription: two segments set by clicks on the waveform and Alt+Enter, typed; the callback has the transcript and the times',
    async () => {
      const taskId = await liveTask('audiotranscription', 'Write down what is said.', {
        attachment_type: 'audio',
        attachment: `${new URL(streetUrl).origin}/speech.wav`,
        language: 'en',
      });
      const { page, foreign, problems } = await openApp();
      await expect.poll(() => page.locator('.audio-time').textContent(), poll).toBe('0:00.00 / 0:03.00');
      const box = await page.getByRole('slider', { name: 'Waveform: click to seek' }).boundingBox();
      if (!box) throw new Error('no waveform');
      const seconds = () => page.locator('audio').evaluate((el: HTMLAudioElement) => el.currentTime);
      await page.mouse.click(box.x + box.width * 0.5, box.y + box.height / 2);
      await expect.poll(seconds, poll).toBeCloseTo(1.5, 1);
      await page.keyboard.press('Alt+Enter');
      await page.keyboard.type('Good morning.');
      await page.mouse.click(box.x + box.width * 0.9, box.y + box.height / 2);
      await expect.poll(seconds, poll).toBeCloseTo(2.7, 1);
      await page.keyboard.press('Alt+Enter');
      await page.keyboard.type('How are you?');
      // Its server answers byte ranges (the media route passes them on): the audio plays from the
      // route's address, not from a copy in memory; the customer's host saw the server, never the page.
      const playing = new URL(await page.locator('audio').evaluate((el: HTMLAudioElement) => el.src));
      expect(`${playing.origin}${playing.pathname}`).toMatch(new RegExp(`^${server.url}/worker/v1/assignments/asg_[0-9a-f]{24}/media$`));
      expect(playing.searchParams.get('url')).toBe(`${new URL(streetUrl).origin}/speech.wav`);
      await submit(page);
      const response = await delivered(taskId, 'AudioTranscriptionResponse');
      expect(response.transcript).toBe('Good morning. How are you?');
      const [first, second, ...more] = response.segments;
      expect(more).toEqual([]);
      expect(first).toMatchObject({ start_seconds: 0, text: 'Good morning.' });
      expect(Math.abs(first.end_seconds - 1.5)).toBeLessThan(0.05);
      expect(second).toMatchObject({ start_seconds: first.end_seconds, text: 'How are you?' });
      expect(Math.abs(second.end_seconds - 2.7)).toBeLessThan(0.05);
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    },
  );
});

// The painting and document players on PGlite (a server of their own, so that this block stands
// apart from the one above).
describe('the segmentation and document players against the real server', () => {
  beforeAll(() => startOn('pglite'));
  afterAll(() => server?.close());

  it('segmentannotation: a road and a car painted with the brush; the callback carries PNG masks of exactly those pixels', async () => {
    const taskId = await liveTask('segmentannotation', 'Paint the road and each car; leave the rest.', {
      attachment: streetUrl,
      attachment_type: 'image',
      labels: ['sky', 'road'],
      instance_labels: ['car'],
      allow_unlabeled: true,
    });
    const { page, foreign, problems } = await openApp();
    await page.getByText('640 × 400 px').waitFor();
    await page.keyboard.press('2');
    await dragOnImage(page, 640, [40, 330], [600, 330]);
    await page.keyboard.press('3');
    await dragOnImage(page, 640, [230, 230], [350, 230]);
    await expect.poll(() => page.locator('.seg-classes').textContent(), poll).toContain('car #1');
    await submit(page);
    const response = await delivered(taskId, 'SegmentAnnotationResponse');
    expect(response.instances).toEqual({ car: 1 });
    expect(response.labelMapping).toMatchObject({ sky: { index: 1 }, road: { index: 2 }, car: [{ index: 3 }] });
    const seg = readSegmentation(response);
    expect(seg.problems).toEqual([]);
    expect([seg.width, seg.height]).toEqual([640, 400]);
    // Nothing is sky; the rest is unlabeled, in its own mask.
    expect(seg.counts.sky).toBeUndefined();
    for (const [x, y, name] of [
      [10, 10, ''],
      [320, 330, 'road'],
      [320, 345, ''],
      [290, 230, 'car#0'],
      [290, 250, ''],
    ] as const)
      expect(seg.classAt(x, y), `${x}, ${y}`).toBe(name);
    const road = seg.bounds('road');
    expect(Math.abs((road?.left ?? 0) - 32)).toBeLessThanOrEqual(3);
    expect(Math.abs((road?.right ?? 0) - 608)).toBeLessThanOrEqual(3);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('documenttranscription: the two pages of a PDF drawn by pdf.js, a region on each, their text typed; the callback has them with their pages', async () => {
    // No attachment_type: a PDF, the contract's default.
    const taskId = await liveTask('documenttranscription', 'Transcribe the reference and the signature.', {
      attachment: letterUrl,
      features: [
        { label: 'reference', type: 'line' },
        { label: 'signature', type: 'line', description: 'Who signed the letter.' },
      ],
    });
    const { page, foreign, problems } = await openApp();
    await page.getByText('Page 1 of 2').waitFor();
    await page.getByText('400 × 300 px').waitFor();
    const text = page.getByRole('region', { name: 'Attributes' }).getByLabel(/^Text/);
    await dragOnImage(page, 400, [36, 24], [200, 46]);
    await text.fill('Reference: HT-7731');
    await page.keyboard.press('Escape');
    await page.keyboard.press('PageDown');
    await page.getByText('Page 2 of 2').waitFor();
    await page.getByText('400 × 300 px').waitFor();
    await page.keyboard.press('2');
    await dragOnImage(page, 400, [36, 184], [180, 206]);
    await text.fill('Yours, Ana Lima');
    await submit(page);
    const response = await delivered(taskId, 'DocumentTranscriptionResponse');
    const [reference, signature, ...more] = response.annotations;
    expect(more).toEqual([]);
    expect(reference).toMatchObject({ type: 'line', label: 'reference', text: 'Reference: HT-7731', page: 1 });
    expect(signature).toMatchObject({ type: 'line', label: 'signature', text: 'Yours, Ana Lima', page: 2 });
    for (const [key, want] of Object.entries({ left: 36, top: 24, width: 164, height: 22 }))
      expect(Math.abs(reference[key] - want), key).toBeLessThan(2);
    for (const [key, want] of Object.entries({ left: 36, top: 184, width: 144, height: 22 }))
      expect(Math.abs(signature[key] - want), key).toBeLessThan(2);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
