// What clients of the real service send, second round (our decisions of issue 32, stated in the
// contract): batches filtered by completion and last-audit time; projects archived like batches;
// every list filter in both list forms (repeated keys and comma-joined values); a type alias
// wherever a type is given; an unknown creation type answered 404 with the generation's types; no
// accepted creation field silently dropped (a video's pre-labels kept, a name the API documents
// and the creation does not take refused, a name nobody documents accepted and ignored);
// parameters in the order the customer sent them, on reads and in callbacks.
import { isDeepStrictEqual } from 'node:util';
import { loadContract } from '../contract.ts';
import { expectStatus, expectThat, type Check, type CheckContext, type Exchange } from '../types.ts';
import { projectAndBatch } from './batches.ts';
import { SINK, categorization, createTask, expectError, idsOf, listTasks, postTask, readTask, sameMembers } from './helpers.ts';

const seed = 'decision beyond the API description: what clients of the real service send (issue 32)';

/** GET `path?rawQuery` with the query written as is (repeated keys, raw commas). */
const rawGet = (ctx: CheckContext, path: string, rawQuery: string) => ctx.call('GET', `${path}?${rawQuery}`);

/** The names of the batches of a raw query, insisting on 200. */
async function batchNames(ctx: CheckContext, rawQuery: string): Promise<string[]> {
  const ex = await rawGet(ctx, '/v1/batches', rawQuery);
  expectStatus(ex, 200, `GET /v1/batches?${rawQuery}`);
  return (ex.body?.docs ?? []).map((b: { name: string }) => b.name);
}

/** The ids a raw task-list query gives, insisting on 200. */
async function taskIds(ctx: CheckContext, rawQuery: string): Promise<string[]> {
  const ex = await rawGet(ctx, '/v1/tasks', rawQuery);
  expectStatus(ex, 200, `GET /v1/tasks?${rawQuery}`);
  return idsOf(ex.body?.docs ?? []);
}

/** Every object's keys, depth first, as the JSON text lists them (the order is what is compared). */
function keyOrder(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyOrder(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keyOrder(v, `${path}.${k}`)]);
  return [];
}

const q = encodeURIComponent;

export const clientEdgeChecks: Check[] = [
  {
    id: 'batches/completed-audited-filters',
    area: 'Batches',
    seed,
    rule: 'GET /v1/batches takes completed_after/completed_before (bounds of completed_at) and audited_after/audited_before (bounds of audited_at, when a task of the batch was last audited; shown on the batch), inclusive; a batch without that time never matches.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name: done } = await projectAndBatch(ctx);
      const task = await createTask(ctx, 'categorization', { callback_url: SINK, batch: done, attachment: 'Done.' });
      const open = ctx.unique('open');
      expectStatus(await ctx.call('POST', '/v1/batches', { json: { project, name: open } }), 200, 'creating a batch without tasks');
      const completed = await ctx.until('the batch to complete with its test-mode task', async () => {
        const b = await ctx.call('GET', `/v1/batches/${q(done)}`);
        return b.body?.status === 'completed' ? b.body : undefined;
      });
      expectThat(completed.audited_at === undefined, 'a batch none of whose tasks was audited should have no audited_at', completed);
      const audit = await ctx.call('POST', `/v1/task/${task.task_id}/audit`, { json: { accepted: true } });
      expectStatus(audit, 200, 'auditing the task of the batch');
      const auditedAt = audit.body?.audits?.at(-1)?.audited_at;
      const read = (await ctx.call('GET', `/v1/batches/${q(done)}`)).body;
      expectThat(read?.audited_at === auditedAt, `the batch's audited_at should be its task's audit time ${auditedAt}`, read);
      const later = (iso: string) => new Date(Date.parse(iso) + 1).toISOString();
      const cases: [string, string[]][] = [
        [`completed_after=${q(completed.completed_at)}`, [done]],
        [`completed_before=${q(completed.completed_at)}`, [done]],
        [`completed_after=${q(later(completed.completed_at))}`, []],
        [`audited_after=${q(auditedAt)}`, [done]],
        [`audited_before=${q(auditedAt)}`, [done]],
        [`audited_after=${q(later(auditedAt))}`, []],
        ['audited_after=0001-01-01', [done]],
      ];
      for (const [query, expected] of cases) {
        const got = await batchNames(ctx, `project=${q(project)}&${query}`);
        expectThat(
          isDeepStrictEqual(got, expected),
          `GET /v1/batches?${query} should list ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`,
        );
      }
    },
  },
  {
    id: 'projects/archive',
    area: 'Projects',
    seed,
    rule: 'A project can be archived and unarchived (archived on the project, as on a batch; again: 200 unchanged); GET /v1/projects?archived=true|false lists only archived or only other projects; an archived project takes no new task or batch (400); an unknown project is 404.',
    kind: 'behaviour',
    async run(ctx) {
      const { project, name: batch } = await projectAndBatch(ctx);
      const other = (await projectAndBatch(ctx)).project;
      const path = `/v1/projects/${q(project)}`;
      expectThat((await ctx.call('GET', path)).body?.archived === false, 'a new project should show archived: false');
      for (const attempt of ['archive', 'repeated archive']) {
        const ex = await ctx.call('POST', `${path}/archive`);
        expectStatus(ex, 200, attempt);
        expectThat(
          ex.body?.name === project && ex.body?.archived === true,
          `${attempt} should answer the project with archived: true`,
          ex.body,
        );
      }
      const names = async (query: string) => {
        const ex = await rawGet(ctx, '/v1/projects', query);
        expectStatus(ex, 200, `GET /v1/projects?${query}`);
        return (ex.body ?? []).map((p: { name: string }) => p.name) as string[];
      };
      const archived = await names('archived=true');
      expectThat(
        archived.includes(project) && !archived.includes(other),
        'archived=true should list the archived project and not the other',
      );
      const kept = await names('archived=false');
      expectThat(!kept.includes(project) && kept.includes(other), 'archived=false should list the other project and not the archived one');
      expectError(await postTask(ctx, 'categorization', categorization({ project })), 400, 'a task naming an archived project');
      expectError(
        await postTask(ctx, 'categorization', { callback_url: SINK, batch, attachment: 'x' }),
        400,
        'a task joining a batch of an archived project',
      );
      expectError(
        await ctx.call('POST', '/v1/batches', { json: { project, name: ctx.unique('batch') } }),
        400,
        'a batch in an archived project',
      );
      const back = await ctx.call('POST', `${path}/unarchive`);
      expectStatus(back, 200, 'unarchive');
      expectThat(back.body?.archived === false, 'unarchive should answer the project with archived: false', back.body);
      await createTask(ctx, 'categorization', categorization({ project }));
      expectError(await ctx.call('POST', `/v1/projects/${q(ctx.unique('no-such-project'))}/archive`), 404, 'archiving an unknown project');
    },
  },
  {
    id: 'lists/list-forms',
    area: 'Lists',
    seed,
    rule: 'Every list filter takes several values as repeated keys (unique_id=u1&unique_id=u2) and comma-joined (customer_review_status=accepted,fixed), the forms mixed: a task (a batch) matches any of the values; an unknown value among them is 400.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('forms');
      const [u1, u2, u3] = [ctx.unique('u1'), ctx.unique('u2'), ctx.unique('u3')];
      const made = [];
      for (const uid of [u1, u2, u3]) made.push(await createTask(ctx, 'categorization', categorization({ tags: [tag], unique_id: uid })));
      const [a, b, c] = made;
      expectStatus(await ctx.call('POST', `/v1/task/${a.task_id}/audit`, { json: { accepted: true } }), 200, 'accepting the first task');
      // Rejected in test mode: redone at once, `fixed`.
      expectStatus(await ctx.call('POST', `/v1/task/${b.task_id}/audit`, { json: { accepted: false } }), 200, 'rejecting the second task');
      const cases: [string, string[]][] = [
        [`unique_id=${q(u1)}&unique_id=${q(u2)}`, [a.task_id, b.task_id]],
        [`unique_id=${q(u1)},${q(u2)}`, [a.task_id, b.task_id]],
        [`unique_id=${q(`${u1},${u3}`)}`, [a.task_id, c.task_id]],
        [`unique_id=${q(u1)},${q(u2)}&unique_id=${q(u3)}`, [a.task_id, b.task_id, c.task_id]],
        [`tags=${q(tag)}&customer_review_status=accepted,fixed`, [a.task_id, b.task_id]],
        [`tags=${q(tag)}&customer_review_status=accepted&customer_review_status=fixed`, [a.task_id, b.task_id]],
        [`tags=${q(tag)}&status=completed,canceled`, [a.task_id, b.task_id, c.task_id]],
        [`tags=${q(tag)}&type=categorization,annotation`, [a.task_id, b.task_id, c.task_id]],
      ];
      for (const [query, expected] of cases) {
        const got = await taskIds(ctx, query);
        expectThat(
          sameMembers(got, expected),
          `GET /v1/tasks?${query} should list ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`,
        );
      }
      for (const query of [`tags=${q(tag)}&customer_review_status=accepted,bogus`, `tags=${q(tag)}&status=completed,finished`]) {
        expectError(await rawGet(ctx, '/v1/tasks', query), 400, `GET /v1/tasks?${query} (an unknown value in a list)`);
      }
      const { project: p1, name: b1 } = await projectAndBatch(ctx);
      const { project: p2, name: b2 } = await projectAndBatch(ctx);
      for (const query of [`project=${q(p1)},${q(p2)}`, `project=${q(p1)}&project=${q(p2)}`]) {
        const got = await batchNames(ctx, query);
        expectThat(
          sameMembers(got, [b1, b2]),
          `GET /v1/batches?${query} should list ${JSON.stringify([b1, b2])}, got ${JSON.stringify(got)}`,
        );
      }
      const both = await batchNames(ctx, `project=${q(p1)},${q(p2)}&status=in_progress,staging`);
      expectThat(sameMembers(both, [b1, b2]), `status=in_progress,staging should keep both new batches, got ${JSON.stringify(both)}`);
    },
  },
  {
    id: 'lists/type-alias',
    area: 'Lists',
    seed,
    rule: 'A type alias names its type wherever a type is given: type=segmentannoation (or documentranscription) lists the tasks of that type, a project of type segmentannoation is a segmentannotation project, POST /v1/task/segmentannoation creates one.',
    kind: 'behaviour',
    async run(ctx) {
      const tag = ctx.unique('alias');
      const body = { callback_url: SINK, attachment: 'https://example.com/conformance/street.jpg', labels: ['road', 'sky'], tags: [tag] };
      const canonical = await createTask(ctx, 'segmentannotation', body);
      const aliased = await createTask(ctx, 'segmentannoation', body);
      expectThat(aliased.type === 'segmentannotation', 'POST /v1/task/segmentannoation should create a segmentannotation task', aliased);
      for (const type of ['segmentannoation', 'segmentannoation,documentranscription', 'segmentannotation']) {
        const got = idsOf((await listTasks(ctx, { tags: tag, type: type.split(',') })).docs);
        expectThat(
          sameMembers(got, [canonical.task_id, aliased.task_id]),
          `type=${type} should list both segmentation tasks, got ${JSON.stringify(got)}`,
        );
      }
      const name = ctx.unique('alias-project');
      const project = await ctx.call('POST', '/v1/projects', { json: { type: 'segmentannoation', name } });
      expectStatus(project, 200, 'a project of type segmentannoation');
      expectThat(project.body?.type === 'segmentannotation', 'the project should show its type, segmentannotation', project.body);
    },
  },
  {
    id: 'creation/unknown-type-404',
    area: 'Task creation',
    seed,
    rule: "POST /v1/task/<type> with a type the generation does not create (videoannotation, bogustype; on the older generation a type only the current one creates) answers 404 naming it and listing the generation's types, not 405.",
    kind: 'behaviour',
    async run(ctx) {
      const contract = loadContract(ctx.generation);
      const types = new Set(
        contract.operations.flatMap((op) => {
          const m = op.method === 'post' ? /^\/v1\/task\/([a-z]+)$/.exec(op.path) : null;
          return m ? [m[1]!] : [];
        }),
      );
      const unknown = ['videoannotation', 'bogustype', ...(ctx.generation === 'legacy' ? ['imageannotation', 'lidarsegmentation'] : [])];
      for (const name of unknown.filter((n) => !types.has(n))) {
        const ex: Exchange = await postTask(ctx, name, categorization());
        expectError(ex, 404, `POST /v1/task/${name} (no such type in this generation)`);
        const error = String(ex.body?.error);
        expectThat(error.includes(name), `the 404 should name "${name}", got ${JSON.stringify(error)}`);
        const missing = [...types].filter((t) => t !== 'documentranscription' && t !== 'segmentannoation' && !error.includes(t));
        expectThat(missing.length === 0, `the 404 should list the types of this generation; it leaves out ${missing.join(', ')}`, error);
      }
    },
  },
  {
    id: 'creation/nothing-dropped',
    area: 'Task creation',
    seed,
    rule: "No accepted creation field is silently dropped: a name the API documents and the creation does not take (the unsupported priority and padding_x, another type's objects_to_annotate) is refused with 400 naming it (one sent as null counts as not given); a name nobody documents (x_client_trace) is accepted and kept out of params; a video's pre-labels (hypothesis) are kept on the task.",
    kind: 'behaviour',
    async run(ctx) {
      for (const extra of [{ priority: 30 }, { padding_x: 4 }, { objects_to_annotate: ['car'] }]) {
        const [name] = Object.keys(extra);
        const ex = await postTask(ctx, 'categorization', categorization(extra));
        expectError(ex, 400, `a creation with ${name}, which categorization does not take`);
        expectThat(String(ex.body?.error).includes(name!), `the 400 should name ${name}, got ${JSON.stringify(ex.body?.error)}`);
      }
      const own = await createTask(ctx, 'categorization', categorization({ x_client_trace: 'trace-1' }));
      expectThat(
        !JSON.stringify(await readTask(ctx, own.task_id)).includes('x_client_trace'),
        "a name nobody documents (x_client_trace) should be ignored, not kept in the task's params",
        own.params,
      );
      await createTask(ctx, 'categorization', categorization({ priority: null }));
      if (ctx.generation !== 'current') return;
      const hypothesis = {
        annotations: [
          {
            uuid: '5d6e7f80-9a1b-4c2d-8e3f-405162738495',
            type: 'box',
            label: 'car',
            frames: [
              { frame: 0, left: 10, top: 10, width: 40, height: 20 },
              { frame: 1, left: 12, top: 10, width: 40, height: 20 },
            ],
          },
        ],
        events: [{ label: 'lane change', start: 0, end: 1 }],
      };
      const video = {
        callback_url: SINK,
        attachments: ['https://example.com/conformance/f0.jpg', 'https://example.com/conformance/f1.jpg'],
        geometries: { box: { objects_to_annotate: ['car'] } },
        events_to_annotate: ['lane change'],
        hypothesis,
      };
      const task = await createTask(ctx, 'videoplaybackannotation', video);
      const read = await readTask(ctx, task.task_id);
      expectThat(
        isDeepStrictEqual(read.params?.hypothesis, hypothesis),
        'the video task should keep its hypothesis (pre-labels)',
        read.params,
      );
      for (const name of ['base_annotations', 'links', 'padding']) {
        const ex = await postTask(ctx, 'videoplaybackannotation', { ...video, [name]: {} });
        expectError(ex, 400, `a video creation with ${name}, which this service does not take`);
        expectThat(String(ex.body?.error).includes(name), `the 400 should name ${name}, got ${JSON.stringify(ex.body?.error)}`);
      }
    },
  },
  {
    id: 'tasks/param-order',
    area: 'Task states',
    seed,
    rule: 'A task shows its params and metadata with object keys in the order the customer sent them, on reads, in the task list and in its callback.',
    kind: 'behaviour',
    needs: ['callback'],
    async run(ctx) {
      const receiver = await ctx.receiver();
      const label = ctx.unique('order');
      const params = {
        objects_to_annotate: ['truck', 'car'],
        attachment: 'https://example.com/conformance/street.jpg',
        with_labels: true,
        min_height: 4,
        annotation_attributes: {
          zone: { description: 'Where?', choices: ['road', 'kerb'] },
          a: { description: 'Moving?', choices: ['yes', 'no'] },
        },
        attachment_type: 'image',
      };
      const metadata = { zz_sorted_last: 1, a: { y: 2, b: 3 } };
      const tag = ctx.unique('order');
      const created = await createTask(ctx, 'annotation', { callback_url: receiver.url(label), ...params, metadata, tags: [tag] });
      const wanted = keyOrder(params);
      const read = await readTask(ctx, created.task_id);
      expectThat(
        isDeepStrictEqual(keyOrder(read.params), wanted),
        'GET /v1/task: params should keep the order sent',
        keyOrder(read.params),
      );
      expectThat(
        isDeepStrictEqual(keyOrder(read.metadata), keyOrder(metadata)),
        'GET /v1/task: metadata should keep the order sent',
        read.metadata,
      );
      const listed = (await listTasks(ctx, { tags: tag })).docs[0];
      expectThat(isDeepStrictEqual(keyOrder(listed?.params), wanted), 'GET /v1/tasks: params should keep the order sent', listed?.params);
      const callback = await ctx.until('the callback of the task', async () => receiver.received(label)[0]);
      expectThat(
        isDeepStrictEqual(keyOrder(callback.body?.task?.params), wanted),
        'the callback: task.params should keep the order sent',
        callback.body?.task?.params,
      );
    },
  },
];
