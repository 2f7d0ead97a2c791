// Every creation operation of both generations accepts its own contract examples; in test mode
// each task is completed with a synthetic response (the server checks its answers against the
// contract, so a response of the wrong shape fails here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { loadContract } from '../../server/http/contract.ts';
import { creationExamples } from '../support/examples.ts';
import { client, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(async () => {
  await server?.close();
});

describe.each(['current', 'legacy'] as const)('%s generation', (gen) => {
  const contract = loadContract(gen);
  const cases = creationExamples(contract).map(([path, name, body]) => [`${path} example ${name}`, path, body] as const);

  // One account per generation: the examples of both share unique_ids, and one account sees both.
  let key: string;
  beforeAll(async () => {
    key = (await createAccount(server.uow, `examples-${gen}`, new Date())).test_key;
  });

  it.each(cases)('%s', async (_name, path, body) => {
    const api = client(server, gen, key);
    const created = await api('POST', path, { json: body });
    if (body.project !== undefined || body.batch !== undefined) {
      // Projects and batches are not served yet: no name can refer to one.
      expect(created.status).toBe(404);
      return;
    }
    expect(created.status, created.text).toBe(200);
    expect(created.body.status).toBe('pending');
    const read = await api('GET', `/v1/task/${created.body.task_id}`);
    expect(read.status, read.text).toBe(200);
    expect(['completed', 'error']).toContain(read.body.status);
    expect(read.body.response).toBeDefined();
  });
});
