// Issue 32, item 6, with decision 2: no accepted field is silently dropped, and a client's own
// extras still pass. For every creation operation of both generations (tasks, training and
// evaluation tasks), every property its body schema declares is sent (the contract's request
// examples, with the common fields filled in) and read back: each is kept, in `params` or as a
// field of the task, except the one the contract says it does not show (`clear_unique_id_on_error`,
// whose effect is shown instead). Every name the API documents and this operation does not take
// (another creation's property, or one the contract lists in `x-unsupported-parameters`) is
// refused with 400 naming it and saying it is not supported (one sent as `null` counts as not
// given); a name nobody documents is accepted and ignored, kept out of `params`. Raw requests,
// PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, updateAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { loadContract, type Json } from '../../server/http/contract.ts';
import { trainingCreations } from '../../server/http/training.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

/** Common creation fields a task shows as fields of its own (the rest of a body is `params`). */
const taskFields = ['callback_url', 'instruction', 'metadata', 'unique_id', 'tags', 'project', 'batch', 'project_param_version', 'urgency'];
/** Accepted and kept, but not a field of the task: the contract says so (TaskCreateCommon); its effect is checked below. */
const notShown = new Set(['clear_unique_id_on_error']);

interface Creation {
  generation: 'current' | 'legacy';
  path: string;
  type: string;
  training: boolean;
  properties: string[];
  /** The contract's request examples, each a body that creates the task. */
  examples: Json[];
}

function creations(): Creation[] {
  const out: Creation[] = [];
  for (const generation of ['current', 'legacy'] as const) {
    const contract = loadContract(generation);
    const ops: [string, string, Json, boolean][] = [
      ...[...contract.creations].map(([p, op]): [string, string, Json, boolean] => [p, op.type, op.bodySchema, false]),
      ...[...trainingCreations(contract)].map(([p, op]): [string, string, Json, boolean] => [p, op.type, op.bodySchema, true]),
    ];
    for (const [path, type, schema, training] of ops) {
      const media = contract.doc.paths[path].post.requestBody.content['application/json'];
      out.push({
        generation,
        path,
        type,
        training,
        properties: [...contract.propertyNames(schema)],
        examples: Object.values<Json>(media.examples ?? {}).map((e) => contract.resolve(e)?.value as Json),
      });
    }
  }
  return out;
}

/**
 * Where a property no example of its operation gives comes from: another operation's example of the
 * same type, else the type's `<Type>Params` examples (whole objects: their parameters fit each other),
 * else the property's own schema (its first example, const or default).
 */
function donorsOf(c: Creation): (name: string) => { whole: boolean; value: Json } | undefined {
  const contract = loadContract(c.generation);
  const sameType = creations().filter((o) => o.type === c.type && o !== c);
  const params = paramsSchemaOf(c);
  const paramExamples: Json[] = params?.examples ?? [];
  const schemaValue = (name: string, s: Json | undefined = params): Json | undefined => {
    const r = contract.resolve(s);
    if (!r) return undefined;
    const prop = r.properties?.[name];
    if (prop) {
      const resolved = contract.resolve(prop)!;
      for (const v of [prop.examples?.[0], resolved.examples?.[0], resolved.const, resolved.default])
        if (v !== undefined) return { [name]: v };
    }
    for (const sub of [...(r.allOf ?? []), ...(r.anyOf ?? []), ...(r.oneOf ?? [])]) {
      const found = schemaValue(name, sub);
      if (found) return found;
    }
    return undefined;
  };
  // A whole donor brings only the type's parameters (its callback, project or answers are not this body's).
  const ownParams = (body: Json) => Object.fromEntries(Object.entries(body).filter(([k]) => c.properties.includes(k) && !nonParams.has(k)));
  return (name) => {
    for (const o of sameType) {
      const e = o.examples.find((x) => name in x && !('project' in x) && !('batch' in x));
      if (e) return { whole: true, value: ownParams(e) };
    }
    const whole = paramExamples.find((x) => name in x);
    if (whole) return { whole: true, value: ownParams(whole) };
    const single = schemaValue(name);
    return single && { whole: false, value: single };
  };
}

/** The `<Type>Params` schema of a creation's type. */
function paramsSchemaOf(c: Creation): Json | undefined {
  const contract = loadContract(c.generation);
  const details = contract.resolve(contract.doc.components.schemas.TaskTypeDetails)!;
  const branch = details.oneOf.map((b: Json) => contract.resolve(b)).find((b: Json) => b.properties.type.const === c.type);
  return contract.resolve(branch?.properties.params);
}

/**
 * Every name the API documents for some creation: each property of every creation body of both
 * generations, and the names the contract lists as documented by the real service and not
 * supported (`x-unsupported-parameters`, wherever it stands).
 */
function documentedNames(): Set<string> {
  const names = new Set(all.flatMap((c) => c.properties));
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) {
        if (k === 'x-unsupported-parameters') for (const name of Object.keys(v as Json)) names.add(name);
        walk(v);
      }
  };
  for (const generation of ['current', 'legacy'] as const) walk(loadContract(generation).doc);
  return names;
}

/** What a body holds besides the type's parameters. */
const nonParams = new Set([...taskFields, 'clear_unique_id_on_error', 'expected_response', 'initial_response']);

const all = creations();
const documented = documentedNames();

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('every accepted creation field is kept on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'creation-fields', new Date());
    // Some request examples rely on the account's default callback URL.
    await updateAccount(server.uow, 'creation-fields', { defaultCallbackUrl: 'https://example.com/default-cb' });
    // A project of each type with parameter version 0, and a batch of it.
    const call = client(server, 'current', account.test_key);
    for (const c of all.filter((o) => !o.training && o.generation === 'current')) {
      const type = c.type;
      if ((await call('GET', `/v1/projects/p-${type}`)).status === 200) continue;
      // Its parameters are the type's example: a request example that leaves the type's parameters to the project works.
      const params = { instruction: 'Do the task.', ...(paramsSchemaOf(c)?.examples?.[0] ?? {}) };
      const project = await call('POST', '/v1/projects', { json: { type, name: `p-${type}`, params } });
      expect(project.status, project.text).toBe(200);
      expect((await call('POST', '/v1/batches', { json: { project: `p-${type}`, name: `b-${type}` } })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(all.map((c) => [`${c.generation} POST ${c.path}`, c] as const))(
    '%s: every declared property is kept, a name documented elsewhere refused, one nobody documents ignored',
    async (_name, c) => {
      const call = client(server, c.generation, account.test_key);
      const common: Json = c.training
        ? {}
        : {
            callback_url: 'https://example.com/cb',
            unique_id: 'walk',
            metadata: { source: 'walk' },
            tags: ['walk'],
            clear_unique_id_on_error: true,
            project: `p-${c.type}`,
            batch: `b-${c.type}`,
            project_param_version: 0,
            ...(c.generation === 'legacy' ? { urgency: 'week' } : {}),
          };
      let n = 0;
      /** The example's unique_id, project and batch made this account's (each body its own unique_id). */
      const ours = (body: Json): Json => {
        const out = { ...body };
        if (c.training) return out;
        if ('unique_id' in out) out.unique_id = `${c.generation}${c.path}-${n++}`;
        if ('project' in out) out.project = `p-${c.type}`;
        if ('batch' in out) out.batch = `b-${c.type}`;
        if ('project_param_version' in out) out.project_param_version = 0;
        return out;
      };
      // The most complete example that names no project: it holds the type-defining parameters itself.
      const base =
        [...c.examples]
          .filter((e) => !('project' in e) && !('batch' in e))
          .sort((a, b) => Object.keys(b).length - Object.keys(a).length)[0] ?? c.examples[0]!;
      const donor = donorsOf(c);
      // The examples as the contract gives them; then, for each property none of them has, the most
      // complete one with that property added (from a common value or a donor).
      const bodies: Json[] = c.examples.map(ours);
      const baseCommon = Object.fromEntries(Object.entries(base).filter(([k]) => nonParams.has(k)));
      for (const name of c.properties) {
        if (c.examples.some((e) => name in e)) continue;
        if (name in common) {
          // project_param_version names a version of the task's project.
          bodies.push(ours({ ...base, [name]: common[name], ...(name === 'project_param_version' ? { project: `p-${c.type}` } : {}) }));
          continue;
        }
        const given = donor(name);
        expect(given, `${c.path}: nothing in the contract gives an example of "${name}"`).toBeDefined();
        bodies.push(ours(given!.whole ? { ...baseCommon, ...given!.value } : { ...base, ...given!.value }));
      }
      const seen = new Set<string>();
      for (const [i, sent] of bodies.entries()) {
        const created = await call('POST', c.path, { json: sent });
        expect(created.status, `${c.path} body ${i} ${JSON.stringify(sent)}: ${created.text}`).toBe(200);
        const read = await call('GET', c.training ? `/v1/${c.path.split('/')[2]}/${created.body.id}` : `/v1/task/${created.body.task_id}`);
        expect(read.status, read.text).toBe(200);
        for (const name of Object.keys(sent)) {
          if (sent[name] === null || notShown.has(name)) continue;
          const shown = c.training
            ? name === 'expected_response' || name === 'initial_response'
              ? read.body
              : read.body.params
            : taskFields.includes(name)
              ? read.body
              : read.body.params;
          expect(shown[name], `${c.path} body ${i}: "${name}" was accepted and not kept`).toBeDefined();
          seen.add(name);
        }
      }
      expect(
        c.properties.filter((p) => !seen.has(p) && !notShown.has(p)),
        'declared properties never sent',
      ).toEqual([]);

      // A name the API documents and this operation does not take: refused, naming it, said not supported.
      const foreign = [...documented].filter((name) => !c.properties.includes(name)).sort();
      expect(foreign, 'the x-unsupported-parameters of the contract').toEqual(expect.arrayContaining(['base_annotations', 'priority']));
      for (let i = 0; i < foreign.length; i += 8)
        await Promise.all(
          foreign.slice(i, i + 8).map(async (name) => {
            const refused = await call('POST', c.path, { json: ours({ ...base, [name]: name === 'priority' ? 30 : {} }) });
            expect(refused.status, `${c.path} with ${name}: ${refused.text}`).toBe(400);
            expect(refused.body.error, `${c.path} with ${name}`).toMatch(new RegExp(`^${name} is not supported\\b`));
          }),
        );
      // Sent as null, such a name counts as not given.
      const nulled = await call('POST', c.path, { json: ours({ ...base, priority: null, [foreign[0]!]: null }) });
      expect(nulled.status, nulled.text).toBe(200);
      // A name nobody documents is the client's own: accepted and ignored, kept out of params.
      const extras = await call('POST', c.path, { json: ours({ ...base, x_client_trace: 'abc-123', foo: { bar: 1 } }) });
      expect(extras.status, extras.text).toBe(200);
      const stored = await call('GET', c.training ? `/v1/${c.path.split('/')[2]}/${extras.body.id}` : `/v1/task/${extras.body.task_id}`);
      expect(stored.text).not.toMatch(/x_client_trace|abc-123|"foo"/);
    },
  );

  it('clear_unique_id_on_error, kept but not shown, acts: the task in error loses its unique_id', async () => {
    const call = client(server, 'current', account.test_key);
    const created = await call('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'image',
        attachment: 'https://fails.invalid/a.jpg',
        categories: ['a', 'b'],
        unique_id: 'cleared-on-error',
        clear_unique_id_on_error: true,
      },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.unique_id).toBe('cleared-on-error');
    const read = await call('GET', `/v1/task/${created.body.task_id}`);
    expect(read.body.status).toBe('error');
    expect(read.body).not.toHaveProperty('unique_id');
  });
});
