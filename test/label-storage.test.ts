// Issue 37 end to end: a customer keeps its street images in a private bucket (an S3-protocol server
// on loopback), connects it, and makes a live image task naming `s3://...`. A worker opens /label/ in
// Chromium: the image shows, loaded through the server's media route (the page asks no other
// origin, and never sees a key); once the lease ends, the address the page used opens nothing.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { testClock } from './support/clock.ts';
import { logInThroughForm, screenshot, street } from './support/label.ts';
import { s3Keys, startBucketServer, type TestBucketServer } from './support/s3.ts';
import { client, startTestServer, type TestServer } from './support/server.ts';
import { createWorker } from './support/workers.ts';

const secret = 'bucket-secret-the-browser-never-sees';
let server: TestServer;
let buckets: TestBucketServer;
let browser: Browser;
const clock = testClock();

beforeAll(async () => {
  buckets = await startBucketServer(['street-images']);
  await buckets.put('street-images', 'drive-7/street.svg', street, 'image/svg+xml');
  [server, browser] = await Promise.all([
    startTestServer('pglite', { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', WORK_SWEEP_POLL_MS: '0' }, undefined, { now: clock.now }),
    testBrowser(inject('browserEndpoint')),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await buckets?.close();
});

it('shows an image of the customer’s bucket to the worker holding the task, through the server, until the lease ends', async () => {
  const customer = client(server, 'current', server.dev.live_key);
  const connected = await customer('POST', '/v1/storage/connections', {
    json: { bucket: 'street-images', endpoint: buckets.endpoint, access_key_id: s3Keys.accessKeyId, secret_access_key: secret },
  });
  expect(connected.status, connected.text).toBe(200);
  const task = await customer('POST', '/v1/task/imageannotation', {
    json: {
      callback_url: 'https://example.com/hook',
      instruction: 'Draw a box around every **vehicle**.',
      attachment: 's3://street-images/drive-7/street.svg',
      attachment_type: 'image',
      geometries: { box: { objects_to_annotate: ['car'] } },
    },
  });
  expect(task.status, task.text).toBe(200);
  const [worker] = await Promise.all([
    createWorker(server, { accountId: server.dev.account_id, displayName: 'Ana Lima' }),
    fetch(`${server.url}/label/app.js`).then((r) => r.text()),
  ]);

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const foreign: string[] = [];
  const mediaAsked: string[] = [];
  const bodies: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== server.url) foreign.push(r.url());
    if (u.pathname.endsWith('/media')) mediaAsked.push(r.url());
  });
  page.on('response', async (r) => {
    if (r.url().includes('/worker/v1/') && !r.url().includes('/media')) bodies.push(await r.text().catch(() => ''));
  });
  await page.goto(`${server.url}/label/`);
  await logInThroughForm(page, worker.email, worker.password, 'Ana Lima');
  // The image decoded: the player shows its size.
  await page.getByText('640 × 400 px').waitFor();
  await screenshot(page, 'storage-bucket-image');
  expect(foreign).toEqual([]);
  expect(mediaAsked.length).toBeGreaterThan(0);
  const asked = new URL(mediaAsked[0]!);
  expect(asked.searchParams.get('url')).toBe('s3://street-images/drive-7/street.svg');
  for (const body of bodies) expect(body).not.toContain(secret);

  // While the lease holds, the address the page used gives the image; once it has lapsed, nothing.
  const during = await fetch(asked);
  expect(during.status).toBe(200);
  expect(await during.text()).toBe(street);
  clock.advance(11 * 60_000);
  const after = await fetch(asked);
  expect(after.status).toBe(409);
  await page.close();
});
