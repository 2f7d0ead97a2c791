// Small helpers shared by the behaviour checks: request bodies that every generation accepts, and
// creation, reading, waiting and listing over the suite's `ctx.call` (HTTP only, any server).
import { randomBytes } from 'node:crypto';
import {
  ConformanceFailure,
  expectStatus,
  expectThat,
  type CheckContext,
  type Exchange,
  type KeyName,
  type RequestOptions,
} from '../types.ts';

/**
 * Stands for the callback address of tasks whose callback no check looks at: `postTask` and
 * `createTask` replace it with a mailbox of the suite's receiver, so that callbacks stay on this
 * machine and succeed at once (no retries that would slow the server under test).
 */
export const SINK = 'conformance:sink';

/** An attachment host that, by the contract, simulates a failed fetch (404) in test mode. */
export const FAILING_ATTACHMENT_HOST = 'attachments.conformance.invalid';

/** A text categorization task: valid in both generations, never fetches anything in either mode. */
export function categorization(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    callback_url: SINK,
    instruction: 'Which department should handle this ticket?',
    attachment_type: 'text',
    attachment: 'My invoice is wrong.',
    categories: ['billing', 'support', 'sales'],
    ...extra,
  };
}

/** An image categorization task whose attachment fails (test mode: simulated 404). */
export function failingCategorization(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return categorization({ attachment_type: 'image', attachment: `https://${FAILING_ATTACHMENT_HOST}/missing.jpg`, ...extra });
}

/** A box annotation task (test mode only: live mode would fetch the image). */
export function annotation(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    callback_url: SINK,
    instruction: 'Draw a box around each vehicle.',
    attachment: 'https://example.com/conformance/street.jpg',
    objects_to_annotate: ['car', 'truck'],
    with_labels: true,
    ...extra,
  };
}

/** A comparison task over two texts. */
export function comparison(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    callback_url: SINK,
    instruction: 'Which answer is more polite?',
    attachment_type: 'text',
    attachments: ['Hello, how can I help you?', 'What do you want?'],
    choices: ['first', 'second'],
    ...extra,
  };
}

/** 24 lowercase hex characters that name no task (random, so no server can hold it). */
export function unknownTaskId(): string {
  return randomBytes(12).toString('hex');
}

export interface CallOptions {
  key?: KeyName;
  headers?: Record<string, string>;
}

/** The body with the SINK stand-in replaced by the receiver's sink address. */
export async function withSink(ctx: CheckContext, body: unknown): Promise<unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  if (record.callback_url !== SINK && record.callback !== SINK) return body;
  const sink = (await ctx.receiver()).url('sink');
  return {
    ...record,
    ...(record.callback_url === SINK ? { callback_url: sink } : {}),
    ...(record.callback === SINK ? { callback: sink } : {}),
  };
}

/** POST /v1/task/{type} (callback to the sink unless the body names one); the answer, whatever it is. */
export async function postTask(ctx: CheckContext, type: string, body: unknown, options: CallOptions = {}): Promise<Exchange> {
  return ctx.call('POST', `/v1/task/${type}`, { json: await withSink(ctx, body), ...options });
}

/** POSTs a creation request and insists on 200 with a task; returns the created task. */
export async function createTask(ctx: CheckContext, type: string, body: unknown, options: CallOptions = {}): Promise<any> {
  const ex = await postTask(ctx, type, body, options);
  expectStatus(ex, 200, `creating a task of type ${type}`);
  expectThat(typeof ex.body?.task_id === 'string', `POST /v1/task/${type} answered 200 without a task_id`, ex.body);
  return ex.body;
}

/** GET /v1/task/{id}, insisting on 200; returns the task. */
export async function readTask(ctx: CheckContext, taskId: string, key?: KeyName): Promise<any> {
  const ex = await ctx.call('GET', `/v1/task/${taskId}`, key ? { key } : {});
  expectStatus(ex, 200, `reading task ${taskId}`);
  return ex.body;
}

/** Reads the task until its status is one of `statuses` (a test-mode task may be completed with a delay). */
export async function settledTask(ctx: CheckContext, taskId: string, statuses: string[] = ['completed'], key?: KeyName): Promise<any> {
  return ctx.until(`task ${taskId} to reach status ${statuses.join(' or ')}`, async () => {
    const task = await readTask(ctx, taskId, key);
    return statuses.includes(task.status) ? task : undefined;
  });
}

/** Creates a test-mode task and waits until every read shows it completed. */
export async function completedTask(ctx: CheckContext, type: string, body: unknown): Promise<any> {
  const created = await createTask(ctx, type, body);
  return settledTask(ctx, created.task_id, ['completed']);
}

/** The status a task that ran into an error shows in this generation (the older one shows it completed). */
export function errorStatus(ctx: CheckContext): string {
  return ctx.generation === 'legacy' ? 'completed' : 'error';
}

/** Creates a test-mode task whose attachment fails, and waits until it is settled (in error). */
export async function erroredTask(ctx: CheckContext, extra: Record<string, unknown> = {}): Promise<any> {
  const created = await createTask(ctx, 'categorization', failingCategorization(extra));
  const task = await settledTask(ctx, created.task_id, ['error', 'completed']);
  expectThat(
    task.status === errorStatus(ctx) && typeof task.response?.error === 'string',
    `a task whose attachment cannot be fetched (host ${FAILING_ATTACHMENT_HOST}) should show status ${errorStatus(ctx)} with response.error, got status ${task.status}`,
    task,
  );
  return task;
}

export type Query = NonNullable<RequestOptions['query']>;

/** GET /v1/tasks with a query, insisting on 200 and a `docs` array. */
export async function listTasks(ctx: CheckContext, query: Query, key?: KeyName): Promise<any> {
  const ex = await ctx.call('GET', '/v1/tasks', { query, ...(key ? { key } : {}) });
  expectStatus(ex, 200, `listing tasks with ${JSON.stringify(query)}`);
  expectThat(Array.isArray(ex.body?.docs), 'GET /v1/tasks answered 200 without a docs array', ex.body);
  return ex.body;
}

export const idsOf = (docs: Array<{ task_id: string }>): string[] => docs.map((d) => d.task_id);

/**
 * Every matching task id, page after page, in the generation's paging style (current: next_token;
 * older: offset). Fails when paging does not end within `maxPages`.
 */
export async function listAllIds(
  ctx: CheckContext,
  query: Query,
  options: { key?: KeyName; pageSize?: number; maxPages?: number } = {},
): Promise<string[]> {
  const pageSize = options.pageSize ?? 100;
  const maxPages = options.maxPages ?? 50;
  const ids: string[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const paging: Query = ctx.generation === 'legacy' ? { offset: page * pageSize } : nextToken ? { next_token: nextToken } : {};
    const body = await listTasks(ctx, { ...query, limit: pageSize, ...paging }, options.key);
    ids.push(...idsOf(body.docs));
    if (ctx.generation === 'legacy') {
      if (!body.has_more) return ids;
    } else {
      if (!body.has_more) {
        expectThat(body.next_token === undefined, 'the last page (has_more false) should carry no next_token', body);
        return ids;
      }
      expectThat(
        typeof body.next_token === 'string' && body.next_token.length > 0,
        'a page with has_more true should carry a next_token',
        body,
      );
      nextToken = body.next_token;
    }
  }
  throw new ConformanceFailure(`paging ${JSON.stringify(query)} did not end within ${maxPages} pages of ${pageSize}`);
}

/** Creates `n` test-mode tasks one after another (so their created_at order is their creation order). */
export async function createInSequence(
  ctx: CheckContext,
  n: number,
  body: (i: number) => unknown,
  type = 'categorization',
  key?: KeyName,
): Promise<any[]> {
  const tasks: any[] = [];
  for (let i = 0; i < n; i++) tasks.push(await createTask(ctx, type, body(i), key ? { key } : {}));
  return tasks;
}

/** The callback flag of a task in this generation (`callback_completed`, older: `callback_succeeded`). */
export function callbackFlag(ctx: CheckContext): 'callback_completed' | 'callback_succeeded' {
  return ctx.generation === 'legacy' ? 'callback_succeeded' : 'callback_completed';
}

/** Expects an error answer with the `{status_code, error}` body (decided for every error). */
export function expectError(ex: Exchange, status: number | number[], why: string): void {
  expectStatus(ex, status, why);
  expectThat(
    ex.body && ex.body.status_code === ex.status && typeof ex.body.error === 'string',
    `${why}: the ${ex.status} answer should have the body {status_code: ${ex.status}, error: "<message>"}`,
    ex.body ?? ex.text.slice(0, 500),
  );
}

export const sameMembers = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** A text-collection training task whose summary field names `label` (so bodies differ). */
export function trainingBody(label: string) {
  return {
    attachments: [{ type: 'text', content: `Conformance ${label}.` }],
    fields: [{ type: 'text', field_id: 'summary', title: `Summary (${label})`, max_characters: 200 }],
    expected_response: { annotations: { summary: 'A short text.' } },
  };
}
