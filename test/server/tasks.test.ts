// The reference server's task operations, over HTTP on loopback, on PGlite and on PostgreSQL.
// The server validates its own answers against the contract here, so a wrong shape fails too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const categorization = {
  callback_url: 'https://example.com/callback',
  instruction: 'Which department should handle this ticket?',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support', 'sales'],
};

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('tasks on %s', (db) => {
  let server: TestServer;
  let other: AccountSecrets;
  let current: ReturnType<typeof client>;
  let legacy: ReturnType<typeof client>;
  let live: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer(db);
    other = await createAccount(server.uow, 'other', new Date());
    current = client(server, 'current', server.dev.test_key);
    legacy = client(server, 'legacy', server.dev.test_key);
    live = client(server, 'current', server.dev.live_key);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers 401 with WWW-Authenticate without a valid key', async () => {
    for (const key of [null, 'test_unknown']) {
      const res = await client(server, 'current', key)('GET', '/v1/tasks');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="humantask"');
      expect(res.body).toEqual({ status_code: 401, error: expect.stringContaining('API key'), request_id: expect.any(String) });
    }
  });

  it('creates a test-mode task pending, and every later read shows it completed', async () => {
    const created = await current('POST', '/v1/task/categorization', { json: categorization });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ type: 'categorization', status: 'pending', metadata: {}, audits: [] });
    expect(created.body.task_id).toMatch(/^[0-9a-f]{24}$/);
    expect(created.body.params).toEqual({
      attachment_type: 'text',
      attachment: 'My invoice is wrong.',
      categories: ['billing', 'support', 'sales'],
    });
    const read = await current('GET', `/v1/task/${created.body.task_id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: 'completed', customer_review_status: 'pending' });
    expect(categorization.categories).toContain(read.body.response.category);
  });

  it('keeps a live-mode task pending (a worker does it)', async () => {
    const created = await live('POST', '/v1/task/categorization', { json: categorization });
    expect(created.status).toBe(200);
    const read = await live('GET', `/v1/task/${created.body.task_id}`);
    expect(read.body.status).toBe('pending');
    expect(read.body).not.toHaveProperty('response');
  });

  it('shows one task through both generations, each in its own view', async () => {
    const created = await current('POST', '/v1/task/categorization', { json: categorization });
    const seen = await legacy('GET', `/v1/task/${created.body.task_id}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ task_id: created.body.task_id, status: 'completed', urgency: 'day' });
  });

  it("shows a task's fields in the order they always had, in both generations", async () => {
    const created = await current('POST', '/v1/task/categorization', {
      json: { ...categorization, unique_id: `order-${db}`, tags: ['a'] },
    });
    const order = {
      current: ['task_id', 'type', 'params', 'response', 'status', 'instruction', 'callback_url', 'callback_completed'],
      legacy: ['task_id', 'type', 'params', 'response', 'status', 'instruction', 'callback_url', 'callback_succeeded', 'urgency'],
    };
    const rest = ['created_at', 'updated_at', 'completed_at', 'customer_review_status', 'times_redone', 'metadata'];
    const tail = ['project_param_version', 'audits', 'unique_id', 'tags', 'project', 'batch'];
    for (const [gen, call] of [
      ['current', current],
      ['legacy', legacy],
    ] as const) {
      const seen = await call('GET', `/v1/task/${created.body.task_id}`);
      const keys = Object.keys(seen.body);
      const expected = [...order[gen], ...rest, ...tail].filter((k) => keys.includes(k));
      expect(keys, gen).toEqual(expected);
      expect(keys.slice(0, 5), gen).toEqual(['task_id', 'type', 'params', 'response', 'status']);
    }
  });

  it('takes older-generation creation as a form body (numbers, booleans and lists as strings)', async () => {
    const form =
      'callback_url=https%3A%2F%2Fexample.com%2Fcb&attachment=https%3A%2F%2Fexample.com%2Fa.jpg' +
      '&objects_to_annotate=car&objects_to_annotate=truck&with_labels=true&min_width=30&urgency=week&metadata%5Bbatch_ref%5D=7';
    const res = await legacy('POST', '/v1/task/annotation', { form });
    expect(res.status, res.text).toBe(200);
    expect(res.body.params).toMatchObject({ objects_to_annotate: ['car', 'truck'], with_labels: true, min_width: 30 });
    expect(res.body).toMatchObject({ urgency: 'week', metadata: { batch_ref: '7' } });
    const single = await legacy('POST', '/v1/task/annotation', {
      form: 'callback_url=a%40example.com&attachment=https%3A%2F%2Fexample.com%2Fa.jpg&objects_to_annotate=car',
    });
    expect(single.status, single.text).toBe(200);
    expect(single.body.params.objects_to_annotate).toEqual(['car']);
  });

  it('accepts numeric strings in JSON and ignores unknown parameters', async () => {
    const res = await current('POST', '/v1/task/annotation', {
      json: {
        callback_url: 'https://example.com/cb',
        attachment: 'https://example.com/a.jpg',
        objects_to_annotate: ['car'],
        min_width: '30',
        surprise: 1,
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.params).toEqual({ attachment: 'https://example.com/a.jpg', objects_to_annotate: ['car'], min_width: 30 });
  });

  it.each([
    ['a missing required field', { ...categorization, categories: undefined }, 'categories'],
    ['a wrong type', { ...categorization, categories: 'billing' }, 'categories'],
    ['a bad enum value', { ...categorization, attachment_type: 'hologram' }, 'attachment_type'],
    ['no callback_url and no account default', { ...categorization, callback_url: undefined }, 'callback_url'],
  ])('rejects %s with 400 naming the field, storing nothing', async (_what, body, field) => {
    const before = await current('GET', '/v1/tasks?limit=1');
    const res = await current('POST', '/v1/task/categorization', { json: body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status_code: 400, error: expect.stringContaining(field), request_id: expect.any(String) });
    const after = await current('GET', '/v1/tasks?limit=1');
    expect(after.body.total).toBe(before.body.total);
  });

  it('rejects more than 6 objects_to_annotate, and malformed JSON', async () => {
    const six = await current('POST', '/v1/task/annotation', {
      json: {
        callback_url: 'https://example.com/cb',
        attachment: 'https://example.com/a.jpg',
        objects_to_annotate: ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
      },
    });
    expect(six.status).toBe(400);
    expect(six.body.error).toContain('objects_to_annotate');
    const bad = await current('POST', '/v1/task/annotation', { headers: { 'content-type': 'application/json' }, form: '{"a":' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('JSON');
  });

  it('answers unknown routes with 404 JSON and bodies over 10 MB with 413', async () => {
    const unknown = await current('GET', '/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ status_code: 404, error: expect.any(String), request_id: expect.any(String) });
    const huge = await current('POST', '/v1/task/categorization', {
      json: { ...categorization, attachment: 'x'.repeat(10 * 1024 * 1024 + 10) },
    });
    expect(huge.status).toBe(413);
    expect(huge.body.status_code).toBe(413);
  });

  describe('the task state table (seed 3.1)', () => {
    it.each(['current', 'legacy'] as const)('%s: pending → canceled by cancel; cancel again → 200 canceled', async (gen) => {
      const api = client(server, gen, server.dev.live_key);
      const t = await api('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: `c-${db}-${gen}` } });
      expect(t.body.status).toBe('pending');
      const c1 = await api('POST', `/v1/task/${t.body.task_id}/cancel`);
      expect(c1.status).toBe(200);
      expect(c1.body.status).toBe('canceled');
      expect(c1.body.unique_id).toBe(`c-${db}-${gen}`);
      const c2 = await api('POST', `/v1/task/${t.body.task_id}/cancel?clear_unique_id=TRUE`);
      expect(c2.status).toBe(200);
      expect(c2.body).toMatchObject({ status: 'canceled' });
      expect(c2.body).not.toHaveProperty('unique_id');
      // The unique_id is free again.
      expect((await api('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: `c-${db}-${gen}` } })).status).toBe(200);
    });

    it('completed: cancel is refused, 400 in the current generation and 500 in the older one', async () => {
      const t = await current('POST', '/v1/task/categorization', { json: categorization });
      const now = await current('POST', `/v1/task/${t.body.task_id}/cancel`);
      expect(now.status).toBe(400);
      expect(now.body.error).toContain('completed');
      const old = await legacy('POST', `/v1/task/${t.body.task_id}/cancel`);
      expect(old.status).toBe(500);
      expect(old.body.status_code).toBe(500);
      expect((await current('GET', `/v1/task/${t.body.task_id}`)).body.status).toBe('completed');
    });

    it('pending → error when an attachment cannot be fetched (older generation: completed with response.error)', async () => {
      const body = {
        ...categorization,
        attachment_type: 'image',
        attachment: 'https://missing.invalid/a.jpg',
        unique_id: `e-${db}-1`,
        clear_unique_id_on_error: true,
      };
      const t = await current('POST', '/v1/task/categorization', { json: body });
      expect(t.status, t.text).toBe(200);
      const now = await current('GET', `/v1/task/${t.body.task_id}`);
      expect(now.body).toMatchObject({ status: 'error', response: { error: expect.stringContaining('missing.invalid') } });
      expect(now.body).not.toHaveProperty('unique_id');
      const old = await legacy('GET', `/v1/task/${t.body.task_id}`);
      expect(old.body).toMatchObject({ status: 'completed', response: { error: expect.any(String) } });
      const kept = await current('POST', '/v1/task/categorization', {
        json: { ...body, unique_id: `e-${db}-2`, clear_unique_id_on_error: false },
      });
      expect((await current('GET', `/v1/task/${kept.body.task_id}`)).body.unique_id).toBe(`e-${db}-2`);
    });
  });

  describe('duplicate prevention', () => {
    it('answers 409 naming the unique_id and the task that holds it', async () => {
      const first = await current('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: `u-${db}` } });
      const second = await current('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: `u-${db}` } });
      expect(second.status).toBe(409);
      expect(second.body.error).toBe(`The unique_id ("u-${db}") is already used for a different task (${first.body.task_id}).`);
      // The other mode is another world: the same unique_id is free there.
      expect((await live('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: `u-${db}` } })).status).toBe(200);
    });

    it('50 concurrent creations with one unique_id: exactly 1 task, 49 × 409', async () => {
      const uid = `race-${db}`;
      const results = await Promise.all(
        Array.from({ length: 50 }, () => current('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: uid } })),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(49);
      const listed = await current('GET', `/v1/tasks?unique_id=${uid}`);
      expect(listed.body.total).toBe(1);
    });

    it('replays an Idempotency-Key answer byte for byte and creates nothing', async () => {
      const headers = { 'Idempotency-Key': `k-${db}-1` };
      const first = await current('POST', '/v1/task/categorization', { json: categorization, headers });
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const reordered = Object.fromEntries(Object.entries(categorization).reverse());
      const again = await current('POST', '/v1/task/categorization', { json: reordered, headers });
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const listed = await current('GET', `/v1/tasks?limit=100`);
      expect(listed.body.docs.filter((d: { task_id: string }) => d.task_id === first.body.task_id)).toHaveLength(1);
    });

    it('answers 409 for the same key with another request, keeps keys per mode, and saves errors too', async () => {
      const headers = { 'Idempotency-Key': `k-${db}-2` };
      const first = await current('POST', '/v1/task/categorization', { json: categorization, headers });
      const changed = await current('POST', '/v1/task/categorization', { json: { ...categorization, instruction: 'other' }, headers });
      expect(changed.status).toBe(409);
      expect(changed.body.error).not.toContain('categorization');
      // The live key has keys of its own: the test key's use neither blocks nor replays there.
      const liveTask = await live('POST', '/v1/task/categorization', { json: categorization, headers });
      expect(liveTask.status).toBe(200);
      expect(liveTask.headers.get('idempotent-replayed')).toBeNull();
      expect(liveTask.body.task_id).not.toBe(first.body.task_id);
      const badHeaders = { 'Idempotency-Key': `k-${db}-3` };
      const bad = await current('POST', '/v1/task/categorization', { json: { ...categorization, categories: 'x' }, headers: badHeaders });
      const replayed = await current('POST', '/v1/task/categorization', {
        json: { ...categorization, categories: 'x' },
        headers: badHeaders,
      });
      expect(bad.status).toBe(400);
      expect(replayed.text).toBe(bad.text);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      const invalidKey = await current('POST', '/v1/task/categorization', { json: categorization, headers: { 'Idempotency-Key': 'a b' } });
      expect(invalidKey.status).toBe(400);
    });

    it('50 concurrent identical requests with one Idempotency-Key: 1 task, the same task_id, no 5xx', async () => {
      const headers = { 'Idempotency-Key': `k-${db}-race` };
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          current('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: `idem-${db}` }, headers }),
        ),
      );
      expect(results.filter((r) => r.status >= 500)).toEqual([]);
      const ok = results.filter((r) => r.status === 200);
      expect(ok.length).toBeGreaterThan(0);
      expect(new Set(ok.map((r) => r.body.task_id)).size).toBe(1);
      expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
      expect((await current('GET', `/v1/tasks?unique_id=idem-${db}`)).body.total).toBe(1);
    });
  });

  describe('isolation', () => {
    it('hides a task from other accounts and from the other mode (404, never listed)', async () => {
      const t = await current('POST', '/v1/task/categorization', { json: categorization });
      const id = t.body.task_id;
      const stranger = client(server, 'current', other.test_key);
      const otherMode = client(server, 'current', server.dev.live_key);
      for (const who of [stranger, otherMode]) {
        for (const [method, path, json] of [
          ['GET', `/v1/task/${id}`, undefined],
          ['POST', `/v1/task/${id}/cancel`, undefined],
          ['POST', `/v1/task/${id}/setMetadata`, { a: 1 }],
          ['POST', `/v1/task/${id}/unique_id`, { unique_id: 'mine' }],
          ['DELETE', `/v1/task/${id}/unique_id`, undefined],
          ['POST', `/v1/task/${id}/tags`, ['x']],
          ['PUT', `/v1/task/${id}/tags`, ['x']],
          ['DELETE', `/v1/task/${id}/tags`, ['x']],
          ['POST', `/v1/task/${id}/audit`, { accepted: true }],
        ] as const) {
          const res = await who(method, path, json === undefined ? {} : { json });
          expect(res.status, `${method} ${path}`).toBe(404);
        }
        const list = await who('GET', '/v1/tasks?limit=100');
        expect(list.body.docs.map((d: { task_id: string }) => d.task_id)).not.toContain(id);
      }
      expect((await current('GET', `/v1/task/${id}`)).body.status).toBe('completed');
    });
  });

  describe('task changes', () => {
    it('replaces metadata; adds and removes tags up to 5; sets and deletes unique_id', async () => {
      const t = await live('POST', '/v1/task/categorization', { json: { ...categorization, metadata: { a: 1 } } });
      const id = t.body.task_id;
      expect((await live('POST', `/v1/task/${id}/setMetadata`, { json: { b: 2 } })).body.metadata).toEqual({ b: 2 });
      expect((await live('POST', `/v1/task/${id}/tags`, { json: ['x', 'y'] })).body.tags).toEqual(['x', 'y']);
      expect((await live('PUT', `/v1/task/${id}/tags`, { json: ['y', 'z'] })).body.tags).toEqual(['x', 'y', 'z']);
      const tooMany = await live('POST', `/v1/task/${id}/tags`, { json: ['1', '2', '3'] });
      expect(tooMany.status).toBe(400);
      expect((await live('GET', `/v1/task/${id}`)).body.tags).toEqual(['x', 'y', 'z']);
      expect((await live('DELETE', `/v1/task/${id}/tags`, { json: ['x', 'y', 'z', 'absent'] })).body).not.toHaveProperty('tags');
      expect((await live('POST', `/v1/task/${id}/unique_id`, { json: { unique_id: `set-${db}` } })).body.unique_id).toBe(`set-${db}`);
      const taken = await live('POST', '/v1/task/categorization', { json: { ...categorization, unique_id: `set-${db}` } });
      expect(taken.status).toBe(409);
      expect((await live('DELETE', `/v1/task/${id}/unique_id`)).body).not.toHaveProperty('unique_id');
    });

    it('records a customer review; a rejected test task is redone at once', async () => {
      const t = await current('POST', '/v1/task/categorization', { json: categorization });
      const id = t.body.task_id;
      const accepted = await current('POST', `/v1/task/${id}/audit`, { json: { accepted: true } });
      expect(accepted.status, accepted.text).toBe(200);
      expect(accepted.body).toMatchObject({
        customer_review_status: 'accepted',
        audits: [{ audit_result: 'accepted', audit_source: 'customer' }],
      });
      const rejected = await current('POST', `/v1/task/${id}/audit`, { json: { accepted: false, comments: 'wrong' } });
      // The answer shows the task as the audit left it; test mode has already redone it for every later read.
      expect(rejected.body).toMatchObject({ customer_review_status: 'rejected', status: 'completed', response: accepted.body.response });
      expect(rejected.body.times_redone).toBeUndefined(); // not redone yet as far as the answer goes
      expect(rejected.body.audits).toHaveLength(2);
      const redone = await current('GET', `/v1/task/${id}`);
      expect(redone.body).toMatchObject({ times_redone: 1, customer_review_status: 'fixed', status: 'completed' });
      expect(redone.body.audits).toHaveLength(2);
      const pending = await live('POST', '/v1/task/categorization', { json: categorization });
      expect((await live('POST', `/v1/task/${pending.body.task_id}/audit`, { json: { accepted: true } })).status).toBe(400);
    });
  });

  describe('lists', () => {
    it('orders by created_at descending, filters, and pages by offset (older) and next_token (current)', async () => {
      const fresh = client(server, 'current', other.live_key);
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const r = await fresh('POST', '/v1/task/categorization', { json: { ...categorization, tags: i % 2 ? ['odd'] : ['even'] } });
        ids.push(r.body.task_id);
      }
      const all = await fresh('GET', '/v1/tasks');
      expect(all.body.docs.map((d: { task_id: string }) => d.task_id)).toEqual([...ids].reverse());
      expect(all.body).toMatchObject({ total: 7, limit: 100, has_more: false });
      expect(all.body).not.toHaveProperty('next_token');
      expect((await fresh('GET', '/v1/tasks?tags=odd')).body.total).toBe(3);
      expect((await fresh('GET', '/v1/tasks?tags=odd,even')).body.total).toBe(0);
      const page1 = await fresh('GET', '/v1/tasks?limit=3');
      expect(page1.body).toMatchObject({ total: 7, has_more: true, next_token: expect.any(String) });
      const page2 = await fresh('GET', `/v1/tasks?limit=3&next_token=${page1.body.next_token}`);
      expect(page2.body.docs.map((d: { task_id: string }) => d.task_id)).toEqual([...ids].reverse().slice(3, 6));
      const misuse = await fresh('GET', `/v1/tasks?limit=3&status=pending&next_token=${page1.body.next_token}`);
      expect(misuse.status).toBe(400);
      expect(misuse.body.error).toContain('next_token');
      const stolen = await client(server, 'current', other.test_key)('GET', `/v1/tasks?limit=3&next_token=${page1.body.next_token}`);
      expect(stolen.status).toBe(400);
      const older = await client(server, 'legacy', other.live_key)('GET', '/v1/tasks?limit=3&offset=3');
      expect(older.body).toMatchObject({ total: 7, limit: 3, offset: 3, has_more: true });
      expect(older.body.docs.map((d: { task_id: string }) => d.task_id)).toEqual([...ids].reverse().slice(3, 6));
    });

    it('walking next_token pages while 200 tasks are created returns each earlier task exactly once', async () => {
      const walker = await createAccount(server.uow, `walker-${db}`, new Date());
      const api = client(server, 'current', walker.live_key);
      const earlier: string[] = [];
      for (let i = 0; i < 60; i++) earlier.push((await api('POST', '/v1/task/categorization', { json: categorization })).body.task_id);
      const inserting = Promise.all(Array.from({ length: 200 }, () => api('POST', '/v1/task/categorization', { json: categorization })));
      const seen: string[] = [];
      let token: string | undefined;
      do {
        const page = await api('GET', `/v1/tasks?limit=7${token ? `&next_token=${token}` : ''}`);
        expect(page.status).toBe(200);
        seen.push(...page.body.docs.map((d: { task_id: string }) => d.task_id));
        token = page.body.next_token;
      } while (token);
      await inserting;
      for (const id of earlier) expect(seen.filter((s) => s === id)).toHaveLength(1);
      expect(new Set(seen).size).toBe(seen.length);
    });
  });
});

describe('value types', () => {
  it('keeps a string choice value a string ("3" is not 3), while a lenient number field takes "30"', async () => {
    const server = await startTestServer('pglite');
    try {
      const api = client(server, 'current', server.dev.live_key);
      const res = await api('POST', '/v1/task/textcollection', {
        json: {
          callback_url: 'https://example.com/cb',
          attachments: [{ type: 'text', content: 'Rate this.' }],
          fields: [
            {
              type: 'category',
              field_id: 'stars',
              title: 'Stars',
              choices: [
                { label: 'Three', value: '3' },
                { label: 'Four', value: 4 },
              ],
            },
          ],
        },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.params.fields[0].choices.map((c: { value: unknown }) => c.value)).toEqual(['3', 4]);
    } finally {
      await server.close();
    }
  });
});
