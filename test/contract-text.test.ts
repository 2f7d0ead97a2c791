// Issue 22 rule 8: the service refuses U+0000 in every string (PostgreSQL stores none), and the
// contract says so in its schemas, not only in prose: every string schema of both generations
// either carries the pattern `^[^\u0000]*$` or admits no U+0000 by its own pattern, format, enum
// or const. The server and the pattern agree: what the pattern refuses, the server refuses (400
// naming where).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { apis, asGeneration, generations, loadBundle, root, type Json } from './support/spec.ts';
import { client, startTestServer, type TestServer } from './support/server.ts';

const noNul = '^[^\\u0000]*$';

/** Every schema node typed exactly `string`, with its JSON pointer. */
function stringSchemas(node: unknown, at = '#', out: { at: string; schema: Json }[] = []) {
  if (Array.isArray(node))
    node.forEach((n, i) => {
      stringSchemas(n, `${at}/${i}`, out);
    });
  else if (node && typeof node === 'object') {
    const n = node as Json;
    // `type: string`, or a list of types one of which is string (`[string, 'null']`).
    if (n.type === 'string' || (Array.isArray(n.type) && n.type.includes('string'))) out.push({ at, schema: n });
    for (const [k, v] of Object.entries(n)) {
      // Examples are values, not schemas; a response's headers are the server's own words.
      if (k === 'examples' || k === 'example' || (k === 'headers' && /\/responses\//.test(at))) continue;
      // A body that is not JSON (a file, a CSV, JSON Lines) is bytes, not a string value.
      if (/\/content$/.test(at) && k !== 'application/json' && !/\+json$/.test(k) && k !== 'application/x-www-form-urlencoded') continue;
      stringSchemas(v, `${at}/${k}`, out);
    }
  }
  return out;
}

describe('U+0000 in the schemas', () => {
  it.each(apis)('%s: every string schema admits no U+0000 (the text pattern, or a pattern, format, enum or const of its own)', (api) => {
    const strings = stringSchemas(loadBundle(asGeneration(api)));
    expect(strings.length).toBeGreaterThan(100);
    const open = strings.filter(
      ({ schema }) =>
        schema.pattern === undefined && schema.format === undefined && schema.enum === undefined && schema.const === undefined,
    );
    expect(open.map((s) => s.at)).toEqual([]);
    const ownPatterns = new Set(strings.map((s) => s.schema.pattern).filter((p): p is string => typeof p === 'string' && p !== noNul));
    // Every other pattern is anchored and names its characters: none lets U+0000 through.
    for (const p of ownPatterns) expect(new RegExp(p, 'u').test('a\u0000b'), p).toBe(false);
    expect(new RegExp(noNul, 'u').test('a\u0000b')).toBe(false);
    expect(new RegExp(noNul, 'u').test('any text, ünïcode 🚗')).toBe(true);
  });

  describe('the server refuses what the pattern refuses', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer('pglite');
    });
    afterAll(async () => {
      await server?.close();
    });

    it.each(generations)('%s: U+0000 in a body string, a query value and a path id → 400 naming where', async (gen) => {
      const call = client(server, gen, server.dev.test_key);
      const body = await call('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Pick\u0000',
          attachment_type: 'text',
          attachment: 't',
          categories: ['a', 'b'],
        },
      });
      expect(body.status, body.text).toBe(400);
      expect(body.body.error).toContain('instruction');
      const query = await call('GET', '/v1/tasks?unique_id=a%00b');
      expect(query.status, query.text).toBe(400);
      expect(query.body.error).toContain('unique_id');
      const path = await call('GET', '/v1/projects/a%00b');
      expect(path.status, path.text).toBe(400);
      expect(path.body.error).toContain('U+0000');
    });

    it("a worker's e-mail address: the contract's pattern and the server take the same ones", async () => {
      const pattern = new RegExp(loadBundle('current').components.schemas.WorkerEmail.pattern, 'u');
      const call = client(server, 'current', server.dev.live_key);
      const addresses = {
        'ana@example.com': true,
        'a.b+c@mail.example.org': true,
        'a@localhost': false,
        '"q"@example.com': false,
        'a b@example.com': false,
      };
      for (const [email, taken] of Object.entries(addresses)) {
        expect(pattern.test(email), email).toBe(taken);
        const made = await call('POST', '/v1/workforce/workers', { json: { email, display_name: 'Ana', roles: ['labeler'] } });
        expect(made.status, `${email}: ${made.text}`).toBe(taken ? 200 : 400);
        if (!taken) expect(made.body.error).toContain('email');
      }
    });
  });
});

// Clients read the bundled contracts with whatever YAML reader they have; PyYAML and other older ones
// read YAML 1.1, where an unquoted `Yes`, `n`, `off` or timestamp is a boolean or a date.
it.each(apis)('%s: the bundled contract reads the same as YAML 1.1 and as YAML 1.2', (api) => {
  const text = readFileSync(path.join(root, 'generated', `${api}.openapi.yaml`), 'utf8');
  expect(parse(text, { version: '1.1' })).toStrictEqual(parse(text));
});
