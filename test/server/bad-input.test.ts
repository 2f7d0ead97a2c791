// Bad input on every creation path: variants of each operation's own example with a field missing,
// of the wrong type, over its limit, or out of its enum. Whatever the contract rejects, the server
// answers with 400 naming the field, and stores nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { loadContract } from '../../server/http/contract.ts';
import { creationExamples, type Body } from '../support/examples.ts';
import { makeValidator, pointerOf } from '../support/spec.ts';
import { client, startTestServer, type TestServer } from '../support/server.ts';

function variants(example: Body): { what: string; field: string; body: Body }[] {
  const out: { what: string; field: string; body: Body }[] = [];
  for (const [field, value] of Object.entries(example)) {
    const { [field]: _dropped, ...without } = example;
    out.push({ what: `without ${field}`, field, body: without });
    out.push({
      what: `${field} of the wrong type`,
      field,
      body: { ...example, [field]: typeof value === 'object' ? 12.5 : { wrong: true } },
    });
    if (Array.isArray(value)) {
      const many = Array.from({ length: 60 }, (_, i) => (typeof value[0] === 'string' ? `v${i}` : value[0]));
      out.push({ what: `${field} over its limit`, field, body: { ...example, [field]: many } });
    }
    if (typeof value === 'string') out.push({ what: `${field} out of its values`, field, body: { ...example, [field]: 'no-such-value' } });
  }
  return out;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(async () => {
  await server?.close();
});

describe.each(['current', 'legacy'] as const)('%s generation', (gen) => {
  const contract = loadContract(gen);
  const validate = makeValidator(gen);
  // The first example of each path that names no project or batch (those need objects made first).
  const ops: [string, Body][] = [];
  for (const [path, , body] of creationExamples(contract)) {
    if (!body.project && !body.batch && !ops.some(([p]) => p === path)) ops.push([path, body]);
  }

  it.each(ops)('%s rejects what the contract rejects, naming the field, storing nothing', async (path, example) => {
    const account = await createAccount(server.uow, `bad-${gen}-${path.split('/').pop()}`, new Date());
    const api = client(server, gen, account.test_key);
    const schema = validate(`${pointerOf('paths', path, 'post', 'requestBody', 'content', 'application/json')}/schema`);
    const checked: string[] = [];
    for (const { what, field, body } of variants(example)) {
      if (schema(body)) continue; // still valid by the contract (an optional field, a free string)
      const res = await api('POST', path, { json: body });
      expect(res.status, `${what}: ${res.text}`).toBe(400);
      expect(res.body.error, what).toContain(field);
      checked.push(what);
    }
    expect(checked.length).toBeGreaterThan(0);
    expect((await api('GET', '/v1/tasks')).body.total).toBe(0);
  });
});

// PostgreSQL cannot store U+0000 in text: anywhere it appears, the answer is a 400 naming where.
describe('the character U+0000', () => {
  it.each([
    [
      'current',
      'POST',
      '/v1/task/categorization',
      {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'a\u0000b',
          attachment_type: 'text',
          attachment: 'x',
          categories: ['a', 'b'],
        },
      },
      'body.instruction',
    ],
    [
      'current',
      'POST',
      '/v1/task/categorization',
      {
        json: {
          callback_url: 'https://example.com/cb',
          attachment_type: 'text',
          attachment: 'x',
          categories: ['a', 'b'],
          metadata: { 'k\u0000': 1 },
        },
      },
      'body.metadata (a key)',
    ],
    [
      'legacy',
      'POST',
      '/v1/task/categorization',
      { form: 'callback_url=https%3A%2F%2Fexample.com%2Fcb&instruction=a%00&attachment_type=text&attachment=x&categories=a&categories=b' },
      'body.instruction',
    ],
    ['current', 'GET', '/v1/tasks?project=a%00b', {}, 'query.project'],
    ['legacy', 'GET', '/v1/projects/a%00b', {}, 'the path'],
  ] as const)('%s %s %s → 400 naming it, nothing stored', async (gen, method, path, options, where) => {
    const account = await createAccount(server.uow, `nul-${gen}-${method}-${path.length}-${where.length}`, new Date());
    const api = client(server, gen, account.test_key);
    const res = await api(method, path, options);
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({
      status_code: 400,
      error: `${where} contains the character U+0000, which is not accepted in text.`,
      request_id: expect.any(String),
    });
    expect((await api('GET', '/v1/tasks')).body.total).toBe(0);
  });

  it.each([
    ['current', '/v1/task/categorization'],
    ['legacy', '/v1/task/categorization'],
    ['worker API', '/worker/v1/session'],
  ] as const)('in a body that is not JSON (%s %s): a 400 that says so, its text without the character', async (gen, path) => {
    const account = await createAccount(server.uow, `nul-json-${gen.replace(' ', '-')}`, new Date());
    const api = client(server, gen === 'legacy' ? 'legacy' : 'current', gen === 'worker API' ? null : account.test_key);
    for (const raw of ['\u0000', 'nul\u0000l', '{"instruction": x\u0000\ud800}']) {
      const res = await api('POST', path, { form: raw, headers: { 'content-type': 'application/json' } });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatch(/^The request body is not valid JSON: /);
      expect(res.body.error).not.toMatch(/\p{Cc}|\p{Cs}/u);
      expect(res.body.error).toContain('\\u0000');
    }
    expect((await client(server, 'current', account.test_key)('GET', '/v1/tasks')).body.total).toBe(0);
  });
});
