// `npm run docs` builds a reference site that works offline: every page opens in a real browser,
// every operation's section renders, and no page requests anything outside its own origin.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './support/browser.ts';
import { generations, loadBundle, operations, root } from './support/spec.ts';

let site: string;
let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  site = mkdtempSync(path.join(tmpdir(), 'humantask-docs-'));
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-docs.ts', site], { cwd: root, stdio: 'pipe' });
  server = createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/\/$/, '/index.html');
    const file = path.join(site, path.normalize(rel));
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': file.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  if (server) await new Promise((r) => server.close(r));
  if (site) rmSync(site, { recursive: true, force: true });
});

/** Opens a page and records every request it makes that leaves its own origin. */
async function open(url: string): Promise<{ page: Page; foreign: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const foreign: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== origin) foreign.push(r.url());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  const res = await page.goto(url, { waitUntil: 'load' });
  expect(res?.status()).toBe(200);
  return { page, foreign, errors };
}

describe('docs site', () => {
  it('has an index that links both references and every guide, all of which open offline', async () => {
    const { page, foreign } = await open(`${origin}/`);
    const links = await page.$$eval('main a[href]', (as) => as.map((a) => a.getAttribute('href')!));
    expect(links).toEqual(expect.arrayContaining(['current.html', 'legacy.html']));
    expect(links.filter((l) => l.startsWith('guides/')).length).toBeGreaterThan(0);
    await page.close();
    for (const link of links) {
      const sub = await open(`${origin}/${link}`);
      expect(await sub.page.title(), link).not.toBe('');
      await sub.page.waitForTimeout(link.startsWith('guides/') ? 0 : 500);
      expect(sub.foreign, link).toEqual([]);
      expect(sub.errors, link).toEqual([]);
      await sub.page.close();
    }
    expect(foreign).toEqual([]);
  });

  it.each(generations)('renders the section of every %s operation and webhook', async (gen) => {
    const doc = loadBundle(gen);
    const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    const expected = [
      ...operations(gen, doc).map((o) => ({ op: o.op, where: o.path })),
      ...Object.entries<any>(doc.webhooks ?? {}).map(([name, item]) => ({ op: item.post, where: name })),
    ].map(({ op, where }) => ({ id: op.operationId as string, summary: op.summary as string, tag: slug(op.tags[0]), where }));
    const { page, foreign, errors } = await open(`${origin}/${gen}.html`);
    await page.waitForSelector('#api-content');
    const missing: string[] = [];
    let expanded = '';
    for (const { id, summary, tag, where } of expected) {
      if (tag !== expanded) {
        // Redoc lists an operation in the sidebar once its tag's group is open.
        await page.locator(`a[href="/${tag}"]`).first().evaluate((a: HTMLAnchorElement) => a.click());
        expanded = tag;
      }
      const link = page.locator(`a[href="#/${tag}/${id.toLowerCase()}"]`).first();
      try {
        await link.waitFor({ state: 'attached', timeout: 10_000 });
      } catch {
        missing.push(`${id}: no link in the sidebar under ${tag}`);
        continue;
      }
      await link.evaluate((a: HTMLAnchorElement) => a.click());
      const content = page.locator('#api-content');
      try {
        await content.getByRole('heading', { name: summary }).first().waitFor({ timeout: 10_000 });
        await content.getByText(where, { exact: false }).first().waitFor({ timeout: 10_000 });
      } catch {
        missing.push(`${id}: section did not render "${summary}" / ${where}`);
      }
    }
    expect(missing).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
