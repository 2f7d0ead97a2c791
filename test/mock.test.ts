// `npm run mock` (Prism) answers a valid request to every operation of both generations with the
// documented status and a body that validates against the contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, type RunningMock } from '../scripts/mock.ts';
import { basicAuth, freePort } from './support/net.ts';
import { deref, generations, loadBundle, makeValidator, operations, type Json } from './support/spec.ts';

let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ current: await freePort(), legacy: await freePort() });
});
afterAll(async () => {
  await mock?.stop();
});

/** A value for a parameter, from its own example or its schema's first example. */
function exampleOf(doc: Json, param: Json): string {
  const schema = deref(doc, param.schema);
  const value = param.example ?? Object.values<Json>(param.examples ?? {})[0]?.value ?? schema?.examples?.[0] ?? schema?.example;
  if (value === undefined) throw new Error(`parameter ${param.name} has no example`);
  return String(value);
}

describe.each(generations)('Prism mock, %s generation', (gen) => {
  const doc = loadBundle(gen);
  const validate = makeValidator(gen, doc);
  const ops = operations(gen, doc);

  it.each(ops.map((o) => [`${o.op.operationId} (${o.method.toUpperCase()} ${o.path})`, o] as const))(
    '%s answers 200 with a valid body',
    async (_name, { path: p, method, op, pointer }) => {
      const params = [...(doc.paths[p].parameters ?? []), ...(op.parameters ?? [])].map((x: Json) => deref(doc, x));
      let url = mock.urls[gen] + p;
      for (const param of params.filter((x) => x.in === 'path')) {
        url = url.replace(`{${param.name}}`, encodeURIComponent(exampleOf(doc, param)));
      }
      const headers: Record<string, string> = { authorization: basicAuth('test_key'), accept: 'application/json' };
      let body: string | undefined;
      const requestBody = deref(doc, op.requestBody);
      const json = requestBody?.content?.['application/json'];
      if (json) {
        headers['content-type'] = 'application/json';
        const [first] = Object.values<Json>(json.examples ?? {});
        if (!first) throw new Error(`${op.operationId} has no request example`);
        body = JSON.stringify(deref(doc, first).value);
      }
      const res = await fetch(url, { method: method.toUpperCase(), headers, body });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const v = validate(`${pointer}/responses/200/content/application~1json/schema`);
      expect(v(JSON.parse(text)), JSON.stringify(v.errors?.slice(0, 5))).toBe(true);
    },
  );

  it('rejects a request without credentials with 401', async () => {
    const res = await fetch(`${mock.urls[gen]}/v1/tasks`);
    expect(res.status).toBe(401);
  });
});
