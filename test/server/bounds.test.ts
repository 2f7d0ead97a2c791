// Issue 15, finding 1: every count that sizes work has an upper bound in the contract, and the
// largest allowed values give a test-mode answer of bounded size while the server keeps answering
// other accounts. Bounded work is shown by the size of what is stored, never by timing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const cb = 'https://example.com/cb';
const labels = (n: number, prefix = 'kind') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const geometry = (minVertices: number) => ({ objects_to_annotate: labels(20), min_vertices: minVertices, max_vertices: 1000 });
const allGeometries = (minVertices: number) => ({
  box: { objects_to_annotate: labels(20) },
  polygon: geometry(minVertices),
  line: geometry(minVertices),
  point: { objects_to_annotate: labels(20) },
  cuboid: { objects_to_annotate: labels(20) },
  ellipse: { objects_to_annotate: labels(20) },
});
const categoryForm = (fillings: number, children: number, leastChoices: number) => ({
  type: 'form',
  field_id: 'form',
  title: 'Form',
  min_responses_required: fillings,
  max_responses_required: 100,
  fields: Array.from({ length: children }, (_, i) => ({
    type: 'category',
    field_id: `c${i}`,
    title: `C${i}`,
    min_responses_required: 10,
    max_responses_required: 100,
    min_choices: leastChoices,
    max_choices: 1000,
    choices: Array.from({ length: 1000 }, (_, j) => ({ label: `L${j}`, value: `v${j}` })),
  })),
});

/** The largest allowed values of each count that sizes a test-mode answer. */
const largest: [string, string, Record<string, unknown>][] = [
  [
    'lines',
    '/v1/task/lineannotation',
    { callback_url: cb, attachment: 'https://example.com/a.jpg', objects_to_annotate: labels(3), min_vertices: 1000 },
  ],
  [
    'polygons',
    '/v1/task/polygonannotation',
    { callback_url: cb, attachment: 'https://example.com/a.jpg', objects_to_annotate: labels(6), min_vertices: 1000, max_vertices: '1000' },
  ],
  [
    'image geometries',
    '/v1/task/imageannotation',
    { callback_url: cb, attachment: 'https://example.com/a.jpg', geometries: allGeometries(1000) },
  ],
  [
    'video tracks',
    '/v1/task/videoplaybackannotation',
    {
      callback_url: cb,
      attachment: 'https://example.com/v.mp4',
      attachment_type: 'video',
      frame_rate: 60,
      geometries: allGeometries(1000),
      events_to_annotate: labels(100, 'event'),
    },
  ],
  // 10 fillings × 10 answers of one category asking for 10 values each: 1000 values, the limit.
  [
    'form answers',
    '/v1/task/textcollection',
    { callback_url: cb, attachments: [{ type: 'text', content: 'x' }], fields: [categoryForm(10, 1, 10)] },
  ],
  [
    'lidar frames',
    '/v1/task/lidarsegmentation',
    { callback_url: cb, attachments: Array.from({ length: 1000 }, (_, i) => `https://example.com/f/${i}.json`), labels: labels(1000) },
  ],
];

/** One past each bound: 400 naming the field, nothing stored. */
const beyond: [string, string, Record<string, unknown>, string][] = [
  [
    'min_vertices 1001',
    '/v1/task/lineannotation',
    { callback_url: cb, attachment: 'https://example.com/a.jpg', objects_to_annotate: ['lane'], min_vertices: 1001 },
    'min_vertices',
  ],
  [
    'min_vertices 10^6 as a string',
    '/v1/task/polygonannotation',
    { callback_url: cb, attachment: 'https://example.com/a.jpg', objects_to_annotate: ['car'], min_vertices: '1000000' },
    'min_vertices',
  ],
  [
    'a geometry with 21 kinds',
    '/v1/task/imageannotation',
    { callback_url: cb, attachment: 'https://example.com/a.jpg', geometries: { box: { objects_to_annotate: labels(21) } } },
    'objects_to_annotate',
  ],
  [
    'min_responses_required 101',
    '/v1/task/textcollection',
    {
      callback_url: cb,
      attachments: [{ type: 'text', content: 'x' }],
      fields: [{ type: 'text', field_id: 't', title: 'T', min_responses_required: 101, max_responses_required: 101 }],
    },
    'min_responses_required',
  ],
  [
    '1010 answer values in a form',
    '/v1/task/textcollection',
    { callback_url: cb, attachments: [{ type: 'text', content: 'x' }], fields: [categoryForm(1, 101, 1)] },
    'fields',
  ],
  [
    '1010 answer values in nested counts',
    '/v1/task/textcollection',
    { callback_url: cb, attachments: [{ type: 'text', content: 'x' }], fields: [categoryForm(11, 1, 10)] },
    'fields',
  ],
  [
    'min_vertices 10^6 with leading zeros',
    '/v1/task/lineannotation',
    { callback_url: cb, attachment: 'https://example.com/a.jpg', objects_to_annotate: ['lane'], min_vertices: '01000000' },
    'min_vertices',
  ],
  [
    '1001 lidar frames',
    '/v1/task/lidarsegmentation',
    { callback_url: cb, attachments: Array.from({ length: 1001 }, (_, i) => `https://example.com/f/${i}.json`), labels: ['car'] },
    'attachments',
  ],
  [
    'instruction of 100001 characters',
    '/v1/task/categorization',
    { callback_url: cb, instruction: 'x'.repeat(100_001), attachment: 'x', attachment_type: 'text', categories: ['a', 'b'] },
    'instruction',
  ],
  [
    'metadata with 1001 keys',
    '/v1/task/categorization',
    {
      callback_url: cb,
      instruction: 'i',
      attachment: 'x',
      attachment_type: 'text',
      categories: ['a', 'b'],
      metadata: Object.fromEntries(labels(1001).map((k) => [k, 1])),
    },
    'metadata',
  ],
  [
    '1001 categories',
    '/v1/task/categorization',
    { callback_url: cb, instruction: 'i', attachment: 'x', attachment_type: 'text', categories: labels(1001) },
    'categories',
  ],
];

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('bounded work on %s', (db) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(db);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(beyond)('%s → 400 naming the field, nothing stored', async (what, path, body, field) => {
    const api = client(server, 'current', (await createAccount(server.uow, `beyond-${db}-${what}`, new Date())).test_key);
    const res = await api('POST', path, { json: body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(field);
    expect((await api('GET', '/v1/tasks')).body.total).toBe(0);
  });

  it('a project refuses min_vertices 10^6 given as a string: 400 naming it, no version, and no task made of it', async () => {
    const api = client(server, 'current', (await createAccount(server.uow, `project-bound-${db}`, new Date())).test_key);
    expect((await api('POST', '/v1/projects', { json: { type: 'lineannotation', name: 'lines' } })).status).toBe(200);
    const set = await api('POST', '/v1/projects/lines/setParams', { json: { min_vertices: '1000000', objects_to_annotate: ['lane'] } });
    expect(set.status, set.text).toBe(400);
    expect(set.body.error).toContain('min_vertices');
    expect((await api('GET', '/v1/projects/lines')).body.param_history).toEqual([]);
    const res = await api('POST', '/v1/task/lineannotation', {
      json: { project: 'lines', callback_url: cb, attachment: 'https://example.com/a.jpg' },
    });
    expect(res.status, res.text.slice(0, 300)).toBe(400);
    expect((await api('GET', '/v1/tasks')).body.total).toBe(0);
  });

  it('the largest allowed values are taken, each answer stays under 2 MB, and another account is answered meanwhile', async () => {
    const api = client(server, 'current', (await createAccount(server.uow, `largest-${db}`, new Date())).test_key);
    const other = client(server, 'current', (await createAccount(server.uow, `bystander-${db}`, new Date())).test_key);
    const seen = await other('POST', '/v1/task/categorization', {
      json: { callback_url: cb, instruction: 'i', attachment: 'x', attachment_type: 'text', categories: ['a', 'b'] },
    });
    // All the largest creations at once, and the other account's reads while they run.
    const created = Promise.all(largest.map(([, path, body]) => api('POST', path, { json: body })));
    const reads = await Promise.all(Array.from({ length: 5 }, () => other('GET', `/v1/task/${seen.body.task_id}`)));
    for (const read of reads) expect(read.status).toBe(200);
    const results = await created;
    for (const [i, res] of results.entries()) {
      expect(res.status, `${largest[i]![0]}: ${res.text.slice(0, 300)}`).toBe(200);
      const task = await api('GET', `/v1/task/${res.body.task_id}`);
      expect(task.body.status, largest[i]![0]).toBe('completed');
      // The stored answer is bounded whatever the counts (min_vertices 10^6 once stored 6.4 MB).
      expect(Buffer.byteLength(JSON.stringify(task.body.response)), largest[i]![0]).toBeLessThan(2_000_000);
    }
    const page = await api('GET', '/v1/tasks?limit=100');
    expect(page.body.total).toBe(largest.length);
  });
});
