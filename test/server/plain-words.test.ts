// Validation messages in plain words (issue 32, item 15): one problem per kind of fault, sent as
// raw HTTP to the server (both generations and the worker API, on PGlite and PostgreSQL) and to the
// Prism mock, which must answer the same whole message: the value's path first (`body.x`,
// `query.limit`), then what is wrong, each field named once, no JSON Schema words ("must match
// \"then\" schema", "must have required property").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, startWorkerMock, type RunningMock } from '../../server/mock.ts';
import { basicAuth } from '../support/net.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker } from '../support/workers.ts';

interface Fault {
  what: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  error: string;
  /** Prism takes unknown query parameters, and the mock lets them pass. */
  serverOnly?: true;
}

const categorization = { callback_url: 'https://example.com/cb', attachment: 'https://example.com/a.png', attachment_type: 'image' };
const complete = { ...categorization, categories: ['a', 'b'], instruction: 'Pick one' };
const textcollection = (field: object) => ({
  callback_url: 'https://example.com/cb',
  attachments: [{ type: 'website', content: 'https://example.com' }],
  fields: [{ field_id: 'f', title: 'F', ...field }],
});

/** Faults both generations answer alike (the older generation's paths get `/legacy` in front). */
const bothGenerations: Fault[] = [
  {
    what: 'missing (the type-defining fields of a task without a project)',
    method: 'POST',
    path: '/v1/task/categorization',
    body: categorization,
    error: 'body.categories is required; body.instruction is required',
  },
  {
    what: 'of the wrong type',
    method: 'POST',
    path: '/v1/task/categorization',
    body: { ...complete, categories: 'a' },
    error: 'body.categories must be a list',
  },
  { what: 'out of range (query)', method: 'GET', path: '/v1/tasks?limit=1000', error: 'query.limit must be at most 100' },
  {
    what: 'not one of the values',
    method: 'POST',
    path: '/v1/task/categorization',
    body: { ...complete, attachment_type: 'movie' },
    error: 'body.attachment_type must be one of: text, image, video, audio, website, pdf',
  },
  {
    what: 'against the pattern (a number given as text)',
    method: 'POST',
    path: '/v1/task/annotation',
    body: { ...categorization, instruction: 'Box them', objects_to_annotate: ['car'], min_width: 'wide' },
    error: 'body.min_width must be a whole number of 0 or more',
  },
  {
    what: 'against the pattern (a callback address, issue 32 item 23)',
    method: 'POST',
    path: '/v1/task/categorization',
    body: { ...complete, callback_url: 'ftp://example.com/results' },
    error: 'body.callback_url must be an http(s) URL or an e-mail address',
  },
  {
    what: 'an unknown query parameter',
    method: 'GET',
    path: '/v1/tasks?colour=red',
    error: 'query.colour is not a parameter this operation takes',
    serverOnly: true,
  },
];

/** Faults of the current generation only (its types). */
const currentOnly: Fault[] = [
  {
    what: 'out of range (body)',
    method: 'POST',
    path: '/v1/task/imageannotation',
    body: { ...categorization, geometries: { box: { objects_to_annotate: ['car'], min_width: -3 } } },
    error: 'body.geometries.box.min_width must be at least 0',
  },
  {
    what: 'an unknown type of a typed branch',
    method: 'POST',
    path: '/v1/task/textcollection',
    body: textcollection({ type: 'colour' }),
    error: 'body.fields.0.type must be one of: text, boolean, number, datetime, category, time_range, select, ranking_order, form',
  },
  {
    what: 'a fault inside the branch its type names (only that branch is said)',
    method: 'POST',
    path: '/v1/task/textcollection',
    body: textcollection({ type: 'number', min: 'low' }),
    error: 'body.fields.0.min must be a number',
  },
  {
    what: 'the type of a typed branch missing',
    method: 'POST',
    path: '/v1/task/textcollection',
    body: textcollection({}),
    error: 'body.fields.0.type is required',
  },
  {
    what: 'one of two names needed',
    method: 'POST',
    path: '/v1/task/textcollection',
    body: textcollection({ type: 'time_range' }),
    error: 'body.fields.0 needs default_seconds or defaults_seconds',
  },
];

const assignment = '/v1/assignments/asg_0123456789abcdef01234567/submit';
const leaseToken = 'lt_9c2f6d1e0b4a4f7e8d3c2b1a09f8e7d6';
/** Faults of the worker API (paths from /worker on). */
const workerFaults: Fault[] = [
  {
    what: 'missing (an empty submit)',
    method: 'POST',
    path: assignment,
    body: {},
    error: 'body.lease_token is required; body.response is required; body.active_ms is required',
  },
  {
    what: 'a field the object does not take',
    method: 'POST',
    path: assignment,
    body: { lease_token: leaseToken, response: { category: 'a' }, active_ms: 10, comment: 'done' },
    error: 'body.comment is not a field this object takes',
  },
  {
    what: 'of the wrong type',
    method: 'POST',
    path: assignment,
    body: { lease_token: leaseToken, response: { category: 'a' }, active_ms: 'ten' },
    error: 'body.active_ms must be a whole number',
  },
];

async function send(url: string, auth: string, fault: Fault) {
  const res = await fetch(url + fault.path, {
    method: fault.method,
    headers: { authorization: auth, ...(fault.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(fault.body !== undefined ? { body: JSON.stringify(fault.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as { error: string } };
}

const customerCases = [
  ...bothGenerations.flatMap((f) => [['current', f] as const, ['legacy', f] as const]),
  ...currentOnly.map((f) => ['current', f] as const),
].map(([gen, f]) => [`${gen}: ${f.what}`, gen === 'legacy' ? '/legacy' : '', f] as const);

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the server on %s says what is wrong in plain words', (db) => {
  let server: TestServer;
  let workerToken: string;
  beforeAll(async () => {
    server = await startTestServer(db);
    workerToken = (await createWorker(server)).token;
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(customerCases)('%s', async (_what, base, fault) => {
    const res = await send(server.url + base, basicAuth(server.dev.test_key), fault);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(fault.error);
  });

  it.each(workerFaults.map((f) => [f.what, f] as const))('worker API: %s', async (_what, fault) => {
    const res = await send(`${server.url}/worker`, `Bearer ${workerToken}`, fault);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: fault.error, code: 'invalid_request' });
  });
});

describe('the Prism mock says the same words', () => {
  let mock: RunningMock;
  let workerMock: RunningMock;
  beforeAll(async () => {
    [mock, workerMock] = await Promise.all([startMock(), startWorkerMock()]);
  });
  afterAll(async () => {
    await Promise.all([mock?.stop(), workerMock?.stop()]);
  });

  it.each(customerCases.filter(([, , f]) => !f.serverOnly))('%s', async (_what, base, fault) => {
    const res = await send(mock.url + base, basicAuth('test_anything'), fault);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(fault.error);
  });

  it.each(workerFaults.map((f) => [f.what, f] as const))('worker API: %s', async (_what, fault) => {
    const res = await send(`${workerMock.url}/worker`, 'Bearer wks_anything', fault);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: fault.error, code: 'invalid_request' });
  });
});
