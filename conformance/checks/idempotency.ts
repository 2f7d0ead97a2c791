// Seed 4.4 (2): the Idempotency-Key header on creation requests.
import { expectStatus, expectThat, type Check, type CheckContext, type Exchange } from '../types.ts';
import { categorization, expectError, idsOf, listTasks, postTask, trainingBody } from './helpers.ts';

const area = 'Idempotency';
const seed = '4.4 Duplicate prevention > Idempotency-Key';

const post = (ctx: CheckContext, body: unknown, key: string, who: 'main' | 'live' = 'main') =>
  postTask(ctx, 'categorization', body, { key: who, headers: { 'Idempotency-Key': key } });

/** Ids of the tasks carrying `tag` (each check tags its tasks with a fresh tag). */
async function tagged(ctx: CheckContext, tag: string): Promise<string[]> {
  return idsOf((await listTasks(ctx, { tags: tag })).docs);
}

function expectReplay(first: Exchange, again: Exchange, why: string) {
  const shown = { first: first.body ?? first.text.slice(0, 300), again: again.body ?? again.text.slice(0, 300) };
  expectThat(again.status === first.status, `${why}: the saved status ${first.status} should come back, got ${again.status}`, shown);
  const otherTask = first.body?.task_id && again.body?.task_id && first.body.task_id !== again.body.task_id;
  expectThat(
    again.text === first.text,
    `${why}: the saved body should come back byte for byte${otherTask ? ` (it names another task: ${again.body.task_id} instead of ${first.body.task_id})` : ''}`,
    shown,
  );
  expectThat(
    again.headers.get('idempotent-replayed') === 'true',
    `${why}: a replayed answer should carry Idempotent-Replayed: true, got ${JSON.stringify(again.headers.get('idempotent-replayed'))}`,
  );
}

/** A key reused for another request: 409 (not a replay of the first answer), and only the first request's task exists. */
async function expectReuseRefused(ctx: CheckContext, answer: Exchange, what: string, tag: string, firstTaskId: string) {
  expectThat(
    answer.body?.task_id === undefined,
    `${what}: must not replay the first answer (got task ${answer.body?.task_id})`,
    answer.body,
  );
  expectError(answer, 409, what);
  expectThat(answer.headers.get('idempotent-replayed') !== 'true', `${what}: a 409 is not a replay`);
  const ids = await tagged(ctx, tag);
  expectThat(ids.length === 1 && ids[0] === firstTaskId, `only the first request should have created a task, found ${ids.length}`, ids);
}

export const idempotencyChecks: Check[] = [
  {
    id: 'idempotency/replay',
    area,
    seed,
    rule: 'A repeated creation with the same Idempotency-Key and the same body (key order aside) gets the saved answer again and creates no second task.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('idem');
      const key = ctx.unique('key');
      const body = categorization({ tags: [tag] });
      const first = await post(ctx, body, key);
      expectStatus(first, 200, 'the first creation with an Idempotency-Key');
      expectThat(first.headers.get('idempotent-replayed') === null, 'a first (not replayed) answer should not say Idempotent-Replayed');
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const again = await post(ctx, reordered, key);
      expectReplay(first, again, 'the same request again with the same Idempotency-Key');
      const ids = await tagged(ctx, tag);
      expectThat(ids.length === 1 && ids[0] === first.body.task_id, `one task should exist, found ${ids.length}`, ids);
    },
  },
  {
    id: 'idempotency/errors-saved',
    area,
    seed,
    rule: 'The answer saved for an Idempotency-Key includes errors: a repeated invalid request gets the same 400 again, marked as replayed.',
    kind: 'behaviour',
    async run(ctx) {
      const key = ctx.unique('key');
      const bad = categorization({ categories: 'not a list' });
      const first = await post(ctx, bad, key);
      expectError(first, 400, 'a creation with categories not a list');
      const again = await post(ctx, bad, key);
      expectReplay(first, again, 'the same invalid request again with the same Idempotency-Key');
    },
  },
  {
    id: 'idempotency/mismatch-409',
    area,
    seed,
    rule: 'The same Idempotency-Key with different parameters answers 409 and creates nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('idem');
      const key = ctx.unique('key');
      const first = await post(ctx, categorization({ tags: [tag] }), key);
      expectStatus(first, 200, 'the first creation with an Idempotency-Key');
      const changed = await post(ctx, categorization({ tags: [tag], instruction: 'Something else entirely.' }), key);
      await expectReuseRefused(ctx, changed, 'the same Idempotency-Key with a different body', tag, first.body.task_id);
    },
  },
  {
    id: 'idempotency/other-endpoint-409',
    area,
    seed: '4.4 Duplicate prevention > Idempotency-Key (same key, different request: 409; decision: the path is part of the fingerprint)',
    rule: 'An Idempotency-Key used for a creation on one path answers 409 (not a replay) when the same body is sent with it to another creation path.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('idem');
      const key = ctx.unique('key');
      const body = categorization({ tags: [tag] });
      const first = await post(ctx, body, key);
      expectStatus(first, 200, 'the first creation with an Idempotency-Key (POST /v1/task/categorization)');
      const elsewhere = await postTask(ctx, 'comparison', body, { headers: { 'Idempotency-Key': key } });
      await expectReuseRefused(
        ctx,
        elsewhere,
        'the same Idempotency-Key and body sent to another creation path (/v1/task/comparison)',
        tag,
        first.body.task_id,
      );
    },
  },
  {
    id: 'idempotency/array-change-409',
    area,
    seed: '4.4 Duplicate prevention > Idempotency-Key (same key, different parameters: 409)',
    rule: 'The same Idempotency-Key with a body that differs only in the order of an array (categories) answers 409 and creates nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('idem');
      const key = ctx.unique('key');
      const body = categorization({ tags: [tag] });
      const first = await post(ctx, body, key);
      expectStatus(first, 200, 'the first creation with an Idempotency-Key');
      const categories = [...(body.categories as string[])].reverse();
      const changed = await post(ctx, { ...body, categories }, key);
      await expectReuseRefused(
        ctx,
        changed,
        `the same Idempotency-Key with categories ${JSON.stringify(categories)} instead of ${JSON.stringify(body.categories)}`,
        tag,
        first.body.task_id,
      );
    },
  },
  {
    id: 'idempotency/concurrent',
    area,
    seed: '4.4 Duplicate prevention > Idempotency-Key (simultaneous requests); 7 Errors (429)',
    rule: 'Simultaneous identical requests with one Idempotency-Key create one task: each answers 200 with that task (or 429, safe to retry), never 5xx.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('idem');
      const key = ctx.unique('key');
      const body = categorization({ tags: [tag] });
      const results = await Promise.all(Array.from({ length: 8 }, () => post(ctx, body, key)));
      const statuses = results.map((r) => r.status);
      expectThat(
        statuses.every((s) => s === 200 || s === 429),
        `expected only 200 or 429, got ${JSON.stringify(statuses)}`,
      );
      const answered = new Set(results.filter((r) => r.status === 200).map((r) => r.body?.task_id));
      expectThat(answered.size <= 1, `every 200 should name the same task, got ${JSON.stringify([...answered])}`);
      // A retry after the race is a plain replay of the one task.
      const retry = await ctx.until('a retry with the same key to answer 200', async () => {
        const r = await post(ctx, body, key);
        return r.status === 200 ? r : undefined;
      });
      expectThat(answered.size === 0 || answered.has(retry.body?.task_id), 'the retry should replay the task the race created', retry.body);
      const ids = await tagged(ctx, tag);
      expectThat(ids.length === 1, `exactly one task should exist after the race, found ${ids.length}`, ids);
    },
  },
  {
    id: 'idempotency/invalid-key-400',
    area,
    seed: '4.4 Duplicate prevention > Idempotency-Key (decision: 1 to 255 visible ASCII characters)',
    rule: 'An Idempotency-Key that is not 1 to 255 visible ASCII characters answers 400 and creates nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('idem');
      for (const key of ['with space', 'x'.repeat(256)]) {
        expectError(
          await post(ctx, categorization({ tags: [tag] }), key),
          400,
          `Idempotency-Key ${JSON.stringify(key.slice(0, 20))}${key.length > 20 ? '…' : ''}`,
        );
      }
      const ids = await tagged(ctx, tag);
      expectThat(ids.length === 0, `no task should be created with an invalid key, found ${ids.length}`, ids);
    },
  },
  {
    id: 'idempotency/per-mode',
    area,
    seed: '4.4 Duplicate prevention > Idempotency-Key (decision: scope is account and mode, decisions 4 and 12)',
    rule: 'An Idempotency-Key used with the test key is free for the live key: the same request with the live key creates a live task of its own (no replay, no 409), and each key then replays its own answer.',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const key = ctx.unique('key');
      const body = categorization();
      const test = await post(ctx, body, key);
      expectStatus(test, 200, 'the first creation (test key)');
      const live = await post(ctx, body, key, 'live');
      expectStatus(live, 200, 'the same Idempotency-Key with the live key');
      expectThat(live.headers.get('idempotent-replayed') === null, 'the live creation is no replay of the test one', live.body);
      expectThat(
        typeof live.body?.task_id === 'string' && live.body.task_id !== test.body?.task_id,
        `the live key creates a task of its own, got ${live.body?.task_id} (the test task is ${test.body?.task_id})`,
      );
      expectReplay(test, await post(ctx, body, key), 'the test key again with its key');
      expectReplay(live, await post(ctx, body, key, 'live'), 'the live key again with its key');
    },
  },
  {
    id: 'idempotency/training-replay',
    area,
    seed: '4.4 Duplicate prevention > Idempotency-Key (as on task creation: createTextCollectionTrainingTask)',
    rule: 'A training task creation repeated with the same Idempotency-Key gets the saved answer again and creates no second training task; with another body the key answers 409.',
    kind: 'behaviour',
    async run(ctx) {
      const key = ctx.unique('key');
      const created = async (body: unknown) =>
        ctx.call('POST', '/v1/training_tasks/textcollection', { json: body, headers: { 'Idempotency-Key': key } });
      const count = async () => {
        const ex = await ctx.call('GET', '/v1/training_tasks', { query: { type: 'textcollection', limit: 1 } });
        expectStatus(ex, 200, 'listing the text-collection training tasks');
        return ex.body?.total as number;
      };
      const before = await count();
      const body = trainingBody(ctx.unique('training'));
      const first = await created(body);
      expectStatus(first, 200, 'the first training task creation with an Idempotency-Key');
      expectThat(first.headers.get('idempotent-replayed') === null, 'a first (not replayed) answer should not say Idempotent-Replayed');
      const again = await created(body);
      expectReplay(first, again, 'the same training task creation again with the same Idempotency-Key');
      const changed = await created(trainingBody(ctx.unique('training')));
      expectError(changed, 409, 'the same Idempotency-Key with another training task body');
      const after = await count();
      expectThat(after === before + 1, `one training task should have been created, the list total went from ${before} to ${after}`);
    },
  },
  {
    id: 'idempotency/training-concurrent',
    area,
    seed: '4.4 Duplicate prevention > Idempotency-Key (simultaneous requests); 7 Errors (429)',
    rule: 'Simultaneous identical training task creations with one Idempotency-Key create one training task: each answers 200 with it (or 429 with Retry-After, safe to retry), never 5xx.',
    kind: 'behaviour',
    async run(ctx) {
      const key = ctx.unique('key');
      const body = trainingBody(ctx.unique('training'));
      const post = () => ctx.call('POST', '/v1/training_tasks/textcollection', { json: body, headers: { 'Idempotency-Key': key } });
      const results = await Promise.all(Array.from({ length: 8 }, post));
      const statuses = results.map((r) => r.status);
      expectThat(
        statuses.every((s) => s === 200 || s === 429),
        `expected only 200 or 429, got ${JSON.stringify(statuses)}`,
      );
      const answered = new Set(results.filter((r) => r.status === 200).map((r) => r.body?.id));
      expectThat(answered.size <= 1, `every 200 should name the same training task, got ${JSON.stringify([...answered])}`);
      const retry = await ctx.until('a retry with the same key to answer 200', async () => {
        const r = await post();
        return r.status === 200 ? r : undefined;
      });
      expectThat(
        answered.size === 0 || answered.has(retry.body?.id),
        'the retry should replay the training task the race created',
        retry.body,
      );
      expectStatus(await ctx.call('GET', `/v1/training_tasks/${retry.body?.id}`), 200, 'reading the training task the race created');
    },
  },
];
