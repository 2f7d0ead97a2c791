// Seed 3.1, the task state table, row by row (and the 404 of section 4.1).
import { isDeepStrictEqual } from 'node:util';
import { expectStatus, expectThat, type Check, type CheckContext, type Generation } from '../types.ts';
import { categorization, createTask, erroredTask, expectError, readTask, settledTask, unknownTaskId, completedTask } from './helpers.ts';

const area = 'Task states';

/** Checks of one rule whose answer differs between generations: one check per generation. */
function perGeneration(
  base: Omit<Check, 'generations' | 'run' | 'id' | 'rule'> & { id: string },
  variants: Record<Generation, { rule: string; run: (ctx: CheckContext) => Promise<void> }>,
): Check[] {
  return (['current', 'legacy'] as const).map((generation) => ({
    ...base,
    id: `${base.id}-${generation}`,
    rule: variants[generation].rule,
    generations: [generation],
    run: variants[generation].run,
  }));
}

async function cancelRefused(ctx: CheckContext, taskId: string, status: number, before: string) {
  const cancel = await ctx.call('POST', `/v1/task/${taskId}/cancel`);
  expectError(cancel, status, `cancel of a ${before} task`);
  const after = await readTask(ctx, taskId);
  expectThat(after.status === before, `a refused cancel must leave the task ${before}, it is now ${after.status}`, after);
}

export const taskStateChecks: Check[] = [
  {
    id: 'task-states/create-pending',
    area,
    seed: '3.1 Task status > (none) → pending; 4.2 Task creation',
    rule: 'A valid creation request answers 200 at once with the created task: status pending, its params echoed, metadata {} by default.',
    kind: 'behaviour',
    async run(ctx) {
      const body = categorization();
      const created = await createTask(ctx, 'categorization', body);
      expectThat(created.status === 'pending', `the creation answer should show status pending, got ${created.status}`, created);
      expectThat(created.type === 'categorization', `the creation answer should show type categorization, got ${created.type}`);
      expectThat(
        created.metadata && typeof created.metadata === 'object' && Object.keys(created.metadata).length === 0,
        'a task created without metadata should have metadata {}',
        created.metadata,
      );
      expectThat(
        created.params?.attachment === body.attachment && JSON.stringify(created.params?.categories) === JSON.stringify(body.categories),
        'the created task should echo its parameters in params',
        created.params,
      );
      const read = await readTask(ctx, created.task_id);
      expectThat(read.task_id === created.task_id, 'GET /v1/task/{taskId} should return the task with that id', read);
    },
  },
  {
    id: 'task-states/fields-echoed',
    area,
    seed: '2.1 Task (callback_url, instruction, metadata); 4.2 Task creation',
    rule: 'The callback_url, instruction and metadata given at creation are shown as sent, in the creation answer and on every read.',
    kind: 'behaviour',
    async run(ctx) {
      const callbackUrl = (await ctx.receiver()).url('sink');
      const instruction = `Which department should handle ticket ${ctx.unique('ticket')}?`;
      const metadata = { ref: ctx.unique('meta'), count: 3, nested: { ok: true, list: [1, 'two', null] } };
      const sent = { callback_url: callbackUrl, instruction, metadata };
      const created = await createTask(ctx, 'categorization', categorization(sent));
      const read = await readTask(ctx, created.task_id);
      for (const [what, task] of [
        ['the creation answer', created],
        ['GET /v1/task/{taskId}', read],
      ] as const) {
        const shown = { callback_url: task.callback_url, instruction: task.instruction, metadata: task.metadata };
        expectThat(isDeepStrictEqual(shown, sent), `${what} should show callback_url, instruction and metadata as sent`, { sent, shown });
      }
    },
  },
  {
    id: 'task-states/urgency-default',
    area,
    seed: '4.2 Task creation (older generation) > urgency',
    rule: 'The older generation echoes urgency on the created task, `day` by default.',
    kind: 'behaviour',
    generations: ['legacy'],
    async run(ctx) {
      const plain = await createTask(ctx, 'categorization', categorization());
      expectThat(plain.urgency === 'day', `urgency should default to day, got ${JSON.stringify(plain.urgency)}`, plain);
      const week = await createTask(ctx, 'categorization', categorization({ urgency: 'week' }));
      expectThat(week.urgency === 'week', `urgency week should be echoed, got ${JSON.stringify(week.urgency)}`, week);
    },
  },
  {
    id: 'task-states/unknown-404',
    area,
    seed: '4.1 Task management > GET /v1/task/{taskId}',
    rule: 'An unknown task id answers 404 (retrieval and cancel).',
    kind: 'behaviour',
    async run(ctx) {
      const id = unknownTaskId();
      expectError(await ctx.call('GET', `/v1/task/${id}`), 404, 'GET of an unknown task');
      expectError(await ctx.call('POST', `/v1/task/${id}/cancel`), 404, 'cancel of an unknown task');
    },
  },
  {
    id: 'task-states/cancel-by-filter',
    area,
    seed: '(our design, issue 35: POST /v1/tasks/cancel, the list filters)',
    rule: 'POST /v1/tasks/cancel cancels the pending tasks the list filters match and no other, at most `limit` a request, with has_more until none is left.',
    kind: 'behaviour',
    generations: ['current'],
    needs: ['liveKey'],
    async run(ctx) {
      const tag = `bulk-${unknownTaskId()}`;
      const mine: string[] = [];
      for (let i = 0; i < 3; i++)
        mine.push((await createTask(ctx, 'categorization', categorization({ tags: [tag] }), { key: 'live' })).task_id);
      const other = await createTask(ctx, 'categorization', categorization({ tags: [`${tag}-other`] }), { key: 'live' });
      const canceled: string[] = [];
      for (const [round, expected] of [
        [1, { canceled: 2, has_more: true }],
        [2, { canceled: 1, has_more: false }],
        [3, { canceled: 0, has_more: false }],
      ] as const) {
        const answer = await ctx.call('POST', `/v1/tasks/cancel?tags=${tag}&limit=2`, { key: 'live' });
        expectStatus(answer, 200, `bulk cancel, request ${round}`);
        expectThat(
          answer.body?.canceled === expected.canceled && answer.body?.has_more === expected.has_more,
          `bulk cancel request ${round} of 3 matching tasks (limit 2) should cancel ${expected.canceled} with has_more ${expected.has_more}`,
          answer.body,
        );
        const ids: unknown[] = Array.isArray(answer.body?.task_ids) ? answer.body.task_ids : [];
        expectThat(
          ids.length === answer.body?.canceled && ids.every((id) => typeof id === 'string' && mine.includes(id) && !canceled.includes(id)),
          'task_ids should name the tasks this request canceled, each a task the filter matches, none twice',
          answer.body,
        );
        canceled.push(...(ids as string[]));
      }
      for (const id of mine) {
        const task = await readTask(ctx, id, 'live');
        expectThat(task.status === 'canceled', `a task the filter matched should be canceled, it is ${task.status}`, task);
      }
      const untouched = await readTask(ctx, other.task_id, 'live');
      expectThat(
        untouched.status === 'pending',
        `a task the filter did not match should stay pending, it is ${untouched.status}`,
        untouched,
      );
    },
  },
  {
    id: 'task-states/cancel-pending',
    area,
    seed: '3.1 Task status > pending → canceled by cancel',
    rule: 'Cancel of a pending task answers 200 with the task in status canceled, and it stays canceled.',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const created = await createTask(ctx, 'categorization', categorization(), { key: 'live' });
      const before = await readTask(ctx, created.task_id, 'live');
      expectThat(before.status === 'pending', `a live-mode task should wait for a worker (pending), got ${before.status}`, before);
      const cancel = await ctx.call('POST', `/v1/task/${created.task_id}/cancel`, { key: 'live' });
      expectStatus(cancel, 200, 'cancel of a pending task');
      expectThat(
        cancel.body?.status === 'canceled',
        `cancel should answer the task with status canceled, got ${cancel.body?.status}`,
        cancel.body,
      );
      expectThat(cancel.body?.task_id === created.task_id, 'cancel should answer the canceled task itself', cancel.body);
      const after = await readTask(ctx, created.task_id, 'live');
      expectThat(after.status === 'canceled', `a canceled task should read as canceled, got ${after.status}`, after);
    },
  },
  {
    id: 'task-states/cancel-canceled',
    area,
    seed: '3.1 Task status > canceled → canceled by cancel again',
    rule: 'Cancel of an already canceled task is idempotent: 200 with the task, still canceled, and nothing changed (updated_at stays).',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const created = await createTask(ctx, 'categorization', categorization(), { key: 'live' });
      const first = await ctx.call('POST', `/v1/task/${created.task_id}/cancel`, { key: 'live' });
      expectStatus(first, 200, 'first cancel of a pending task');
      await new Promise((r) => setTimeout(r, 5)); // a change now would show in updated_at
      const again = await ctx.call('POST', `/v1/task/${created.task_id}/cancel`, { key: 'live' });
      expectStatus(again, 200, 'repeated cancel of a canceled task');
      expectThat(
        again.body?.status === 'canceled' && again.body?.task_id === created.task_id,
        'a repeated cancel should answer the same task, canceled',
        again.body,
      );
      expectThat(
        again.body?.updated_at === first.body?.updated_at,
        'a repeated cancel changes nothing: updated_at should stay that of the first cancel',
        [first.body?.updated_at, again.body?.updated_at],
      );
    },
  },
  ...perGeneration(
    { id: 'task-states/cancel-completed', area, seed: '3.1 Task status > completed: cancel rejected; 7 Errors', kind: 'behaviour' },
    {
      current: {
        rule: 'Cancel of a completed task is refused with 400 and the task stays completed.',
        async run(ctx) {
          const task = await completedTask(ctx, 'categorization', categorization());
          await cancelRefused(ctx, task.task_id, 400, 'completed');
        },
      },
      legacy: {
        rule: 'The older generation refuses cancel of a completed task with 500 and the task stays completed.',
        async run(ctx) {
          const task = await completedTask(ctx, 'categorization', categorization());
          await cancelRefused(ctx, task.task_id, 500, 'completed');
        },
      },
    },
  ),
  ...perGeneration(
    { id: 'task-states/pending-to-error', area, seed: '3.1 Task status > pending → error (attachment processing); 6.3', kind: 'behaviour' },
    {
      current: {
        rule: 'A task whose attachment cannot be fetched moves to status error with response.error (test mode: an attachment host ending in .invalid simulates that).',
        async run(ctx) {
          await erroredTask(ctx);
        },
      },
      legacy: {
        rule: 'The older generation, which has no status error, shows a task whose attachment cannot be fetched as completed with response.error.',
        async run(ctx) {
          await erroredTask(ctx);
        },
      },
    },
  ),
  ...perGeneration(
    { id: 'task-states/cancel-error', area, seed: '3.1 Task status > only pending tasks can be canceled (4.1 cancel)', kind: 'behaviour' },
    {
      current: {
        rule: 'Cancel of a task in error is refused with 400 and the task stays in error.',
        async run(ctx) {
          const task = await erroredTask(ctx);
          await cancelRefused(ctx, task.task_id, 400, 'error');
        },
      },
      legacy: {
        rule: 'The older generation shows a task in error as completed, so its cancel is refused with 500.',
        async run(ctx) {
          const task = await erroredTask(ctx);
          await cancelRefused(ctx, task.task_id, 500, 'completed');
        },
      },
    },
  ),
  {
    id: 'task-states/canceled-not-completed',
    area,
    seed: '3.1 Task status > pending → canceled',
    rule: 'A canceled task is never completed afterwards: it has no response and no completed_at.',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const created = await createTask(ctx, 'categorization', categorization(), { key: 'live' });
      expectStatus(await ctx.call('POST', `/v1/task/${created.task_id}/cancel`, { key: 'live' }), 200, 'cancel of a pending task');
      const task = await settledTask(ctx, created.task_id, ['canceled'], 'live');
      expectThat(
        task.response === undefined && task.completed_at === undefined,
        'a canceled task should have neither response nor completed_at',
        task,
      );
    },
  },
];
