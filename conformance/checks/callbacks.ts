// Seed 6 (events: the completion callback, delivery rules, the attachment error callback, the batch
// completion callback) and 5.6 (callback authentication). Callbacks go to the suite's receiver.
import { createServer } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { verifyCallback } from '../../client/node.ts';
import {
  ConformanceFailure,
  expectStatus,
  expectThat,
  type Check,
  type CheckContext,
  type KeyName,
  type ReceivedCallback,
  type Receiver,
} from '../types.ts';
import { projectAndBatch } from './batches.ts';
import { FAILING_ATTACHMENT_HOST, SINK, callbackFlag, categorization, createTask, postTask, readTask, settledTask } from './helpers.ts';

const area = 'Callbacks';
const DELIVERY_MS = 60_000;

function header(cb: ReceivedCallback, name: string): string | undefined {
  const entry = Object.entries(cb.headers).find(([k]) => k.toLowerCase() === name);
  const value = entry?.[1];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A fresh mailbox on the receiver: its label and URL. */
async function mailbox(ctx: CheckContext, prefix = 'cb'): Promise<{ receiver: Receiver; label: string; url: string }> {
  const receiver = await ctx.receiver();
  const label = ctx.unique(prefix);
  return { receiver, label, url: receiver.url(label) };
}

/** A test task calling back to a fresh mailbox, once its completion callback has arrived. */
async function calledBackTask(ctx: CheckContext) {
  const box = await mailbox(ctx);
  const task = await createTask(ctx, 'categorization', categorization({ callback_url: box.url }));
  const [first] = await arrivals(ctx, box.receiver, box.label, 1, `the completion callback of task ${task.task_id}`);
  return { box, task, first: first! };
}

/** Waits until `label` has received at least `n` POSTs; returns them. */
function arrivals(
  ctx: CheckContext,
  receiver: Receiver,
  label: string,
  n: number,
  what: string,
  timeoutMs = DELIVERY_MS,
): Promise<ReceivedCallback[]> {
  return ctx.until(
    what,
    async () => {
      const got = receiver.received(label).filter((r) => (r.method ?? 'POST') === 'POST');
      return got.length >= n ? got : undefined;
    },
    timeoutMs,
  );
}

/** The headers every callback carries: JSON content type and the service-callback-auth key. */
function expectCallbackHeaders(cb: ReceivedCallback, what: string): string {
  const type = header(cb, 'content-type') ?? '';
  expectThat(
    type.toLowerCase().startsWith('application/json'),
    `${what}: content-type should be application/json, got ${JSON.stringify(type)}`,
  );
  const auth = header(cb, 'service-callback-auth');
  expectThat(
    typeof auth === 'string' && auth.length > 0,
    `${what}: the service-callback-auth header should carry the account's callback auth key`,
    cb.headers,
  );
  return auth;
}

async function flagBecomes(ctx: CheckContext, taskId: string, value: boolean, key?: KeyName) {
  const flag = callbackFlag(ctx);
  await ctx.until(`the task's ${flag} to become ${value}`, async () => (await readTask(ctx, taskId, key))[flag] === value, DELIVERY_MS);
}

/** GET /v1/task/{taskId}/callbacks until `accept` holds for its docs; returns them. */
async function attempts(ctx: CheckContext, taskId: string, what: string, accept: (docs: any[]) => boolean): Promise<any[]> {
  return ctx.until(
    what,
    async () => {
      const ex = await ctx.call('GET', `/v1/task/${taskId}/callbacks`);
      expectStatus(ex, 200, `GET /v1/task/${taskId}/callbacks`);
      expectThat(Array.isArray(ex.body?.docs), 'GET /v1/task/{taskId}/callbacks should answer {docs: [...]}', ex.body);
      return accept(ex.body.docs) ? (ex.body.docs as any[]) : undefined;
    },
    DELIVERY_MS,
  );
}

/** A callback address on the callback host where nothing listens (a port just closed): connections are refused. */
async function refusingUrl(ctx: CheckContext): Promise<string> {
  const host = ctx.options.callbackHost || '127.0.0.1';
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/${ctx.unique('refused')}`;
}

export const callbackChecks: Check[] = [
  {
    id: 'callbacks/task-completed',
    area,
    seed: '6.1 Task completion callback; 6.2 Delivery rules; 5 Authentication (6: service-callback-auth)',
    rule: 'A completed task POSTs {task_id, response, task} as JSON to its callback_url with the service-callback-auth header (the same key on every callback); a 2xx answer sets the callback flag true.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const boxes = [await mailbox(ctx), await mailbox(ctx)];
      const tasks = await Promise.all(boxes.map((b) => createTask(ctx, 'categorization', categorization({ callback_url: b.url }))));
      const keys: string[] = [];
      for (const [i, box] of boxes.entries()) {
        const task = tasks[i];
        const [cb] = await arrivals(ctx, box.receiver, box.label, 1, `the completion callback of task ${task.task_id}`);
        if (!cb) continue;
        keys.push(expectCallbackHeaders(cb, 'the completion callback'));
        const body = cb.body;
        expectThat(
          body && body.task_id === task.task_id,
          `the callback body should name the task (task_id ${task.task_id})`,
          body ?? cb.text.slice(0, 300),
        );
        const read = await settledTask(ctx, task.task_id, ['completed']);
        expectThat(isDeepStrictEqual(body.response, read.response), 'the callback response should be the task response', {
          callback: body.response,
          task: read.response,
        });
        expectThat(
          body.task?.task_id === task.task_id && body.task?.status === 'completed',
          'the callback should carry the completed task',
          body.task,
        );
        if (ctx.generation === 'legacy') {
          expectThat(
            typeof body.task?.urgency === 'string',
            'a task created through the older generation is sent in its own view (with urgency)',
            body.task,
          );
        }
        await flagBecomes(ctx, task.task_id, true);
      }
      expectThat(
        keys.length === 2 && keys[0] === keys[1],
        'every callback of one account should carry the same service-callback-auth value',
        keys,
      );
    },
  },
  {
    id: 'callbacks/signature-headers',
    area,
    seed: '6 Events; decision: Standard Webhooks headers on every callback',
    rule: 'Every callback carries webhook-id, webhook-timestamp (Unix seconds) and webhook-signature (v1,<base64>).',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const { first: cb } = await calledBackTask(ctx);
      expectThat((header(cb, 'webhook-id') ?? '').length > 0, 'webhook-id should be present', cb.headers);
      expectThat(/^[0-9]+$/.test(header(cb, 'webhook-timestamp') ?? ''), 'webhook-timestamp should be Unix seconds', cb.headers);
      expectThat(
        /(^| )v1,[A-Za-z0-9+/]+=*/.test(header(cb, 'webhook-signature') ?? ''),
        'webhook-signature should hold v1,<base64 signature>',
        cb.headers,
      );
    },
  },
  {
    id: 'callbacks/verified',
    area,
    seed: '5 Authentication (6: service-callback-auth); 6 Events; decision: Standard Webhooks signatures',
    rule: "Every callback carries the account's callback auth key and a webhook-signature that verifies with the account's signing secret over the exact body.",
    kind: 'behaviour',
    needs: ['callback', 'callbackSecrets'],
    async run(ctx) {
      const { first: cb } = await calledBackTask(ctx);
      try {
        await verifyCallback(cb.headers, cb.text, {
          callbackAuthKey: ctx.options.callbackAuthKey!,
          signingSecret: ctx.options.signingSecret!,
          seen: false,
        });
      } catch (err) {
        throw new ConformanceFailure(`the callback does not verify: ${(err as Error).message}`, cb.headers);
      }
    },
  },
  {
    id: 'callbacks/retry',
    area,
    seed: '6.2 Delivery rules (without 2xx the service retries)',
    rule: 'A callback answered without 2xx is retried (the same message again), and the flag becomes true once a retry gets 2xx.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const box = await mailbox(ctx);
      box.receiver.respond(box.label, 500);
      const task = await createTask(ctx, 'categorization', categorization({ callback_url: box.url }));
      const [first] = await arrivals(ctx, box.receiver, box.label, 1, 'the first attempt');
      const flag = callbackFlag(ctx);
      const meanwhile = (await readTask(ctx, task.task_id))[flag];
      expectThat(meanwhile !== true, `after a 500 the task's ${flag} must not be true`, meanwhile);
      box.receiver.respond(box.label, 200);
      // The first retry is due 5 s after the failure (the operator may compress the schedule).
      const all = await arrivals(ctx, box.receiver, box.label, 2, 'a retry after the 500', 90_000);
      const second = all[1];
      expectThat(
        second?.body?.task_id === task.task_id && isDeepStrictEqual(second?.body, first?.body),
        'the retry should carry the same body',
        second?.body,
      );
      expectThat(header(second!, 'webhook-id') === header(first!, 'webhook-id'), 'a retry of one message should keep its webhook-id');
      await flagBecomes(ctx, task.task_id, true);
    },
  },
  {
    id: 'callbacks/attachment-error',
    area,
    seed: '6.3 Attachment error callback; 2.3 Attachment (test mode: .invalid host simulates a 404)',
    rule: 'When an attachment fetch does not answer 200 the callback address receives {error, attachments: [{statusCode, url}]} with the service-callback-auth header; error names the failed URL.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const box = await mailbox(ctx);
      const attachment = `https://${FAILING_ATTACHMENT_HOST}/${ctx.unique('missing')}.jpg`;
      const task = await createTask(ctx, 'categorization', categorization({ attachment_type: 'image', attachment, callback_url: box.url }));
      const [cb] = await arrivals(ctx, box.receiver, box.label, 1, 'the attachment error callback');
      expectCallbackHeaders(cb!, 'the attachment error callback');
      const body = cb!.body;
      expectThat(
        typeof body?.error === 'string' && body.error.includes(attachment),
        'the attachment error callback should carry error text naming the failed attachment URL',
        body,
      );
      expectThat(
        isDeepStrictEqual(body.attachments, [{ statusCode: 404, url: attachment }]),
        `attachments should be [{statusCode: 404, url: ${attachment}}]`,
        body.attachments,
      );
      expectThat(
        body.task_id === task.task_id,
        `the callback should name the task ${task.task_id}, got ${JSON.stringify(body.task_id)}`,
        body,
      );
      const read = await settledTask(ctx, task.task_id, [ctx.generation === 'legacy' ? 'completed' : 'error']);
      if (ctx.generation === 'current') {
        expectThat(read.response?.error === body.error, "the callback's error should be the errored task's response.error", {
          callback: body.error,
          task: read.response,
        });
      }
    },
  },
  {
    id: 'callbacks/attachment-error-live',
    area,
    seed: '6.3 Attachment error callback; 2.3 Attachment (live mode fetches; not HTTP 200 → error body)',
    rule: 'In live mode an attachment URL answering 404 moves the task to error and sends {error, attachments: [{statusCode: 404, url}]} to the callback address; error (and response.error) names the failed URL.',
    kind: 'behaviour',
    needs: ['liveKey', 'callback'],
    async run(ctx) {
      const box = await mailbox(ctx);
      const attachment = box.receiver.fileUrl(ctx.unique('gone'), 404);
      const task = await createTask(
        ctx,
        'categorization',
        categorization({ attachment_type: 'image', attachment, callback_url: box.url }),
        { key: 'live' },
      );
      const [cb] = await arrivals(ctx, box.receiver, box.label, 1, 'the attachment error callback of a live task');
      expectCallbackHeaders(cb!, 'the attachment error callback');
      expectThat(
        typeof cb!.body?.error === 'string' && isDeepStrictEqual(cb!.body?.attachments, [{ statusCode: 404, url: attachment }]),
        `the body should be {error, attachments: [{statusCode: 404, url: ${attachment}}]}`,
        cb!.body,
      );
      const read = await settledTask(ctx, task.task_id, [ctx.generation === 'legacy' ? 'completed' : 'error'], 'live');
      expectThat(
        typeof read.response?.error === 'string' && read.response.error.includes(attachment),
        'the task should carry response.error naming the failed attachment URL',
        read,
      );
    },
  },
  {
    id: 'callbacks/batch-completed',
    area,
    seed: '6.4 Batch completion callback; 3.2 Batch status (completed; callback fired)',
    rule: 'When a batch completes its callback address receives {batch, counts} with the completed batch and its final task counts.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const box = await mailbox(ctx, 'batch');
      const { name } = await projectAndBatch(ctx, { callback: box.url });
      expectStatus(
        await postTask(ctx, 'categorization', { callback_url: SINK, batch: name, attachment: 'The only task.' }),
        200,
        'adding a task to the batch',
      );
      const [cb] = await arrivals(ctx, box.receiver, box.label, 1, 'the batch completion callback');
      expectCallbackHeaders(cb!, 'the batch completion callback');
      const body = cb!.body;
      expectThat(body?.batch?.name === name && body?.batch?.status === 'completed', 'the body should carry the completed batch', body);
      expectThat(
        isDeepStrictEqual(body.counts, { completed: 1, canceled: 0, error: 0 }),
        'counts should be {completed: 1, canceled: 0, error: 0}',
        body.counts,
      );
    },
  },
  {
    id: 'callbacks/history-events',
    area,
    seed: '6 Events; 6.2 Delivery rules; decision: GET /v1/task/{taskId}/callbacks lists the delivery attempts',
    rule: 'After a completion callback was delivered, GET /v1/task/{taskId}/callbacks lists its attempt with event task_completed, the callback address and the 2xx status.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const { box, task } = await calledBackTask(ctx);
      const docs = await attempts(ctx, task.task_id, 'the delivered callback to be listed', (d) => d.some((a) => a.status_code === 200));
      const delivered = docs.find((a) => a.status_code === 200);
      expectThat(
        delivered.event === 'task_completed' && delivered.url === box.url,
        `the delivered completion callback should be listed with event task_completed and url ${box.url}`,
        docs,
      );
    },
  },
  {
    id: 'callbacks/account-list',
    area,
    seed: "Our addition (the console's Deliveries): GET /v1/callbacks lists the account's callbacks",
    rule: "After a task's completion callback was delivered, GET /v1/callbacks?state=delivered lists it (task_id, url, attempts, the 2xx last attempt), newest first, and ?state=pending does not.",
    kind: 'behaviour',
    generations: ['current'],
    needs: ['callback'],
    async run(ctx) {
      const { box, task } = await calledBackTask(ctx);
      await flagBecomes(ctx, task.task_id, true);
      const find = async (state: string) => {
        // Other checks call back meanwhile: walk a few pages of the newest.
        let token: string | undefined;
        for (let page = 0; page < 5; page++) {
          const read = await ctx.call(
            'GET',
            `/v1/callbacks?state=${state}&limit=100${token ? `&next_token=${encodeURIComponent(token)}` : ''}`,
          );
          expectStatus(read, 200, `listing the ${state} callbacks`);
          const found = (read.body?.docs ?? []).find((d: { task_id?: string }) => d.task_id === task.task_id);
          if (found || !read.body?.next_token) return found;
          token = read.body.next_token;
        }
        return undefined;
      };
      const listed = await find('delivered');
      expectThat(
        listed?.event === 'task_completed' && listed.url === box.url && listed.attempts >= 1 && listed.last_attempt?.status_code === 200,
        `the delivered callback of task ${task.task_id} should be listed with url ${box.url} and its 200`,
        listed,
      );
      expectThat((await find('pending')) === undefined, 'a delivered callback should not be listed as pending');
    },
  },
  {
    id: 'callbacks/history-refused',
    area,
    seed: '6.2 Delivery rules (no connection is a failed attempt); decision: GET /v1/task/{taskId}/callbacks lists the delivery attempts',
    rule: 'An attempt whose connection was refused is listed with its error and without status_code (no answer came), and the task is not marked called back.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const url = await refusingUrl(ctx);
      const task = await createTask(ctx, 'categorization', categorization({ callback_url: url }));
      const docs = await attempts(ctx, task.task_id, 'the refused attempt to be listed', (d) => d.length > 0);
      const [attempt] = docs;
      expectThat(
        attempt.url === url &&
          attempt.event === 'task_completed' &&
          !('status_code' in attempt) &&
          typeof attempt.error === 'string' &&
          attempt.error.length > 0,
        `the refused attempt should be listed with url ${url}, event task_completed, an error and no status_code`,
        docs,
      );
      expectThat(
        (await readTask(ctx, task.task_id))[callbackFlag(ctx)] !== true,
        `after a refused attempt the task's ${callbackFlag(ctx)} must not be true`,
      );
    },
  },
  {
    id: 'callbacks/redeliver',
    area,
    seed: '6.2 Delivery rules; decision: POST /v1/task/{taskId}/callbacks/redeliver sends the callback again',
    rule: 'POST /v1/task/{taskId}/callbacks/redeliver on a completed task answers 200 with the task and sends its callback again (a new delivery); both attempts are listed.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const { box, task, first } = await calledBackTask(ctx);
      const again = await ctx.call('POST', `/v1/task/${task.task_id}/callbacks/redeliver`);
      expectStatus(again, 200, 'redelivering the callback of a completed task');
      expectThat(again.body?.task_id === task.task_id, 'the redeliver answer should be the task', again.body);
      const all = await arrivals(ctx, box.receiver, box.label, 2, 'the redelivered callback');
      const second = all[1]!;
      expectThat(
        second.body?.task_id === task.task_id,
        `the redelivered callback should name the task (task_id ${task.task_id})`,
        second.body ?? second.text.slice(0, 300),
      );
      expectThat(
        isDeepStrictEqual(second.body?.response, first.body?.response),
        'the redelivered callback should carry the same response',
        { first: first.body?.response, again: second.body?.response },
      );
      const firstId = header(first, 'webhook-id');
      expectThat(
        firstId === undefined || header(second, 'webhook-id') !== firstId,
        'a redelivery is a new message: it should have its own webhook-id',
        [firstId, header(second, 'webhook-id')],
      );
      await attempts(ctx, task.task_id, 'both deliveries to be listed', (d) => d.filter((a) => a.event === 'task_completed').length >= 2);
    },
  },
  {
    id: 'callbacks/redeliver-latest',
    area,
    seed: '6.2 Delivery rules; 3.3 Customer review status (a redo sends a new callback); decision: POST /v1/task/{taskId}/callbacks/redeliver sends the latest callback again',
    rule: 'After two redos (test mode: two rejecting reviews), a redeliver sends the latest callback: the task as redone twice, with its current response.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const { box, task } = await calledBackTask(ctx);
      for (const n of [2, 3]) {
        expectStatus(
          await ctx.call('POST', `/v1/task/${task.task_id}/audit`, { json: { accepted: false } }),
          200,
          `rejecting review ${n - 1}`,
        );
        await arrivals(ctx, box.receiver, box.label, n, `the callback of redo ${n - 1}`);
      }
      const read = await readTask(ctx, task.task_id);
      expectThat(read.times_redone === 2, 'after two rejecting reviews the task should read times_redone 2', read);
      expectStatus(
        await ctx.call('POST', `/v1/task/${task.task_id}/callbacks/redeliver`),
        200,
        'redelivering the callback of the twice redone task',
      );
      const all = await arrivals(ctx, box.receiver, box.label, 4, 'the redelivered callback');
      const last = all[3]!.body;
      expectThat(
        last?.task?.times_redone === 2 && isDeepStrictEqual(last?.response, read.response),
        'the redelivered callback should be the latest one: the task with times_redone 2 and its current response',
        {
          redelivered: { times_redone: last?.task?.times_redone, response: last?.response },
          task: { times_redone: read.times_redone, response: read.response },
        },
      );
    },
  },
  {
    id: 'callbacks/redeliver-once',
    area,
    seed: '6.2 Delivery rules; decision: POST /v1/task/{taskId}/callbacks/redeliver sends the callback again',
    rule: 'Each redeliver sends the callback exactly once more: after two redelivers the receiver has exactly three callbacks and the task lists exactly three deliveries.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const { box, task } = await calledBackTask(ctx);
      for (const n of [2, 3]) {
        expectStatus(
          await ctx.call('POST', `/v1/task/${task.task_id}/callbacks/redeliver`),
          200,
          'redelivering the callback of a completed task',
        );
        const got = await arrivals(ctx, box.receiver, box.label, n, `redelivered callback ${n - 1}`);
        expectThat(got.length === n, `after ${n - 1} redeliver(s) the receiver should have exactly ${n} callbacks, it has ${got.length}`);
      }
      // Deliveries queued earlier go out first: had a redeliver queued two, the second would be here by now.
      const listed = await attempts(
        ctx,
        task.task_id,
        'the three deliveries to be listed',
        (d) => d.filter((a) => a.event === 'task_completed').length >= 3,
      );
      const received = box.receiver.received(box.label).filter((r) => (r.method ?? 'POST') === 'POST').length;
      expectThat(
        received === 3 && listed.filter((a) => a.event === 'task_completed').length === 3,
        `two redelivers should make exactly three deliveries: received ${received}, listed ${listed.length}`,
        listed,
      );
    },
  },
];
