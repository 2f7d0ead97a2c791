// Account settings as a client sees them: completion delay in test mode, disabled task types,
// default callback URL, the per-key rate limit; and Markdown sanitizing of text-collection content.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateAccount } from '../../server/domain/accounts.ts';
import { completeDueTestTasks } from '../../server/domain/test-completion.ts';
import { testClock } from '../support/clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';

const body = {
  callback_url: 'https://example.com/cb',
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'hello',
  categories: ['a', 'b'],
};

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('account settings on %s', (db) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(db, { TEST_COMPLETION_POLL_MS: '20' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('delays test-mode completion, so that a test task can be canceled; a due task completes by itself', async () => {
    // Long enough for the two creations, the read and the cancel on a loaded machine.
    await updateAccount(server.uow, 'dev', { testCompletionDelayMs: 5000 });
    const api = client(server, 'current', server.dev.test_key);
    try {
      const a = await api('POST', '/v1/task/categorization', { json: body });
      const b = await api('POST', '/v1/task/categorization', { json: body });
      expect((await api('GET', `/v1/task/${a.body.task_id}`)).body.status).toBe('pending');
      const canceled = await api('POST', `/v1/task/${a.body.task_id}/cancel`);
      expect(canceled.body.status, canceled.text).toBe('canceled');
      // Nobody reads b: the background completion finishes it, and the list shows it completed.
      await until(
        async () =>
          (await api('GET', `/v1/tasks?status=completed`)).body.docs.some((d: { task_id: string }) => d.task_id === b.body.task_id),
        'the delayed task to complete',
      );
      const listed = await api('GET', `/v1/tasks?status=completed`);
      expect(listed.status).toBe(200);
      expect((await api('GET', `/v1/task/${a.body.task_id}`)).body.status).toBe('canceled');
    } finally {
      await updateAccount(server.uow, 'dev', { testCompletionDelayMs: 0 });
    }
  });

  it('completes the other due test tasks when one of them cannot be completed', async () => {
    await updateAccount(server.uow, 'dev', { testCompletionDelayMs: 3_600_000 });
    const api = client(server, 'current', server.dev.test_key);
    const setColumns = (name: string, taskId: string, set: string) =>
      server.store.execute({ name, text: `UPDATE tasks SET ${set} WHERE task_id = $1`, values: [taskId] });
    const stored = async (taskId: string) => (await server.uow.tasks.get(server.dev.account_id, 'test', taskId))!.status;
    const [broken, other] = [
      (await api('POST', '/v1/task/categorization', { json: body })).body.task_id,
      (await api('POST', '/v1/task/categorization', { json: body })).body.task_id,
    ];
    try {
      // A task the synthetic completion cannot handle (a type it has no response for), due first.
      await setColumns('break_task', broken, `type = 'no-such-type', test_complete_at = now() - interval '1 second'`);
      await setColumns('task_due', other, 'test_complete_at = now()');
      await until(async () => (await stored(other)) === 'completed', 'the other due task to complete');
      expect(await stored(broken)).toBe('pending');
      // Tried again later, not in every poll.
      const [row] = await server.store.execute<{ later: boolean }>({
        name: 'postponed',
        text: 'SELECT test_complete_at > now() AS later FROM tasks WHERE task_id = $1',
        values: [broken],
      });
      expect(row?.later).toBe(true);
    } finally {
      await setColumns('mend_task', broken, `type = 'categorization'`);
      await updateAccount(server.uow, 'dev', { testCompletionDelayMs: 0 });
    }
  });

  it('starves no due test task behind one that cannot be completed: the failing one is tried again later', async () => {
    // A server without the background completion: the rounds below are the only ones.
    const quiet = await startTestServer(db, { TEST_COMPLETION_POLL_MS: '0' });
    try {
      await updateAccount(quiet.uow, 'dev', { testCompletionDelayMs: 3_600_000 });
      const api = client(quiet, 'current', quiet.dev.test_key);
      const [broken, other] = [
        (await api('POST', '/v1/task/categorization', { json: body })).body.task_id,
        (await api('POST', '/v1/task/categorization', { json: body })).body.task_id,
      ];
      const set = (name: string, taskId: string, columns: string) =>
        quiet.store.execute({ name, text: `UPDATE tasks SET ${columns} WHERE task_id = $1`, values: [taskId] });
      await set('break_task', broken, `type = 'no-such-type', test_complete_at = now() - interval '1 second'`);
      await set('task_due', other, 'test_complete_at = now()');
      // One task a round: the broken one (due first) fails and moves back; the next round takes the other.
      await expect(completeDueTestTasks(quiet.uow, new Date(), 1)).rejects.toThrow(/1 of 1 due test-mode tasks could not be completed/);
      expect(await completeDueTestTasks(quiet.uow, new Date(), 1)).toBe(1);
      const status = async (taskId: string) => (await quiet.uow.tasks.get(quiet.dev.account_id, 'test', taskId))!.status;
      expect(await status(other)).toBe('completed');
      expect(await status(broken)).toBe('pending');
      expect(await completeDueTestTasks(quiet.uow, new Date(), 1)).toBe(0);
    } finally {
      await quiet.close();
    }
  });

  it('answers 402 for a disabled task type, and takes the default callback URL when a task gives none', async () => {
    const api = client(server, 'current', server.dev.live_key);
    await updateAccount(server.uow, 'dev', { disableTypes: ['lidarsegmentation'], defaultCallbackUrl: 'https://example.com/default' });
    const refused = await api('POST', '/v1/task/lidarsegmentation', {
      json: { callback_url: 'https://example.com/cb', attachments: ['https://example.com/f0.json'], labels: ['car'] },
    });
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({ status_code: 402, error: expect.stringContaining('lidarsegmentation'), request_id: expect.any(String) });
    const { callback_url: _omitted, ...withoutCallback } = body;
    const taken = await api('POST', '/v1/task/categorization', { json: withoutCallback });
    expect(taken.status).toBe(200);
    expect(taken.body).not.toHaveProperty('callback_url');
    await updateAccount(server.uow, 'dev', { enableTypes: ['lidarsegmentation'], defaultCallbackUrl: null });
    expect((await api('POST', '/v1/task/categorization', { json: withoutCallback })).status).toBe(400);
  });

  it('keeps only the allowed tags of Markdown attachment content', async () => {
    const api = client(server, 'current', server.dev.live_key);
    const res = await api('POST', '/v1/task/textcollection', {
      json: {
        callback_url: 'https://example.com/cb',
        attachments: [{ type: 'markdown', content: '# Title\n<script>alert(1)</script><b onclick="x()">bold</b> <blink>x</blink>' }],
        fields: [{ type: 'text', field_id: 'summary', title: 'Summary' }],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.params.attachments[0].content).toBe('# Title\n<b>bold</b> x');
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('rate limit on %s', (db) => {
  it('answers 429 with Retry-After once a key has used its burst', async () => {
    const server = await startTestServer(db, { RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_SECOND: '0.01' });
    try {
      const api = client(server, 'current', server.dev.test_key);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push(await api('GET', '/v1/tasks'));
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
      expect(statuses[3]!.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(statuses[3]!.body).toEqual({ status_code: 429, error: expect.stringContaining('retry'), request_id: expect.any(String) });
      // Another key has its own bucket.
      expect((await client(server, 'current', server.dev.live_key)('GET', '/v1/tasks')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('Idempotency-Key retention', () => {
  it('forgets a key after its retention: the same key then creates a new task', async () => {
    // A retention of an hour, and the server's clock moved on past it: no wait, and the replay has
    // the hour to come in, however slow the machine.
    const clock = testClock();
    const server = await startTestServer('pglite', { IDEMPOTENCY_TTL_SECONDS: '3600' }, undefined, { now: clock.now });
    try {
      const api = client(server, 'current', server.dev.live_key);
      const headers = { 'Idempotency-Key': 'short-lived' };
      const first = await api('POST', '/v1/task/categorization', { json: body, headers });
      const replay = await api('POST', '/v1/task/categorization', { json: body, headers });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.task_id).toBe(first.body.task_id);
      clock.advance(3600_000 + 1000);
      const later = await api('POST', '/v1/task/categorization', { json: body, headers });
      expect(later.status).toBe(200);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(later.body.task_id).not.toBe(first.body.task_id);
      expect((await api('GET', '/v1/tasks')).body.total).toBe(2);
    } finally {
      await server.close();
    }
  });
});
