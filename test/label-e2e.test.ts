// The labeling app end to end (issue 20): the real server in this process (PGlite), a customer's
// callback receiver on loopback, and a worker of the customer's own workforce. For every task type
// that has a player, the customer creates a LIVE task with a callback_url; a scripted person opens
// /label/ in Chromium, logs in through the form, takes the task, does the work with the mouse and
// the keyboard, and submits. Then: the receiver got exactly one callback for the task, valid for the
// contract and carrying what was drawn or typed, and GET /v1/task/{id} shows the task completed.
// A reload in the middle of a task brings the draft back from the server (the browser's own copy
// cleared first). The attachment checker stays off (ATTACHMENT_CHECK_POLL_MS=0); the customer's
// images (http(s) URLs, as the contract wants) come from the receiver's loopback server, and the
// page loads nothing else from any origin but the app's.
import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './support/browser.ts';
import { dragOnImage, logInThroughForm, pdfDocument, street, whereIs } from './support/label.ts';
import { readSegmentation } from './support/png.ts';
import { client, databases, hasPostgres, startTestServer, type DatabaseKind, type TestServer } from './support/server.ts';
import { makeValidator } from './support/spec.ts';
import { until } from './support/wait.ts';
import { createWorker, type TestWorker } from './support/workers.ts';

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
    if (req.method === 'GET' && req.url === '/letter.pdf') {
      // The app reads a PDF with fetch: the customer's server lets it (CORS), as an image needs not.
      res.writeHead(200, { 'content-type': 'application/pdf', 'access-control-allow-origin': '*' }).end(letter);
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

afterAll(async () => {
  await browser?.close();
  if (hook) await new Promise((r) => hook.close(r));
});

/** The server of one database (with the customer's client and the worker), started with the browser. */
async function startOn(db: DatabaseKind) {
  [server, browser] = await Promise.all([
    startTestServer(db, { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0' }),
    browser ?? launchBrowser(),
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

/** A fresh page at 1280 × 800, logged in through the form; records requests leaving the origin and script errors. */
async function openApp(query = '') {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const foreign: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    // The attachments are the work: they come from where the customer keeps them.
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== server.url && ![streetUrl, duskUrl, letterUrl].includes(r.url()))
      foreign.push(r.url());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${server.url}/label/${query}`);
  await logInThroughForm(page, worker.email, worker.password, 'Ana Lima');
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
  expect(validAgainst(responseSchema, body.response)).toBe('valid');
  expect(headers['webhook-id']).toBeTruthy();
  expect(body.task).toMatchObject({ task_id: taskId, status: 'completed' });
  const shown = await customer('GET', `/v1/task/${taskId}`);
  expect(shown.status).toBe(200);
  expect(shown.body).toMatchObject({ task_id: taskId, status: 'completed', response: body.response });
  return body.response;
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
    // Waiting for work, the app asks again by itself (after Retry-After) — or the person presses N.
    await page.getByText(/Nothing to do right now/).waitFor();
    await page.keyboard.press('N');
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
