// Every creation operation of both generations accepts its own contract examples; in test mode
// each task is completed with a synthetic response (the server checks its answers against the
// contract, so a response of the wrong shape fails here). An example that names a project gets
// that project first, its parameters taken from a sibling example of the same operation: the task
// is created in it, with the project's parameters merged under its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, updateAccount } from '../../server/domain/accounts.ts';
import { loadContract } from '../../server/http/contract.ts';
import { type Body, creationExamples } from '../support/examples.ts';
import { client, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(async () => {
  await server?.close();
});

/** What a task names that is not a parameter of its type: a project keeps none of it. */
const taskOnly = new Set(['callback_url', 'unique_id', 'metadata', 'tags', 'project', 'batch']);
/** Parameters a project gives that the task answers as top-level fields, not in `params`. */
const topLevel = new Set(['instruction', 'urgency']);

describe.each(['current', 'legacy'] as const)('%s generation', (gen) => {
  const contract = loadContract(gen);
  const examples = creationExamples(contract);
  const cases = examples.map(([path, name, body]) => [`${path} example ${name}`, path, body] as const);

  /** The parameters of a project for an example of `path`: a sibling example without a project. */
  const projectParams = (path: string): Body => {
    const sibling = examples.find(([p, , b]) => p === path && b.project === undefined && b.batch === undefined);
    if (!sibling) throw new Error(`${path} has no example without a project`);
    return Object.fromEntries(Object.entries(sibling[2]).filter(([key]) => !taskOnly.has(key)));
  };

  // One account per generation: the examples of both share unique_ids, and one account sees both.
  let key: string;
  beforeAll(async () => {
    key = (await createAccount(server.uow, `examples-${gen}`, new Date())).test_key;
  });

  it.each(cases)('%s', async (_name, path, body) => {
    let api = client(server, gen, key);
    let params: Body = {};
    if (body.project !== undefined) {
      // Examples reuse project names across task types: each gets an account of its own, with a
      // default callback URL (the projectOnly examples leave callback_url out).
      const account = `examples-${gen}-${path}`;
      api = client(server, gen, (await createAccount(server.uow, account, new Date())).test_key);
      await updateAccount(server.uow, account, { defaultCallbackUrl: 'https://example.com/humantask/default-callback' });
      params = projectParams(path);
      const project = await api('POST', '/v1/projects', { json: { type: path.split('/').at(-1), name: body.project, params } });
      expect(project.status, project.text).toBe(200);
    }
    const created = await api('POST', path, { json: body });
    expect(created.status, created.text).toBe(200);
    expect(created.body.status).toBe('pending');
    const read = await api('GET', `/v1/task/${created.body.task_id}`);
    expect(read.status, read.text).toBe(200);
    expect(['completed', 'error']).toContain(read.body.status);
    expect(read.body.response).toBeDefined();
    if (body.project !== undefined) {
      expect(read.body.project).toBe(body.project);
      // The parameters only the project gave are the task's too.
      for (const name of Object.keys(params).filter((k) => !(k in body) && !topLevel.has(k))) {
        expect(read.body.params, `${name} from the project`).toHaveProperty(name);
      }
    }
  });
});
