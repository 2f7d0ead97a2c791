// Issue 22, rule 2: the newer generation's task list carries `offset` (the matching tasks before the
// page: 0 first, then the running count carried in next_token). Raw requests, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('list offsets on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let call: ReturnType<typeof client>;

  const create = async (i: number) => {
    const res = await call('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: `t${i}`,
        categories: ['a', 'b'],
        tags: ['walk'],
      },
    });
    expect(res.status, res.text).toBe(200);
    return res.body.task_id as string;
  };

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-lists', new Date());
    call = client(server, 'current', account.test_key);
    for (let i = 0; i < 5; i++) await create(i);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('GET /v1/tasks carries offset: 0, then the running count, unchanged by tasks created during the walk', async () => {
    const first = await call('GET', '/v1/tasks?tags=walk&limit=2');
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ total: 5, limit: 2, offset: 0, has_more: true });
    await create(99);
    const second = await call('GET', `/v1/tasks?tags=walk&limit=2&next_token=${encodeURIComponent(first.body.next_token)}`);
    expect(second.status, second.text).toBe(200);
    expect(second.body).toMatchObject({ total: 6, offset: 2, has_more: true });
    const third = await call('GET', `/v1/tasks?tags=walk&limit=2&next_token=${encodeURIComponent(second.body.next_token)}`);
    expect(third.body).toMatchObject({ offset: 4, has_more: false });
    expect(third.body.docs).toHaveLength(1);
    const empty = await call('GET', '/v1/tasks?tags=nothing');
    expect(empty.body).toEqual({ docs: [], total: 0, limit: 100, offset: 0, has_more: false });
  });

  it('a next_token issued before tokens carried the count still gives the right offset', async () => {
    const first = await call('GET', '/v1/tasks?tags=walk&limit=3');
    const decoded = JSON.parse(Buffer.from(first.body.next_token, 'base64url').toString('utf8'));
    delete decoded.o;
    const older = Buffer.from(JSON.stringify(decoded)).toString('base64url');
    const second = await call('GET', `/v1/tasks?tags=walk&limit=3&next_token=${older}`);
    expect(second.status, second.text).toBe(200);
    expect(second.body).toMatchObject({ offset: 3, has_more: false });
  });

  it('the older generation keeps its offset paging', async () => {
    const legacy = client(server, 'legacy', account.test_key);
    const res = await legacy('GET', '/v1/tasks?tags=walk&limit=2&offset=2');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ limit: 2, offset: 2, has_more: true });
  });
});
