// Issue 22, rules 5 and 8 (dates): time filters take Python's `str(datetime)` form
// (`2026-11-21 10:00:00.123456`, UTC without offset) and the hour-only offset the pattern allows;
// a time outside what the database stores (year 0000) is 400 naming the filter, not 500.
// Raw requests, both generations, PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

/** What Python prints for a UTC datetime without tzinfo: a space, microseconds, no offset. */
const pythonStr = (date: Date) => `${date.toISOString().replace('T', ' ').replace('Z', '')}456`;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('time filters as clients print them on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let createdAt: Date;
  let batchCreatedAt: Date;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'wild-times', new Date());
    const call = client(server, 'current', account.test_key);
    const task = await call('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick',
        attachment_type: 'text',
        attachment: 't',
        categories: ['a', 'b'],
      },
    });
    expect(task.status, task.text).toBe(200);
    createdAt = new Date(task.body.created_at);
    const project = await call('POST', '/v1/projects', { json: { type: 'categorization', name: 'times' } });
    expect(project.status, project.text).toBe(200);
    const batch = await call('POST', '/v1/batches', { json: { project: 'times', name: 'times-1' } });
    expect(batch.status, batch.text).toBe(200);
    batchCreatedAt = new Date(batch.body.created_at);
  });
  afterAll(async () => {
    await server?.close();
  });

  const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

  it.each(['current', 'legacy'] as const)('%s: start_time/end_time in str(datetime) form bound the list in UTC', async (generation) => {
    const call = client(server, generation, account.test_key);
    const before = pythonStr(new Date(createdAt.getTime() - 1000));
    const after = pythonStr(new Date(createdAt.getTime() + 1000));
    const inside = await call('GET', `/v1/tasks?${q({ start_time: before, end_time: after })}`);
    expect(inside.status, inside.text).toBe(200);
    expect(inside.body.total).toBe(1);
    const later = await call('GET', `/v1/tasks?${q({ start_time: after })}`);
    expect(later.status, later.text).toBe(200);
    expect(later.body.total).toBe(0);
    const aroundBatch = {
      start_time: pythonStr(new Date(batchCreatedAt.getTime() - 1000)),
      end_time: pythonStr(new Date(batchCreatedAt.getTime() + 1000)),
    };
    const batches = await call('GET', `/v1/batches?${q(aroundBatch)}`);
    expect(batches.status, batches.text).toBe(200);
    expect(batches.body.total).toBe(1);
    const spaceForPlus = await call('GET', `/v1/tasks?${q({ completed_after: '2026-11-20 13:18:00 01:00' })}`);
    expect(spaceForPlus.status, spaceForPlus.text).toBe(200);
  });

  it.each(['current', 'legacy'] as const)('%s: the hour-only offset that the pattern allows is read, not refused', async (generation) => {
    const call = client(server, generation, account.test_key);
    const res = await call('GET', `/v1/tasks?${q({ end_time: '2026-11-20T13:18+01' })}`);
    expect(res.status, res.text).toBe(200);
    const hourOnly = await call('GET', `/v1/tasks?${q({ start_time: pythonStr(createdAt).slice(0, 13).replace(' ', 'T') + ':00+01' })}`);
    expect(hourOnly.status, hourOnly.text).toBe(200);
    // An hour earlier in UTC than the hour of creation, so the task is inside.
    expect(hourOnly.body.total).toBe(1);
  });

  it.each([
    ['current', '/v1/tasks', 'end_time', '0000-01-09'],
    ['legacy', '/v1/tasks', 'end_time', '0000-01-09'],
    ['current', '/v1/tasks', 'start_time', '0001-01-01T00:00:00+01:00'],
    ['legacy', '/v1/tasks', 'completed_before', '0000-12-31 23:00:00'],
    ['current', '/v1/tasks', 'updated_after', '9999-12-31T23:00:00-05:00'],
    ['current', '/v1/batches', 'end_time', '0000-01-09'],
    ['legacy', '/v1/batches', 'start_time', '0000-01-09'],
    ['current', '/v1/training_tasks', 'end_time', '0000-01-09'],
    ['legacy', '/v1/evaluation_tasks', 'start_time', '0000-01-09'],
  ] as const)('%s GET %s?%s=%s → 400 naming the filter', async (generation, path, name, value) => {
    const call = client(server, generation, account.test_key);
    const res = await call('GET', `${path}?${q({ [name]: value })}`);
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ status_code: 400, error: expect.stringContaining(name) });
  });

  it('the edges of what is stored are accepted; an impossible date is refused', async () => {
    const call = client(server, 'current', account.test_key);
    expect((await call('GET', `/v1/tasks?${q({ start_time: '0001-01-01', end_time: '9999-12-31T23:59:59.999Z' })}`)).body.total).toBe(1);
    const impossible = await call('GET', `/v1/tasks?${q({ start_time: '2026-02-30 10:00:00' })}`);
    expect(impossible.status).toBe(400);
    expect(impossible.body.error).toContain('start_time');
  });
});
