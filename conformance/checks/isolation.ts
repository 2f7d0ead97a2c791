// Isolation: another account cannot see or touch the main account's objects (seed 1, 5), and the
// test and live modes of one account are separate worlds (seed 2.5, 5.2-5.4).
import { expectStatus, expectThat, type Check, type CheckContext, type KeyName } from '../types.ts';
import { projectAndBatch } from './batches.ts';
import { SINK, categorization, createTask, expectError, idsOf, listTasks, postTask, readTask } from './helpers.ts';

/** Every task operation on `taskId` with `key` answers 404, and the task is in none of its lists. */
async function taskHidden(ctx: CheckContext, taskId: string, key: KeyName, who: string) {
  const probes: Array<[string, string, unknown]> = [
    ['GET', `/v1/task/${taskId}`, undefined],
    ['POST', `/v1/task/${taskId}/cancel`, undefined],
    ['POST', `/v1/task/${taskId}/setMetadata`, { taken: true }],
    ['POST', `/v1/task/${taskId}/unique_id`, { unique_id: ctx.unique('steal') }],
    ['DELETE', `/v1/task/${taskId}/unique_id`, undefined],
    ['POST', `/v1/task/${taskId}/tags`, [ctx.unique('steal')]],
  ];
  for (const [method, path, json] of probes) {
    const ex = await ctx.call(method, path, { key, ...(json === undefined ? {} : { json }) });
    expectError(ex, 404, `${who}: ${method} ${path.replace(taskId, '{taskId}')} on a task it does not own`);
  }
  const listed = idsOf((await listTasks(ctx, { limit: 100 }, key)).docs);
  expectThat(!listed.includes(taskId), `${who}: the task should not appear in its task list`);
}

async function projectAndBatchHidden(ctx: CheckContext, project: string, batch: string, key: KeyName, who: string) {
  const p = encodeURIComponent(project);
  const b = encodeURIComponent(batch);
  for (const [method, path, json] of [
    ['GET', `/v1/projects/${p}`, undefined],
    ['POST', `/v1/projects/${p}/setParams`, { categories: ['stolen'] }],
    ['GET', `/v1/batches/${b}`, undefined],
    ['GET', `/v1/batches/${b}/status`, undefined],
    ['POST', `/v1/batches/${b}/finalize`, undefined],
  ] as const) {
    const ex = await ctx.call(method, path, { key, ...(json === undefined ? {} : { json }) });
    expectError(ex, 404, `${who}: ${method} ${path} of an object it does not own`);
  }
  const projects = await ctx.call('GET', '/v1/projects', { key });
  expectStatus(projects, 200, `${who}: listing projects`);
  expectThat(
    Array.isArray(projects.body) && !projects.body.some((x: { name: string }) => x.name === project),
    `${who}: the project should not appear in its project list`,
  );
  const batches = await ctx.call('GET', '/v1/batches', { key, query: { limit: 100 } });
  expectStatus(batches, 200, `${who}: listing batches`);
  expectThat(
    !(batches.body?.docs ?? []).some((x: { name: string }) => x.name === batch),
    `${who}: the batch should not appear in its batch list`,
  );
  // Nor can it add a task to them.
  const join = await postTask(ctx, 'categorization', { callback_url: SINK, batch, attachment: 'x' }, { key });
  expectError(join, 404, `${who}: joining a batch it does not own`);
}

export const isolationChecks: Check[] = [
  {
    id: 'isolation/tasks',
    area: 'Isolation',
    seed: '1 What the service does; 5 Authentication (a key acts for its account only)',
    rule: "Another account cannot read, cancel, change or list the main account's tasks (404, absent from lists); the task stays unchanged.",
    kind: 'behaviour',
    needs: ['otherKey'],
    async run(ctx) {
      const uid = ctx.unique('uid');
      const task = await createTask(ctx, 'categorization', categorization({ unique_id: uid, metadata: { owner: 'main' } }));
      await taskHidden(ctx, task.task_id, 'other', 'another account');
      const after = await readTask(ctx, task.task_id);
      expectThat(
        after.unique_id === uid && after.metadata?.owner === 'main' && after.tags === undefined,
        "the other account's attempts should have changed nothing",
        after,
      );
      // unique_ids are per account: the other account can use the same value.
      await createTask(ctx, 'categorization', categorization({ unique_id: uid }), { key: 'other' });
    },
  },
  {
    id: 'isolation/projects-batches',
    area: 'Isolation',
    seed: '2.5 Project; 2.7 Batch; 5 Authentication',
    rule: "Another account cannot see, change, list or use the main account's projects and batches (404, absent from lists).",
    kind: 'behaviour',
    needs: ['otherKey'],
    async run(ctx) {
      const { project, name } = await projectAndBatch(ctx);
      await projectAndBatchHidden(ctx, project, name, 'other', 'another account');
    },
  },
  {
    id: 'modes/tasks',
    area: 'Modes',
    seed: '5 Authentication (2-3: the key decides the mode)',
    rule: 'The test and live modes are separate: a test-mode task is invisible to the live key and a live-mode task to the test key (404, absent from lists).',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const test = await createTask(ctx, 'categorization', categorization());
      const live = await createTask(ctx, 'categorization', categorization(), { key: 'live' });
      await taskHidden(ctx, test.task_id, 'live', 'the live key');
      await taskHidden(ctx, live.task_id, 'main', 'the test key');
      expectThat((await readTask(ctx, live.task_id, 'live')).status === 'pending', 'the live task should still be pending');
    },
  },
  {
    id: 'modes/unique-id',
    area: 'Modes',
    seed: '4.4 Duplicate prevention > unique_id; 5 Authentication (test and live are separate worlds)',
    rule: 'A unique_id used in test mode is still free in live mode (and the other way round).',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const uid = ctx.unique('uid');
      await createTask(ctx, 'categorization', categorization({ unique_id: uid }));
      const live = await createTask(ctx, 'categorization', categorization({ unique_id: uid }), { key: 'live' });
      expectThat(live.unique_id === uid, 'the live task should hold the unique_id', live);
    },
  },
  {
    id: 'modes/projects-batches',
    area: 'Modes',
    seed: '2.5 Project (test-mode projects serve only test tasks); 5 Authentication (4)',
    rule: 'Projects and batches created with the test key are invisible to the live key (404, absent from lists, cannot be joined).',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const { project, name } = await projectAndBatch(ctx);
      await projectAndBatchHidden(ctx, project, name, 'live', 'the live key');
    },
  },
  {
    id: 'modes/next-token',
    area: 'Modes',
    seed: '4.1 Task management > next_token (decision: bound to the API key)',
    rule: 'A next_token issued to the test key answers 400 when used with the live key.',
    kind: 'behaviour',
    generations: ['current'],
    needs: ['liveKey'],
    async run(ctx) {
      const tag = ctx.unique('mode');
      await createTask(ctx, 'categorization', categorization({ tags: [tag] }));
      await createTask(ctx, 'categorization', categorization({ tags: [tag] }));
      const first = await listTasks(ctx, { tags: tag, limit: 1 });
      expectThat(typeof first.next_token === 'string', 'the first of two pages should carry next_token', first);
      expectError(
        await ctx.call('GET', '/v1/tasks', { key: 'live', query: { tags: tag, limit: 1, next_token: first.next_token } }),
        400,
        'a test-key next_token used with the live key',
      );
    },
  },
];
