// Seed 2.5 (projects: versioned parameters, the merge rule), 2.6 (ontologies) and 9 (versioning).
import { isDeepStrictEqual } from 'node:util';
import { expectStatus, expectThat, type Check, type CheckContext } from '../types.ts';
import { SINK, createTask, expectError, postTask, readTask } from './helpers.ts';

const area = 'Projects';

interface Versioned {
  version: number;
  [k: string]: unknown;
}

async function createProject(ctx: CheckContext, body: Record<string, unknown>): Promise<any> {
  const ex = await ctx.call('POST', '/v1/projects', { json: body });
  expectStatus(ex, 200, `creating project ${String(body.name)}`);
  return ex.body;
}

async function setParams(ctx: CheckContext, name: string, body: Record<string, unknown>): Promise<any> {
  const ex = await ctx.call('POST', `/v1/projects/${encodeURIComponent(name)}/setParams`, { json: body });
  expectStatus(ex, 200, `setParams on project ${name}`);
  return ex.body;
}

/** The project with three parameter versions: v0 as created, v1 replaced, v2 patched over v1. */
async function versionedProject(ctx: CheckContext) {
  const name = ctx.unique('proj');
  await createProject(ctx, {
    type: 'categorization',
    name,
    params: { attachment_type: 'text', categories: ['a', 'b'], instruction: 'Project text v0.' },
  });
  await setParams(ctx, name, { categories: ['x', 'y'] });
  const project = await setParams(ctx, name, { patch: true, attachment_type: 'text', instruction: 'Project text.' });
  return { name, project };
}

const paramsOf = (v: Versioned | undefined) => {
  if (!v) return undefined;
  const { version: _v, created_at: _c, ...params } = v;
  return params;
};

export const projectChecks: Check[] = [
  {
    id: 'projects/param-versions',
    area,
    seed: '2.5 Project (versioned parameters, paramHistory); 9 Versioning',
    rule: 'Each setParams adds a parameter version (0, 1, 2, ...) kept in paramHistory: without patch it replaces the parameters, with patch: true it merges into the latest.',
    kind: 'behaviour',
    async run(ctx) {
      const { name, project } = await versionedProject(ctx);
      const read = await ctx.call('GET', `/v1/projects/${encodeURIComponent(name)}`);
      expectStatus(read, 200, 'reading the project');
      for (const body of [project, read.body]) {
        const history: Versioned[] = body?.paramHistory ?? [];
        expectThat(
          isDeepStrictEqual(
            history.map((v) => v.version),
            [0, 1, 2],
          ),
          `paramHistory should hold versions [0, 1, 2], got ${JSON.stringify(history.map((v) => v.version))}`,
          history,
        );
        expectThat(
          isDeepStrictEqual(paramsOf(history[0]), { attachment_type: 'text', categories: ['a', 'b'], instruction: 'Project text v0.' }),
          'version 0 should hold the parameters given at creation',
          history[0],
        );
        expectThat(
          isDeepStrictEqual(paramsOf(history[1]), { categories: ['x', 'y'] }),
          'version 1 (setParams without patch) should hold exactly the new parameters',
          history[1],
        );
        expectThat(
          isDeepStrictEqual(paramsOf(history[2]), { attachment_type: 'text', categories: ['x', 'y'], instruction: 'Project text.' }),
          'version 2 (setParams with patch: true) should be version 1 with the new keys merged over it',
          history[2],
        );
      }
      const listed = await ctx.call('GET', '/v1/projects');
      expectStatus(listed, 200, 'listing projects');
      expectThat(
        Array.isArray(listed.body) && listed.body.some((p: { name: string }) => p.name === name),
        'GET /v1/projects should list the project',
        listed.body,
      );
    },
  },
  {
    id: 'projects/params-checked',
    area,
    seed: '2.5 Project (versioned parameters); the contract: parameters checked against the type, none required',
    rule: "A project's parameters are checked against its type's parameter schema (none required): a bad value in createProject's params or in setParams is a 400 naming it, and stores no project and no version.",
    kind: 'behaviour',
    async run(ctx) {
      const name = ctx.unique('proj');
      const refused = await ctx.call('POST', '/v1/projects', { json: { type: 'categorization', name, params: { categories: 'stop' } } });
      expectError(refused, 400, 'a project created with categories "stop" (not an array)');
      expectThat(refused.body?.error?.includes('categories'), 'the refusal should name categories', refused.body);
      expectStatus(await ctx.call('GET', `/v1/projects/${encodeURIComponent(name)}`), 404, 'reading the refused project');
      await createProject(ctx, { type: 'categorization', name, params: { instruction: 'Pick one.' } });
      const bad = await ctx.call('POST', `/v1/projects/${encodeURIComponent(name)}/setParams`, { json: { categories: 'stop' } });
      expectError(bad, 400, 'setParams with categories "stop" (not an array)');
      expectThat(bad.body?.error?.includes('categories'), 'the refusal should name categories', bad.body);
      const read = await ctx.call('GET', `/v1/projects/${encodeURIComponent(name)}`);
      expectStatus(read, 200, 'reading the project');
      expectThat(read.body?.paramHistory?.length === 1, 'a refused setParams should add no version', read.body?.paramHistory);
    },
  },
  {
    id: 'projects/merge-latest',
    area,
    seed: '2.5 Project > merge rule (latest version; task parameters override; instruction concatenated)',
    rule: 'A task of a project uses the latest parameter version, records it in project_param_version, its own parameters override the project ones, and instruction is project text then task text.',
    kind: 'behaviour',
    async run(ctx) {
      const { name } = await versionedProject(ctx);
      const only = await createTask(ctx, 'categorization', { callback_url: SINK, project: name, attachment: 'Only the attachment.' });
      expectThat(
        only.project_param_version === 2,
        `a project-only task should use the latest version (2), got ${JSON.stringify(only.project_param_version)}`,
        only,
      );
      expectThat(
        isDeepStrictEqual(only.params?.categories, ['x', 'y']) &&
          only.params?.attachment_type === 'text' &&
          only.params?.attachment === 'Only the attachment.',
        'a project-only task should take its parameters from the latest version',
        only.params,
      );
      expectThat(
        only.instruction === 'Project text.',
        `a task without instruction should get the project instruction, got ${JSON.stringify(only.instruction)}`,
      );
      const hybrid = await createTask(ctx, 'categorization', {
        callback_url: SINK,
        project: name,
        attachment: 'Hybrid.',
        categories: ['mine'],
        instruction: 'Task text.',
      });
      expectThat(isDeepStrictEqual(hybrid.params?.categories, ['mine']), 'task parameters should override project ones', hybrid.params);
      const instruction = String(hybrid.instruction ?? '');
      expectThat(
        instruction.includes('Project text.') &&
          instruction.includes('Task text.') &&
          instruction.indexOf('Project text.') < instruction.indexOf('Task text.'),
        `instruction should be the project text followed by the task text, got ${JSON.stringify(hybrid.instruction)}`,
      );
      const stored = await readTask(ctx, hybrid.task_id);
      expectThat(
        isDeepStrictEqual(stored.params?.categories, ['mine']) && stored.project_param_version === 2,
        'the stored task should keep the merged parameters and version',
        stored,
      );
    },
  },
  {
    id: 'projects/pinned-version',
    area,
    seed: '2.5 Project > merge rule; 9 Versioning (project_param_version selects an earlier version)',
    rule: 'A task giving project_param_version uses that version; an unknown version answers 400.',
    kind: 'behaviour',
    async run(ctx) {
      const { name } = await versionedProject(ctx);
      const pinned = await createTask(ctx, 'categorization', {
        callback_url: SINK,
        project: name,
        project_param_version: 0,
        attachment: 'Pinned.',
      });
      expectThat(
        pinned.project_param_version === 0,
        `project_param_version 0 should be recorded, got ${JSON.stringify(pinned.project_param_version)}`,
        pinned,
      );
      expectThat(
        isDeepStrictEqual(pinned.params?.categories, ['a', 'b']),
        'a task pinned to version 0 should take version 0 parameters',
        pinned.params,
      );
      expectThat(
        pinned.instruction === 'Project text v0.',
        'a task pinned to version 0 should get version 0 instruction',
        pinned.instruction,
      );
      const unknown = await postTask(ctx, 'categorization', {
        callback_url: SINK,
        project: name,
        project_param_version: 9,
        attachment: 'x',
      });
      expectError(unknown, 400, 'project_param_version 9 of a project with versions 0 to 2');
    },
  },
  {
    id: 'projects/no-version-null',
    area,
    seed: '2.1 Task > project_param_version (null if the project has no version)',
    rule: 'A task of a project without parameter versions records project_param_version null.',
    kind: 'behaviour',
    async run(ctx) {
      const name = ctx.unique('proj');
      await createProject(ctx, { type: 'categorization', name });
      const task = await createTask(ctx, 'categorization', {
        callback_url: SINK,
        project: name,
        instruction: 'Pick one.',
        attachment_type: 'text',
        attachment: 'Versionless.',
        categories: ['a', 'b'],
      });
      expectThat(
        task.project_param_version === null,
        `project_param_version should be null, got ${JSON.stringify(task.project_param_version)}`,
        task,
      );
    },
  },
  {
    id: 'projects/merge-still-required',
    area,
    seed: '2.5 Project (a task takes parameters from its project; the merged parameters must be complete)',
    rule: 'With a project, a required parameter (categories) may come from the request or the project; when neither gives it, the creation is a 400 naming it, and no task is stored.',
    kind: 'behaviour',
    async run(ctx) {
      const name = ctx.unique('proj');
      await createProject(ctx, { type: 'categorization', name, params: { attachment_type: 'text', instruction: 'Project text.' } });
      const tag = ctx.unique('merge');
      const body = { callback_url: SINK, project: name, attachment: 'Which one?', tags: [tag] };
      const task = await createTask(ctx, 'categorization', { ...body, categories: ['a', 'b'] });
      expectThat(
        isDeepStrictEqual(task.params?.categories, ['a', 'b']) && task.instruction === 'Project text.',
        "the task should merge the request's categories with the project's instruction",
        task,
      );
      const missing = await postTask(ctx, 'categorization', body);
      expectError(missing, 400, 'a categorization whose request and project both lack categories');
      expectThat(
        String(missing.body?.error).includes('categories'),
        `the 400 should name categories, got ${JSON.stringify(missing.body?.error)}`,
      );
      const stored = await ctx.call('GET', '/v1/tasks', { query: { tags: tag } });
      expectStatus(stored, 200, 'listing the tagged tasks');
      expectThat(
        stored.body?.total === 1,
        `only the complete creation should be stored, the list counts ${stored.body?.total}`,
        stored.body?.docs,
      );
    },
  },
  {
    id: 'projects/names',
    area,
    seed: '2.5 Project (a task joins a project by its name); decision: names unique, 404 for unknown, type must match',
    rule: 'A project name is unique (409 for a duplicate), an unknown project answers 404, and a task of another type than its project answers 400.',
    kind: 'behaviour',
    async run(ctx) {
      const name = ctx.unique('proj');
      await createProject(ctx, { type: 'categorization', name });
      expectError(
        await ctx.call('POST', '/v1/projects', { json: { type: 'categorization', name } }),
        409,
        'a second project with the same name',
      );
      expectError(await ctx.call('GET', `/v1/projects/${encodeURIComponent(ctx.unique('none'))}`), 404, 'an unknown project');
      const wrongType = await postTask(ctx, 'annotation', {
        callback_url: SINK,
        project: name,
        attachment: 'https://example.com/conformance/a.jpg',
        objects_to_annotate: ['car'],
      });
      expectError(wrongType, 400, 'an annotation task in a categorization project');
    },
  },
  {
    id: 'projects/ontology-versions',
    area,
    seed: '2.6 Ontology (versions are queryable; ontologyHistory)',
    rule: 'Each setOntology adds an ontology version (0, 1, ...) kept in ontologyHistory with its choices; a duplicate choice answers 400 and adds no version.',
    kind: 'behaviour',
    async run(ctx) {
      const name = ctx.unique('proj');
      await createProject(ctx, { type: 'categorization', name });
      const path = `/v1/projects/${encodeURIComponent(name)}/setOntology`;
      const ontologies = [
        ['car', 'truck'],
        ['car', { choice: 'vehicle', display: 'Vehicle', description: 'Anything with wheels.', subchoices: ['bus', 'tram'] }],
      ];
      for (const [i, ontology] of ontologies.entries()) {
        expectStatus(await ctx.call('POST', path, { json: { ontology, name: `v${i}` } }), 200, `setOntology #${i + 1}`);
      }
      expectError(await ctx.call('POST', path, { json: { ontology: ['car', 'car'] } }), 400, 'an ontology with a duplicate choice');
      expectError(
        await ctx.call('POST', path, {
          json: { ontology: ['car', { choice: 'vehicle', subchoices: ['bus', { choice: 'rail', subchoices: ['car'] }] }] },
        }),
        400,
        'an ontology whose choice "car" comes again two levels down',
      );
      const read = await ctx.call('GET', `/v1/projects/${encodeURIComponent(name)}`);
      expectStatus(read, 200, 'reading the project');
      const history: Array<Versioned & { ontology?: unknown; name?: string }> = read.body?.ontologyHistory ?? [];
      expectThat(
        isDeepStrictEqual(
          history.map((v) => v.version),
          [0, 1],
        ),
        `ontologyHistory should hold versions [0, 1], got ${JSON.stringify(history.map((v) => v.version))}`,
        history,
      );
      for (const [i, ontology] of ontologies.entries()) {
        expectThat(isDeepStrictEqual(history[i]?.ontology, ontology), `ontology version ${i} should be kept as given`, history[i]);
        expectThat(history[i]?.name === `v${i}`, `ontology version ${i} should keep its name v${i}`, history[i]);
      }
    },
  },
  {
    id: 'projects/list',
    area,
    seed: '2.5 Project (GET /v1/projects lists the projects, each with its own parameter history)',
    rule: 'GET /v1/projects lists every project of the account and mode, each with its own param_history and ontologyHistory only.',
    kind: 'behaviour',
    async run(ctx) {
      const names = [ctx.unique('proj'), ctx.unique('proj')];
      for (const [i, name] of names.entries()) {
        await createProject(ctx, {
          type: 'categorization',
          name,
          params: { attachment_type: 'text', categories: [`c${i}`], instruction: `Project ${i}.` },
        });
      }
      await setParams(ctx, names[1]!, { patch: true, instruction: 'Project 1, again.' });
      expectStatus(
        await ctx.call('POST', `/v1/projects/${encodeURIComponent(names[1]!)}/setOntology`, { json: { ontology: ['only-here'] } }),
        200,
        'setOntology',
      );
      const list = await ctx.call('GET', '/v1/projects');
      expectStatus(list, 200, 'GET /v1/projects');
      const listed: any[] = Array.isArray(list.body) ? list.body : (list.body?.docs ?? []);
      const [p0, p1] = names.map((n) => listed.find((p) => p?.name === n));
      expectThat(
        p0 && p1,
        `both new projects should be listed (${names.join(', ')})`,
        listed.map((p) => p?.name),
      );
      expectThat(
        p0.param_history?.length === 1 &&
          p1.param_history?.length === 2 &&
          p0.ontologyHistory?.length === 0 &&
          p1.ontologyHistory?.length === 1,
        `each listed project should carry only its own versions: expected 1 and 2 parameter versions, 0 and 1 ontology versions; got ${p0.param_history?.length} and ${p1.param_history?.length}, ${p0.ontologyHistory?.length} and ${p1.ontologyHistory?.length}`,
        { p0, p1 },
      );
    },
  },
];
