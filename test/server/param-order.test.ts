// Issue 32, item 7: parameters keep the customer's order. Object keys of params (and of metadata)
// come back in the order they were sent: on reads of both generations, in the callback body, in
// what a worker gets from the worker API, in a project's parameter history and the tasks made from
// it, and in training tasks. (The database used to keep them as jsonb, which sorts keys by length.)
// Raw requests, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, workerClient } from '../support/workers.ts';

/** Sent in an order that sorting by length (jsonb) would change, at every level. */
const params = {
  geometries: {
    polygon: { objects_to_annotate: ['sidewalk'], min_vertices: 3 },
    box: { objects_to_annotate: ['truck', 'car'], min_width: 4 },
    point: { objects_to_annotate: ['light'] },
  },
  attachment: 'https://example.com/street.jpg',
  annotation_attributes: {
    zone: { description: 'Where is it?', choices: ['road', 'kerb'] },
    a: { description: 'Is it moving?', choices: ['yes', 'no'] },
  },
  attachment_type: 'image',
};
const metadata = { zz_last_sorted: 1, a: { y: 2, b: 3 } };

/** Every object's keys, depth first, as the JSON text lists them. */
function keyOrder(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyOrder(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keyOrder(v, `${path}.${k}`)]);
  return [];
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('parameter order on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let hook: Receiver;

  beforeAll(async () => {
    hook = await startReceiver();
    server = await startTestServer(db, { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' });
    account = await createAccount(server.uow, 'param-order', new Date());
  });
  afterAll(async () => {
    await server?.close();
    await hook?.close();
  });

  it('a task shows its params and metadata in the order sent, in both generations and in its callback', async () => {
    const call = client(server, 'current', account.test_key);
    const created = await call('POST', '/v1/task/imageannotation', { json: { callback_url: hook.url, ...params, metadata } });
    expect(created.status, created.text).toBe(200);
    for (const generation of ['current', 'legacy'] as const) {
      const read = await client(server, generation, account.test_key)('GET', `/v1/task/${created.body.task_id}`);
      expect(read.status, read.text).toBe(200);
      expect(keyOrder(read.body.params), generation).toEqual(keyOrder(params));
      expect(keyOrder(read.body.metadata), generation).toEqual(keyOrder(metadata));
      const listed = await client(server, generation, account.test_key)('GET', '/v1/tasks?type=imageannotation');
      expect(keyOrder(listed.body.docs[0].params), generation).toEqual(keyOrder(params));
    }
    const [callback] = await hook.waitFor((all) => all.some((r) => r.json?.task_id === created.body.task_id));
    const body = hook.bodiesOf(created.body.task_id)[0] ?? callback!.json;
    expect(keyOrder(body.task.params)).toEqual(keyOrder(params));
    expect(keyOrder(body.task.metadata)).toEqual(keyOrder(metadata));
  });

  it("a worker gets the task's params in the order sent", async () => {
    const own = await createAccount(server.uow, 'param-order-live', new Date());
    const created = await client(server, 'current', own.live_key)('POST', '/v1/task/imageannotation', {
      json: { callback_url: 'https://example.com/cb', instruction: 'Draw', ...params },
    });
    expect(created.status, created.text).toBe(200);
    const worker = await createWorker(server, { accountId: own.account_id });
    const next = await workerClient(server, worker.token)('POST', '/v1/assignments/next', {});
    expect(next.status, next.text).toBe(200);
    expect(next.body.task.task_id).toBe(created.body.task_id);
    expect(keyOrder(next.body.task.params)).toEqual(keyOrder(params));
  });

  it("a project's parameter history keeps its order; its tasks take the project's order, then their own", async () => {
    const call = client(server, 'current', account.test_key);
    const { attachment, attachment_type, ...projectParams } = params;
    const project = await call('POST', '/v1/projects', { json: { type: 'imageannotation', name: 'ordered', params: projectParams } });
    expect(project.status, project.text).toBe(200);
    const read = await call('GET', '/v1/projects/ordered');
    const { version: _v, created_at: _c, ...history } = read.body.param_history[0];
    expect(keyOrder(history)).toEqual(keyOrder(projectParams));
    const task = await call('POST', '/v1/task/imageannotation', {
      json: { callback_url: 'https://example.com/cb', project: 'ordered', attachment_type, attachment },
    });
    expect(task.status, task.text).toBe(200);
    const got = await call('GET', `/v1/task/${task.body.task_id}`);
    expect(keyOrder(got.body.params)).toEqual(keyOrder({ ...projectParams, attachment_type, attachment }));
  });

  it('a training task keeps its params in the order sent', async () => {
    const call = client(server, 'legacy', account.test_key);
    const { annotation_attributes: _a, ...trainingParams } = params;
    const created = await call('POST', '/v1/training_tasks/imageannotation', {
      json: { ...trainingParams, expected_response: { annotations: [] } },
    });
    expect(created.status, created.text).toBe(200);
    const read = await call('GET', `/v1/training_tasks/${created.body.id}`);
    expect(keyOrder(read.body.params)).toEqual(keyOrder(trainingParams));
  });
});
