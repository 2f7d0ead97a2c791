// Issue 22, rule 8 (queries): query values with raw reserved characters are read as browsers and
// HTTP clients send them (`+` is a space, `:` stands raw), the example next_token is not a value to
// replay, and an unknown parameter is still a 400 naming it. Raw requests, both generations,
// PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('raw reserved characters in queries on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let createdAt: Date;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-queries', new Date());
    const call = client(server, 'current', account.test_key);
    expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: 'a b' } })).status).toBe(200);
    expect((await call('POST', '/v1/batches', { json: { project: 'a b', name: 'a b 1' } })).status).toBe(200);
    const task = await call('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: 't',
        categories: ['a', 'b'],
        project: 'a b',
      },
    });
    expect(task.status, task.text).toBe(200);
    createdAt = new Date(task.body.created_at);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each(['current', 'legacy'] as const)('%s: GET /v1/batches?project=a+b lists the batches of the project "a b"', async (generation) => {
    const res = await client(server, generation, account.test_key)('GET', '/v1/batches?project=a+b');
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(1);
    expect(res.body.docs[0]).toMatchObject({ name: 'a b 1', project: 'a b' });
  });

  it.each(['current', 'legacy'] as const)('%s: GET /v1/tasks?end_time=2026-11-21T10:00:00Z with a raw colon', async (generation) => {
    const call = client(server, generation, account.test_key);
    const res = await call('GET', '/v1/tasks?end_time=2026-11-21T10:00:00Z');
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(0);
    const project = await call('GET', '/v1/tasks?project=a+b');
    expect(project.status, project.text).toBe(200);
    expect(project.body.total).toBe(1);
  });

  it('a raw + before an offset is the offset sign (form decoding made it a space)', async () => {
    const call = client(server, 'current', account.test_key);
    // The creation hour in a +01:00 clock: the same instant, so the task is at or after it.
    const local = new Date(createdAt.getTime() + 3_600_000 - 1000).toISOString().slice(0, 19);
    const res = await call('GET', `/v1/tasks?start_time=${local}+01:00`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(1);
    const later = new Date(createdAt.getTime() + 3_600_000 + 1000).toISOString().slice(0, 19);
    expect((await call('GET', `/v1/tasks?start_time=${later}+01:00`)).body.total).toBe(0);
  });

  it('an unknown query parameter is still 400 naming it; the contract gives no next_token to replay', async () => {
    const res = await client(server, 'current', account.test_key)('GET', '/v1/tasks?projcet=a+b');
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('projcet');
    const { loadContract } = await import('../../server/http/contract.ts');
    const nextToken = loadContract('current').doc.components.parameters.NextToken;
    expect(nextToken).not.toHaveProperty('example');
    expect(nextToken).not.toHaveProperty('examples');
  });
});
