// The labeling app's smaller faults (issue 32, item 13), each as a worker meets it: Chromium against
// the real server in this process (PGlite), live tasks of the customer's own workforce.
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { startTestServer, type TestServer } from './support/server.ts';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startTestServer('pglite', { ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0' }),
    testBrowser(inject('browserEndpoint')),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

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
