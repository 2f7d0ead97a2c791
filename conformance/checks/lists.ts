// Seed 4.1, the task list: order, filters, page size and both paging styles. Every check tags its
// own tasks with a fresh tag and filters on it, so that other tasks on the server do not matter.
import { isDeepStrictEqual } from 'node:util';
import { ConformanceFailure, expectStatus, expectThat, type Check, type CheckContext } from '../types.ts';
import {
  annotation,
  categorization,
  SINK,
  createInSequence,
  createTask,
  errorStatus,
  expectError,
  failingCategorization,
  idsOf,
  listAllIds,
  listTasks,
  sameMembers,
  settledTask,
  trainingBody,
  type Query,
} from './helpers.ts';

const area = 'Lists';

/** Expects the list with `query` to hold exactly the tasks `expected` (any order). */
async function expectListed(ctx: CheckContext, query: Query, expected: string[], what: string) {
  const body = await listTasks(ctx, query);
  const got = idsOf(body.docs);
  expectThat(
    sameMembers(got, expected),
    `${what}: ${JSON.stringify(query)} should list ${expected.length} task(s) ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`,
  );
  expectThat(body.total === expected.length, `${what}: total should count the ${expected.length} match(es), got ${body.total}`, body.total);
}

/** Three tagged tasks of the filter checks: a categorization, an annotation (also tagged `second`), one in error. */
async function filterFixture(ctx: CheckContext) {
  const tag = ctx.unique('list');
  const second = ctx.unique('list');
  const created = [
    await createTask(ctx, 'categorization', categorization({ tags: [tag] })),
    await createTask(ctx, 'annotation', annotation({ tags: [tag, second] })),
    await createTask(ctx, 'categorization', failingCategorization({ tags: [tag] })),
  ];
  const [cat, ann, err] = await Promise.all(created.map((t) => settledTask(ctx, t.task_id, ['completed', 'error'])));
  return { tag, second, cat: cat.task_id as string, ann: ann.task_id as string, err: err.task_id as string, tasks: [cat, ann, err] };
}

const order = (a: { created_at: string; task_id: string }, b: { created_at: string; task_id: string }) =>
  Date.parse(a.created_at) !== Date.parse(b.created_at)
    ? Date.parse(b.created_at) - Date.parse(a.created_at)
    : b.task_id < a.task_id
      ? -1
      : 1;

export const listChecks: Check[] = [
  {
    id: 'lists/newest-first',
    area,
    seed: '4.1 Task management > list order: descending by created_at',
    rule: 'The task list is ordered newest first (created_at descending, ties by task_id descending).',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('order');
      const created = idsOf(await createInSequence(ctx, 4, () => categorization({ tags: [tag] })));
      const body = await listTasks(ctx, { tags: tag });
      const got = idsOf(body.docs);
      expectThat(
        isDeepStrictEqual(got, [...created].reverse()),
        `4 tasks created one after another should be listed newest first: expected ${JSON.stringify([...created].reverse())}, got ${JSON.stringify(got)}`,
      );
      const sorted = [...body.docs].sort(order);
      expectThat(
        isDeepStrictEqual(idsOf(sorted), got),
        'docs should be sorted by created_at descending, ties by task_id descending',
        body.docs.map((d: any) => [d.created_at, d.task_id]),
      );
    },
  },
  {
    id: 'lists/filter-tags',
    area,
    seed: '2.1 Task > tags (can be used to query tasks); decision: the tags filter',
    rule: 'The tags filter lists the tasks that carry every given tag (repeated keys or comma-joined); an unknown tag lists nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const f = await filterFixture(ctx);
      await expectListed(ctx, { tags: f.tag }, [f.cat, f.ann, f.err], 'one tag');
      await expectListed(ctx, { tags: f.second }, [f.ann], 'the second tag');
      await expectListed(ctx, { tags: [f.tag, f.second] }, [f.ann], 'two tags as repeated keys (all must match)');
      await expectListed(ctx, { tags: `${f.tag},${f.second}` }, [f.ann], 'two tags comma-joined');
      await expectListed(ctx, { tags: ctx.unique('nothing') }, [], 'an unknown tag');
    },
  },
  {
    id: 'lists/filter-type',
    area,
    seed: '4.1 Task management > list query parameter type',
    rule: 'The type filter lists only tasks of that type.',
    kind: 'behaviour',
    async run(ctx) {
      const f = await filterFixture(ctx);
      await expectListed(ctx, { tags: f.tag, type: 'annotation' }, [f.ann], 'type=annotation');
      await expectListed(ctx, { tags: f.tag, type: 'categorization' }, [f.cat, f.err], 'type=categorization');
    },
  },
  {
    id: 'lists/filter-status',
    area,
    seed: '4.1 Task management > list query parameter status; 3.1 Task status',
    rule: 'The status filter lists only tasks in that status (the older generation shows a task in error as completed and has no status error: 400).',
    kind: 'behaviour',
    async run(ctx) {
      const f = await filterFixture(ctx);
      expectThat(f.tasks[2].status === errorStatus(ctx), `the task whose attachment fails should show ${errorStatus(ctx)}`, f.tasks[2]);
      if (ctx.generation === 'legacy') {
        await expectListed(
          ctx,
          { tags: f.tag, status: 'completed' },
          [f.cat, f.ann, f.err],
          'status=completed (older generation: error shown as completed)',
        );
        expectError(await ctx.call('GET', '/v1/tasks', { query: { status: 'error' } }), 400, 'status=error in the older generation');
      } else {
        await expectListed(ctx, { tags: f.tag, status: 'completed' }, [f.cat, f.ann], 'status=completed');
        await expectListed(ctx, { tags: f.tag, status: 'error' }, [f.err], 'status=error');
      }
      await expectListed(ctx, { tags: f.tag, status: 'pending' }, [], 'status=pending');
      await expectListed(ctx, { tags: f.tag, status: 'canceled' }, [], 'status=canceled');
      expectError(await ctx.call('GET', '/v1/tasks', { query: { status: 'finished' } }), 400, 'an unknown status value');
    },
  },
  {
    id: 'lists/filter-time',
    area,
    seed: '4.1 Task management > list query parameters start_time, end_time (date or date-time)',
    rule: 'start_time and end_time bound created_at (inclusive) and accept a plain date or a date-time with an offset.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('time');
      const tasks = await createInSequence(ctx, 3, () => categorization({ tags: [tag] }));
      const [t1, t2, t3] = tasks.map((t) => ({ id: t.task_id as string, at: Date.parse(t.created_at) }));
      if (!t1 || !t2 || !t3 || Number.isNaN(t1.at + t2.at + t3.at))
        throw new ConformanceFailure('created tasks should carry an ISO 8601 created_at', tasks);
      if (!(t1.at < t2.at && t2.at < t3.at)) {
        ctx.note('three tasks created one after another share a created_at; only the inclusive bounds were checked');
      }
      const iso = (ms: number) => new Date(ms).toISOString();
      const after = [t1, t2, t3].filter((t) => t.at >= t2.at).map((t) => t.id);
      const before = [t1, t2, t3].filter((t) => t.at <= t2.at).map((t) => t.id);
      await expectListed(ctx, { tags: tag, start_time: iso(t2.at) }, after, 'start_time = created_at of the 2nd task (inclusive)');
      await expectListed(ctx, { tags: tag, end_time: iso(t2.at) }, before, 'end_time = created_at of the 2nd task (inclusive)');
      // The same instant one hour ahead of UTC.
      const withOffset = iso(t2.at + 3_600_000).replace('Z', '+01:00');
      await expectListed(ctx, { tags: tag, start_time: withOffset }, after, `start_time with an offset (${withOffset})`);
      const day = iso(t1.at).slice(0, 10);
      const dayBefore = iso(Date.parse(day) - 86_400_000).slice(0, 10);
      await expectListed(ctx, { tags: tag, start_time: day }, [t1.id, t2.id, t3.id], `start_time as a plain date (${day})`);
      await expectListed(ctx, { tags: tag, end_time: dayBefore }, [], `end_time as a plain date before the tasks (${dayBefore})`);
      expectError(await ctx.call('GET', '/v1/tasks', { query: { start_time: 'yesterday' } }), 400, 'a malformed start_time');
      // Each time filter refuses a date that is no day of the calendar, naming itself.
      for (const name of ['start_time', 'end_time', 'completed_after', 'completed_before', 'updated_after', 'updated_before']) {
        const bad = await ctx.call('GET', '/v1/tasks', { query: { [name]: '2026-02-30' } });
        expectError(bad, 400, `${name}=2026-02-30 (no such day)`);
        expectThat(
          String(bad.body?.error).includes(name),
          `the 400 for ${name}=2026-02-30 should name ${name}, got ${JSON.stringify(bad.body?.error)}`,
        );
      }
    },
  },
  {
    id: 'lists/filter-project-batch',
    area,
    seed: '2.5 Project, 2.7 Batch (tasks join by name); decision: project and batch list filters',
    rule: 'The project and batch filters list the tasks of that project or batch; an unknown name lists nothing (200, not 404).',
    kind: 'behaviour',
    async run(ctx) {
      const project = ctx.unique('proj');
      const batch = ctx.unique('batch');
      const params = { attachment_type: 'text', categories: ['billing', 'support'], instruction: 'Route the ticket.' };
      expectStatus(
        await ctx.call('POST', '/v1/projects', { json: { type: 'categorization', name: project, params } }),
        200,
        'creating a project',
      );
      expectStatus(await ctx.call('POST', '/v1/batches', { json: { project, name: batch } }), 200, 'creating a batch');
      const inBatch = await createTask(ctx, 'categorization', { callback_url: SINK, batch, attachment: 'In the batch.' });
      const inProject = await createTask(ctx, 'categorization', { callback_url: SINK, project, attachment: 'In the project.' });
      await expectListed(ctx, { project }, [inBatch.task_id, inProject.task_id], 'project filter');
      await expectListed(ctx, { batch }, [inBatch.task_id], 'batch filter');
      await expectListed(ctx, { project: ctx.unique('none') }, [], 'an unknown project');
      await expectListed(ctx, { batch: ctx.unique('none') }, [], 'an unknown batch');
    },
  },
  {
    id: 'lists/limit',
    area,
    seed: '4.1 Task management > list query parameter limit; 8 Limits > page size',
    rule: 'limit caps the page size (default 100) while total counts every match and has_more says more follow.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('limit');
      await createInSequence(ctx, 3, () => categorization({ tags: [tag] }));
      const page = await listTasks(ctx, { tags: tag, limit: 2 });
      expectThat(page.docs.length === 2, `limit=2 over 3 matches should give 2 docs, got ${page.docs.length}`);
      expectThat(
        page.total === 3 && page.has_more === true && page.limit === 2,
        `limit=2 over 3 matches: expected total 3, has_more true, limit 2; got total ${page.total}, has_more ${page.has_more}, limit ${page.limit}`,
      );
      const one = await listTasks(ctx, { tags: tag, limit: 1 });
      expectThat(
        one.docs.length === 1 && one.has_more === true,
        `limit=1 should give 1 doc and has_more true, got ${one.docs.length} and ${one.has_more}`,
      );
      const all = await listTasks(ctx, { tags: tag });
      expectThat(
        all.docs.length === 3 && all.has_more === false && all.limit === 100,
        `without limit: expected 3 docs, has_more false, limit 100; got ${all.docs.length}, ${all.has_more}, ${all.limit}`,
      );
    },
  },
  {
    id: 'lists/limit-bounds',
    area,
    seed: '4.1 Task management > limit 1 to 100; 8 Limits > page size',
    rule: 'limit outside 1 to 100 (or not an integer) answers 400 naming limit; 1 and 100 are accepted.',
    kind: 'behaviour',
    async run(ctx) {
      for (const limit of ['0', '101', '-1', 'ten', '2.5']) {
        const ex = await ctx.call('GET', '/v1/tasks', { query: { limit } });
        expectError(ex, 400, `limit=${limit}`);
        expectThat(ex.body.error.includes('limit'), `the 400 for limit=${limit} should name limit`, ex.body);
      }
      for (const limit of [1, 100]) expectStatus(await ctx.call('GET', '/v1/tasks', { query: { limit } }), 200, `limit=${limit}`);
    },
  },
  {
    id: 'lists/next-token',
    area,
    seed: '4.1 Task management > next_token (newer generation)',
    rule: 'Repeating the list call with the returned next_token walks every match once, in order; the last page has has_more false and no next_token.',
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const tag = ctx.unique('walk');
      const created = idsOf(await createInSequence(ctx, 5, () => categorization({ tags: [tag] })));
      const onePage = idsOf((await listTasks(ctx, { tags: tag })).docs);
      const sizes: number[] = [];
      const walked: string[] = [];
      let token: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await listTasks(ctx, { tags: tag, limit: 2, ...(token ? { next_token: token } : {}) });
        expectThat(page.total === 5, `every page should count all 5 matches in total, got ${page.total}`);
        sizes.push(page.docs.length);
        walked.push(...idsOf(page.docs));
        if (!page.has_more) {
          expectThat(page.next_token === undefined, 'the last page should carry no next_token', page);
          break;
        }
        expectThat(
          typeof page.next_token === 'string' && page.next_token.length > 0,
          'a page with has_more true should carry next_token',
          page,
        );
        token = page.next_token;
      }
      expectThat(isDeepStrictEqual(sizes, [2, 2, 1]), `5 matches in pages of 2 should come as [2, 2, 1], got ${JSON.stringify(sizes)}`);
      expectThat(
        isDeepStrictEqual(walked, onePage) && sameMembers(walked, created),
        'the pages together should be the one-page list, in the same order',
        { walked, onePage },
      );
    },
  },
  {
    id: 'lists/next-token-bound',
    area,
    seed: '4.1 Task management > next_token (decision: bound to the filters)',
    rule: 'A next_token reused with other filters answers 400.',
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const tag = ctx.unique('bound');
      await createInSequence(ctx, 2, () => categorization({ tags: [tag] }));
      const first = await listTasks(ctx, { tags: tag, limit: 1 });
      expectThat(typeof first.next_token === 'string', 'the first of two pages should carry next_token', first);
      const misuse = await ctx.call('GET', '/v1/tasks', {
        query: { tags: tag, status: 'pending', limit: 1, next_token: first.next_token },
      });
      expectError(misuse, 400, 'next_token with another filter');
    },
  },
  {
    id: 'lists/offset',
    area,
    seed: '4.1 Task management > offset (older generation)',
    rule: 'Older generation: offset skips that many matches; pages of limit walk every match once, has_more tells whether more follow, an offset past the end gives an empty page with the full total.',
    kind: 'behaviour',
    generations: ['legacy'],
    async run(ctx) {
      const tag = ctx.unique('offset');
      const created = idsOf(await createInSequence(ctx, 5, () => categorization({ tags: [tag] })));
      const expected = [...created].reverse();
      const walked: string[] = [];
      for (const [offset, hasMore] of [
        [0, true],
        [2, true],
        [4, false],
      ] as const) {
        const page = await listTasks(ctx, { tags: tag, limit: 2, offset });
        expectThat(
          page.offset === offset && page.limit === 2 && page.total === 5,
          `offset=${offset}: expected offset ${offset}, limit 2, total 5; got ${page.offset}, ${page.limit}, ${page.total}`,
        );
        expectThat(page.has_more === hasMore, `offset=${offset} limit=2 of 5: has_more should be ${hasMore}, got ${page.has_more}`);
        walked.push(...idsOf(page.docs));
      }
      expectThat(
        isDeepStrictEqual(walked, expected),
        `offset pages should walk the 5 tasks newest first: expected ${JSON.stringify(expected)}, got ${JSON.stringify(walked)}`,
      );
      const past = await listTasks(ctx, { tags: tag, offset: 10 });
      expectThat(
        past.docs.length === 0 && past.total === 5 && past.has_more === false,
        'an offset past the end should give no docs, total 5, has_more false',
        past,
      );
      expectError(await ctx.call('GET', '/v1/tasks', { query: { offset: -1 } }), 400, 'a negative offset');
    },
  },
  {
    id: 'lists/cursor-stable',
    area,
    seed: '4.1 Task management > next_token (decision: stable while tasks are created)',
    rule: 'Walking next_token pages while tasks are being created returns every earlier task exactly once and no task twice.',
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const tag = ctx.unique('stable');
      const earlier = idsOf(await createInSequence(ctx, 12, () => categorization({ tags: [tag] })));
      let walking = true;
      const inserting = (async () => {
        let n = 0;
        // Keep creating while the walk goes on (at least a few, however fast the walk is).
        while (walking || n < 3) {
          await createTask(ctx, 'categorization', categorization({ tags: [tag] }));
          n++;
          if (n >= 30) break;
        }
        return n;
      })();
      let seen: string[];
      try {
        seen = await listAllIds(ctx, { tags: tag }, { pageSize: 3, maxPages: 40 });
      } finally {
        walking = false;
      }
      const inserted = await inserting;
      ctx.note(`${inserted} task(s) created during the walk`);
      const twice = seen.filter((id, i) => seen.indexOf(id) !== i);
      expectThat(twice.length === 0, `no task should be seen twice, these were: ${JSON.stringify(twice)}`);
      const missed = earlier.filter((id) => !seen.includes(id));
      expectThat(missed.length === 0, `every task created before the walk should be seen, ${missed.length} were skipped`, missed);
    },
  },
  {
    id: 'lists/training-filters',
    area,
    seed: '4.3 Training tasks; decision: GET /v1/training_tasks filters type, start_time and end_time (created_at bounds, inclusive)',
    rule: 'GET /v1/training_tasks keeps the training tasks of the type and created within start_time and end_time (inclusive), and no other; a date that does not exist is a 400 naming its filter.',
    kind: 'behaviour',
    async run(ctx) {
      const post = async (path: string, body: unknown) => {
        const ex = await ctx.call('POST', path, { json: body });
        expectStatus(ex, 200, `POST ${path}`);
        return { id: ex.body.id as string, at: Date.parse(ex.body.created_at) };
      };
      const label = ctx.unique('training');
      const text = await post('/v1/training_tasks/textcollection', trainingBody(label));
      const ner = await post('/v1/training_tasks/namedentityrecognition', {
        text: `Jane Doe lives in Berlin (${label}).`,
        labels: [{ name: 'PERSON', display_name: 'Person' }],
        expected_response: { annotations: [{ id: 'a1', start: 0, end: 8, text: 'Jane Doe', label: 'PERSON' }], relationships: [] },
      });
      const iso = (ms: number) => new Date(ms).toISOString();
      const listed = async (query: Record<string, string>) => {
        const ex = await ctx.call('GET', '/v1/training_tasks', { query });
        expectStatus(ex, 200, `GET /v1/training_tasks ${JSON.stringify(query)}`);
        return (ex.body?.docs ?? []) as Array<{ id: string; type: string }>;
      };
      const ours = (docs: Array<{ id: string }>) => docs.map((d) => d.id).filter((id) => id === text.id || id === ner.id);
      const since = iso(text.at);
      const cases: [Record<string, string>, string[]][] = [
        [{ start_time: since }, [ner.id, text.id]],
        [{ start_time: since, type: 'namedentityrecognition' }, [ner.id]],
        [{ start_time: since, type: 'textcollection' }, [text.id]],
        [{ start_time: iso(ner.at + 1) }, []],
        [{ start_time: since, end_time: iso(text.at - 1) }, []],
      ];
      if (ner.at > text.at) cases.push([{ start_time: since, end_time: since }, [text.id]]);
      else ctx.note('the two training tasks share a created_at; end_time was checked on the earlier bound only');
      for (const [query, expected] of cases) {
        const docs = await listed(query);
        expectThat(
          sameMembers(ours(docs), expected),
          `GET /v1/training_tasks?${new URLSearchParams(query)} should list ${JSON.stringify(expected)} of the two, got ${JSON.stringify(ours(docs))}`,
        );
        if (query.type)
          expectThat(
            docs.every((d) => d.type === query.type),
            `GET /v1/training_tasks?type=${query.type} should list only that type`,
            docs.map((d) => d.type),
          );
      }
      for (const name of ['start_time', 'end_time']) {
        const bad = await ctx.call('GET', '/v1/training_tasks', { query: { [name]: '2026-02-30' } });
        expectError(bad, 400, `${name}=2026-02-30 (no such day)`);
        expectThat(
          String(bad.body?.error).includes(name),
          `the 400 for ${name}=2026-02-30 should name ${name}, got ${JSON.stringify(bad.body?.error)}`,
        );
      }
    },
  },
];
