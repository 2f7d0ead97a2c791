// Seed 4.1 task management: tags (rules and limit), metadata (replaced, allowed on any task) and
// the customer review (3.3; the audit endpoint is our decision).
import { isDeepStrictEqual as same } from 'node:util';
import { expectStatus, expectThat, type Check, type CheckContext } from '../types.ts';
import { annotation, categorization, completedTask, createTask, expectError, postTask, readTask } from './helpers.ts';

async function tagsCall(ctx: CheckContext, method: 'POST' | 'PUT' | 'DELETE', taskId: string, tags: unknown) {
  return ctx.call(method, `/v1/task/${taskId}/tags`, { json: tags });
}

async function expectTags(ctx: CheckContext, taskId: string, expected: string[], why: string) {
  const task = await readTask(ctx, taskId);
  const actual = task.tags ?? [];
  expectThat(
    same(actual, expected),
    `${why}: the task should read with tags ${JSON.stringify(expected)}, got ${JSON.stringify(task.tags)}`,
    task,
  );
}

export const taskChangeChecks: Check[] = [
  {
    id: 'tags/add',
    area: 'Tags',
    seed: '4.1 Task management > POST /v1/task/{task_id}/tags (tag rules)',
    rule: 'Adding tags appends the new ones in order and ignores tags already on the task; the answer is the task.',
    kind: 'behaviour',
    async run(ctx) {
      const [a, b, c] = [ctx.unique('t'), ctx.unique('t'), ctx.unique('t')];
      const task = await createTask(ctx, 'categorization', categorization({ tags: [a] }));
      expectThat(same(task.tags, [a]), 'the creation answer should carry the tags given', task.tags);
      const added = await tagsCall(ctx, 'POST', task.task_id, [a, b]);
      expectStatus(added, 200, 'POST tags');
      expectThat(
        same(added.body?.tags, [a, b]),
        `POST [a, b] on a task tagged [a] should give [a, b], got ${JSON.stringify(added.body?.tags)}`,
        added.body,
      );
      await expectTags(ctx, task.task_id, [a, b], 'after POST');
      const put = await tagsCall(ctx, 'PUT', task.task_id, [b, c]);
      expectStatus(put, 200, 'PUT tags (the sample code uses PUT)');
      expectThat(
        same(put.body?.tags, [a, b, c]),
        `PUT [b, c] on [a, b] should add c, giving [a, b, c]; got ${JSON.stringify(put.body?.tags)}`,
        put.body,
      );
    },
  },
  {
    id: 'tags/limit-5',
    area: 'Tags',
    seed: '4.1 Task management (tag rules); 8 Limits > tags at most 5 per task',
    rule: 'A task has at most 5 tags: a change or a creation that would give more answers 400 and changes nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const tags = Array.from({ length: 6 }, () => ctx.unique('t'));
      const four = tags.slice(0, 4);
      const task = await createTask(ctx, 'categorization', categorization({ tags: four }));
      expectError(await tagsCall(ctx, 'POST', task.task_id, tags.slice(4, 6)), 400, 'adding 2 tags to a task with 4');
      await expectTags(ctx, task.task_id, four, 'after a refused change');
      const five = await tagsCall(ctx, 'POST', task.task_id, [tags[4], tags[0]]);
      expectStatus(five, 200, 'adding a fifth tag (and one already there)');
      expectThat(same(five.body?.tags, tags.slice(0, 5)), 'five tags are allowed', five.body);
      const six = await postTask(ctx, 'categorization', categorization({ tags }));
      expectError(six, 400, 'creating a task with 6 tags');
    },
  },
  {
    id: 'tags/empty-400',
    area: 'Tags',
    seed: '4.1 Task management (tag rules: an empty or null tag is not allowed)',
    rule: 'An empty or null tag answers 400 and changes nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const a = ctx.unique('t');
      const task = await createTask(ctx, 'categorization', categorization({ tags: [a] }));
      expectError(await tagsCall(ctx, 'POST', task.task_id, ['']), 400, 'adding an empty tag');
      expectError(await tagsCall(ctx, 'POST', task.task_id, [null]), 400, 'adding a null tag');
      await expectTags(ctx, task.task_id, [a], 'after refused changes');
    },
  },
  {
    id: 'tags/remove',
    area: 'Tags',
    seed: '4.1 Task management > tags (decision: DELETE removes the listed tags)',
    rule: 'DELETE /v1/task/{taskId}/tags removes the listed tags (absent ones are ignored); a task left without tags has no tags field.',
    kind: 'behaviour',
    async run(ctx) {
      const [a, b] = [ctx.unique('t'), ctx.unique('t')];
      const task = await createTask(ctx, 'categorization', categorization({ tags: [a, b] }));
      const removed = await tagsCall(ctx, 'DELETE', task.task_id, [a, ctx.unique('absent')]);
      expectStatus(removed, 200, 'DELETE tags');
      expectThat(
        same(removed.body?.tags, [b]),
        `DELETE [a, absent] on [a, b] should leave [b], got ${JSON.stringify(removed.body?.tags)}`,
        removed.body,
      );
      const none = await tagsCall(ctx, 'DELETE', task.task_id, [b]);
      expectStatus(none, 200, 'DELETE the last tag');
      expectThat(!('tags' in none.body), 'a task without tags should have no tags field', none.body);
    },
  },
  {
    id: 'tags/empty-list-absent',
    area: 'Tags',
    seed: '2.1 Task > tags (optional); decision: a task without tags has no tags key',
    rule: 'A task created with tags [] has no tags key, in the creation answer and on a read.',
    kind: 'behaviour',
    async run(ctx) {
      const created = await createTask(ctx, 'categorization', categorization({ tags: [] }));
      expectThat(
        !('tags' in created),
        `the creation answer of a task created with tags [] should have no tags key, got ${JSON.stringify(created.tags)}`,
        created,
      );
      const read = await readTask(ctx, created.task_id);
      expectThat(!('tags' in read), `a task created with tags [] should read without a tags key, got ${JSON.stringify(read.tags)}`, read);
    },
  },
  {
    id: 'metadata/replace',
    area: 'Metadata',
    seed: '4.1 Task management > POST /v1/task/{taskId}/setMetadata',
    rule: 'setMetadata replaces the task metadata with the body (on any existing task, completed too), answers the task with 200, and is idempotent.',
    kind: 'behaviour',
    async run(ctx) {
      const task = await completedTask(ctx, 'categorization', categorization({ metadata: { a: 1, keep: 'no' } }));
      expectThat(same(task.metadata, { a: 1, keep: 'no' }), 'the metadata given at creation should be kept', task.metadata);
      const replacement = { b: 2, nested: { c: [1, 2] } };
      for (const attempt of ['first', 'repeated']) {
        const set = await ctx.call('POST', `/v1/task/${task.task_id}/setMetadata`, { json: replacement });
        expectStatus(set, 200, `${attempt} setMetadata on a completed task`);
        expectThat(
          same(set.body?.metadata, replacement),
          `${attempt} setMetadata should answer the task with exactly the new metadata (replaced, not merged)`,
          set.body?.metadata,
        );
      }
      const read = await readTask(ctx, task.task_id);
      expectThat(same(read.metadata, replacement), 'the task should read with the new metadata', read.metadata);
      expectThat(read.status === 'completed', 'setMetadata should not change the status', read);
    },
  },
  {
    id: 'task-changes/audit',
    area: 'Customer review',
    seed: '3.3 Customer review status; 2.1 Task (customer_review_status, times_redone, audits); decision: POST /v1/task/{taskId}/audit',
    rule: 'An accepting review sets customer_review_status accepted and appends a customer audit record; a rejecting one (test mode) redoes the task at once: it reads completed, fixed, times_redone 1, completed_at unchanged.',
    kind: 'behaviour',
    async run(ctx) {
      const lastAudit = (task: any) => (Array.isArray(task?.audits) ? task.audits.at(-1) : undefined);
      const accepted = await completedTask(ctx, 'categorization', categorization());
      expectThat(
        accepted.customer_review_status === 'pending',
        `a completed task not reviewed yet should show customer_review_status pending, got ${JSON.stringify(accepted.customer_review_status)}`,
        accepted,
      );
      expectThat(
        same(accepted.audits, []) && !('times_redone' in accepted),
        'a task not reviewed yet should have audits [] and no times_redone',
        accepted,
      );
      const accept = await ctx.call('POST', `/v1/task/${accepted.task_id}/audit`, { json: { accepted: true } });
      expectStatus(accept, 200, 'an accepting review of a completed task');
      for (const [what, task] of [
        ['the answer', accept.body],
        ['a later read', await readTask(ctx, accepted.task_id)],
      ] as const) {
        expectThat(
          task?.customer_review_status === 'accepted' && task?.status === 'completed' && !('times_redone' in task),
          `after accepted: true, ${what} should show status completed, customer_review_status accepted and no times_redone`,
          task,
        );
        const record = lastAudit(task);
        expectThat(
          task.audits.length === 1 && record?.audit_source === 'customer' && record?.audit_result === 'accepted',
          `after accepted: true, ${what} should have one audit record {audit_source: customer, audit_result: accepted}`,
          task.audits,
        );
      }

      const rejected = await completedTask(ctx, 'categorization', categorization());
      const reject = await ctx.call('POST', `/v1/task/${rejected.task_id}/audit`, {
        json: { accepted: false, comments: 'Wrong department.' },
      });
      expectStatus(reject, 200, 'a rejecting review of a completed test-mode task');
      expectThat(
        reject.body?.status === 'completed',
        `a rejected task stays completed, the answer shows ${reject.body?.status}`,
        reject.body,
      );
      expectThat(
        reject.body?.customer_review_status === 'rejected',
        `the answer to a rejecting review shows the task as the audit left it: customer_review_status rejected (later reads show the redo), got ${JSON.stringify(reject.body?.customer_review_status)}`,
        reject.body,
      );
      const redone = await readTask(ctx, rejected.task_id);
      expectThat(
        redone.status === 'completed' && redone.customer_review_status === 'fixed' && redone.times_redone === 1,
        `a test-mode task rejected once is redone at once: a later read should show status completed, customer_review_status fixed, times_redone 1; got ${redone.status}, ${JSON.stringify(redone.customer_review_status)}, ${JSON.stringify(redone.times_redone)}`,
        redone,
      );
      expectThat(
        redone.completed_at === rejected.completed_at,
        `a redo keeps completed_at (${rejected.completed_at}), got ${redone.completed_at}`,
      );
      const record = lastAudit(redone);
      expectThat(
        redone.audits.length === 1 &&
          record?.audit_source === 'customer' &&
          record?.audit_result === 'rejected' &&
          record?.comments === 'Wrong department.',
        'the redone task should have one audit record {audit_source: customer, audit_result: rejected, comments}',
        redone.audits,
      );

      // A redo gets a new synthetic response: boxes drawn again, which never land exactly where the first ones did.
      const boxes = await completedTask(ctx, 'annotation', annotation());
      expectStatus(
        await ctx.call('POST', `/v1/task/${boxes.task_id}/audit`, { json: { accepted: false } }),
        200,
        'a rejecting review of a completed annotation task',
      );
      const redrawn = await readTask(ctx, boxes.task_id);
      expectThat(
        redrawn.times_redone === 1 && !same(redrawn.response, boxes.response),
        'a rejected test-mode task is redone with a new synthetic response',
        { first: boxes.response, redone: redrawn.response },
      );
      expectThat(
        same(redrawn.response, (await readTask(ctx, boxes.task_id)).response),
        'the redone response should read the same every time',
        redrawn.response,
      );
    },
  },
  {
    id: 'task-changes/updated-at',
    area: 'Task changes',
    seed: '2 Resources > Task.updated_at (moves on every change; a request that changes nothing leaves it alone)',
    rule: 'Metadata, tag and unique_id changes move updated_at; the same metadata again, tags already there, removing absent tags and deleting a unique_id the task does not have leave it alone. A task without tags gets exactly the tags added.',
    kind: 'behaviour',
    async run(ctx) {
      const task = await completedTask(ctx, 'categorization', categorization());
      const path = `/v1/task/${task.task_id}`;
      let last = (await readTask(ctx, task.task_id)).updated_at as string;
      // Timestamps have milliseconds: let one pass, so that a change shows as a later updated_at.
      const tick = () => new Promise((r) => setTimeout(r, 5));
      const step = async (what: string, send: () => Promise<unknown>, changes: boolean) => {
        await tick();
        await send();
        const now = (await readTask(ctx, task.task_id)).updated_at as string;
        if (changes) expectThat(now > last, `${what} should move updated_at (was ${last}, now ${now})`);
        else expectThat(now === last, `${what} changes nothing and should leave updated_at at ${last}, got ${now}`);
        last = now;
      };
      const tag = ctx.unique('t');
      await step('setMetadata {a: 1}', () => ctx.call('POST', `${path}/setMetadata`, { json: { a: 1 } }), true);
      await step('the same metadata again', () => ctx.call('POST', `${path}/setMetadata`, { json: { a: 1 } }), false);
      await step(`adding the tag ${tag} to a task without tags`, () => tagsCall(ctx, 'POST', task.task_id, [tag]), true);
      await expectTags(ctx, task.task_id, [tag], 'a task without tags, after adding one');
      await step('adding a tag already there', () => tagsCall(ctx, 'POST', task.task_id, [tag]), false);
      await step('removing a tag the task does not have', () => tagsCall(ctx, 'DELETE', task.task_id, [ctx.unique('absent')]), false);
      await step('deleting a unique_id the task does not have', () => ctx.call('DELETE', `${path}/unique_id`), false);
      await step('setting a unique_id', () => ctx.call('POST', `${path}/unique_id`, { json: { unique_id: ctx.unique('uid') } }), true);
      await step('deleting the unique_id', () => ctx.call('DELETE', `${path}/unique_id`), true);
    },
  },
];
