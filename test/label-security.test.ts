// The labeling app's promises (issue 31, findings 1, 2 and 9), in Chromium against the real server
// (in this process, on PGlite), each attack made as an attacker would, from a second loopback origin
// (127.0.0.2, a site of its own): a link that names another API origin, frames in a customer's
// instruction and Markdown attachment that try to run script, raise dialogs, read the app and
// navigate it, a page that frames the app, and a customer's host that would learn workers'
// addresses from the images of a task. SECURITY.md, "The labeling app", lists these promises.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { driveFrame, logInThroughForm, street } from './support/label.ts';
import { client, startTestServer, type TestServer } from './support/server.ts';
import { root } from './support/spec.ts';
import { until } from './support/wait.ts';
import { webmFromFrames } from './support/webm.ts';
import { createWorker, type TestWorker } from './support/workers.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

let server: TestServer;
let browser: Browser;
let customer: ReturnType<typeof client>;
/** The attacker's (and the customer's media host's) server, on another loopback address. */
let evil: Server;
let evilOrigin: string;
const seen: Seen[] = [];
/** A short WebM of the drive, made by Chromium in the first test that needs it. */
let drive: Buffer | null = null;

/**
 * A page of the attacker's frames: it tries everything a frame could do to the app, then says it was
 * read to its end with a frame of its own (no preload scanner fetches a frame before the script ran).
 */
const framePage = (name: string) => `<!doctype html><title>${name}</title>
<script>
  // Had this run, the attacker would hear of it first (a synchronous request holds the parser).
  var x = new XMLHttpRequest(); x.open('GET', '/ran?${name}', false); x.send();
  try { alert('Your session expired: log in again'); } catch (e) {}
  try { parent.document.title = 'read by ${name}'; } catch (e) {}
  try { top.location = '${evilOrigin}/phish?script-${name}'; } catch (e) {}
</script>
<a href="${evilOrigin}/phish?click-${name}" target="_top">Continue to your account</a>
<iframe src="/parsed?${name}" width="1" height="1"></iframe>`;

beforeAll(async () => {
  evil = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const path = (req.url ?? '').split('?')[0];
    const name = new URL(req.url ?? '/', 'http://x').searchParams.get('name') ?? 'frame';
    if (path === '/frame.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end(framePage(name));
    if (path === '/frames-the-app.html')
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><title>A page of the attacker's</title><iframe id="app" src="${server.url}/label/" width="800" height="600"></iframe>`,
        );
    if (path === '/street.svg') return void res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(street);
    if (path === '/drive.webm' && drive) {
      // As a media host answers: byte ranges (a <video> seeks with them).
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
      const head = { 'content-type': 'video/webm', 'accept-ranges': 'bytes' };
      if (!range) return void res.writeHead(200, { ...head, 'content-length': drive.length }).end(drive);
      const [from, to] = [Number(range[1]), Math.min(range[2] ? Number(range[2]) : drive.length - 1, drive.length - 1)];
      return void res
        .writeHead(206, { ...head, 'content-range': `bytes ${from}-${to}/${drive.length}`, 'content-length': to - from + 1 })
        .end(drive.subarray(from, to + 1));
    }
    // Anything else (a log-in posted here, the phishing page, the sentinels): an empty answer.
    res
      .writeHead(req.method === 'OPTIONS' ? 204 : 200, { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*' })
      .end('{}');
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.2', r));
  evilOrigin = `http://127.0.0.2:${(evil.address() as { port: number }).port}`;
  [server, browser] = await Promise.all([
    // The server may reach the customer's host on loopback (it is the customer's, in this test).
    startTestServer('pglite', { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', WORK_SWEEP_POLL_MS: '0' }),
    testBrowser(inject('browserEndpoint')),
  ]);
  customer = client(server, 'current', server.dev.live_key);
  await fetch(`${server.url}/label/app.js`).then((r) => r.text());
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (evil) await new Promise((r) => evil.close(r));
});

/** A worker of the dev account's own workforce, with a name to be greeted by. */
const worker = (displayName: string) => createWorker(server, { accountId: server.dev.account_id, displayName });

/** A live task of the dev account; its id. */
async function liveTask(type: string, params: Record<string, unknown>): Promise<string> {
  const r = await customer('POST', `/v1/task/${type}`, { json: { callback_url: 'https://example.com/cb', ...params } });
  expect(r.status, r.text).toBe(200);
  return r.body.task_id as string;
}

/**
 * A page at 1280 × 800 recording where its own requests go (the app's document's, not those of a
 * document inside a frame of it), its dialogs and its console.
 */
async function openPage(url: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const requests: string[] = [];
  const dialogs: string[] = [];
  const consoleLines: string[] = [];
  page.on('request', (r) => {
    if (r.frame() === page.mainFrame()) requests.push(r.url());
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('console', (m) => consoleLines.push(m.text()));
  await page.goto(url);
  return { page, requests, dialogs, consoleLines };
}

/** A screenshot to look at, in test-results/ (not one of docs/label-app.md's). */
const look = (page: Page, name: string) => page.screenshot({ path: path.join(root, 'test-results', `label-security-${name}.png`) });

/** The requests of a page that went anywhere but the server (data: and blob: are the page's own). */
const elsewhere = (requests: string[]) =>
  requests.filter((u) => !['data:', 'blob:'].includes(new URL(u).protocol) && new URL(u).origin !== server.url);

/** Logs the worker in and takes the task; waits for its player. */
async function work(page: Page, who: TestWorker, name: string, taskId: string) {
  const next = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/assignments/next') && r.status() === 200);
  await logInThroughForm(page, who.email, who.password, name);
  expect((await (await next).json()).task.task_id).toBe(taskId);
}

describe('the labeling app', () => {
  it('talks to its own origin only: a link naming another API origin posts nothing there, and the log-in goes to the server', async () => {
    // A test-mode worker: she takes no live work, so the question for work her closed page may leave
    // on the server (Chromium can keep a closed tab's connection open) takes none of the later tests' tasks.
    const ana = await createWorker(server, { accountId: server.dev.account_id, mode: 'test', displayName: 'Ana Lima' });
    const before = seen.length;
    const { page, requests } = await openPage(`${server.url}/label/?api=${encodeURIComponent(evilOrigin)}`);
    await page.getByLabel('E-mail address').fill(ana.email);
    await page.getByLabel('Password').fill(ana.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    // Logged in (greeted by name), or the attacker heard something: whichever comes first.
    const quiet = () => undefined;
    await Promise.race([
      page.getByText('Ana Lima').first().waitFor().catch(quiet),
      until(() => seen.length > before, 'a request to the attacker', 30_000).catch(quiet),
    ]);
    // The attacker's server heard nothing (no password), the log-in went to the server, and the
    // page asked nothing of any other origin.
    expect(seen.slice(before).map((s) => `${s.method} ${s.url}`)).toEqual([]);
    expect(requests.filter((u) => u.endsWith('/worker/v1/session'))).toEqual([`${server.url}/worker/v1/session`]);
    expect(elsewhere(requests)).toEqual([]);
    await page.close();
  });

  it('sandboxes the frames of an instruction and of a Markdown attachment: no script, no dialog, no reading the app, no navigation, not even after a click', async () => {
    const rui = await worker('Rui Costa');
    const frame = (name: string) => `<iframe src="${evilOrigin}/frame.html?name=${name}" width="400" height="120"></iframe>`;
    const taskId = await liveTask('textcollection', {
      instruction: `Read the notes, then summarize them.\n\n${frame('instruction')}`,
      attachments: [{ type: 'markdown', content: `**Notes** of the call.\n\n${frame('attachment')}` }],
      fields: [{ type: 'text', field_id: 'summary', title: 'Summary', required: true }],
    });
    const { page, requests, dialogs, consoleLines } = await openPage(`${server.url}/label/`);
    const before = seen.length;
    await work(page, rui, 'Rui Costa', taskId);
    // Both frames were loaded and read to their end (their own frame was asked for) ...
    await until(() => ['instruction', 'attachment'].every((n) => seen.some((s) => s.url === `/parsed?${n}`)), 'both frames parsed', 20_000);
    // No script ran in them (the attacker never heard /ran), so no dialog, and the app's title is its own.
    expect(
      seen
        .slice(before)
        .filter((s) => s.url.startsWith('/ran'))
        .map((s) => s.url),
    ).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(await page.title()).toBe('humantask — labeling');
    // A click on each frame's link to the top window is refused by the sandbox.
    for (const name of ['instruction', 'attachment']) {
      await page.frameLocator(`iframe[src*="name=${name}"]`).getByText('Continue to your account').click();
      await until(
        () => consoleLines.filter((l) => l.includes('allow-top-navigation')).length >= (name === 'instruction' ? 1 : 2),
        `the navigation from the ${name}'s frame blocked`,
        20_000,
      );
    }
    // The top window is still the app's, no phishing page was asked for, and nothing else happened.
    const asked = seen.slice(before).map((s) => s.url);
    expect(asked.filter((u) => u.startsWith('/ran') || u.startsWith('/phish'))).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(page.url()).toBe(`${server.url}/label/`);
    await page.getByText('Summary').first().waitFor();
    // Both frames as the app shows them: sandboxed (nothing allowed), no referrer.
    for (const name of ['instruction', 'attachment']) {
      const el = page.locator(`iframe[src*="name=${name}"]`);
      expect(await el.getAttribute('sandbox')).toBe('');
      expect(await el.getAttribute('referrerpolicy')).toBe('no-referrer');
    }
    // The app itself asked nothing of another origin (the frames' pages are the frames' own).
    expect(elsewhere(requests)).toEqual([]);
    await page.close();
  });

  it('cannot be framed by another origin: the frame is refused', async () => {
    const { page, consoleLines } = await openPage(`${evilOrigin}/frames-the-app.html`);
    await until(() => consoleLines.some((l) => l.includes("frame-ancestors 'none'")), 'the frame refused', 20_000);
    const framed = page.frames().find((f) => f !== page.mainFrame());
    expect(framed).toBeDefined();
    // The refused frame shows the browser's error page, never the app (its log-in form).
    expect(framed!.url()).not.toBe(`${server.url}/label/`);
    expect(await page.frameLocator('#app').locator('form.login').count()).toBe(0);
    await page.close();
  });

  it('sends its security headers, and a policy that loads images and media from its own origin only', async () => {
    for (const path of ['/label/', '/label/app.js', '/label/style.css']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const policy = Object.fromEntries(
        (res.headers.get('content-security-policy') ?? '').split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]),
      );
      expect(policy).toMatchObject({
        'default-src': "'self'",
        'script-src': "'self'",
        'img-src': "'self' data: blob:",
        'media-src': "'self' blob:",
        'connect-src': "'self'",
        'frame-ancestors': "'none'",
        'object-src': "'none'",
      });
      await res.arrayBuffer();
    }
  });

  it("loads a task's images and video through the server: the customer's host sees the server, never the browser", async () => {
    const eva = await worker('Eva Marsh');
    // The drive, as a WebM made by Chromium (on a page of the server's origin, a secure context).
    const maker = await browser.newPage();
    await maker.goto(`${server.url}/label/`);
    drive = await webmFromFrames(maker, [0, 1, 2, 3, 4].map(driveFrame), 320, 200, 500);
    await maker.close();
    const imageTask = await liveTask('categorization', {
      instruction: `Is the vehicle a **car** or a **truck**? The sign: ![the sign](${evilOrigin}/street.svg?in=instruction)`,
      attachment_type: 'image',
      attachment: `${evilOrigin}/street.svg`,
      categories: ['car', 'truck'],
    });
    const videoTask = await liveTask('categorization', {
      instruction: 'Which vehicle drives by?',
      attachment_type: 'video',
      attachment: `${evilOrigin}/drive.webm`,
      categories: ['car', 'truck'],
    });
    const before = seen.length;
    const { page, requests } = await openPage(`${server.url}/label/`);
    await work(page, eva, 'Eva Marsh', imageTask);
    const loaded = (selector: string) => page.locator(selector).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth);
    await expect.poll(() => loaded('.attachment img'), { timeout: 20_000 }).toBe(640);
    await expect.poll(() => loaded('.instruction img'), { timeout: 20_000 }).toBe(640);
    await look(page, 'image');
    // The page asked only its own origin; the host was asked by the server (no browser's
    // user agent, no referrer), for exactly the task's two images.
    expect(elsewhere(requests)).toEqual([]);
    const fromServer = seen.slice(before);
    expect(fromServer.map((s) => s.url).sort()).toEqual(['/street.svg', '/street.svg?in=instruction']);
    for (const s of fromServer) {
      expect(s.headers['user-agent']).toBeUndefined();
      expect(s.headers.referer).toBeUndefined();
    }
    const sources = await page.locator('img').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).src));
    for (const src of sources) expect(src.startsWith(`${server.url}/worker/v1/assignments/`), src).toBe(true);
    // Submitted, the app takes the next task: a video, played by the page's <video> from the
    // server, its bytes from the host through it.
    await page.keyboard.press('1');
    const done = page.waitForResponse((r) => r.url().endsWith('/submit'));
    const next = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/assignments/next') && r.status() === 200);
    await page.keyboard.press('Control+Enter');
    expect((await done).status()).toBe(200);
    expect((await next.then((r) => r.json())).task.task_id).toBe(videoTask);
    const video = page.locator('.attachment video');
    await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.readyState >= 2 && v.videoWidth), { timeout: 20_000 }).toBe(320);
    // Seekable through the server (it passes the host's byte ranges on): frame 2 of the drive.
    await video.evaluate(async (v: HTMLVideoElement) => {
      v.currentTime = 1.2;
      await new Promise((r) => v.addEventListener('seeked', r, { once: true }));
    });
    expect(await video.evaluate((v: HTMLVideoElement) => v.seekable.length > 0 && v.seekable.end(0) > 2)).toBe(true);
    await look(page, 'video');
    expect(elsewhere(requests)).toEqual([]);
    expect(seen.slice(before).some((s) => s.url === '/drive.webm' && s.headers['user-agent'] === undefined)).toBe(true);
    await page.close();
  });
});
