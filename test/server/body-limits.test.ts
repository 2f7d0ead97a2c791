// What a body may hold before any handler sees it (issue 15, findings 4, 5, 6, 7 and 11's 1e309):
// the key is checked before the body is read, nesting is limited, lone surrogates and numbers that
// overflow to infinity are refused naming the field, and offsets have a documented maximum. Each
// refusal is a 400 (401 without a key) and leaves nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { MAX_JSON_DEPTH } from '../../server/http/body-limits.ts';
import { basicAuth } from '../support/net.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const categorization = {
  callback_url: 'https://example.com/cb',
  instruction: 'Pick one.',
  attachment_type: 'text',
  attachment: 'x',
  categories: ['a', 'b'],
};

/** POSTs `text` as it is, as JSON: bodies JSON.stringify cannot write (1e309, deep nesting). */
async function postRaw(server: TestServer, key: string | null, path: string, text: string) {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key !== null ? { authorization: basicAuth(key) } : {}) },
    body: text,
  });
  const raw = await res.text();
  return { status: res.status, body: JSON.parse(raw) as { status_code: number; error: string } };
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('request bodies on %s', (db) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(db);
  });
  afterAll(async () => {
    await server?.close();
  });

  const account = async (name: string) => (await createAccount(server.uow, `${name}-${db}`, new Date())).test_key;
  const stored = async (key: string) => {
    const api = client(server, 'current', key);
    return {
      tasks: (await api('GET', '/v1/tasks')).body.total as number,
      projects: ((await api('GET', '/v1/projects')).body as unknown[]).length,
      training: (await api('GET', '/v1/training_tasks')).body.total as number,
    };
  };

  it('nesting deeper than the limit → 400 naming the limit; at the limit the body is taken', async () => {
    const key = await account('deep');
    const nest = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    // The body object is level 1, metadata level 2, its `deep` array level 3.
    const deep = await postRaw(
      server,
      key,
      '/v1/task/categorization',
      JSON.stringify({ ...categorization, metadata: { deep: 0 } }).replace('0', nest(MAX_JSON_DEPTH - 1)),
    );
    expect(deep.status).toBe(400);
    expect(deep.body.error).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    expect(await stored(key)).toEqual({ tasks: 0, projects: 0, training: 0 });
    // 10,000 levels with a key: the same 400 (it was a 500).
    expect((await postRaw(server, key, '/v1/task/categorization', nest(10_000))).status).toBe(400);

    const atLimit = await postRaw(
      server,
      key,
      '/v1/task/categorization',
      JSON.stringify({ ...categorization, metadata: { deep: 0 } }).replace('0', nest(MAX_JSON_DEPTH - 2)),
    );
    expect(atLimit.status, atLimit.body.error).toBe(200);
    expect(await stored(key)).toMatchObject({ tasks: 1 });
    // Brackets inside strings are text, not nesting.
    const inText = await postRaw(
      server,
      key,
      '/v1/task/categorization',
      JSON.stringify({ ...categorization, instruction: '[{"\\'.repeat(200) }),
    );
    expect(inText.status, inText.body.error).toBe(200);
  });

  it('without a valid key the body is never parsed: 401, whatever it holds', async () => {
    // 10,000 levels (was a 500 before authentication), malformed JSON, 9.9 MB: all 401, not 400 or 413.
    for (const text of ['['.repeat(10_000), '{not json', `{"metadata":"${'x'.repeat(9_900_000)}"`]) {
      for (const key of [null, 'no-such-key']) {
        const res = await postRaw(server, key, '/v1/task/categorization', text);
        expect(res.status).toBe(401);
        expect(res.body.error).toContain('API key');
      }
    }
    // The same malformed body with a key is read, and refused as JSON.
    const key = await account('parsed-after-auth');
    expect((await postRaw(server, key, '/v1/task/categorization', '{not json')).status).toBe(400);
  });

  it.each([
    ['instruction', '/v1/task/categorization', { ...categorization, instruction: 'a\ud800b' }, 'body.instruction'],
    ['a metadata value', '/v1/task/categorization', { ...categorization, metadata: { note: ['ok', '\udc00'] } }, 'body.metadata.note.1'],
    ['a metadata key', '/v1/task/categorization', { ...categorization, metadata: { 'k\ud800': 1 } }, 'body.metadata (a key)'],
    ['unique_id', '/v1/task/categorization', { ...categorization, unique_id: '\ud800' }, 'body.unique_id'],
    ['tags', '/v1/task/categorization', { ...categorization, tags: ['fine', 'x\udbff'] }, 'body.tags.1'],
    ['a project name', '/v1/projects', { type: 'categorization', name: 'p\ud800' }, 'body.name'],
    [
      'a training task',
      '/v1/training_tasks/textcollection',
      {
        attachments: [{ type: 'text', content: 'hi' }],
        fields: [{ type: 'text', field_id: 's\ud800', title: 'S' }],
        expected_response: { annotations: { s: 'x' } },
      },
      'body.fields.0.field_id',
    ],
  ])('a lone surrogate in %s → 400 naming it, nothing stored', async (_what, path, body, where) => {
    const key = await account(`surrogate-${where}`);
    const res = await client(server, 'current', key)('POST', path, { json: body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe(
      `${where} contains a lone UTF-16 surrogate (such as \\ud800), which is not text; send a complete surrogate pair.`,
    );
    expect(await stored(key)).toEqual({ tasks: 0, projects: 0, training: 0 });
  });

  it('a lone surrogate in a later change (tags, unique_id, metadata) → 400, the task unchanged', async () => {
    const key = await account('surrogate-later');
    const api = client(server, 'current', key);
    const task = (await api('POST', '/v1/task/categorization', { json: { ...categorization, metadata: { a: 1 } } })).body;
    const before = (await api('GET', `/v1/task/${task.task_id}`)).body;
    for (const [path, json] of [
      ['tags', ['\ud800']],
      ['unique_id', { unique_id: '\ud800' }],
      ['setMetadata', { b: '\udfff' }],
    ] as const) {
      const res = await api('POST', `/v1/task/${task.task_id}/${path}`, { json });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toContain('lone UTF-16 surrogate');
    }
    expect((await api('GET', `/v1/task/${task.task_id}`)).body).toEqual(before);
    // A complete pair is text: stored and read back as sent.
    const emoji = await api('POST', '/v1/task/categorization', { json: { ...categorization, instruction: 'ok 😀' } });
    expect(emoji.status).toBe(200);
    expect((await api('GET', `/v1/task/${emoji.body.task_id}`)).body.instruction).toBe('ok 😀');
  });

  it('a number that overflows to infinity (1e309) → 400 naming the field, not stored as null', async () => {
    const key = await account('infinity');
    const text = JSON.stringify({ ...categorization, metadata: { big: 0, fine: 1e308 } }).replace('"big":0', '"big":1e309');
    const res = await postRaw(server, key, '/v1/task/categorization', text);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('body.metadata.big is a number too large for JSON');
    const negative = await postRaw(server, key, '/v1/projects', '{"type":"categorization","name":"p","params":{"x":-1e400}}');
    expect(negative.status).toBe(400);
    expect(negative.body.error).toContain('body.params.x');
    expect(await stored(key)).toEqual({ tasks: 0, projects: 0, training: 0 });
  });

  it.each([
    ['legacy', '/v1/tasks'],
    ['current', '/v1/batches'],
    ['current', '/v1/training_tasks'],
    ['current', '/v1/evaluation_tasks'],
  ] as const)('%s %s: offset 2^63 → 400 naming offset; the maximum is taken', async (gen, path) => {
    const api = client(server, gen, await account(`offset-${gen}-${path}`));
    // Beyond what a number holds (it read as infinity and reached the database: 500) or beyond the maximum.
    for (const offset of ['9223372036854775808', '2147483648', '99999999999999999999999', '1'.repeat(400), '1e309']) {
      const res = await api('GET', `${path}?offset=${offset}`);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toContain('offset');
    }
    const limit = await api('GET', `${path}?limit=1e309`);
    expect(limit.status, limit.text).toBe(400);
    expect(limit.body.error).toBe('query.limit is a number too large (it reads as infinity).');
    const max = await api('GET', `${path}?offset=2147483647`);
    expect(max.status, max.text).toBe(200);
    expect(max.body.docs).toEqual([]);
  });

  it('a text filter that looks like a huge number is text', async () => {
    const res = await client(server, 'current', await account('text-filter'))('GET', '/v1/tasks?unique_id=1e400');
    expect(res.status, res.text).toBe(200);
  });
});
