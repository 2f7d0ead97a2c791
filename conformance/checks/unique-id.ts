// Seed 4.4 (1) and (4): unique_id conflicts, retrieval, and the ways to free a unique_id again.
import { expectStatus, expectThat, type Check, type CheckContext, type KeyName } from '../types.ts';
import {
  annotation,
  categorization,
  completedTask,
  createTask,
  erroredTask,
  expectError,
  listTasks,
  postTask,
  readTask,
  unknownTaskId,
} from './helpers.ts';

const area = 'unique_id';
const seed = '4.4 Duplicate prevention > unique_id';

/** Expects a creation with `uniqueId` to be refused with 409 naming the unique_id and `holder`. */
async function expectTaken(ctx: CheckContext, uniqueId: string, holder: string, type = 'categorization', key?: KeyName) {
  const body = type === 'annotation' ? annotation({ unique_id: uniqueId }) : categorization({ unique_id: uniqueId });
  const again = await postTask(ctx, type, body, key ? { key } : {});
  expectError(again, 409, `creating a task of type ${type} with the unique_id ${uniqueId} already used by task ${holder}`);
  const text = `The unique_id ("${uniqueId}") is already used for a different task (${holder}).`;
  expectThat(again.body.error === text, `the 409 error text should be the contract's ${JSON.stringify(text)}`, again.body);
}

async function holders(ctx: CheckContext, uniqueId: string, key?: KeyName): Promise<string[]> {
  const list = await listTasks(ctx, { unique_id: uniqueId }, key);
  return list.docs.map((d: { task_id: string }) => d.task_id);
}

export const uniqueIdChecks: Check[] = [
  {
    id: 'unique-id/conflict-409',
    area,
    seed,
    rule: 'A creation with a unique_id already used by a task answers 409 {status_code, error}, the error naming the unique_id and the existing task, and creates nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const uid = ctx.unique('uid');
      const first = await createTask(ctx, 'categorization', categorization({ unique_id: uid }));
      await expectTaken(ctx, uid, first.task_id);
      const held = await holders(ctx, uid);
      expectThat(
        held.length === 1 && held[0] === first.task_id,
        `exactly one task should hold unique_id ${uid}, found ${JSON.stringify(held)}`,
      );
    },
  },
  {
    id: 'unique-id/across-types',
    area,
    seed,
    rule: 'A unique_id is unique across all task types of the account: another type with the same value also answers 409.',
    kind: 'behaviour',
    async run(ctx) {
      const uid = ctx.unique('uid');
      const first = await createTask(ctx, 'categorization', categorization({ unique_id: uid }));
      await expectTaken(ctx, uid, first.task_id, 'annotation');
    },
  },
  {
    id: 'unique-id/returned',
    area,
    seed: '4.4 Duplicate prevention > unique_id; 2.1 Task > unique_id',
    rule: 'The unique_id is tied to the task and returned on every retrieval (also once the task is completed, and in lists).',
    kind: 'behaviour',
    async run(ctx) {
      const uid = ctx.unique('uid');
      const created = await createTask(ctx, 'categorization', categorization({ unique_id: uid }));
      expectThat(created.unique_id === uid, 'the creation answer should carry the unique_id', created);
      const read = await readTask(ctx, created.task_id);
      expectThat(read.unique_id === uid, `GET should return unique_id ${uid}`, read);
      const listed = await listTasks(ctx, { unique_id: uid });
      expectThat(listed.docs[0]?.unique_id === uid, 'the task in a list should carry its unique_id', listed.docs[0]);
    },
  },
  {
    id: 'unique-id/concurrent',
    area,
    seed,
    rule: 'Simultaneous creations with one unique_id create exactly one task; the others answer 409.',
    kind: 'behaviour',
    async run(ctx) {
      const uid = ctx.unique('race');
      const results = await Promise.all(
        Array.from({ length: 8 }, () => postTask(ctx, 'categorization', categorization({ unique_id: uid }))),
      );
      const statuses = results.map((r) => r.status);
      expectThat(
        statuses.filter((s) => s === 200).length === 1,
        `8 simultaneous creations with one unique_id: expected exactly one 200, got ${JSON.stringify(statuses)}`,
      );
      expectThat(
        statuses.every((s) => s === 200 || s === 409),
        `the others should answer 409, got ${JSON.stringify(statuses)}`,
      );
      const held = await holders(ctx, uid);
      expectThat(held.length === 1, `exactly one task should hold the unique_id, found ${held.length}`, held);
    },
  },
  {
    id: 'unique-id/set-concurrent',
    area,
    seed: '4.1 Task management > POST /v1/task/{task_id}/unique_id; 4.4 Duplicate prevention (unique_id)',
    rule: 'Simultaneous POST /v1/task/{taskId}/unique_id with one value on different tasks: exactly one answers 200, the others 409 naming the winner; one task holds the value.',
    kind: 'behaviour',
    async run(ctx) {
      const tasks = await Promise.all(Array.from({ length: 4 }, () => createTask(ctx, 'categorization', categorization())));
      for (let round = 1; round <= 3; round++) {
        const uid = ctx.unique('set-race');
        const results = await Promise.all(
          tasks.map((t) => ctx.call('POST', `/v1/task/${t.task_id}/unique_id`, { json: { unique_id: uid } })),
        );
        const statuses = results.map((r) => r.status);
        const winners = results.filter((r) => r.status === 200);
        expectThat(
          winners.length === 1 && statuses.every((s) => s === 200 || s === 409),
          `round ${round}: 4 simultaneous sets of one unique_id should answer one 200 and 409s, got ${JSON.stringify(statuses)}`,
        );
        const winner = winners[0]!.body?.task_id as string;
        for (const r of results.filter((x) => x.status === 409)) {
          expectThat(
            String(r.body?.error).includes(winner),
            `round ${round}: each 409 should name the task that holds the unique_id (${winner})`,
            r.body,
          );
        }
        const held = await holders(ctx, uid);
        expectThat(held.length === 1 && held[0] === winner, `round ${round}: exactly the winner should hold the unique_id`, held);
        // Free the tasks for the next round.
        expectStatus(await ctx.call('DELETE', `/v1/task/${winner}/unique_id`), 200, 'deleting the unique_id of the winner');
      }
    },
  },
  {
    id: 'unique-id/delete-frees',
    area,
    seed: '4.1 Task management > DELETE /v1/task/{task_id}/unique_id',
    rule: 'DELETE /v1/task/{taskId}/unique_id answers the task without unique_id, and the value can be used again.',
    kind: 'behaviour',
    async run(ctx) {
      const uid = ctx.unique('uid');
      const first = await createTask(ctx, 'categorization', categorization({ unique_id: uid }));
      const deleted = await ctx.call('DELETE', `/v1/task/${first.task_id}/unique_id`);
      expectStatus(deleted, 200, 'deleting the unique_id of a task');
      expectThat(
        deleted.body?.task_id === first.task_id && !('unique_id' in deleted.body),
        'the answer should be the task without unique_id',
        deleted.body,
      );
      expectThat(!('unique_id' in (await readTask(ctx, first.task_id))), 'the task should read without unique_id after DELETE');
      const second = await createTask(ctx, 'categorization', categorization({ unique_id: uid }));
      expectThat(second.task_id !== first.task_id, 'a new task should be created with the freed unique_id');
    },
  },
  {
    id: 'unique-id/set',
    area,
    seed: '4.1 Task management > POST /v1/task/{task_id}/unique_id',
    rule: 'POST /v1/task/{taskId}/unique_id sets a free unique_id (answering the task with it), and answers 409 for one held by another task (404 when the task itself does not exist).',
    kind: 'behaviour',
    async run(ctx) {
      const taken = ctx.unique('uid');
      const fresh = ctx.unique('uid');
      const holder = await createTask(ctx, 'categorization', categorization({ unique_id: taken }));
      const task = await createTask(ctx, 'categorization', categorization());
      const refused = await ctx.call('POST', `/v1/task/${task.task_id}/unique_id`, { json: { unique_id: taken } });
      expectError(refused, 409, 'setting a unique_id held by another task');
      expectThat(refused.body.error.includes(holder.task_id), 'the 409 should name the task that holds the unique_id', refused.body);
      // A task that does not exist is a 404, whatever the value it is given.
      expectError(
        await ctx.call('POST', `/v1/task/${unknownTaskId()}/unique_id`, { json: { unique_id: taken } }),
        404,
        'setting a held unique_id on a task that does not exist',
      );
      const set = await ctx.call('POST', `/v1/task/${task.task_id}/unique_id`, { json: { unique_id: fresh } });
      expectStatus(set, 200, 'setting a free unique_id');
      expectThat(set.body?.unique_id === fresh, 'the answer should be the task with its new unique_id', set.body);
      await expectTaken(ctx, fresh, task.task_id);
    },
  },
  {
    id: 'unique-id/cancel-clears',
    area,
    seed: '3.1 Task status > pending → canceled (clear_unique_id); 4.4 (4) recovery aids',
    rule: 'A canceled task keeps its unique_id (a new task with it gets 409) unless cancel is given clear_unique_id=true, which frees it for a new task.',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const uid = ctx.unique('uid');
      const task = await createTask(ctx, 'categorization', categorization({ unique_id: uid }), { key: 'live' });
      const canceled = await ctx.call('POST', `/v1/task/${task.task_id}/cancel`, { key: 'live' });
      expectStatus(canceled, 200, 'cancel of a pending task');
      expectThat(canceled.body?.unique_id === uid, 'cancel without clear_unique_id should keep the unique_id', canceled.body);
      await expectTaken(ctx, uid, task.task_id, 'categorization', 'live');
      const cleared = await ctx.call('POST', `/v1/task/${task.task_id}/cancel`, { key: 'live', query: { clear_unique_id: 'true' } });
      expectStatus(cleared, 200, 'cancel with clear_unique_id=true');
      expectThat(
        cleared.body?.status === 'canceled' && !('unique_id' in cleared.body),
        'cancel with clear_unique_id=true should answer the canceled task without unique_id',
        cleared.body,
      );
      await createTask(ctx, 'categorization', categorization({ unique_id: uid }), { key: 'live' });
    },
  },
  {
    id: 'unique-id/refused-cancel-keeps',
    area,
    seed: '3.1 Task status > completed: cancel rejected',
    rule: 'A refused cancel (of a completed task) changes nothing, even with clear_unique_id=true: the unique_id stays.',
    kind: 'behaviour',
    async run(ctx) {
      const uid = ctx.unique('uid');
      const task = await completedTask(ctx, 'categorization', categorization({ unique_id: uid }));
      const refused = await ctx.call('POST', `/v1/task/${task.task_id}/cancel`, { query: { clear_unique_id: 'true' } });
      expectError(refused, ctx.generation === 'legacy' ? 500 : 400, 'cancel of a completed task');
      expectThat((await readTask(ctx, task.task_id)).unique_id === uid, 'the unique_id of a task whose cancel was refused should stay');
    },
  },
  {
    id: 'unique-id/clear-on-error',
    area,
    seed: '3.1 Task status > pending → error (clear_unique_id_on_error); 4.4 (4)',
    rule: 'A task created with clear_unique_id_on_error true loses its unique_id when it runs into an error (the value is free again); without it the unique_id stays.',
    kind: 'behaviour',
    async run(ctx) {
      const cleared = ctx.unique('uid');
      const kept = ctx.unique('uid');
      const a = await erroredTask(ctx, { unique_id: cleared, clear_unique_id_on_error: true });
      expectThat(!('unique_id' in a), 'a task with clear_unique_id_on_error true should have no unique_id once in error', a);
      await createTask(ctx, 'categorization', categorization({ unique_id: cleared }));
      const b = await erroredTask(ctx, { unique_id: kept, clear_unique_id_on_error: false });
      expectThat(b.unique_id === kept, 'a task without clear_unique_id_on_error should keep its unique_id in error', b);
    },
  },
];
