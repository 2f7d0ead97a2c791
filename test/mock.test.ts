// `npm run mock` (Prism behind one front port) answers a valid request to every operation of both
// generations, at the server's paths, with the documented status and a body that validates against
// the contract; errors, auth and headers as the contract says. The worker API's mock
// (`humantask mock --worker`, its own port) likewise, at /worker/v1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, startWorkerMock, type RunningMock } from '../server/mock.ts';
import { basicAuth } from './support/net.ts';
import { asGeneration, deref, generations, loadBundle, makeValidator, operations, type Json } from './support/spec.ts';

let mock: RunningMock;
let workerMock: RunningMock;
beforeAll(async () => {
  [mock, workerMock] = await Promise.all([startMock(), startWorkerMock()]);
});
afterAll(async () => {
  await Promise.all([mock?.stop(), workerMock?.stop()]);
});

/** Where each generation lives on the mock, as on the server. */
const base = { current: '', legacy: '/legacy' } as const;

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
      let url = mock.url + base[gen] + p;
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

  it.each([
    ['no credentials', undefined],
    ['an empty key (curl -u :)', 'Basic ' + Buffer.from(':').toString('base64')],
    ['no Basic credentials', 'Bearer test_key'],
  ])('refuses %s with 401 and the contract\'s error body, as the server does', async (_name, authorization) => {
    const res = await fetch(`${mock.url}${base[gen]}/v1/tasks`, authorization ? { headers: { authorization } } : {});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="humantask"');
    expect(await res.json()).toEqual({ status_code: 401, error: expect.stringMatching(/API key is required/) });
  });

  it('answers malformed JSON with 400 in the contract\'s error shape', async () => {
    const res = await fetch(`${mock.url}${base[gen]}/v1/projects`, {
      method: 'POST',
      headers: { authorization: basicAuth('test_key'), 'content-type': 'application/json' },
      body: '{"name": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ status_code: 400, error: expect.stringMatching(/^The request body is not valid JSON/) });
  });

  it('sends Idempotent-Replayed on no create answer (a mock has nothing to replay)', async () => {
    const creates = ops.filter((o) => o.method === 'post' && Object.values<Json>(o.op.responses['200']?.headers ?? {}).length > 0);
    expect(creates.length).toBeGreaterThan(0);
    for (const { path: p, op } of creates.slice(0, 5)) {
      const example = Object.values<Json>(deref(doc, op.requestBody).content['application/json'].examples)[0];
      const res = await fetch(`${mock.url}${base[gen]}${p}`, {
        method: 'POST',
        headers: { authorization: basicAuth('test_key'), 'content-type': 'application/json', 'idempotency-key': 'k-1' },
        body: JSON.stringify(deref(doc, example!).value),
      });
      expect(res.status, `${op.operationId}: ${await res.clone().text()}`).toBe(200);
      expect(res.headers.get('idempotent-replayed'), op.operationId).toBeNull();
    }
  });

  it("answers Prism's own errors (an undocumented status asked for) in the contract's error shape", async () => {
    const res = await fetch(`${mock.url}${base[gen]}/v1/tasks`, { headers: { authorization: basicAuth('test_key'), prefer: 'code=418' } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status_code: res.status, error: expect.any(String) });
  });
});

it('answers a path outside both generations with 404 in the contract\'s error shape', async () => {
  for (const p of ['/', '/tasks', '/legacy/tasks', '/v2/tasks']) {
    const res = await fetch(`${mock.url}${p}`, { headers: { authorization: basicAuth('test_key') } });
    expect(res.status, p).toBe(404);
    expect(await res.json()).toEqual({ status_code: 404, error: expect.stringMatching(/\/v1 and the older at \/legacy\/v1/) });
  }
});

describe('Prism mock of the worker API, on its own port', () => {
  const doc = loadBundle(asGeneration('workforce'));
  const validate = makeValidator(asGeneration('workforce'), doc);
  const ops = operations(asGeneration('workforce'), doc);

  it.each(ops.map((o) => [`${o.op.operationId} (${o.method.toUpperCase()} ${o.path})`, o] as const))(
    '%s answers its documented success with a valid body',
    async (_name, { path: p, method, op, pointer }) => {
      const params = [...(doc.paths[p].parameters ?? []), ...(op.parameters ?? [])].map((x: Json) => deref(doc, x));
      let url = `${workerMock.url}/worker${p}`;
      for (const param of params.filter((x) => x.in === 'path')) url = url.replace(`{${param.name}}`, encodeURIComponent(exampleOf(doc, param)));
      const headers: Record<string, string> = { authorization: 'Bearer wks_anything', accept: 'application/json' };
      const json = deref(doc, op.requestBody)?.content?.['application/json'];
      let body: string | undefined;
      if (json) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(deref(doc, Object.values<Json>(json.examples ?? {})[0]!).value);
      }
      const res = await fetch(url, { method: method.toUpperCase(), headers, body });
      const text = await res.text();
      if (!op.responses['200']) {
        expect(res.status, text).toBe(204);
        return;
      }
      expect(res.status, text).toBe(200);
      const v = validate(`${pointer}/responses/200/content/application~1json/schema`);
      expect(v(JSON.parse(text)), JSON.stringify(v.errors?.slice(0, 5))).toBe(true);
    },
  );

  it('refuses a request without a Bearer token (an API key included) with 401, a challenge and a code; logging in needs none', async () => {
    for (const authorization of [undefined, basicAuth('test_key')]) {
      const res = await fetch(`${workerMock.url}/worker/v1/me`, authorization ? { headers: { authorization } } : {});
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="humantask-worker"');
      expect(await res.json()).toEqual({ status_code: 401, error: expect.stringMatching(/worker token is required/), code: 'unauthenticated' });
    }
    const login = await fetch(`${workerMock.url}/worker/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ana@example.com', password: 'correct-horse-battery-staple' }),
    });
    expect(login.status).toBe(200);
  });

  it('serves only the worker API', async () => {
    for (const p of ['/v1/tasks', '/legacy/v1/tasks', '/worker/v2/me']) {
      const res = await fetch(`${workerMock.url}${p}`, { headers: { authorization: 'Bearer x' } });
      expect(res.status, p).toBe(404);
      expect(await res.json()).toEqual({ status_code: 404, error: expect.stringMatching(/worker API at \/worker\/v1/), code: 'not_found' });
    }
  });
});
