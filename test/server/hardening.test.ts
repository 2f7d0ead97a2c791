// Issue 15: what no input, neighbour process or local user may do to the service or its data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSummary, createAccount } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('hardening on %s', (db) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(db);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('counts live requests per account, not for all accounts at once', async () => {
    const now = new Date();
    const busy = await createAccount(server.uow, 'busy', now);
    const quiet = await createAccount(server.uow, 'quiet', now);
    await createAccount(server.uow, 'idle', now);
    for (let i = 0; i < 3; i++) expect((await client(server, 'current', busy.live_key)('GET', '/v1/tasks')).status).toBe(200);
    expect((await client(server, 'current', quiet.live_key)('GET', '/v1/tasks')).status).toBe(200);
    // Test-mode requests are not counted.
    expect((await client(server, 'current', quiet.test_key)('GET', '/v1/tasks')).status).toBe(200);
    const counts = Object.fromEntries((await server.uow.accounts.list()).map((a) => [a.name, accountSummary(a).live_requests]));
    expect(counts).toMatchObject({ busy: 3, quiet: 1, idle: 0 });
    expect((await server.uow.accounts.findByName('busy'))!.liveRequestCount).toBe(3);
    expect((await server.uow.accounts.findById(quiet.account_id))!.liveRequestCount).toBe(1);
  });
});
