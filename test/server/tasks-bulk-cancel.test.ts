// The bulk cancel over a filter (issue 35, POST /v1/tasks/cancel), as the console's data manager and
// any client use it: the list's filters under the same names, at most `limit` pending tasks a
// request until has_more is false, nothing else touched, a manager's session or a key with
// tasks:write, one activity entry per request with the count and the filters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithOwner, memberWithRole, type MemberSession } from '../support/members.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases)('bulk cancel over a filter (%s)', (db) => {
  let server: TestServer;
  let manager: MemberSession;
  let viewer: MemberSession;
  let owner: MemberSession;
  const account = `bulk-${db}`;

  beforeAll(async () => {
    if (db === 'postgres' && !hasPostgres()) return;
    server = await startTestServer(db);
    ({ owner } = await accountWithOwner(server, account));
    manager = await memberWithRole(server, account, owner, 'manager');
    viewer = await memberWithRole(server, account, owner, 'viewer');
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A live task (it waits for a worker: pending) with these tags. */
  async function liveTask(tags: string[], extra: Record<string, unknown> = {}): Promise<string> {
    const created = await manager.call('POST', '/v1/task/categorization', {
      mode: 'live',
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick one',
        attachment_type: 'text',
        attachment: 'hi',
        categories: ['a', 'b'],
        tags,
        ...extra,
      },
    });
    expect(created.status, created.text).toBe(200);
    return created.body.task_id;
  }
  const statusOf = async (id: string) => (await manager.call('GET', `/v1/task/${id}`, { mode: 'live' })).body.status;

  it('cancels the matching pending tasks, limit by limit, until has_more is false; nothing else', async () => {
    if (!server) return;
    const batchA = [await liveTask(['wave-1']), await liveTask(['wave-1', 'urgent']), await liveTask(['wave-1'])];
    const other = await liveTask(['wave-2']);
    // The same task ids in test mode are another world: its tasks are not touched either.
    const testTask = await manager.call('POST', '/v1/task/categorization', {
      json: {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick one',
        attachment_type: 'text',
        attachment: 'hi',
        categories: ['a', 'b'],
        tags: ['wave-1'],
      },
    });
    const rounds = [];
    for (let i = 0; i < 3; i++) {
      const answer = await manager.call('POST', '/v1/tasks/cancel?tags=wave-1&limit=2', { mode: 'live' });
      expect(answer.status, answer.text).toBe(200);
      rounds.push(answer.body);
    }
    expect(rounds.map((r) => [r.canceled, r.has_more])).toEqual([
      [2, true],
      [1, false],
      [0, false],
    ]);
    expect(rounds.flatMap((r) => r.task_ids).sort()).toEqual([...batchA].sort());
    for (const id of batchA) expect(await statusOf(id)).toBe('canceled');
    expect(await statusOf(other)).toBe('pending');
    const inTest = await manager.call('GET', `/v1/task/${testTask.body.task_id}`);
    expect(inTest.body.status).not.toBe('canceled');
    // Read back through the list, as the console shows it.
    const list = await manager.call('GET', '/v1/tasks?tags=wave-1&status=canceled', { mode: 'live' });
    expect(list.body.total).toBe(3);
  });

  it('matches every filter of the list: a status other than pending cancels nothing, tags must all be there', async () => {
    if (!server) return;
    const both = await liveTask(['f-1', 'f-2']);
    const one = await liveTask(['f-1']);
    const completedFilter = await manager.call('POST', '/v1/tasks/cancel?tags=f-1&status=completed', { mode: 'live' });
    expect(completedFilter.body).toEqual({ canceled: 0, task_ids: [], has_more: false });
    const all = await manager.call('POST', '/v1/tasks/cancel?tags=f-1&tags=f-2', { mode: 'live' });
    expect(all.body).toEqual({ canceled: 1, task_ids: [both], has_more: false });
    expect(await statusOf(one)).toBe('pending');
    // clear_unique_id frees the unique_ids of what it cancels.
    const unique = await liveTask(['f-3'], { unique_id: `order-${db}` });
    const cleared = await manager.call('POST', '/v1/tasks/cancel?tags=f-3&clear_unique_id=true', { mode: 'live' });
    expect(cleared.body.task_ids).toEqual([unique]);
    const read = await manager.call('GET', `/v1/task/${unique}`, { mode: 'live' });
    expect(read.body.unique_id).toBeUndefined();
  });

  it('refuses bad filters in words and changes nothing', async () => {
    if (!server) return;
    const task = await liveTask(['g-1']);
    const bad = await manager.call('POST', '/v1/tasks/cancel?tags=g-1&start_time=yesterday', { mode: 'live' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/start_time/);
    const tooMany = await manager.call('POST', '/v1/tasks/cancel?tags=g-1&limit=101', { mode: 'live' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatch(/limit/);
    expect(await statusOf(task)).toBe('pending');
  });

  it('is for managers and up (a viewer gets 403 naming the role), and each request is one activity entry', async () => {
    if (!server) return;
    const task = await liveTask(['h-1']);
    const refused = await viewer.call('POST', '/v1/tasks/cancel?tags=h-1', { mode: 'live' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('role_missing');
    expect(refused.body.error).toMatch(/manager/);
    expect(await statusOf(task)).toBe('pending');
    const done = await manager.call('POST', '/v1/tasks/cancel?tags=h-1', { mode: 'live' });
    expect(done.body.canceled).toBe(1);
    const log = await owner.call('GET', '/v1/activity?action=tasks.canceled');
    expect(log.status, log.text).toBe(200);
    const entry = log.body.docs.find((e: { details?: { filters?: { tags?: unknown } } }) =>
      [e.details?.filters?.tags].flat().includes('h-1'),
    );
    expect(entry).toMatchObject({
      action: 'tasks.canceled',
      actor: { type: 'member', id: manager.memberId },
      mode: 'live',
      details: { canceled: 1 },
    });
  });
});
