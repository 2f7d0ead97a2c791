// Issue 37 end to end: a customer keeps its street images in a private bucket (an S3-protocol server
// on loopback), connects it, and makes a live image task naming `s3://...`. A worker opens /label/ in
// Chromium: the image shows, loaded through the server's media route (the page asks no other
// origin, and never sees a key); once the lease ends, the address the page used opens nothing. With
// `media: presigned` the page loads the image from the bucket itself, by a link signed for it: the
// app's Content-Security-Policy allows exactly that origin (STORAGE_MEDIA_ORIGINS), the link lapses
// on its own, and once the lease ends no new one is given.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { testClock } from './support/clock.ts';
import { logInThroughForm, screenshot, street } from './support/label.ts';
import { s3Keys, startBucketServer, type TestBucketServer } from './support/s3.ts';
import { client, startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';
import { createWorker } from './support/workers.ts';

const secret = 'bucket-secret-the-browser-never-sees';
let server: TestServer;
let buckets: TestBucketServer;
let browser: Browser;
const clock = testClock();

beforeAll(async () => {
  buckets = await startBucketServer(['street-images', 'signed-images']);
  await buckets.put('street-images', 'drive-7/street.svg', street, 'image/svg+xml');
  await buckets.put('signed-images', 'drive-8/street.svg', street, 'image/svg+xml');
  const env = {
    ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
    WORK_SWEEP_POLL_MS: '0',
    STORAGE_MEDIA_ORIGINS: buckets.endpoint,
    // Links short enough to see one lapse (on the bucket's clock, the wall clock) without a long wait.
    STORAGE_LINK_SECONDS: '2',
  };
  [server, browser] = await Promise.all([
    startTestServer('pglite', env, undefined, { now: clock.now }),
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

it('loads an image of a presigned bucket from the bucket, by a link the lease bounds, the CSP allowing that origin alone', async () => {
  const customer = client(server, 'current', server.dev.live_key);
  const connected = await customer('POST', '/v1/storage/connections', {
    json: {
      bucket: 'signed-images',
      endpoint: buckets.endpoint,
      access_key_id: s3Keys.accessKeyId,
      secret_access_key: secret,
      media: 'presigned',
    },
  });
  expect(connected.status, connected.text).toBe(200);
  const task = await customer('POST', '/v1/task/imageannotation', {
    json: {
      callback_url: 'https://example.com/hook',
      instruction: 'Draw a box around every **vehicle**.',
      attachment: 's3://signed-images/drive-8/street.svg',
      attachment_type: 'image',
      geometries: { box: { objects_to_annotate: ['car'] } },
    },
  });
  expect(task.status, task.text).toBe(200);
  const worker = await createWorker(server, { accountId: server.dev.account_id, displayName: 'Bo Chen' });

  // The app's policy names the bucket's origin for images, media and fetches, and no other host.
  const policy = (await fetch(`${server.url}/label/`)).headers.get('content-security-policy') ?? '';
  const directive = (name: string) => policy.split('; ').find((d) => d.startsWith(`${name} `));
  expect(directive('img-src')).toBe(`img-src 'self' data: blob: ${buckets.endpoint}`);
  expect(directive('media-src')).toBe(`media-src 'self' blob: ${buckets.endpoint}`);
  expect(directive('connect-src')).toBe(`connect-src 'self' ${buckets.endpoint}`);

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const fromBucket: string[] = [];
  const elsewhere: string[] = [];
  const mediaAsked: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin === buckets.endpoint) fromBucket.push(r.url());
    else if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== server.url) elsewhere.push(r.url());
    if (u.pathname.endsWith('/media')) mediaAsked.push(r.url());
  });
  await page.goto(`${server.url}/label/`);
  await logInThroughForm(page, worker.email, worker.password, 'Bo Chen');
  await page.getByText('640 × 400 px').waitFor();
  await screenshot(page, 'storage-presigned-image');
  expect(elsewhere).toEqual([]);
  // The browser followed the media route to the bucket, by a link signed for that object.
  expect(fromBucket.length).toBeGreaterThan(0);
  const signed = new URL(fromBucket[0]!);
  expect(signed.pathname).toBe('/signed-images/drive-8/street.svg');
  expect(signed.searchParams.get('X-Amz-Signature')).toBeTruthy();
  expect(fromBucket[0]).not.toContain(secret);
  await page.close();

  // The route signs a new link while the lease holds; a link lapses on its own (STORAGE_LINK_SECONDS),
  // and once the lease has ended the route signs none.
  const route = mediaAsked.at(-1)!;
  const redirect = await fetch(route, { redirect: 'manual' });
  expect(redirect.status).toBe(307);
  const link = redirect.headers.get('location')!;
  expect(new URL(link).origin).toBe(buckets.endpoint);
  expect((await fetch(link)).status).toBe(200);
  await until(async () => (await fetch(link)).status === 403, 'the signed link to lapse', 15_000);
  clock.advance(11 * 60_000);
  const ended = await fetch(route, { redirect: 'manual' });
  expect(ended.status).toBe(409);
});
