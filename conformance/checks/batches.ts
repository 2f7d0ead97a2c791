// Seed 2.7 (batches) and 3.2 (batch status): lifecycle, joining rules and task counts.
import { isDeepStrictEqual } from 'node:util';
import { expectStatus, expectThat, type Check, type CheckContext, type KeyName } from '../types.ts';
import { SINK, createTask, expectError, idsOf, listTasks, postTask } from './helpers.ts';

const area = 'Batches';

const projectParams = { attachment_type: 'text', categories: ['billing', 'support'], instruction: 'Route the ticket.' };

/** A project and a batch in it (names fresh); returns the created batch. */
export async function projectAndBatch(
  ctx: CheckContext,
  options: {
    key?: KeyName;
    studio?: boolean;
    rapid?: boolean;
    callback?: string;
    metadata?: Record<string, unknown>;
    calibration?: boolean;
  } = {},
) {
  const key: KeyName = options.key ?? 'main';
  const project = ctx.unique('proj');
  const p = await ctx.call('POST', '/v1/projects', {
    key,
    json: {
      type: 'categorization',
      name: project,
      params: projectParams,
      ...(options.studio ? { studio: true } : {}),
      ...(options.rapid ? { rapid: true } : {}),
    },
  });
  expectStatus(p, 200, 'creating a project');
  return { project, ...(await batchIn(ctx, project, options)) };
}

/** A new batch (name fresh) in `project`; returns its name and the created batch. */
async function batchIn(
  ctx: CheckContext,
  project: string,
  options: { key?: KeyName; callback?: string; metadata?: Record<string, unknown>; calibration?: boolean } = {},
) {
  const name = ctx.unique('batch');
  const b = await ctx.call('POST', '/v1/batches', {
    key: options.key ?? 'main',
    json: {
      project,
      name,
      ...(options.callback ? { callback: options.callback } : {}),
      ...(options.metadata ? { metadata: options.metadata } : {}),
      ...(options.calibration ? { calibration_batch: true } : {}),
    },
  });
  expectStatus(b, 200, `creating a ${options.calibration ? 'calibration ' : ''}batch`);
  return { name, batch: b.body };
}

async function finalize(ctx: CheckContext, name: string) {
  return ctx.call('POST', `/v1/batches/${encodeURIComponent(name)}/finalize`);
}

async function counts(ctx: CheckContext, name: string, key: KeyName = 'main') {
  const ex = await ctx.call('GET', `/v1/batches/${encodeURIComponent(name)}/status`, { key });
  expectStatus(ex, 200, `GET /v1/batches/${name}/status`);
  return ex.body;
}

const batchTask = (batch: string, text: string) => ({ callback_url: SINK, batch, attachment: text });

export const batchChecks: Check[] = [
  {
    id: 'batches/enterprise-lifecycle',
    area,
    seed: '3.2 Batch status > Enterprise (in_progress at creation; completed when the last task completes); 2.7 Batch',
    rule: 'A batch of a plain project starts in_progress, counts its tasks by status and completes when its last task completes; it keeps taking tasks (a task joining it reopens it), and completes again when none is pending.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name, batch } = await projectAndBatch(ctx, { metadata: { week: 47 } });
      expectThat(
        batch.status === 'in_progress' && batch.project === project && batch.name === name,
        'a new batch of a plain project should be in_progress in its project',
        batch,
      );
      expectThat(isDeepStrictEqual(batch.metadata, { week: 47 }), 'the batch should keep its metadata', batch.metadata);
      const task = await createTask(ctx, 'categorization', batchTask(name, 'In the batch.'));
      expectThat(task.batch === name && task.project === project, 'a task joining a batch should show the batch and its project', task);
      const done = await ctx.until('the batch to complete once its only (test-mode) task completed', async () => {
        const c = await counts(ctx, name);
        return c.status === 'completed' ? c : undefined;
      });
      expectThat(
        done.completed === 1 && done.pending === 0 && done.canceled === 0 && done.error === 0,
        `the completed batch should count 1 completed task, got ${JSON.stringify(done)}`,
      );
      const read = await ctx.call('GET', `/v1/batches/${encodeURIComponent(name)}`);
      expectStatus(read, 200, 'reading the batch');
      expectThat(
        read.body?.status === 'completed' && typeof read.body?.completed_at === 'string',
        'a completed batch should read completed, with completed_at',
        read.body,
      );
      // An Enterprise batch takes tasks until it is archived: the late task joins and, completed at
      // once in test mode, completes the batch again.
      const late = await createTask(ctx, 'categorization', batchTask(name, 'Later.'));
      expectThat(late.batch === name, 'a task joining a completed batch should show the batch', late);
      await ctx.until('the batch to complete again with both tasks', async () => {
        const c = await counts(ctx, name);
        return c.status === 'completed' && c.completed === 2 ? c : undefined;
      });
      const listed = await ctx.call('GET', '/v1/batches', { query: { project } });
      expectStatus(listed, 200, 'listing the batches of the project');
      expectThat(
        listed.body?.total === 1 && listed.body?.docs?.[0]?.name === name,
        'GET /v1/batches?project= should list the one batch of the project',
        listed.body,
      );
    },
  },
  {
    id: 'batches/staging-finalize',
    area,
    seed: '3.2 Batch status > Rapid and Studio (staging → finalize → in_progress; no task added afterwards)',
    rule: 'A studio batch starts staging and takes tasks; finalize moves it to in_progress (again: 200, unchanged), after which adding a task answers 400; it completes when no task is pending.',
    kind: 'behaviour',
    needs: ['liveKey'],
    async run(ctx) {
      const key: KeyName = 'live';
      const { name, batch } = await projectAndBatch(ctx, { key, studio: true });
      expectThat(batch.status === 'staging', `a studio batch should start in staging, got ${batch.status}`, batch);
      const tasks = [
        await createTask(ctx, 'categorization', batchTask(name, 'One.'), { key }),
        await createTask(ctx, 'categorization', batchTask(name, 'Two.'), { key }),
      ];
      const staged = await counts(ctx, name, key);
      expectThat(
        staged.status === 'staging' && staged.pending === 2,
        `a staging batch with 2 live tasks should count 2 pending, got ${JSON.stringify(staged)}`,
      );
      const path = `/v1/batches/${encodeURIComponent(name)}/finalize`;
      for (const attempt of ['finalize', 'repeated finalize']) {
        const fin = await ctx.call('POST', path, { key });
        expectStatus(fin, 200, attempt);
        expectThat(fin.body?.status === 'in_progress', `${attempt} should answer the batch in_progress, got ${fin.body?.status}`, fin.body);
      }
      expectError(
        await postTask(ctx, 'categorization', batchTask(name, 'Late.'), { key }),
        400,
        'adding a task to a finalized studio batch',
      );
      expectStatus(await ctx.call('POST', `/v1/task/${tasks[0].task_id}/cancel`, { key }), 200, 'cancel of the first task');
      const half = await counts(ctx, name, key);
      expectThat(
        half.status === 'in_progress' && half.pending === 1 && half.canceled === 1,
        `after one cancel: expected in_progress, 1 pending, 1 canceled; got ${JSON.stringify(half)}`,
      );
      expectStatus(await ctx.call('POST', `/v1/task/${tasks[1].task_id}/cancel`, { key }), 200, 'cancel of the second task');
      const done = await ctx.until('the batch to complete once no task is pending', async () => {
        const c = await counts(ctx, name, key);
        return c.status === 'completed' ? c : undefined;
      });
      expectThat(done.canceled === 2 && done.pending === 0, `the completed batch should count 2 canceled, got ${JSON.stringify(done)}`);
    },
  },
  {
    id: 'batches/names',
    area,
    seed: '2.7 Batch (tasks join by name); decision: names unique, unknown project 404',
    rule: 'A batch name is unique (409 for a duplicate); a batch of an unknown project and an unknown batch answer 404.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name } = await projectAndBatch(ctx);
      expectError(await ctx.call('POST', '/v1/batches', { json: { project, name } }), 409, 'a second batch with the same name');
      expectError(
        await ctx.call('POST', '/v1/batches', { json: { project: ctx.unique('none'), name: ctx.unique('batch') } }),
        404,
        'a batch of an unknown project',
      );
      expectError(await ctx.call('GET', `/v1/batches/${encodeURIComponent(ctx.unique('none'))}`), 404, 'an unknown batch');
    },
  },
  {
    id: 'batches/set-metadata',
    area,
    seed: '2.7 Batch; decision: setMetadata replaces the batch metadata',
    rule: 'POST /v1/batches/{batchName}/setMetadata replaces the batch metadata and answers the batch.',
    kind: 'behaviour',
    async run(ctx) {
      const { name } = await projectAndBatch(ctx, { metadata: { a: 1 } });
      const set = await ctx.call('POST', `/v1/batches/${encodeURIComponent(name)}/setMetadata`, { json: { b: 2 } });
      expectStatus(set, 200, 'setMetadata of a batch');
      expectThat(isDeepStrictEqual(set.body?.metadata, { b: 2 }), 'the batch metadata should be replaced', set.body);
      const read = await ctx.call('GET', `/v1/batches/${encodeURIComponent(name)}`);
      expectThat(isDeepStrictEqual(read.body?.metadata, { b: 2 }), 'the batch should read with the new metadata', read.body);
    },
  },
  {
    id: 'batches/list-paging',
    area,
    seed: '2.7 Batch; decision: GET /v1/batches with limit and offset (total, has_more)',
    rule: 'GET /v1/batches pages by limit and offset: 3 batches in pages of 2 give 2 docs with has_more true, then 1 doc with has_more false, total 3 on both, no batch twice.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name } = await projectAndBatch(ctx);
      const names = [name];
      for (let i = 0; i < 2; i++) {
        const more = ctx.unique('batch');
        expectStatus(
          await ctx.call('POST', '/v1/batches', { json: { project, name: more } }),
          200,
          'creating another batch in the project',
        );
        names.push(more);
      }
      const page = async (offset?: number) => {
        const ex = await ctx.call('GET', '/v1/batches', { query: { project, limit: 2, ...(offset !== undefined ? { offset } : {}) } });
        expectStatus(ex, 200, `listing the batches of the project with limit=2${offset !== undefined ? ` offset=${offset}` : ''}`);
        expectThat(Array.isArray(ex.body?.docs), 'GET /v1/batches answered 200 without a docs array', ex.body);
        return ex.body;
      };
      const first = await page();
      expectThat(
        first.docs.length === 2 && first.has_more === true && first.total === 3 && first.limit === 2 && first.offset === 0,
        `limit=2 over 3 batches: expected 2 docs, has_more true, total 3, limit 2, offset 0; got ${first.docs.length}, ${first.has_more}, ${first.total}, ${first.limit}, ${first.offset}`,
        first,
      );
      const second = await page(2);
      expectThat(
        second.docs.length === 1 && second.has_more === false && second.total === 3 && second.offset === 2,
        `offset=2 limit=2 over 3 batches: expected 1 doc, has_more false, total 3, offset 2; got ${second.docs.length}, ${second.has_more}, ${second.total}, ${second.offset}`,
        second,
      );
      const walked = [...first.docs, ...second.docs].map((b: { name: string }) => b.name);
      expectThat(
        new Set(walked).size === 3 && names.every((n) => walked.includes(n)),
        `the two pages together should list each of the 3 batches once: expected ${JSON.stringify(names)}, got ${JSON.stringify(walked)}`,
      );
    },
  },
  {
    id: 'batches/join-other-project-400',
    area,
    seed: '2.7 Batch (tasks join by name); decision: the project is taken from the batch and must match when given',
    rule: 'A task naming a batch and a project the batch does not belong to answers 400 and is not created.',
    kind: 'behaviour',
    async run(ctx) {
      const { project: ownProject, name } = await projectAndBatch(ctx);
      const { project: otherProject } = await projectAndBatch(ctx);
      const tag = ctx.unique('join');
      const ex = await postTask(ctx, 'categorization', { ...batchTask(name, 'In the wrong project.'), project: otherProject, tags: [tag] });
      expectError(ex, 400, `a task naming batch ${name} (of project ${ownProject}) and project ${otherProject}`);
      const created = [
        ...idsOf((await listTasks(ctx, { tags: tag })).docs),
        ...idsOf((await listTasks(ctx, { batch: name })).docs),
        ...idsOf((await listTasks(ctx, { project: otherProject })).docs),
      ];
      expectThat(created.length === 0, `no task should be created, found ${JSON.stringify(created)}`);
      // The same task naming the batch's own project joins it: the 400 was for the mismatch.
      const joined = await createTask(ctx, 'categorization', { ...batchTask(name, 'In the right project.'), project: ownProject });
      expectThat(
        joined.batch === name && joined.project === ownProject,
        'a task naming the batch and its own project should join the batch',
        joined,
      );
    },
  },
  {
    id: 'batches/callback-echoed',
    area,
    seed: '2.7 Batch (callback); decision: absent when none was given',
    rule: 'A batch shows the callback it was created with, on creation and on reading; a batch created without one has no callback field.',
    kind: 'behaviour',
    async run(ctx) {
      const callback = 'https://example.com/conformance/batch-callback';
      const { name, batch } = await projectAndBatch(ctx, { callback });
      expectThat(batch.callback === callback, `the created batch should show callback ${callback}`, batch);
      const read = await ctx.call('GET', `/v1/batches/${encodeURIComponent(name)}`);
      expectStatus(read, 200, 'reading the batch');
      expectThat(read.body?.callback === callback, `the batch should read with callback ${callback}`, read.body);
      const { batch: plain } = await projectAndBatch(ctx);
      expectThat(!('callback' in plain), 'a batch created without a callback should have no callback field', plain);
    },
  },
  {
    id: 'batches/flags',
    area,
    seed: '2.7 Batch (calibration_batch, self_label_batch: Rapid projects only, not both)',
    rule: 'In a Rapid project a batch can be a calibration batch or a self-label batch (shown as such, the other flag false), not both (400); in another project either flag answers 400; a plain batch shows both false.',
    kind: 'behaviour',
    async run(ctx) {
      const { project: rapid, batch: production } = await projectAndBatch(ctx, { rapid: true });
      expectThat(
        production.calibration_batch === false && production.self_label_batch === false,
        'a plain batch of a Rapid project should show calibration_batch and self_label_batch false',
        production,
      );
      expectThat(
        production.status === 'staging',
        `a batch of a Rapid project should start in staging, got ${production.status}`,
        production,
      );
      const create = (project: string, flags: Record<string, boolean>) =>
        ctx.call('POST', '/v1/batches', { json: { project, name: ctx.unique('batch'), ...flags } });
      const calibration = await create(rapid, { calibration_batch: true });
      expectStatus(calibration, 200, 'creating a calibration batch in a Rapid project');
      expectThat(
        calibration.body?.calibration_batch === true && calibration.body?.self_label_batch === false,
        'a calibration batch should show calibration_batch true and self_label_batch false',
        calibration.body,
      );
      const selfLabel = await create(rapid, { self_label_batch: true });
      expectStatus(selfLabel, 200, 'creating a self-label batch in a Rapid project');
      expectThat(
        selfLabel.body?.self_label_batch === true && selfLabel.body?.calibration_batch === false,
        'a self-label batch should show self_label_batch true and calibration_batch false',
        selfLabel.body,
      );
      expectError(
        await create(rapid, { calibration_batch: true, self_label_batch: true }),
        400,
        'a batch that is both a calibration and a self-label batch',
      );
      const { project: plain } = await projectAndBatch(ctx);
      expectError(await create(plain, { calibration_batch: true }), 400, 'a calibration batch in a project that is not Rapid');
      expectError(await create(plain, { self_label_batch: true }), 400, 'a self-label batch in a project that is not Rapid');
    },
  },
  {
    id: 'batches/rapid-calibration-first',
    area,
    seed: '2.7 Batch (calibration batches check readiness before production batches); 3.2 Batch status > Rapid',
    rule: 'A production batch of a Rapid project cannot be finalized (400) until a calibration batch of the project has completed; a staging batch whose tasks are done stays staging until finalized, then completes; finalizing a completed batch changes nothing.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name: production } = await projectAndBatch(ctx, { rapid: true });
      expectError(await finalize(ctx, production), 400, 'finalizing a production batch before any calibration batch completed');
      const { name: calibration } = await batchIn(ctx, project, { calibration: true });
      const task = await createTask(ctx, 'categorization', batchTask(calibration, 'Calibrate.'));
      await ctx.until('the calibration task to complete (test mode)', async () => {
        const t = await ctx.call('GET', `/v1/task/${task.task_id}`);
        return t.body?.status === 'completed';
      });
      const staged = await counts(ctx, calibration);
      expectThat(
        staged.status === 'staging' && staged.completed === 1,
        `a staging batch whose only task completed should stay staging (counting it), got ${JSON.stringify(staged)}`,
      );
      expectError(await finalize(ctx, production), 400, 'finalizing a production batch while the calibration batch is still staging');
      const fin = await finalize(ctx, calibration);
      expectStatus(fin, 200, 'finalizing the calibration batch');
      const done = await ctx.until('the finalized calibration batch to complete (its only task is done)', async () => {
        const b = await ctx.call('GET', `/v1/batches/${encodeURIComponent(calibration)}`);
        return b.body?.status === 'completed' ? b.body : undefined;
      });
      const again = await finalize(ctx, calibration);
      expectStatus(again, 200, 'finalizing a completed batch');
      expectThat(
        again.body?.status === 'completed' && again.body?.completed_at === done.completed_at,
        `finalizing a completed batch should change nothing: expected completed at ${done.completed_at}, got ${again.body?.status} at ${again.body?.completed_at}`,
        again.body,
      );
      const ready = await finalize(ctx, production);
      expectStatus(ready, 200, 'finalizing the production batch once a calibration batch completed');
      expectThat(
        ready.body?.status === 'in_progress',
        `the finalized production batch should be in_progress, got ${ready.body?.status}`,
        ready.body,
      );
    },
  },
  {
    id: 'batches/list-filters',
    area,
    seed: '2.7 Batch; decision: GET /v1/batches filters project, status, start_time and end_time (created_at bounds, inclusive)',
    rule: 'GET /v1/batches keeps the batches of the project, of the status and created within start_time and end_time (inclusive), and no other; a date that does not exist is a 400 naming its filter.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name, batch } = await projectAndBatch(ctx);
      const names = async (query: Record<string, string>) => {
        const ex = await ctx.call('GET', '/v1/batches', { query: { project, ...query } });
        expectStatus(ex, 200, `GET /v1/batches ${JSON.stringify(query)}`);
        return (ex.body?.docs ?? []).map((b: { name: string }) => b.name);
      };
      const created = Date.parse(batch.created_at);
      const iso = (ms: number) => new Date(ms).toISOString();
      const cases: [Record<string, string>, string[]][] = [
        [{}, [name]],
        [{ status: 'in_progress' }, [name]],
        [{ status: 'completed' }, []],
        [{ start_time: iso(created), end_time: iso(created) }, [name]],
        [{ end_time: iso(created - 1) }, []],
        [{ start_time: iso(created + 1) }, []],
      ];
      for (const [query, expected] of cases) {
        const got = await names(query);
        expectThat(
          isDeepStrictEqual(got, expected),
          `GET /v1/batches?project=…&${new URLSearchParams(query)} should list ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`,
        );
      }
      for (const filter of ['start_time', 'end_time']) {
        const bad = await ctx.call('GET', '/v1/batches', { query: { [filter]: '2026-02-30' } });
        expectError(bad, 400, `${filter}=2026-02-30 (no such day)`);
        expectThat(
          String(bad.body?.error).includes(filter),
          `the 400 for ${filter}=2026-02-30 should name ${filter}, got ${JSON.stringify(bad.body?.error)}`,
        );
      }
    },
  },
];
