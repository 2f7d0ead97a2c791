// Issue 22, rule 3: an id or name that names nothing is 404 whatever its shape (no path pattern
// turns "not found" into "bad request"). Raw requests, both generations, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('ids that name nothing on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-ids', new Date());
  });
  afterAll(async () => {
    await server?.close();
  });

  const long = 'x'.repeat(300);
  it.each([
    ['GET', '/v1/task/fake_id_qwertyuiop', 'fake_id_qwertyuiop'],
    ['GET', '/v1/task/65F1C0A2B3C4D5E6F7A8B9C0', '65F1C0A2B3C4D5E6F7A8B9C0'],
    ['POST', '/v1/task/fake_id_qwertyuiop/cancel', 'fake_id_qwertyuiop'],
    ['POST', '/v1/task/fake_id_qwertyuiop/setMetadata', 'fake_id_qwertyuiop'],
    ['DELETE', '/v1/task/fake_id_qwertyuiop/unique_id', 'fake_id_qwertyuiop'],
    ['GET', `/v1/task/${long}`, long],
    ['GET', `/v1/projects/${long}`, long],
    ['GET', `/v1/batches/${long}`, long],
    ['GET', '/v1/training_tasks/fake_id_qwertyuiop', 'fake_id_qwertyuiop'],
  ] as const)('%s %s → 404 with the usual error body, in both generations', async (method, path, id) => {
    for (const generation of ['current', 'legacy'] as const) {
      const call = client(server, generation, account.test_key);
      const res = await call(method, path, method === 'POST' && path.endsWith('setMetadata') ? { json: {} } : {});
      expect(res.status, `${generation} ${res.text}`).toBe(404);
      expect(res.body).toMatchObject({ status_code: 404, error: expect.any(String) });
      if (!path.startsWith('/v1/training')) expect(res.body.error).toContain(id.slice(0, 40));
    }
  });
});
