// Drafts (issue 31, finding 5), on PGlite and PostgreSQL, as an attacking worker would send them:
// a draft has a cap (1 MB serialized; a heartbeat's body over 1,064,960 bytes is refused with 413
// before it is read), drafts of ended assignments are dropped (only the last released or lapsed one
// of a worker is kept while its task is open), history pages carry none, and big requests in
// flight do not keep another tenant waiting.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { testClock } from '../support/clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { bearer, createWorker, workerClient } from '../support/workers.ts';

const categorization = {
  callback_url: 'https://example.com/cb',
  instruction: 'Pick',
  attachment_type: 'text',
  attachment: 'a cat',
  categories: ['cat', 'dog'],
};

/** The heartbeat's body limit the contract names: a draft's 1 MB and 16 KB for the rest. */
const heartbeatLimit = 1_064_960;

interface RawAnswer {
  status: number;
  body: any;
}

/**
 * A request over a raw socket: the head, then only `sent` of the body. Resolves with the answer
 * when one comes: the server answered without waiting for the rest.
 */
function partialRequest(url: string, path: string, headers: Record<string, string>, sent: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (Buffer.byteLength(text.slice(end + 4)) < length) return;
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)![1]), body: JSON.parse(text.slice(end + 4)) });
    });
    socket.on('error', reject);
    const head = Object.entries({ host: `${hostname}:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`POST ${path} HTTP/1.1\r\n${head.join('')}\r\n${sent}`);
  });
}

/** The start of a heartbeat body whose draft is `bytes` of text, and its rest. */
function heartbeatBody(leaseToken: string, bytes: number): [string, string] {
  const body = JSON.stringify({ lease_token: leaseToken, active_ms: 10, draft: { blob: 'x'.repeat(bytes) } });
  const half = Math.floor(body.length / 2);
  return [body.slice(0, half), body.slice(half)];
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('drafts on %s', (db) => {
  let server: TestServer;
  // Leases lapse when the test moves the server's clock on, swept every 20 ms.
  const clock = testClock();
  beforeAll(async () => {
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '20' }, undefined, { now: clock.now });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** An account of its own with one worker of its own (who sees only its tasks), and a way to add live tasks. */
  async function tenant() {
    const secrets = await createAccount(server.uow, `drafts-${db}-${Math.random().toString(16).slice(2)}`, new Date());
    const customer = client(server, 'current', secrets.live_key);
    const worker = await createWorker(server, { accountId: secrets.account_id });
    const task = async () => {
      const created = await customer('POST', '/v1/task/categorization', { json: categorization });
      expect(created.status, created.text).toBe(200);
      return created.body.task_id as string;
    };
    return { secrets, customer, worker, call: workerClient(server, worker.token), task };
  }

  it('refuses a 9 MB heartbeat with 413 naming the limit before reading its body, with or without Content-Length; nothing is saved', async () => {
    const { worker, call, task } = await tenant();
    await task();
    const a = (await call('POST', '/v1/assignments/next', {})).body;
    const path = `/worker/v1/assignments/${a.assignment_id}/heartbeat`;
    expect((await call('POST', path.slice('/worker'.length), { lease_token: a.lease_token, active_ms: 10, draft: { n: 1 } })).status).toBe(
      200,
    );

    // The head announces 9 MB; only 1 KB follows. The answer comes without the rest: nothing was read or parsed.
    const [start] = heartbeatBody(a.lease_token, 9 * 1024 * 1024);
    const refused = await partialRequest(
      server.url,
      path,
      { ...bearer(worker.token), 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) },
      start.slice(0, 1024),
    );
    expect(refused).toEqual({
      status: 413,
      body: {
        status_code: 413,
        error: `The request body is larger than ${heartbeatLimit} bytes, the limit of a heartbeat (a draft is at most 1 MB).`,
        code: 'payload_too_large',
        request_id: expect.any(String),
      },
    });

    // Sent whole, and sent in chunks without a Content-Length: the same refusal.
    const whole = heartbeatBody(a.lease_token, 9 * 1024 * 1024).join('');
    const sentWhole = await call('POST', path.slice('/worker'.length), JSON.parse(whole));
    expect([sentWhole.status, sentWhole.body.code]).toEqual([413, 'payload_too_large']);
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < whole.length; i += 1024 * 1024) controller.enqueue(new TextEncoder().encode(whole.slice(i, i + 1024 * 1024)));
        controller.close();
      },
    });
    const chunked = await fetch(server.url + path, {
      method: 'POST',
      headers: { ...bearer(worker.token), 'content-type': 'application/json' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect([chunked.status, ((await chunked.json()) as { code: string }).code]).toEqual([413, 'payload_too_large']);

    const held = await call('GET', `/v1/assignments/${a.assignment_id}`);
    expect(held.body.draft).toEqual({ n: 1 });
  });

  it('refuses a draft over 1 MB serialized with 400 naming the limit, saves one under it, and history pages carry no draft', async () => {
    const { call, task } = await tenant();
    await task();
    const a = (await call('POST', '/v1/assignments/next', {})).body;
    const beat = (draft: unknown) =>
      call('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, { lease_token: a.lease_token, active_ms: 10, draft });
    const over = await beat({ blob: 'x'.repeat(1_048_576) });
    expect([over.status, over.body.code]).toEqual([400, 'invalid_request']);
    expect(over.body.error).toBe(
      'draft is 1048587 bytes serialized as JSON; a draft may be at most 1048576 bytes (1 MB). Nothing was saved.',
    );
    expect((await call('GET', `/v1/assignments/${a.assignment_id}`)).body.draft).toBeUndefined();

    expect((await beat({ blob: 'y'.repeat(1_000_000) })).status).toBe(200);
    expect((await call('GET', `/v1/assignments/${a.assignment_id}`)).body.draft.blob).toHaveLength(1_000_000);
    const history = await call('GET', '/v1/assignments');
    expect(history.status).toBe(200);
    expect(history.body.docs).toHaveLength(1);
    expect(history.body.docs[0]).toMatchObject({ assignment_id: a.assignment_id, status: 'active' });
    expect(history.body.docs[0].draft).toBeUndefined();
  });

  it('keeps only the drafts that can still be used: the held one, and the last released or lapsed one while its task is open', async () => {
    const { customer, call, task } = await tenant();
    const [t1, t2, t3] = [await task(), await task(), await task()];
    const next = async (taskId: string) => {
      const got = await call('POST', '/v1/assignments/next', {});
      expect(got.status, got.text).toBe(200);
      expect(got.body.task.task_id).toBe(taskId);
      return got.body;
    };
    const beat = (a: { assignment_id: string; lease_token: string }, draft: unknown) =>
      call('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, { lease_token: a.lease_token, active_ms: 10, draft });
    const draftOf = async (a: { assignment_id: string }) => (await call('GET', `/v1/assignments/${a.assignment_id}`)).body.draft;

    // Released: the draft is kept, and given back when the worker takes the task again.
    const a1 = await next(t1);
    expect((await beat(a1, { category: 'cat' })).status).toBe(200);
    expect((await call('POST', `/v1/assignments/${a1.assignment_id}/release`, { lease_token: a1.lease_token })).status).toBe(200);
    expect(await draftOf(a1)).toEqual({ category: 'cat' });
    const again = await next(t1);
    expect(again.draft).toEqual({ category: 'cat' });

    // Skipped: the task is not offered again; its draft goes, and so does the older released one.
    expect((await beat(again, { category: 'dog' })).status).toBe(200);
    const skip = await call('POST', `/v1/assignments/${again.assignment_id}/skip`, { lease_token: again.lease_token, reason: 'unclear' });
    expect(skip.status, skip.text).toBe(200);
    expect(skip.body.draft).toBeUndefined();
    expect(await draftOf(again)).toBeUndefined();
    expect(await draftOf(a1)).toBeUndefined();

    // Lapsed: kept (the worker gets it back) ...
    const a2 = await next(t2);
    expect((await beat(a2, { category: 'cat', note: 'lapsed' })).status).toBe(200);
    clock.advance(600_000 + 1000);
    await until(async () => (await call('GET', `/v1/assignments/${a2.assignment_id}`)).body.status === 'expired', 'the sweep');
    expect(await draftOf(a2)).toEqual({ category: 'cat', note: 'lapsed' });
    const a2again = await next(t2);
    expect(a2again.draft).toEqual({ category: 'cat', note: 'lapsed' });

    // ... until the task completes: then no draft of it is kept. A heartbeat after the submit is 409.
    const done = await call('POST', `/v1/assignments/${a2again.assignment_id}/submit`, {
      lease_token: a2again.lease_token,
      active_ms: 10,
      response: { category: 'cat' },
    });
    expect(done.status, done.text).toBe(200);
    expect((await customer('GET', `/v1/task/${t2}`)).body.status).toBe('completed');
    expect(await draftOf(a2again)).toBeUndefined();
    expect(await draftOf(a2)).toBeUndefined();
    const late = await beat(a2again, { category: 'dog' });
    expect([late.status, late.body.code]).toEqual([409, 'assignment_closed']);
    expect(await draftOf(a2again)).toBeUndefined();

    // A released draft of a task the customer cancels goes with it.
    const a3 = await next(t3);
    expect((await beat(a3, { category: 'dog' })).status).toBe(200);
    expect((await call('POST', `/v1/assignments/${a3.assignment_id}/release`, { lease_token: a3.lease_token })).status).toBe(200);
    expect(await draftOf(a3)).toEqual({ category: 'dog' });
    expect((await customer('POST', `/v1/task/${t3}/cancel`)).status).toBe(200);
    expect(await draftOf(a3)).toBeUndefined();

    // The history: every assignment, no draft.
    const history = (await call('GET', '/v1/assignments')).body.docs as { draft?: unknown }[];
    expect(history).toHaveLength(5);
    expect(history.filter((d) => d.draft !== undefined)).toEqual([]);
  });

  it("answers another tenant while a worker's maximal heartbeats are in flight, saves them, then limits the worker's large heartbeats", async () => {
    const attacker = await tenant();
    const other = await tenant();
    await attacker.task();
    const a = (await attacker.call('POST', '/v1/assignments/next', {})).body;
    const path = `/worker/v1/assignments/${a.assignment_id}/heartbeat`;
    const { hostname, port } = new URL(server.url);
    // Four heartbeats of a draft just under the cap, each stopped halfway through its body.
    const inFlight = Array.from({ length: 4 }, () => {
      const [start, rest] = heartbeatBody(a.lease_token, 1_040_000);
      const socket = connect(Number(port), hostname);
      let text = '';
      const answered = new Promise<number>((resolve, reject) => {
        socket.on('data', (chunk) => {
          text += chunk;
          const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
          if (status && text.includes('\r\n\r\n')) {
            socket.destroy();
            resolve(Number(status[1]));
          }
        });
        socket.on('error', reject);
      });
      const head = {
        ...bearer(attacker.worker.token),
        'content-type': 'application/json',
        'content-length': String(start.length + rest.length),
      };
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n${Object.entries(head)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n${start}`,
      );
      return { finish: () => socket.write(rest), answered };
    });
    // While all four are in flight, the other tenant's customer and worker are answered.
    expect((await other.customer('GET', '/v1/tasks')).status).toBe(200);
    expect((await other.call('GET', '/v1/me')).status).toBe(200);
    await other.task();
    expect((await other.call('POST', '/v1/assignments/next', {})).status).toBe(200);
    for (const h of inFlight) h.finish();
    expect(await Promise.all(inFlight.map((h) => h.answered))).toEqual([200, 200, 200, 200]);
    expect((await attacker.call('GET', `/v1/assignments/${a.assignment_id}`)).body.draft.blob).toHaveLength(1_040_000);

    // Large heartbeats (over 64 KB) of one worker: 10 at once, then one every 5 seconds.
    const large = JSON.parse(heartbeatBody(a.lease_token, 1_040_000).join(''));
    const answers: { status: number; code?: string; retryAfter: string | null }[] = [];
    while (answers.length < 20 && answers.at(-1)?.status !== 429) {
      const beat = await attacker.call('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, large);
      answers.push({ status: beat.status, code: beat.body.code, retryAfter: beat.headers.get('retry-after') });
    }
    expect(answers.length).toBeGreaterThanOrEqual(7);
    expect(answers.slice(0, -1).every((x) => x.status === 200)).toBe(true);
    expect(answers.at(-1)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(answers.at(-1)!.retryAfter)).toBeGreaterThanOrEqual(1);
    // A small heartbeat keeps the lease meanwhile, and the other tenant is still answered.
    expect(
      (await attacker.call('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, { lease_token: a.lease_token, active_ms: 1 })).status,
    ).toBe(200);
    expect((await other.customer('GET', '/v1/tasks')).status).toBe(200);
  });
});
