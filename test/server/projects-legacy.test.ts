// Projects and batches have the same paths and shapes in the older generation; its creation
// endpoints (form bodies too) merge project parameters the same way. And bad input on every
// project and batch endpoint that takes a body: 400 naming the problem, nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let legacy: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startTestServer('pglite');
  legacy = client(server, 'legacy', server.dev.live_key);
});
afterAll(async () => {
  await server?.close();
});

describe('older generation', () => {
  it('creates a project, merges its parameters into a form-body task, and runs its batch', async () => {
    const project = await legacy('POST', '/v1/projects', {
      json: {
        type: 'annotation',
        name: 'boxes',
        params: { objects_to_annotate: ['car', 'bus'], with_labels: true, instruction: 'Box them.' },
      },
    });
    expect(project.status, project.text).toBe(200);
    expect((await legacy('POST', '/v1/batches', { json: { project: 'boxes', name: 'week-1' } })).body.status).toBe('in_progress');
    const task = await legacy('POST', '/v1/task/annotation', {
      form: 'callback_url=ops%40example.com&batch=week-1&attachment=https%3A%2F%2Fexample.com%2Fa.jpg&min_width=12&urgency=immediate',
    });
    expect(task.status, task.text).toBe(200);
    expect(task.body).toMatchObject({
      urgency: 'immediate',
      instruction: 'Box them.',
      project: 'boxes',
      batch: 'week-1',
      project_param_version: 0,
      params: { objects_to_annotate: ['car', 'bus'], with_labels: true, attachment: 'https://example.com/a.jpg', min_width: 12 },
    });
    expect((await legacy('GET', '/v1/batches/week-1/status')).body).toEqual({
      status: 'in_progress',
      pending: 1,
      completed: 0,
      error: 0,
      canceled: 0,
    });
    // The current generation sees the same project and batch.
    const current = client(server, 'current', server.dev.live_key);
    expect((await current('GET', '/v1/projects/boxes')).body.paramHistory).toHaveLength(1);
    expect((await current('GET', '/v1/batches?project=boxes')).body.total).toBe(1);
  });
});

describe('bad input on project and batch endpoints', () => {
  it.each([
    ['POST', '/v1/projects', [{ type: 'annotation', name: 'x' }], 'body'],
    ['POST', '/v1/projects', { type: 'annotation', name: 'x', rapid: 'yes' }, 'rapid'],
    ['POST', '/v1/projects/boxes/setParams', ['not', 'an', 'object'], 'body'],
    ['POST', '/v1/projects/boxes/setOntology', { ontology: 'car' }, 'ontology'],
    ['POST', '/v1/projects/boxes/setOntology', { ontology: [{ display: 'no choice' }] }, 'choice'],
    ['POST', '/v1/batches', { project: 'boxes', name: 'y', calibration_batch: 'yes' }, 'calibration_batch'],
    ['POST', '/v1/batches/week-1/setMetadata', [1, 2], 'body'],
  ] as const)('%s %s with a wrong body → 400 naming %s', async (method, path, json, field) => {
    const before = await legacy('GET', '/v1/projects');
    const res = await legacy(method, path, { json });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ status_code: 400, error: expect.stringContaining(field), request_id: expect.any(String) });
    expect((await legacy('GET', '/v1/projects')).body).toEqual(before.body);
  });
});
