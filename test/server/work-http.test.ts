// The work loop over real HTTP (issue 18), on PGlite and PostgreSQL: a live task created through
// either generation is taken by a logged-in worker at /worker/v1, submitted and completed; the
// customer's receiver gets the callback once; the older generation shows it completed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { testClock } from '../support/clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';
import { createWorker, workerClient } from '../support/workers.ts';

const categorization = (callback_url: string) => ({
  callback_url,
  instruction: 'Pick',
  attachment_type: 'text',
  attachment: 'a cat',
  categories: ['cat', 'dog'],
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the worker API on %s', (db) => {
  let server: TestServer;
  let hook: Receiver;

  beforeAll(async () => {
    hook = await startReceiver();
    server = await startTestServer(db, { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
    await hook?.close();
  });

  /** A call of the worker API with a worker's token. */
  const as = (token: string) => workerClient(server, token);

  async function account() {
    const secrets = await createAccount(server.uow, `http-${db}-${Math.random().toString(16).slice(2)}`, new Date());
    return { secrets, current: client(server, 'current', secrets.live_key), legacy: client(server, 'legacy', secrets.live_key) };
  }

  it.each(['legacy', 'current'] as const)(
    'a live task created through the %s generation is taken, submitted and completed; the receiver gets it once',
    async (generation) => {
      const { secrets, current, legacy } = await account();
      const created = await (generation === 'legacy' ? legacy : current)('POST', '/v1/task/categorization', {
        json: categorization(hook.url),
      });
      expect(created.status, created.text).toBe(200);
      const taskId = created.body.task_id as string;
      const w = as((await createWorker(server, { accountId: secrets.account_id })).token);

      const next = await w('POST', '/v1/assignments/next', {});
      expect(next.status, next.text).toBe(200);
      expect(next.body).toMatchObject({
        role: 'attempt',
        status: 'active',
        task: { task_id: taskId, type: 'categorization', instruction: 'Pick', params: { categories: ['cat', 'dog'] } },
      });
      const { assignment_id: id, lease_token } = next.body;
      // Asking again while it is held resumes the same assignment.
      expect((await w('POST', '/v1/assignments/next', {})).body).toMatchObject({ assignment_id: id, lease_token });

      const beat = await w('POST', `/v1/assignments/${id}/heartbeat`, { lease_token, active_ms: 1000, draft: { category: 'dog' } });
      expect(beat.status, beat.text).toBe(200);
      expect(beat.body).toMatchObject({ assignment_id: id, active_ms: expect.any(Number) });

      const bad = await w('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 1000, response: { category: 'bird' } });
      expect([bad.status, bad.body.code, bad.body.error]).toEqual([
        400,
        'invalid_request',
        `response.category "bird" is not one of the task's categories.`,
      ]);
      const stale = await w('POST', `/v1/assignments/${id}/submit`, {
        lease_token: 'lt_stale',
        active_ms: 1000,
        response: { category: 'cat' },
      });
      expect([stale.status, stale.body.code]).toEqual([409, 'lease_lost']);

      const done = await w('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 2000, response: { category: 'cat' } });
      expect(done.status, done.text).toBe(200);
      expect(done.body).toMatchObject({ assignment_id: id, status: 'submitted', response: { category: 'cat' } });
      const late = await w('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 0, response: { category: 'dog' } });
      expect([late.status, late.body.code]).toEqual([409, 'assignment_closed']);

      await until(async () => (await legacy('GET', `/v1/task/${taskId}`)).body.callback_succeeded === true, 'the callback');
      expect(hook.bodiesOf(taskId)).toEqual([expect.objectContaining({ task_id: taskId, response: { category: 'cat' } })]);
      expect((await legacy('GET', `/v1/task/${taskId}`)).body).toMatchObject({
        status: 'completed',
        response: { category: 'cat' },
        callback_succeeded: true,
      });
      expect((await current('GET', `/v1/task/${taskId}`)).body).toMatchObject({ status: 'completed', response: { category: 'cat' } });
      // Nothing else to do: 204 with Retry-After.
      const none = await w('POST', '/v1/assignments/next', {});
      expect([none.status, none.headers.get('retry-after')]).toEqual([204, '5']);
    },
  );

  it('staffing, review and redo over HTTP: a rejected answer is redone by its author with the feedback, accepted by another reviewer; both generations show the audit and times_redone', async () => {
    const { secrets, current, legacy } = await account();
    expect((await current('POST', '/v1/projects', { json: { type: 'categorization', name: 'reviewed' } })).status).toBe(200);
    const mk = async (roles: ('labeler' | 'reviewer')[]) => {
      const w = await createWorker(server, { accountId: secrets.account_id, roles });
      return { id: w.workerId, call: as(w.token) };
    };
    const [author, first, second] = [await mk(['labeler']), await mk(['reviewer']), await mk(['reviewer'])];
    const unknown = await current('PUT', '/v1/projects/reviewed/staffing', {
      json: { attempt: ['wkr_000000000000000000000000'], review: [] },
    });
    expect([unknown.status, unknown.body.error]).toEqual([404, expect.stringContaining('wkr_000000000000000000000000')]);
    const staffed = await current('PUT', '/v1/projects/reviewed/staffing', {
      json: { attempt: [author.id], review: [first.id, second.id], review_sampling: { new_worker_tasks: 5, rate: 0 } },
    });
    expect(staffed.status, staffed.text).toBe(200);
    expect(staffed.body).toMatchObject({
      attempt: [author.id],
      review: [first.id, second.id],
      review_sampling: { new_worker_tasks: 5, rate: 0 },
      source: 'project',
    });
    expect((await current('GET', '/v1/projects/reviewed/staffing')).body).toEqual(staffed.body);

    const taskId = (await legacy('POST', '/v1/task/categorization', { json: { ...categorization(hook.url), project: 'reviewed' } })).body
      .task_id as string;
    const attempt = (await author.call('POST', '/v1/assignments/next', {})).body;
    expect(
      (
        await author.call('POST', `/v1/assignments/${attempt.assignment_id}/submit`, {
          lease_token: attempt.lease_token,
          active_ms: 1000,
          response: { category: 'dog' },
        })
      ).body.status,
    ).toBe('submitted');
    expect((await legacy('GET', `/v1/task/${taskId}`)).body.status).toBe('pending');

    const review = (await first.call('POST', '/v1/assignments/next', { role: 'review' })).body;
    expect(review).toMatchObject({ role: 'review', task: { task_id: taskId }, under_review: { response: { category: 'dog' } } });
    const feedback_items = [{ category: 'wrong_label', text: 'It is a cat.', scope: { field: 'category' } }];
    const rejected = await first.call('POST', `/v1/assignments/${review.assignment_id}/review`, {
      lease_token: review.lease_token,
      result: 'rejected',
      feedback_items,
      active_ms: 3000,
    });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'reviewed', review: { result: 'rejected', feedback_items } });

    const redo = (await author.call('POST', '/v1/assignments/next', {})).body;
    expect(redo).toMatchObject({
      role: 'redo',
      task: { task_id: taskId },
      previous_response: { category: 'dog' },
      feedback: { result: 'rejected', feedback_items },
    });
    await author.call('POST', `/v1/assignments/${redo.assignment_id}/submit`, {
      lease_token: redo.lease_token,
      active_ms: 1000,
      response: { category: 'cat' },
    });
    // The second reviewer asks first (the one who rejected it could review the redo too).
    const check = (await second.call('POST', '/v1/assignments/next', { role: 'review' })).body;
    expect(check.under_review.response).toEqual({ category: 'cat' });
    expect(
      (
        await second.call('POST', `/v1/assignments/${check.assignment_id}/review`, {
          lease_token: check.lease_token,
          result: 'accepted',
          active_ms: 7000,
        })
      ).status,
    ).toBe(200);

    const audits = [{ audited_by: second.id, audit_result: 'accepted', audit_source: 'humantask', audit_time_secs: expect.any(Number) }];
    expect((await legacy('GET', `/v1/task/${taskId}`)).body).toMatchObject({
      status: 'completed',
      response: { category: 'cat' },
      times_redone: 1,
      audits,
    });
    expect((await current('GET', `/v1/task/${taskId}`)).body).toMatchObject({ status: 'completed', times_redone: 1, audits });
    const who = await current('GET', `/v1/task/${taskId}/assignments`);
    expect(who.status, who.text).toBe(200);
    expect(
      who.body.docs.map((d: { worker: string; role: string; status: string; review_result?: string }) => [
        d.worker,
        d.role,
        d.status,
        d.review_result,
      ]),
    ).toEqual([
      [author.id, 'attempt', 'reviewed', 'rejected'],
      [first.id, 'review', 'reviewed', 'rejected'],
      [author.id, 'redo', 'reviewed', 'accepted'],
      [second.id, 'review', 'reviewed', 'accepted'],
    ]);
    await hook.waitFor(() => hook.byTask.has(taskId), 'the callback');

    // A redo waits for its author, unless the author is no longer active: then another worker takes it.
    const other = await mk(['labeler']);
    await current('PUT', '/v1/projects/reviewed/staffing', {
      json: { attempt: [author.id, other.id], review: [first.id, second.id], review_sampling: { new_worker_tasks: 5, rate: 0 } },
    });
    const next = (await legacy('POST', '/v1/task/categorization', { json: { ...categorization(hook.url), project: 'reviewed' } })).body
      .task_id as string;
    const a2 = (await author.call('POST', '/v1/assignments/next', {})).body;
    await author.call('POST', `/v1/assignments/${a2.assignment_id}/submit`, {
      lease_token: a2.lease_token,
      active_ms: 10,
      response: { category: 'dog' },
    });
    const r2 = (await first.call('POST', '/v1/assignments/next', { role: 'review' })).body;
    expect(r2.task.task_id).toBe(next);
    await first.call('POST', `/v1/assignments/${r2.assignment_id}/review`, {
      lease_token: r2.lease_token,
      result: 'rejected',
      feedback_items,
      active_ms: 10,
    });
    expect((await other.call('POST', '/v1/assignments/next', {})).status).toBe(204);
    const authorRecord = (await server.uow.workers.get(author.id))!;
    await server.uow.workers.update({ ...authorRecord, status: 'paused' });
    expect((await other.call('POST', '/v1/assignments/next', {})).body).toMatchObject({ role: 'redo', task: { task_id: next } });
  });

  it("a customer's cancel ends the assignment: the worker's next heartbeat is 409 task_canceled", async () => {
    const { secrets, current } = await account();
    const taskId = (await current('POST', '/v1/task/categorization', { json: categorization(hook.url) })).body.task_id as string;
    const w = as((await createWorker(server, { accountId: secrets.account_id })).token);
    const a = (await w('POST', '/v1/assignments/next', {})).body;
    expect((await current('POST', `/v1/task/${taskId}/cancel`)).status).toBe(200);
    const beat = await w('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, { lease_token: a.lease_token, active_ms: 10 });
    expect([beat.status, beat.body.code]).toEqual([409, 'task_canceled']);
    expect((await w('GET', `/v1/assignments/${a.assignment_id}`)).body.status).toBe('canceled');
  });

  it("replays a submit retried with the same Idempotency-Key; a worker sees only their own assignments; another account's worker gets none of its tasks", async () => {
    const a = await account();
    const b = await account();
    const taskId = (await a.current('POST', '/v1/task/categorization', { json: categorization(hook.url) })).body.task_id as string;
    const stranger = as((await createWorker(server, { accountId: b.secrets.account_id })).token);
    expect((await stranger('POST', '/v1/assignments/next', {})).status).toBe(204);
    const w = as((await createWorker(server, { accountId: a.secrets.account_id })).token);
    const { assignment_id: id, lease_token } = (await w('POST', '/v1/assignments/next', {})).body;
    expect((await stranger('GET', `/v1/assignments/${id}`)).status).toBe(404);
    expect(
      (await stranger('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 0, response: { category: 'cat' } })).status,
    ).toBe(404);
    const key = { 'idempotency-key': `submit-${db}-${id}` };
    const first = await w('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 500, response: { category: 'cat' } }, key);
    const again = await w('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 500, response: { category: 'cat' } }, key);
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true']);
    expect(again.text).toBe(first.text);
    const other = await w('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 500, response: { category: 'dog' } }, key);
    expect(other.status).toBe(409);
    const mine = await w('GET', '/v1/assignments');
    expect(mine.body).toMatchObject({ docs: [{ assignment_id: id, status: 'submitted', task: { task_id: taskId } }], has_more: false });
    expect((await stranger('GET', '/v1/assignments')).body.docs).toEqual([]);
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))(
  'leases over HTTP on %s (10-minute leases on a clock the test moves on, a sweep every 20 ms)',
  (db) => {
    let server: TestServer;
    // The lease lapses when the test moves the server's clock on past it, not while a loaded
    // machine is slow to let the second worker ask.
    const clock = testClock();
    beforeAll(async () => {
      server = await startTestServer(db, { WORK_LEASE_SECONDS: '600', WORK_SWEEP_POLL_MS: '20' }, undefined, { now: clock.now });
    });
    afterAll(async () => {
      await server?.close();
    });
    const as = (token: string) => workerClient(server, token);

    it("a lapsed lease is swept and the task goes to another worker; the first worker's late submit is 409 and changes nothing", async () => {
      const api = client(server, 'current', server.dev.live_key);
      const taskId = (await api('POST', '/v1/task/categorization', { json: categorization('https://example.com/cb') })).body
        .task_id as string;
      const slow = as((await createWorker(server, { accountId: server.dev.account_id })).token);
      const next = as((await createWorker(server, { accountId: server.dev.account_id })).token);
      const a = (await slow('POST', '/v1/assignments/next', {})).body;
      expect((await next('POST', '/v1/assignments/next', {})).status).toBe(204);
      clock.advance(600_000 + 1000);
      await until(async () => (await slow('GET', `/v1/assignments/${a.assignment_id}`)).body.status === 'expired', 'the sweep');
      const b = (await next('POST', '/v1/assignments/next', {})).body;
      expect(b.task.task_id).toBe(taskId);
      const late = await slow('POST', `/v1/assignments/${a.assignment_id}/submit`, {
        lease_token: a.lease_token,
        active_ms: 100,
        response: { category: 'cat' },
      });
      expect([late.status, late.body.code]).toEqual([409, 'lease_lost']);
      expect((await api('GET', `/v1/task/${taskId}`)).body).toMatchObject({ status: 'pending' });
      expect((await api('GET', `/v1/task/${taskId}`)).body.response).toBeUndefined();
    });
  },
);
