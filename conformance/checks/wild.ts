// What clients of the real service send (our decisions of issue 22, stated in the contract): the
// list filters and flags they use (rule 4), the time forms they print (rule 5), and the values on
// which a server and its contract were found to disagree: years at the edges of what is stored,
// raw reserved characters in query strings (rule 8). Rules 1 and 3 are checked on every operation
// (generated-checks.ts `generated/null-as-absent/*`, core-checks.ts `not-found/any-form/*`), rule 7
// by `batches/enterprise-lifecycle`.
import { isDeepStrictEqual } from 'node:util';
import { loadContract } from '../contract.ts';
import { expectStatus, expectThat, type Check, type CheckContext } from '../types.ts';
import { projectAndBatch } from './batches.ts';
import {
  SINK,
  categorization,
  createInSequence,
  createTask,
  expectError,
  idsOf,
  listTasks,
  postTask,
  sameMembers,
  type Query,
} from './helpers.ts';

const seed = 'decision beyond the API description: what clients of the real service send (issue 22)';

/** What Python's `str(datetime)` prints for a UTC time without tzinfo: a space, microseconds, no offset. */
const pythonStr = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').replace('Z', '')}456`;

/** The ids a task list with `query` gives (one page of up to 100), insisting on 200. */
async function listed(ctx: CheckContext, query: Query): Promise<string[]> {
  return idsOf((await listTasks(ctx, { limit: 100, ...query })).docs);
}

/** GET `path` with a query string written as is (raw characters stay raw). */
function rawGet(ctx: CheckContext, path: string, rawQuery: string) {
  return ctx.call('GET', `${path}?${rawQuery}`);
}

/** The names of the batches GET /v1/batches gives for `query`, insisting on 200. */
async function batchNames(ctx: CheckContext, query: Query): Promise<string[]> {
  const ex = await ctx.call('GET', '/v1/batches', { query });
  expectStatus(ex, 200, `GET /v1/batches ${JSON.stringify(query)}`);
  return (ex.body?.docs ?? []).map((b: { name: string }) => b.name);
}

/** The list operations of a generation and their time-filter query parameters (schema `TimeFilter`). */
function timeFilters(ctx: CheckContext): { path: string; names: string[] }[] {
  const contract = loadContract(ctx.generation);
  return contract.operations
    .filter((op) => op.method === 'get' && !op.templated)
    .map((op) => ({
      path: op.path,
      names: op.parameters
        .filter((p) => p.in === 'query' && String(contract.resolve(p.schema ?? {}).pattern ?? '').startsWith('^[0-9]{4}-'))
        .map((p) => String(p.name)),
    }))
    .filter((l) => l.names.length > 0);
}

export const wildChecks: Check[] = [
  {
    id: 'lists/created-after-before',
    area: 'Lists',
    seed,
    rule: 'GET /v1/tasks understands created_after and created_before: the same bounds on created_at as start_time and end_time (inclusive).',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('created');
      const [t1, t2] = await createInSequence(ctx, 2, () => categorization({ tags: [tag] }));
      for (const [alias, same, at] of [
        ['created_after', 'start_time', t2.created_at],
        ['created_before', 'end_time', t1.created_at],
        ['created_after', 'start_time', t1.created_at],
      ] as const) {
        const got = await listed(ctx, { tags: tag, [alias]: at });
        const expected = await listed(ctx, { tags: tag, [same]: at });
        expectThat(
          sameMembers(got, expected),
          `${alias}=${at} should list what ${same}=${at} lists (${JSON.stringify(expected)}), got ${JSON.stringify(got)}`,
        );
      }
      const onlyFirst = await listed(ctx, { tags: tag, created_before: t1.created_at });
      expectThat(
        onlyFirst.includes(t1.task_id) && (t1.created_at === t2.created_at || !onlyFirst.includes(t2.task_id)),
        `created_before=${t1.created_at} should list the first task and not the later one, got ${JSON.stringify(onlyFirst)}`,
      );
      const both = await listed(ctx, { tags: tag, created_after: t2.created_at, created_before: t1.created_at });
      const expected = t1.created_at === t2.created_at ? [t1.task_id, t2.task_id] : [];
      expectThat(
        sameMembers(both, expected),
        `created_after after created_before should list ${JSON.stringify(expected)}, got ${JSON.stringify(both)}`,
      );
    },
  },
  {
    id: 'lists/include-attachment-url',
    area: 'Lists',
    seed,
    rule: 'GET /v1/tasks?include_attachment_url=true gives each task whose attachment is a URL an attachment_url (that URL), and none to a text attachment (even one that reads like a URL); without the flag no task carries it.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('attachment-url');
      const url = 'https://example.com/conformance/ticket.png';
      const image = await createTask(ctx, 'categorization', categorization({ tags: [tag], attachment_type: 'image', attachment: url }));
      const text = await createTask(ctx, 'categorization', categorization({ tags: [tag] }));
      const urlText = await createTask(
        ctx,
        'categorization',
        categorization({ tags: [tag], attachment: 'https://example.com/this-is-text' }),
      );
      for (const flag of ['true', 'TRUE']) {
        const docs: any[] = (await listTasks(ctx, { tags: tag, include_attachment_url: flag })).docs;
        const byId = new Map(docs.map((d) => [d.task_id, d]));
        expectThat(
          byId.get(image.task_id)?.attachment_url === url,
          `include_attachment_url=${flag}: the task with the URL attachment should carry attachment_url ${url}`,
          byId.get(image.task_id),
        );
        for (const t of [text, urlText]) {
          expectThat(
            byId.has(t.task_id) && !('attachment_url' in byId.get(t.task_id)),
            `include_attachment_url=${flag}: a text attachment has no URL, so the task should carry no attachment_url`,
            byId.get(t.task_id),
          );
        }
      }
      const plain: any[] = (await listTasks(ctx, { tags: tag })).docs;
      expectThat(
        plain.length === 3 && plain.every((d) => !('attachment_url' in d)),
        'without include_attachment_url no task should carry attachment_url',
        plain,
      );
    },
  },
  {
    id: 'lists/limited-response',
    area: 'Lists',
    seed,
    rule: 'GET /v1/tasks?limited_response=true gives each task as task_id, status, metadata and project (when it has one) only, with the values of the whole task.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('limited');
      const { project } = await projectAndBatch(ctx);
      await createTask(ctx, 'categorization', categorization({ tags: [tag], project, metadata: { order: 1 } }));
      await createTask(ctx, 'categorization', categorization({ tags: [tag] }));
      const whole: any[] = (await listTasks(ctx, { tags: tag })).docs;
      const limited: any[] = (await listTasks(ctx, { tags: tag, limited_response: 'true' })).docs;
      const expected = whole.map((t) => ({
        task_id: t.task_id,
        status: t.status,
        metadata: t.metadata,
        ...(t.project !== undefined ? { project: t.project } : {}),
      }));
      expectThat(
        isDeepStrictEqual(limited, expected),
        `limited_response=true should give ${JSON.stringify(expected)}, got ${JSON.stringify(limited).slice(0, 600)}`,
      );
      expectThat(
        expected.some((t) => t.project === project),
        'the task of the project should show its project',
        expected,
      );
    },
  },
  {
    id: 'lists/unknown-parameter-400',
    area: 'Lists',
    seed,
    rule: 'A query parameter the contract does not know (a typo of a filter) gets 400 naming it, on the task list and the batch list: it never silently widens a list.',
    kind: 'behaviour',
    async run(ctx) {
      for (const [path, name] of [
        ['/v1/tasks', 'created_afterr'],
        ['/v1/tasks', 'limited_respons'],
        ['/v1/batches', 'exclude_archivd'],
      ] as const) {
        const ex = await ctx.call('GET', path, { query: { [name]: name.startsWith('created') ? '2026-11-21' : 'true' } });
        expectError(ex, 400, `GET ${path}?${name}=… (an unknown parameter)`);
        expectThat(String(ex.body?.error).includes(name), `the 400 should name ${name}, got ${JSON.stringify(ex.body?.error)}`);
      }
    },
  },
  {
    id: 'batches/archive',
    area: 'Batches',
    seed,
    rule: 'A batch can be archived and unarchived (archived flag on the batch, again: 200 unchanged); GET /v1/batches?exclude_archived=true leaves archived batches out; an archived batch takes no new task (400); an unknown batch is 404.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name, batch } = await projectAndBatch(ctx);
      expectThat(batch.archived === false, 'a new batch should show archived: false', batch);
      const path = `/v1/batches/${encodeURIComponent(name)}`;
      for (const attempt of ['archive', 'repeated archive']) {
        const ex = await ctx.call('POST', `${path}/archive`);
        expectStatus(ex, 200, attempt);
        expectThat(ex.body?.name === name && ex.body?.archived === true, `${attempt} should answer the batch with archived: true`, ex.body);
      }
      const read = await ctx.call('GET', path);
      expectThat(read.status === 200 && read.body?.archived === true, 'an archived batch should read archived: true', read.body);
      expectThat((await batchNames(ctx, { project })).includes(name), 'without exclude_archived the archived batch should be listed');
      expectThat(
        !(await batchNames(ctx, { project, exclude_archived: 'true' })).includes(name),
        'exclude_archived=true should leave the archived batch out',
      );
      expectError(await postTask(ctx, 'categorization', categorization({ batch: name })), 400, 'adding a task to an archived batch');
      const back = await ctx.call('POST', `${path}/unarchive`);
      expectStatus(back, 200, 'unarchive');
      expectThat(back.body?.archived === false, 'unarchive should answer the batch with archived: false', back.body);
      expectThat(
        (await batchNames(ctx, { project, exclude_archived: 'true' })).includes(name),
        'an unarchived batch should be listed with exclude_archived=true',
      );
      expectError(
        await ctx.call('POST', `/v1/batches/${encodeURIComponent(ctx.unique('no-such-batch'))}/archive`),
        404,
        'archiving a batch that does not exist',
      );
    },
  },
  {
    id: 'lists/time-forms',
    area: 'Lists',
    seed,
    rule: "Time filters take the forms clients print: Python's str(datetime) (a space, microseconds, no offset: UTC) and the hour-only offset (+01), on the task list and the batch list.",
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('forms');
      const task = await createTask(ctx, 'categorization', categorization({ tags: [tag] }));
      const at = Date.parse(task.created_at);
      const cases: [Query, boolean][] = [
        [{ start_time: pythonStr(at - 1000), end_time: pythonStr(at + 1000) }, true],
        [{ start_time: pythonStr(at + 1000) }, false],
        [{ end_time: pythonStr(at - 1000) }, false],
        [{ created_after: pythonStr(at - 1000) }, true],
        // The hour of creation, written an hour ahead of UTC with the hour alone as offset.
        [{ start_time: `${new Date(at + 3_600_000).toISOString().slice(0, 13)}:00+01` }, true],
        [{ start_time: `${new Date(at + 7_200_000).toISOString().slice(0, 13)}:00+01` }, false],
      ];
      for (const [query, inside] of cases) {
        const got = await listed(ctx, { tags: tag, ...query });
        expectThat(
          isDeepStrictEqual(got, inside ? [task.task_id] : []),
          `GET /v1/tasks ${JSON.stringify(query)} should ${inside ? '' : 'not '}list the task created at ${task.created_at}, got ${JSON.stringify(got)}`,
        );
      }
      const { project, name, batch } = await projectAndBatch(ctx);
      const batchAt = Date.parse(batch.created_at);
      const around = await batchNames(ctx, { project, start_time: pythonStr(batchAt - 1000), end_time: pythonStr(batchAt + 1000) });
      expectThat(
        isDeepStrictEqual(around, [name]),
        `GET /v1/batches with str(datetime) bounds around its creation should list the batch, got ${JSON.stringify(around)}`,
      );
      const after = await batchNames(ctx, { project, start_time: pythonStr(batchAt + 1000) });
      expectThat(
        after.length === 0,
        `GET /v1/batches with start_time after its creation should list nothing, got ${JSON.stringify(after)}`,
      );
    },
  },
  {
    id: 'lists/time-bounds',
    area: 'Lists',
    seed,
    rule: 'Every time filter of every list takes the first and last times stored (0001-01-01, 9999-12-31T23:59:59.999Z) and refuses a time outside them (year 0000, also 0001-01-01T00:00:00+01:00, which is in year 0 in UTC) with 400 naming the filter, never 500.',
    kind: 'behaviour',
    async run(ctx) {
      const lists = timeFilters(ctx);
      expectThat(lists.length > 0, `the ${ctx.generation} contract should have lists with time filters`);
      for (const { path, names } of lists) {
        for (const name of names) {
          for (const value of ['0001-01-01', '9999-12-31T23:59:59.999Z', '0000-12-31T23:30-01']) {
            expectStatus(
              await ctx.call('GET', path, { query: { [name]: value } }),
              200,
              `GET ${path}?${name}=${value} (within the stored times)`,
            );
          }
          for (const value of ['0000-01-09', '0001-01-01T00:00:00+01:00', '9999-12-31 23:00:00-05:00']) {
            const ex = await ctx.call('GET', path, { query: { [name]: value } });
            expectError(ex, 400, `GET ${path}?${name}=${value} (outside the stored times)`);
            expectThat(
              String(ex.body?.error).includes(name),
              `the 400 for ${name}=${value} should name ${name}, got ${JSON.stringify(ex.body?.error)}`,
            );
          }
        }
      }
    },
  },
  {
    id: 'lists/raw-reserved-query',
    area: 'Lists',
    seed,
    rule: 'Query values may carry reserved characters raw, as browsers and HTTP clients send them: a + is a space (?project=a+b), a : stands as itself (?end_time=…T10:00:00Z), a raw + before an offset is its sign.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('raw');
      const project = `${ctx.unique('raw')} b`;
      expectStatus(
        await ctx.call('POST', '/v1/projects', {
          json: { type: 'categorization', name: project, params: { attachment_type: 'text', categories: ['a', 'b'] } },
        }),
        200,
        'creating a project whose name has a space',
      );
      const batch = `${ctx.unique('raw')} b`;
      expectStatus(await ctx.call('POST', '/v1/batches', { json: { project, name: batch } }), 200, 'creating a batch in it');
      const task = await createTask(ctx, 'categorization', { ...categorization({ tags: [tag] }), callback_url: SINK, project });
      const plus = project.replaceAll(' ', '+');
      const batches = await rawGet(ctx, '/v1/batches', `project=${plus}`);
      expectStatus(batches, 200, `GET /v1/batches?project=${plus}`);
      expectThat(
        isDeepStrictEqual(
          (batches.body?.docs ?? []).map((b: { name: string }) => b.name),
          [batch],
        ),
        `GET /v1/batches?project=${plus} should list the batch of the project "${project}"`,
        batches.body,
      );
      const at = Date.parse(task.created_at);
      const local = (ms: number) => new Date(ms + 3_600_000).toISOString().slice(0, 19);
      for (const [query, inside] of [
        [`project=${plus}&end_time=9999-12-31T23:59:59Z`, true],
        [`tags=${tag}&end_time=${new Date(at - 1000).toISOString()}`, false],
        [`tags=${tag}&start_time=${local(at - 1000)}+01:00`, true],
        [`tags=${tag}&start_time=${local(at + 1000)}+01:00`, false],
      ] as const) {
        const ex = await rawGet(ctx, '/v1/tasks', query);
        expectStatus(ex, 200, `GET /v1/tasks?${query} (raw reserved characters)`);
        const got = idsOf(ex.body?.docs ?? []);
        expectThat(
          isDeepStrictEqual(got, inside ? [task.task_id] : []),
          `GET /v1/tasks?${query} should ${inside ? '' : 'not '}list the task created at ${task.created_at}, got ${JSON.stringify(got)}`,
        );
      }
    },
  },
];
