// Type tests of the client, compiled (never run) by types.test.ts beside this file, and by `tsc`
// over the tree. A `@ts-expect-error` line that compiles is itself an error, so each one proves a
// mistake is caught. The functions below are never called: only their types matter.
import { expectTypeOf } from 'vitest';
import {
  createClient,
  createLegacyClient,
  type HumantaskError,
  type ErrorBody,
  type HumantaskClient,
  type LegacyHumantaskClient,
} from '../../../client/index.ts';
import type { VerifiedCallback } from '../../../client/node.ts';
import type { components as Current } from '../../../generated/current.ts';
import type { components as Legacy } from '../../../generated/legacy.ts';

type Task = Current['schemas']['Task'];
type LegacyTask = Legacy['schemas']['LegacyTask'];

const text = { callback_url: 'https://example.com/cb', attachment_type: 'text' as const, attachment: 'hi', categories: ['a'] };

export async function creationBodies(client: HumantaskClient, legacy: LegacyHumantaskClient) {
  await client.tasks.create('categorization', text);
  await client.tasks.create('annotation', { attachment: 'https://example.com/a.jpg', objects_to_annotate: ['car'] });
  // @ts-expect-error categories is a list of strings
  await client.tasks.create('categorization', { ...text, categories: 'billing' });
  // @ts-expect-error the annotation body needs an attachment
  await client.tasks.create('annotation', { objects_to_annotate: ['car'] });
  // @ts-expect-error there is no such task type
  await client.tasks.create('categorisation', text);
  // @ts-expect-error the older generation has no imageannotation endpoint
  await legacy.tasks.create('imageannotation', { attachment: 'https://example.com/a.jpg' });
  await legacy.tasks.create('categorization', { ...text, urgency: 'week' });
  // @ts-expect-error urgency is an older-generation parameter only
  await client.tasks.create('categorization', { ...text, urgency: 'week' });
  // @ts-expect-error a training body needs its expected_response
  await client.trainingTasks.create('textcollection', { attachments: [], fields: [] });
  // @ts-expect-error audit needs the boolean `accepted`
  await client.tasks.audit('id', { accepted: 'yes' });
  // @ts-expect-error tags are an array of strings
  await client.tasks.addTags('id', 'a,b');
}

export async function parameterNames(client: HumantaskClient, legacy: LegacyHumantaskClient) {
  await client.tasks.list({ status: ['completed'], limit: 10, next_token: 'x' });
  // @ts-expect-error no parameter `statuss`
  await client.tasks.list({ statuss: 'completed' });
  // @ts-expect-error the current generation pages with next_token, not offset
  await client.tasks.list({ offset: 100 });
  await legacy.tasks.list({ offset: 100 });
  // @ts-expect-error the older generation pages with offset, not next_token
  await legacy.tasks.list({ next_token: 'x' });
  // @ts-expect-error `error` is not an older-generation status
  await legacy.tasks.list({ status: 'error' });
  // @ts-expect-error iterate manages the cursor itself
  client.tasks.iterate({ next_token: 'x' });
  // @ts-expect-error cancel's option is clearUniqueId
  await client.tasks.cancel('id', { clear_unique_id: true });
  await client.GET('/v1/task/{taskId}', { params: { path: { taskId: 'x' } } });
  // @ts-expect-error the path parameter is taskId
  await client.GET('/v1/task/{taskId}', { params: { path: { task_id: 'x' } } });
  // @ts-expect-error no such path
  await client.GET('/v1/nope', {});
}

export async function narrowing(client: HumantaskClient, legacy: LegacyHumantaskClient) {
  const res = await client.tasks.get('65f1c0a2b3c4d5e6f7a8b9c0');
  expectTypeOf(res.status).toEqualTypeOf<200 | 400 | 401 | 403 | 404 | 429 | 500>();
  if (res.status === 200) {
    expectTypeOf(res.data).toEqualTypeOf<Task>();
    expectTypeOf(res.error).toEqualTypeOf<undefined>();
  } else {
    expectTypeOf(res.error).toEqualTypeOf<ErrorBody>();
    expectTypeOf(res.data).toEqualTypeOf<undefined>();
  }
  if (res.ok) expectTypeOf(res.data.task_id).toBeString();
  if (res.error) expectTypeOf(res.status).toEqualTypeOf<400 | 401 | 403 | 404 | 429 | 500>();
  // @ts-expect-error getTask documents no 409
  if (res.status === 409) return;
  // @ts-expect-error data may be absent until narrowed
  res.data.task_id;

  const created = await client.tasks.create('categorization', text);
  if (created.status === 409) expectTypeOf(created.error.error).toBeString();
  if (created.ok && created.data.type === 'categorization') {
    // The task is a union by type: narrowing on `type` types params and response.
    expectTypeOf(created.data.params.categories).toEqualTypeOf<string[] | undefined>();
  }

  const old = await legacy.tasks.get('65f1c0a2b3c4d5e6f7a8b9c0');
  if (old.ok) {
    expectTypeOf(old.data).toEqualTypeOf<LegacyTask>();
    // @ts-expect-error the older generation has no `error` status
    if (old.data.status === 'error') return;
  }

  const page = await client.tasks.list();
  if (page.ok) expectTypeOf(page.data.next_token).toEqualTypeOf<string | undefined>();
  for await (const task of client.tasks.iterate({ status: ['completed'] })) expectTypeOf(task).toEqualTypeOf<Task>();
  for await (const task of legacy.tasks.iterate()) expectTypeOf(task).toEqualTypeOf<LegacyTask>();
}

export async function throwing() {
  const client = createClient({ apiKey: 'k', baseUrl: 'http://x', throwOnError: true });
  const res = await client.tasks.get('id');
  // With throwOnError only successes are returned.
  expectTypeOf(res.data).toEqualTypeOf<Task>();
  expectTypeOf(res.status).toEqualTypeOf<200>();
  const returning = createLegacyClient({ apiKey: 'k', baseUrl: 'http://x' });
  const maybe = await returning.tasks.get('id');
  expectTypeOf(maybe.error).toEqualTypeOf<ErrorBody | undefined>();
  expectTypeOf<HumantaskError['body']>().toEqualTypeOf<ErrorBody>();
}

export function callbacks(callback: VerifiedCallback) {
  if (callback.type === 'taskCompleted' && callback.generation === 'current') {
    expectTypeOf(callback.payload.task).toEqualTypeOf<Task>();
    // The response is the task's response type, not the contract's bare object.
    expectTypeOf(callback.payload.response).not.toEqualTypeOf<Record<string, never>>();
  }
  if (callback.type === 'batchCompleted') expectTypeOf(callback.payload.counts.completed).toBeNumber();
  // @ts-expect-error there is no such callback type
  if (callback.type === 'taskFailed') return;
}
