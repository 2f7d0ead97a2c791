// `npm run docs` builds a reference site that works offline: every page opens in a real browser,
// every operation's section renders, and no page requests anything outside its own origin.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { testBrowser } from './support/browser.ts';
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
  browser = await testBrowser(inject('browserEndpoint'));
});

afterAll(async () => {
  for (const ref of references.values()) await (await ref).page.close();
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

type Opened = Awaited<ReturnType<typeof open>>;
const referencePage = /^(current|legacy|workforce)\.html$/;
const references = new Map<string, Promise<Opened>>();

/**
 * A reference (current.html, legacy.html, workforce.html), opened once for the file and rendered
 * (Redoc's #api-content): Redoc lays out the whole contract on each load, the costliest thing here.
 * The tests below share its page, and its record of foreign requests and errors since it opened.
 */
function reference(file: string): Promise<Opened> {
  if (!references.has(file))
    references.set(
      file,
      open(`${origin}/${file}`).then(async (opened) => {
        await opened.page.waitForSelector('#api-content');
        return opened;
      }),
    );
  return references.get(file)!;
}

describe('docs site', () => {
  it('has an index that links both references and every guide, all of which open offline', async () => {
    const { page, foreign } = await open(`${origin}/`);
    const links = await page.$$eval('main a[href]', (as) => as.map((a) => a.getAttribute('href')!));
    expect(links).toEqual(expect.arrayContaining(['current.html', 'legacy.html', 'workforce.html']));
    expect(links.filter((l) => l.startsWith('guides/')).length).toBeGreaterThan(0);
    await page.close();
    for (const link of links) {
      const isReference = referencePage.test(link);
      const sub = isReference ? await reference(link) : await open(`${origin}/${link}`);
      expect(await sub.page.title(), link).not.toBe('');
      if (isReference) await sub.page.waitForTimeout(500);
      expect(sub.foreign, link).toEqual([]);
      expect(sub.errors, link).toEqual([]);
      if (!isReference) await sub.page.close();
    }
    expect(foreign).toEqual([]);
  });

  it('has no broken link: every page of the site, every same-origin link and picture answers, every #anchor of a guide exists', async () => {
    const pages = ['index.html'];
    const broken: string[] = [];
    for (let i = 0; i < pages.length; i++) {
      const from = pages[i]!;
      // On a reference, links starting with / or # are routes of Redoc's app (its menu), not pages.
      const redoc = referencePage.test(from);
      const { page } = redoc ? await reference(from) : await open(`${origin}/${from}`);
      // Pictures too (docs/quality.md embeds its chart): they must be on the site beside their page.
      const links = await page.$$eval('a[href], img[src]', (els) =>
        els.map((e) =>
          e instanceof HTMLImageElement
            ? { raw: e.getAttribute('src')!, href: e.src }
            : { raw: e.getAttribute('href')!, href: (e as HTMLAnchorElement).href },
        ),
      );
      if (!redoc) await page.close();
      for (const { href } of links.filter((l) => !redoc || !/^[/#]/.test(l.raw))) {
        const url = new URL(href);
        // Links to other sites are not followed: the test runs offline.
        if (url.origin !== origin) continue;
        const target = url.pathname.slice(1) || 'index.html';
        const res = await fetch(`${origin}/${target}`);
        if (res.status !== 200) {
          broken.push(`${from}: ${href} answers ${res.status}`);
          continue;
        }
        const html = await res.text();
        // Redoc's own links (#/tag/..., #operation/...) are routes of its app, not anchors.
        const anchor = decodeURIComponent(url.hash.slice(1));
        if (anchor && !anchor.startsWith('/') && !/^(current|legacy|workforce)\.html$/.test(target) && !html.includes(`id="${anchor}"`))
          broken.push(`${from}: ${href} has no #${anchor}`);
        if (target.endsWith('.html') && !pages.includes(target)) pages.push(target);
      }
    }
    expect(broken).toEqual([]);
    // Every page was reached from the index: both references, the guides and the internal pages.
    expect(pages).toEqual(
      expect.arrayContaining([
        'current.html',
        'legacy.html',
        'workforce.html',
        'guides/getting-started.html',
        'guides/client.html',
        'guides/conformance.html',
        'internal/seed-map.html',
      ]),
    );
  });

  it('links the references to each other, to the guides and the getting-started page, with code samples; titles show no Markdown', async () => {
    const { page } = await open(`${origin}/`);
    const titles = await page.$$eval('main a', (as) => as.map((a) => a.textContent ?? ''));
    expect(titles.filter((t) => t.includes('`'))).toEqual([]);
    expect(titles).toContain('Getting started: from install to a callback in five minutes');
    await page.close();
    for (const [gen, other] of [
      ['current', 'legacy'],
      ['legacy', 'current'],
    ] as const) {
      const ref = await reference(`${gen}.html`);
      const links = await ref.page.$$eval('#api-content a[href]', (as) => as.map((a) => a.getAttribute('href')));
      expect(links).toEqual(expect.arrayContaining([`${other}.html`, 'index.html', 'guides/getting-started.html']));
      // Operations show their code samples (scripts/code-samples.ts), curl first.
      await ref.page
        .locator('a[href="/tasks"]')
        .first()
        .evaluate((a: HTMLAnchorElement) => a.click());
      const listTasks = ref.page.locator('a[href="#/tasks/listtasks"]').first();
      await listTasks.waitFor({ state: 'attached', timeout: 10_000 });
      await listTasks.evaluate((a: HTMLAnchorElement) => a.click());
      await ref.page
        .locator('pre[data-testid="source-code"]', { hasText: 'curl -u "$HUMANTASK_KEY:"' })
        .first()
        .waitFor({ timeout: 10_000 });
      // The Servers box shows the server's description as plain text: no Markdown backticks in it.
      const servers = await ref.page.evaluate(() =>
        [...document.querySelectorAll('#api-content *')]
          .filter((e) => e.children.length === 0 && (e.textContent ?? '').includes('The reference server serves'))
          .map((e) => e.textContent),
      );
      expect(servers.length).toBeGreaterThan(0);
      expect(servers.filter((t) => t?.includes('`'))).toEqual([]);
    }
    for (const guide of ['guides/getting-started.html', 'internal/performance.html']) {
      const { page: p } = await open(`${origin}/${guide}`);
      expect(await p.$$eval('nav a', (as) => as.map((a) => a.getAttribute('href')))).toEqual([
        '../index.html',
        '../guides/getting-started.html',
        '../current.html',
        '../legacy.html',
        '../workforce.html',
      ]);
      expect(await p.title()).not.toContain('`');
      await p.close();
    }
  });

  it.each(generations)('renders the section of every %s operation and webhook', async (gen) => {
    const doc = loadBundle(gen);
    const slug = (s: string) =>
      s
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '');
    const expected = [
      ...operations(gen, doc).map((o) => ({ op: o.op, where: o.path })),
      ...Object.entries<any>(doc.webhooks ?? {}).map(([name, item]) => ({ op: item.post, where: name })),
    ].map(({ op, where }) => ({ id: op.operationId as string, summary: op.summary as string, tag: slug(op.tags[0]), where }));
    const { page, foreign, errors } = await reference(`${gen}.html`);
    const missing: string[] = [];
    let expanded = '';
    for (const { id, summary, tag, where } of expected) {
      const link = page.locator(`a[href="#/${tag}/${id.toLowerCase()}"]`).first();
      // Redoc lists an operation in the sidebar once its tag's group is open (a click on an open
      // group's active entry would close it: the page is shared, a test above may have opened it).
      if (tag !== expanded && (await link.count()) === 0)
        await page
          .locator(`a[href="/${tag}"]`)
          .first()
          .evaluate((a: HTMLAnchorElement) => a.click());
      expanded = tag;
      try {
        await link.waitFor({ state: 'attached', timeout: 10_000 });
      } catch {
        missing.push(`${id}: no link in the sidebar under ${tag}`);
        continue;
      }
      // The operation's section: a heading that names its summary, in a section that names its path
      // or webhook (a plain DOM query: the accessibility tree of the whole page is slow). Redoc lays
      // out every section with the page; one it has not is awaited after a click on its link.
      const section = ([summary, where]: readonly [string, string]) =>
        [...document.querySelectorAll('#api-content h1, #api-content h2, #api-content h3')].some(
          (h) => h.textContent?.includes(summary) && (h.closest('[data-section-id]')?.textContent ?? '').includes(where),
        );
      let shown = await page.evaluate(section, [summary, where] as const);
      if (!shown) {
        // Redoc may lay out the sidebar again meanwhile (a busy machine sees it): the link is then
        // gone until its group is opened again.
        for (let tries = 0; tries < 3; tries++) {
          if ((await link.count()) === 0)
            await page
              .locator(`a[href="/${tag}"]`)
              .first()
              .evaluate((a: HTMLAnchorElement) => a.click());
          const clicked = await link
            .evaluate((a: HTMLAnchorElement) => a.click(), undefined, { timeout: 5_000 })
            .then(
              () => true,
              () => false,
            );
          if (clicked) break;
        }
        shown = await page.waitForFunction(section, [summary, where] as const, { timeout: 10_000, polling: 50 }).then(
          () => true,
          () => false,
        );
      }
      if (!shown) missing.push(`${id}: section did not render "${summary}" / ${where}`);
    }
    expect(missing).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
  });
});
