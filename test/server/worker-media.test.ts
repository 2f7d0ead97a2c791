// The worker API's media route (issue 31, finding 9), on PGlite and PostgreSQL: a file of the task
// a worker holds comes through the server (the customer's host sees the server, never the worker),
// with byte ranges, the headers that keep it inert in the server's origin, and the limits; a URL the
// task does not name, another worker's assignment and an ended lease are refused. Also: every worker
// API answer carries its security headers, and a Markdown attachment's frame is stored sandboxed.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { testClock } from '../support/clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, workerClient } from '../support/workers.ts';

/** 1000 bytes that are not text: byte i is i mod 251. */
const picture = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the media route on %s', (db) => {
  let server: TestServer;
  let host: Server;
  let origin: string;
  /** What the customer's host was asked, by whom. */
  const seen: Seen[] = [];
  const clock = testClock();

  beforeAll(async () => {
    host = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const path = (req.url ?? '').split('?')[0];
      if (path === '/street.png' || path === '/notes.png' || path === '/shown.png') {
        // As a media host answers: byte ranges.
        const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
        const head = { 'content-type': 'image/png', 'accept-ranges': 'bytes' };
        if (!range) return void res.writeHead(200, { ...head, 'content-length': picture.length }).end(picture);
        const from = Number(range[1]);
        const to = Math.min(range[2] ? Number(range[2]) : picture.length - 1, picture.length - 1);
        if (from >= picture.length) return void res.writeHead(416, { 'content-range': `bytes */${picture.length}` }).end();
        return void res
          .writeHead(206, { ...head, 'content-range': `bytes ${from}-${to}/${picture.length}` })
          .end(picture.subarray(from, to + 1));
      }
      if (path === '/frames.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"points":[]}');
      if (path === '/page.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<script>alert(1)</script>');
      if (path === '/big.png')
        return void res.writeHead(200, { 'content-type': 'image/png', 'content-length': 5000 }).end(Buffer.alloc(5000));
      // The same size, not announced (chunked): cut after MEDIA_MAX_BYTES.
      if (path === '/stream.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(5000));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(host.address() as { port: number }).port}`;
    server = await startTestServer(
      db,
      { ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0', MEDIA_MAX_BYTES: '4096' },
      undefined,
      { now: clock.now },
    );
  });
  afterAll(async () => {
    await server?.close();
    if (host) await new Promise((r) => host.close(r));
  });

  /** A fresh account with a live task of `type` and a worker who holds it: the assignment and a caller of the worker API. */
  async function held(type: string, task: Record<string, unknown>) {
    const secrets = await createAccount(server.uow, `media-${db}-${Math.random().toString(16).slice(2)}`, new Date());
    const customer = client(server, 'current', secrets.live_key);
    const created = await customer('POST', `/v1/task/${type}`, { json: { callback_url: 'https://example.com/cb', ...task } });
    expect(created.status, created.text).toBe(200);
    const worker = await createWorker(server, { accountId: secrets.account_id });
    const call = workerClient(server, worker.token);
    const next = await call('POST', '/v1/assignments/next', {});
    expect(next.status, next.text).toBe(200);
    return { secrets, customer, call, assignment: next.body as { assignment_id: string; lease_token: string; task: any } };
  }

  const imageTask = () => ({
    instruction: `Look at ![the sign](${origin}/notes.png) first.`,
    attachment_type: 'image',
    attachment: `${origin}/street.png`,
    categories: ['car', 'truck'],
  });

  /** GET of the media route as an `<img>` sends it: no Authorization, no cookie. */
  const media = (assignmentId: string, query: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/worker/v1/assignments/${assignmentId}/media?${new URLSearchParams(query)}`, { headers });

  it('passes on a file of the task from the server: its bytes, type and the headers that keep it inert; the host never sees the worker', async () => {
    const { assignment: a } = await held('categorization', imageTask());
    const before = seen.length;
    const res = await media(a.assignment_id, { url: `${origin}/street.png`, lease_token: a.lease_token });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(picture);
    expect(Object.fromEntries(['content-type', 'content-length', 'accept-ranges'].map((h) => [h, res.headers.get(h)]))).toEqual({
      'content-type': 'image/png',
      'content-length': '1000',
      'accept-ranges': 'bytes',
    });
    expect(res.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-disposition')).toBe('attachment');
    expect(res.headers.get('cache-control')).toBe('private, max-age=3600');
    // The host got one request, from the server: nothing of the worker's (no token, cookie, referrer, forwarded address).
    const asked = seen.slice(before);
    expect(asked.map((s) => s.url)).toEqual(['/street.png']);
    for (const name of ['authorization', 'cookie', 'referer', 'x-forwarded-for', 'forwarded', 'origin'])
      expect(asked[0]!.headers[name], name).toBeUndefined();

    // An image of the instruction is one of the task's files too.
    const shown = await media(a.assignment_id, { url: `${origin}/notes.png`, lease_token: a.lease_token });
    expect(shown.status).toBe(200);
    expect(Buffer.from(await shown.arrayBuffer())).toEqual(picture);
  });

  it('passes a byte range on, and the host’s 416 past the end', async () => {
    const { assignment: a } = await held('categorization', imageTask());
    const part = await media(a.assignment_id, { url: `${origin}/street.png`, lease_token: a.lease_token }, { range: 'bytes=10-19' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 10-19/1000');
    expect(Buffer.from(await part.arrayBuffer())).toEqual(picture.subarray(10, 20));
    const open = await media(a.assignment_id, { url: `${origin}/street.png`, lease_token: a.lease_token }, { range: 'bytes=990-' });
    expect(open.status).toBe(206);
    expect(Buffer.from(await open.arrayBuffer())).toEqual(picture.subarray(990));
    const past = await media(a.assignment_id, { url: `${origin}/street.png`, lease_token: a.lease_token }, { range: 'bytes=5000-' });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe('bytes */1000');
    expect(await past.json()).toMatchObject({ status_code: 416, code: 'range_not_satisfiable' });
    // Several ranges are not passed on: the whole file comes back.
    const many = await media(a.assignment_id, { url: `${origin}/street.png`, lease_token: a.lease_token }, { range: 'bytes=0-1,5-6' });
    expect(many.status).toBe(200);
    expect(Buffer.from(await many.arrayBuffer())).toEqual(picture);
  });

  it('refuses a URL the task does not name (404), and asks the host nothing for it', async () => {
    const { assignment: a } = await held('categorization', imageTask());
    const before = seen.length;
    for (const url of [`${origin}/other.png`, `${origin}/street.png?x=1`, 'https://example.com/street.png', `${origin}/street.pn`]) {
      const res = await media(a.assignment_id, { url, lease_token: a.lease_token });
      expect(res.status, url).toBe(404);
      expect(await res.json()).toMatchObject({ status_code: 404, code: 'not_found', error: expect.stringContaining('names no file') });
    }
    // Not a URL at all: the contract's 400.
    expect((await media(a.assignment_id, { url: 'file:///etc/passwd', lease_token: a.lease_token })).status).toBe(400);
    expect(seen.slice(before)).toEqual([]);
    // The same URL in another spelling of the WHATWG form is the task's file.
    const spelt = await media(a.assignment_id, { url: origin.replace('http://', 'HTTP://') + '/street.png', lease_token: a.lease_token });
    expect(spelt.status).toBe(200);
    await spelt.arrayBuffer();
  });

  it("refuses another worker's assignment, an unknown one and a missing token (401, the same answer), asking the host nothing", async () => {
    const mine = await held('categorization', imageTask());
    const theirs = await held('categorization', imageTask());
    const before = seen.length;
    const queries: Record<string, string>[] = [
      // Another worker's lease token on my assignment, a token of no lease, none at all.
      { url: `${origin}/street.png`, lease_token: theirs.assignment.lease_token },
      { url: `${origin}/street.png`, lease_token: 'lt_00000000000000000000000000000000' },
      { url: `${origin}/street.png` },
    ];
    for (const query of queries) {
      const res = await media(mine.assignment.assignment_id, query);
      expect(res.status, JSON.stringify(query)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="humantask-worker"');
      expect(await res.json()).toMatchObject({ status_code: 401, code: 'unauthenticated' });
    }
    // An id that is no assignment answers the same.
    const none = await media('asg_000000000000000000000000', { url: `${origin}/street.png`, lease_token: mine.assignment.lease_token });
    expect(none.status).toBe(401);
    expect(seen.slice(before)).toEqual([]);
  });

  it('counts a lease token that opens nothing as a failed authentication of the address: past the limit, 429 before any lookup', async () => {
    const strict = await startTestServer(db, { AUTH_FAILURE_BURST: '3', AUTH_FAILURE_PER_SECOND: '0.01' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(
          `${strict.url}/worker/v1/assignments/asg_${String(i).padStart(24, '0')}/media?${new URLSearchParams({ url: `${origin}/street.png`, lease_token: 'lt_guess' })}`,
        );
        statuses.push(res.status);
        await res.arrayBuffer();
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await strict.close();
    }
  });

  it('refuses the files of an ended lease: submitted (409 assignment_closed) and lapsed (409 lease_lost)', async () => {
    const done = await held('categorization', imageTask());
    const submitted = await done.call('POST', `/v1/assignments/${done.assignment.assignment_id}/submit`, {
      lease_token: done.assignment.lease_token,
      response: { category: 'car' },
      active_ms: 1000,
    });
    expect(submitted.status, submitted.text).toBe(200);
    const after = await media(done.assignment.assignment_id, { url: `${origin}/street.png`, lease_token: done.assignment.lease_token });
    expect(after.status).toBe(409);
    expect(await after.json()).toMatchObject({ code: 'assignment_closed' });

    const left = await held('categorization', imageTask());
    const url = { url: `${origin}/street.png`, lease_token: left.assignment.lease_token };
    const fine = await media(left.assignment.assignment_id, url);
    expect(fine.status).toBe(200);
    await fine.arrayBuffer();
    // The lease lapses on the server's clock (10 minutes by default, without a heartbeat).
    clock.advance(11 * 60_000);
    const lapsed = await media(left.assignment.assignment_id, url);
    expect(lapsed.status).toBe(409);
    expect(await lapsed.json()).toMatchObject({ code: 'lease_lost' });
  });

  it('answers 502 media_unavailable for what it does not pass on: a web page, a host error, a file over MEDIA_MAX_BYTES', async () => {
    const { assignment: a } = await held('comparison', {
      instruction: 'Which is better?',
      attachment_type: 'image',
      attachments: [`${origin}/page.html`, `${origin}/gone.png`, `${origin}/big.png`, `${origin}/stream.png`, `${origin}/frames.json`],
      choices: ['first', 'second'],
    });
    const get = (path: string) => media(a.assignment_id, { url: `${origin}${path}`, lease_token: a.lease_token });
    const page = await get('/page.html');
    expect(page.status).toBe(502);
    expect(page.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await page.json()).toMatchObject({ code: 'media_unavailable', error: expect.stringContaining('text/html') });
    const gone = await get('/gone.png');
    expect(gone.status).toBe(502);
    expect(await gone.json()).toMatchObject({ code: 'media_unavailable', error: expect.stringContaining('HTTP 404') });
    const big = await get('/big.png');
    expect(big.status).toBe(502);
    expect(await big.json()).toMatchObject({ code: 'media_unavailable', error: expect.stringContaining('5000 bytes') });
    // A size the host did not announce: refused once past the limit (here before any byte went out).
    const stream = await get('/stream.png');
    expect(stream.status).toBe(502);
    expect(await stream.json()).toMatchObject({ code: 'media_unavailable', error: expect.stringContaining('more than 4096 bytes') });
    // JSON (a lidar frame file) is passed on.
    const json = await get('/frames.json');
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ points: [] });
  });

  it('passes on the images of a Markdown attachment, whose frames are stored sandboxed', async () => {
    const { assignment: a, customer } = await held('textcollection', {
      instruction: 'Summarize the notes.',
      attachments: [
        {
          type: 'markdown',
          content: `Notes ![a chart](${origin}/shown.png)<iframe src="${origin}/page.html" sandbox="allow-scripts allow-top-navigation allow-same-origin" referrerpolicy="unsafe-url"></iframe>`,
        },
      ],
      fields: [{ type: 'text', field_id: 'summary', title: 'Summary' }],
    });
    const res = await media(a.assignment_id, { url: `${origin}/shown.png`, lease_token: a.lease_token });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(picture);
    // The frame as stored and shown to the worker (and read back by the customer): sandboxed, no referrer.
    const stored = a.task.params.attachments[0].content as string;
    expect(stored).toContain(`<iframe src="${origin}/page.html" sandbox referrerpolicy="no-referrer"></iframe>`);
    const task = await customer('GET', `/v1/task/${a.task.task_id}`);
    expect(task.body.params.attachments[0].content).toBe(stored);
  });

  it('sends the security headers with every worker API answer', async () => {
    const { call } = await held('categorization', imageTask());
    for (const res of [await call('GET', '/v1/me'), await call('GET', '/v1/assignments/asg_000000000000000000000000')]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    }
  });
});
