// The client's transport with a scripted fetch: auth, User-Agent, Idempotency-Key, retry policy
// (what is retried, how long it waits), typed error bodies and HumantaskError.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient, createLegacyClient, HumantaskError, VERSION, type ClientOptions } from '../../../client/index.ts';
import { root } from '../../support/spec.ts';

interface Sent {
  method: string;
  url: string;
  headers: Headers;
  body: string;
}

const task = { task_id: '65f1c0a2b3c4d5e6f7a8b9c0', type: 'categorization', status: 'pending' };
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const failure = (status: number, headers: Record<string, string> = {}) =>
  json(status, { status_code: status, error: `status ${status}` }, headers);
const networkError = (code = 'ECONNRESET') =>
  Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });

/** A fetch that answers from a script (a Response, or an error to throw) and records what it got. */
function scripted(...script: (Response | Error)[]) {
  const sent: Sent[] = [];
  const fetch = async (request: Request) => {
    sent.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
    const next = script.shift() ?? json(200, task);
    if (next instanceof Error) throw next;
    return next;
  };
  return { fetch, sent };
}

const fast = { retries: 3, minDelayMs: 1, maxDelayMs: 20 };
const client = (fetch: ClientOptions['fetch'], extra: Partial<ClientOptions> = {}) =>
  createClient({ apiKey: 'test_abc', baseUrl: 'https://ht.example/', fetch, retry: fast, ...extra });
const body = { attachment_type: 'text' as const, attachment: 'x', categories: ['a'] };

describe('requests', () => {
  it('carry Basic auth, a User-Agent and, on creations, an Idempotency-Key', async () => {
    const s = scripted();
    const c = client(s.fetch, { userAgent: 'my-app/2.0' });
    await c.tasks.create('categorization', body);
    await c.tasks.get(task.task_id);
    const [create, get] = s.sent;
    expect(create).toMatchObject({ method: 'POST', url: 'https://ht.example/v1/task/categorization' });
    expect(create!.headers.get('authorization')).toBe('Basic ' + Buffer.from('test_abc:').toString('base64'));
    expect(create!.headers.get('user-agent')).toBe(`my-app/2.0 humantask-client/${VERSION} node/${process.versions.node}`);
    expect(create!.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(create!.body)).toEqual(body);
    expect(create!.headers.get('idempotency-key')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(get!.headers.get('idempotency-key')).toBeNull();
    expect(get!.url).toBe(`https://ht.example/v1/task/${task.task_id}`);
  });

  it('use a new key per creation, or the one given', async () => {
    const s = scripted();
    const c = client(s.fetch);
    await c.tasks.create('categorization', body);
    await c.tasks.create('categorization', body);
    await c.trainingTasks.create(
      'textcollection',
      { attachments: [], fields: [], expected_response: { annotations: {} } },
      { idempotencyKey: 'mine-1' },
    );
    await c.evaluationTasks.create('textcollection', { attachments: [], fields: [], expected_response: { annotations: {} } });
    const keys = s.sent.map((r) => r.headers.get('idempotency-key'));
    expect(new Set(keys).size).toBe(4);
    expect(keys[2]).toBe('mine-1');
    expect(keys[3]).not.toBeNull();
  });

  it('go to {origin}/legacy/v1 for the older generation, with query parameters serialized', async () => {
    const s = scripted(json(200, { docs: [], total: 0, limit: 5, offset: 10, has_more: false }));
    const c = createLegacyClient({ apiKey: 'k', baseUrl: 'https://ht.example', fetch: s.fetch });
    await c.tasks.list({ limit: 5, offset: 10, tags: ['a', 'b'], status: ['completed'] });
    expect(s.sent[0]!.url).toBe('https://ht.example/legacy/v1/tasks?limit=5&offset=10&tags=a&tags=b&status=completed');
  });

  it('percent-encode path parameters', async () => {
    const s = scripted(json(200, {}));
    await client(s.fetch).projects.get('street scenes/2026');
    expect(s.sent[0]!.url).toBe('https://ht.example/v1/projects/street%20scenes%2F2026');
  });
});

describe('retries', () => {
  it('retry a creation after 5xx, 408 and network failures with the same Idempotency-Key', async () => {
    const s = scripted(failure(503), networkError(), failure(408), json(200, task));
    const res = await client(s.fetch).tasks.create('categorization', body);
    expect(res.ok).toBe(true);
    expect(s.sent).toHaveLength(4);
    expect(new Set(s.sent.map((r) => r.headers.get('idempotency-key'))).size).toBe(1);
    expect(new Set(s.sent.map((r) => r.body)).size).toBe(1);
  });

  it('give every operation that takes an Idempotency-Key one, and retry it with that key', async () => {
    const calls = [
      (c: ReturnType<typeof client>) => c.projects.create({ type: 'categorization', name: 'p' }),
      (c: ReturnType<typeof client>) => c.batches.create({ project: 'p', name: 'b' }),
      (c: ReturnType<typeof client>) => c.tasks.create('categorization', body),
    ];
    for (const call of calls) {
      const s = scripted(networkError(), failure(502), json(200, {}));
      expect((await call(client(s.fetch))).ok).toBe(true);
      expect(s.sent).toHaveLength(3);
      const keys = new Set(s.sent.map((r) => r.headers.get('idempotency-key')));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('give up after `retries` and return the last answer', async () => {
    const s = scripted(failure(500), failure(502), failure(503), failure(504), json(200, task));
    const res = await client(s.fetch).tasks.get(task.task_id);
    expect(res.status).toBe(504);
    expect(s.sent).toHaveLength(4);
  });

  it('rethrow the network error when retries are exhausted', async () => {
    const s = scripted(networkError(), networkError());
    await expect(client(s.fetch, { retry: { ...fast, retries: 1 } }).tasks.get(task.task_id)).rejects.toThrow('fetch failed');
    expect(s.sent).toHaveLength(2);
  });

  it('honour Retry-After on a 429', async () => {
    const s = scripted(failure(429, { 'retry-after': '1' }), json(200, task));
    const started = Date.now();
    const res = await client(s.fetch, { retry: { retries: 1, minDelayMs: 1, maxDelayMs: 2000 } }).tasks.create('categorization', body);
    expect(res.ok).toBe(true);
    expect(s.sent).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
  });

  it('return a 429 whose Retry-After is longer than maxDelayMs instead of waiting', async () => {
    const s = scripted(failure(429, { 'retry-after': '120' }));
    const res = await client(s.fetch).tasks.get(task.task_id);
    expect(res.status).toBe(429);
    expect(s.sent).toHaveLength(1);
  });

  it('retry a request that is not idempotent only when it surely did not run (429, refused connection)', async () => {
    // Setting a project's parameters makes a new version each time: not idempotent, no key.
    const params = { instruction: 'Which animal?' };
    for (const answer of [failure(500), failure(503), networkError('ECONNRESET')]) {
      const s = scripted(answer, json(200, {}));
      const c = client(s.fetch);
      await c.projects.setParams('p', params).catch(() => undefined);
      expect(s.sent).toHaveLength(1);
      expect(s.sent[0]!.headers.get('idempotency-key')).toBeNull();
    }
    for (const answer of [failure(429), networkError('ECONNREFUSED')]) {
      const s = scripted(answer, json(200, {}));
      expect((await client(s.fetch).projects.setParams('p', params)).ok).toBe(true);
      expect(s.sent).toHaveLength(2);
    }
  });

  it('retry operations the API makes idempotent: cancel, setMetadata, tags, finalize', async () => {
    const calls = [
      (c: ReturnType<typeof client>) => c.tasks.cancel(task.task_id),
      (c: ReturnType<typeof client>) => c.tasks.setMetadata(task.task_id, { a: 1 }),
      (c: ReturnType<typeof client>) => c.tasks.addTags(task.task_id, ['a']),
      (c: ReturnType<typeof client>) => c.tasks.putTags(task.task_id, ['a']),
      (c: ReturnType<typeof client>) => c.tasks.removeTags(task.task_id, ['a']),
      (c: ReturnType<typeof client>) => c.tasks.deleteUniqueId(task.task_id),
      (c: ReturnType<typeof client>) => c.batches.finalize('b'),
      (c: ReturnType<typeof client>) => c.batches.setMetadata('b', {}),
    ];
    for (const call of calls) {
      const s = scripted(failure(503), json(200, task));
      expect((await call(client(s.fetch))).ok).toBe(true);
      expect(s.sent).toHaveLength(2);
    }
    for (const call of [
      (c: ReturnType<typeof client>) => c.tasks.audit(task.task_id, { accepted: false }),
      (c: ReturnType<typeof client>) => c.projects.setParams('p', {}),
    ]) {
      const s = scripted(failure(503), json(200, task));
      expect((await call(client(s.fetch))).status).toBe(503);
      expect(s.sent).toHaveLength(1);
    }
  });

  it('do not retry the older generation’s 500 for cancelling a completed task', async () => {
    const s = scripted(failure(500), json(200, task));
    const legacy = createLegacyClient({ apiKey: 'k', baseUrl: 'https://ht.example', fetch: s.fetch, retry: fast });
    expect((await legacy.tasks.cancel(task.task_id)).status).toBe(500);
    expect(s.sent).toHaveLength(1);
  });

  it('do not retry 4xx answers (but 408 and 429), nor with retry: false', async () => {
    for (const status of [400, 401, 402, 404, 409, 413]) {
      const s = scripted(failure(status), json(200, task));
      expect((await client(s.fetch).tasks.create('categorization', body)).status).toBe(status);
      expect(s.sent).toHaveLength(1);
    }
    const s = scripted(failure(503), json(200, task));
    expect((await client(s.fetch, { retry: false }).tasks.get(task.task_id)).status).toBe(503);
    expect(s.sent).toHaveLength(1);
  });

  it('stop waiting when the request is aborted', async () => {
    const s = scripted(failure(503), json(200, task));
    const controller = new AbortController();
    const c = client(s.fetch, { retry: { retries: 3, minDelayMs: 60_000, maxDelayMs: 60_000 } });
    const pending = c.tasks.get(task.task_id, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await expect(pending).rejects.toThrow('stop');
    expect(s.sent).toHaveLength(1);
  });
});

describe('errors', () => {
  it('are always {status_code, error} bodies, also when the answer is not the API’s', async () => {
    const s = scripted(
      new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway', headers: { 'content-type': 'text/html' } }),
      new Response('', { status: 503 }),
      new Response('upstream timed out', { status: 504 }),
    );
    const c = client(s.fetch, { retry: false });
    expect((await c.tasks.list()).error).toEqual({ status_code: 502, error: 'Bad Gateway' });
    expect((await c.tasks.list()).error).toEqual({ status_code: 503, error: 'HTTP 503' });
    expect((await c.tasks.list()).error).toEqual({ status_code: 504, error: 'upstream timed out' });
  });

  it('are thrown as HumantaskError with throwOnError, request id included', async () => {
    const s = scripted(failure(429, { 'x-request-id': 'req-42', 'retry-after': '300' }));
    const c = client(s.fetch, { throwOnError: true });
    const err = await c.tasks.cancel(task.task_id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HumantaskError);
    expect(err).toMatchObject({
      name: 'HumantaskError',
      status: 429,
      body: { status_code: 429, error: 'status 429' },
      requestId: 'req-42',
      retryAfter: 300,
      operation: 'POST /v1/task/{taskId}/cancel',
      message: 'POST /v1/task/{taskId}/cancel failed with 429: status 429',
    });
  });

  it('are thrown by the iterators, which have no result to return them in', async () => {
    const s = scripted(json(200, { docs: [task], total: 2, limit: 1, has_more: true, next_token: 't1' }), failure(400));
    const seen: unknown[] = [];
    const walk = async () => {
      for await (const t of client(s.fetch).tasks.iterate({ limit: 1 })) seen.push(t);
    };
    await expect(walk()).rejects.toBeInstanceOf(HumantaskError);
    expect(seen).toHaveLength(1);
    expect(s.sent[1]!.url).toBe('https://ht.example/v1/tasks?limit=1&next_token=t1');
  });
});

it('VERSION is the package version', () => {
  expect(VERSION).toBe(JSON.parse(readFileSync(path.join(root, 'client', 'package.json'), 'utf8')).version);
});
