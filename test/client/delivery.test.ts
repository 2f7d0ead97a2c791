// End to end: the reference server delivers real callbacks (delivery on, retry schedule
// compressed) to callbackMiddleware on loopback, which verifies the server's signatures and hands
// typed payloads of both generations to the handler; the client's callback methods are used too.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createLegacyClient, type HumantaskClient } from '../../client/index.ts';
import { callbackMiddleware, createReplayCache, type VerifiedCallback } from '../../client/node.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let receiver: Server;
let hookUrl: string;
const received: VerifiedCallback[] = [];
let failNext = 0;
let handlerCalls = 0;

async function until<T>(find: () => T | undefined, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  server = await startTestServer('pglite', {
    DELIVERY_POLL_MS: '5',
    ATTACHMENT_CHECK_POLL_MS: '5',
    ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
    CALLBACK_SCHEDULE_SCALE: '0.005',
  });
  const options = { callbackAuthKey: server.dev.callback_auth_key, signingSecret: server.dev.signing_secret, seen: createReplayCache() };
  receiver = createServer(
    callbackMiddleware(options, (callback) => {
      handlerCalls++;
      if (failNext > 0) {
        failNext--;
        throw new Error('the receiver is not ready');
      }
      received.push(callback);
    }),
  );
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
afterAll(async () => {
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  await server?.close();
});

const text = () => ({
  callback_url: hookUrl,
  instruction: 'Pick one',
  attachment_type: 'text' as const,
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
});
const completionOf = (taskId: string) => () =>
  received.find(
    (c): c is Extract<VerifiedCallback, { type: 'taskCompleted' }> => c.type === 'taskCompleted' && c.payload.task_id === taskId,
  );

describe('callbacks from the reference server through callbackMiddleware', () => {
  it('verifies and types a completion of each generation', async () => {
    const current = createClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true });
    const legacy = createLegacyClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true });
    const a = (await current.tasks.create('categorization', text())).data;
    const b = (await legacy.tasks.create('categorization', { ...text(), urgency: 'week' })).data;
    const ca = await until(completionOf(a.task_id), 'the current completion');
    const cb = await until(completionOf(b.task_id), 'the older completion');
    expect(ca).toMatchObject({ generation: 'current', payload: { task: { task_id: a.task_id, status: 'completed' } } });
    expect(cb).toMatchObject({ generation: 'legacy', payload: { task: { task_id: b.task_id, urgency: 'week' } } });
    expect(ca.id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(ca.payload.response).toEqual((await current.tasks.get(a.task_id)).data.response);

    const attempts = await current.tasks.listCallbacks(a.task_id);
    expect(attempts.data.docs).toEqual([expect.objectContaining({ event: 'task_completed', url: hookUrl, status_code: 200 })]);
  });

  it('processes the server’s retry after the handler failed, and a redelivery as a new message', async () => {
    const client: HumantaskClient<true> = createClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true });
    failNext = 1;
    const calls = handlerCalls;
    const task = (await client.tasks.create('categorization', text())).data;
    const first = await until(completionOf(task.task_id), 'the retried completion');
    expect(handlerCalls - calls).toBe(2);
    const attempts = (await client.tasks.listCallbacks(task.task_id)).data.docs;
    expect(attempts.map((x) => x.status_code)).toEqual([500, 200]);

    await client.tasks.redeliverCallback(task.task_id);
    const second = await until(
      () => received.find((c) => c.type === 'taskCompleted' && c.payload.task_id === task.task_id && c.id !== first.id),
      'the redelivery',
    );
    expect(second.type).toBe('taskCompleted');
  });

  it('verifies and types an attachment error', async () => {
    const client = createClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true });
    const task = (
      await client.tasks.create('categorization', { ...text(), attachment_type: 'image', attachment: 'https://images.invalid/a.jpg' })
    ).data;
    const error = await until(
      () =>
        received.find((c) => c.type === 'attachmentError' && c.payload.attachments.some((x) => x.url === 'https://images.invalid/a.jpg')),
      'the attachment error',
    );
    expect(error.type === 'attachmentError' && error.payload.attachments[0]?.statusCode).toBe(404);
    expect((await client.tasks.get(task.task_id)).data.status).toBe('error');
  });

  it('verifies and types a batch completion', async () => {
    const client = createClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true });
    await client.projects.create({
      type: 'categorization',
      name: 'delivery-studio',
      studio: true,
      params: { instruction: 'Pick one', attachment_type: 'text', categories: ['a', 'b'] },
    });
    await client.batches.create({ project: 'delivery-studio', name: 'delivery-batch', callback: hookUrl });
    await client.tasks.create('categorization', { callback_url: hookUrl, batch: 'delivery-batch', attachment: 'x' });
    await client.batches.finalize('delivery-batch');
    const done = await until(
      () => received.find((c) => c.type === 'batchCompleted' && c.payload.batch.name === 'delivery-batch'),
      'the batch completion',
    );
    expect(done.type === 'batchCompleted' && done.payload.counts).toEqual({ completed: 1, canceled: 0, error: 0 });
  });
});
