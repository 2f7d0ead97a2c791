// The worker client against the real reference server on loopback (PGlite): a scripted worker logs
// in, takes a live task, keeps it, submits, and the customer sees it completed; the long poll;
// review and redo; errors as the customer clients give them; a submit retried after a lost answer
// stored once (Idempotency-Key); API tokens, history and log-out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createWorkerClient, HumantaskError, type WorkerClientOptions } from '../../client/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, type WorkerOptions } from '../support/workers.ts';
import { freshAccount, resetOnceProxy } from './support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(async () => {
  await server?.close();
});

const categorization = (extra: Record<string, unknown> = {}) => ({
  callback_url: 'https://example.com/humantask/callback',
  instruction: 'Pick one',
  attachment_type: 'text' as const,
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
  ...extra,
});

/** A fresh account: its customer client (live key) and a way to make its own workers, logged in through the client. */
async function account() {
  const secrets = await freshAccount(server);
  const customer = createClient({ apiKey: secrets.live_key, baseUrl: server.url, throwOnError: true });
  const live = async (extra: Record<string, unknown> = {}) =>
    (await customer.tasks.create('categorization', categorization(extra))).data.task_id;
  const worker = async (options: WorkerOptions = {}, client: Partial<WorkerClientOptions> = {}) => {
    const w = await createWorker(server, { accountId: secrets.account_id, ...options });
    const c = createWorkerClient({ baseUrl: server.url, ...client });
    const login = await c.login(w.email, w.password);
    expect(login.ok, JSON.stringify(login.error)).toBe(true);
    return Object.assign(c, { workerId: w.workerId });
  };
  return { secrets, customer, live, worker };
}

describe('the worker client against the reference server', () => {
  it('logs in, takes a live task, keeps it with a heartbeat, submits, and the task completes', async () => {
    const { customer, live, worker } = await account();
    const taskId = await live();
    const w = await worker();
    expect(w.token).toMatch(/^wks_/);
    const me = await w.me();
    expect(me.ok && me.data.worker_id).toBe(w.workerId);

    const next = await w.next();
    if (!next.ok || next.status !== 200) throw new Error(`next answered ${next.status}`);
    const a = next.data;
    expect(a).toMatchObject({ role: 'attempt', status: 'active', task: { task_id: taskId, type: 'categorization' } });
    const beat = await w.heartbeat(a.assignment_id, { lease_token: a.lease_token!, active_ms: 1500, draft: { category: 'billing' } });
    // The server counts at most the time that passed since the assignment was issued.
    expect(beat.ok && beat.data.active_ms).toBeGreaterThan(0);
    expect((await w.get(a.assignment_id)).data).toMatchObject({ draft: { category: 'billing' } });

    const submitted = await w.submit(a.assignment_id, { lease_token: a.lease_token!, active_ms: 500, response: { category: 'billing' } });
    if (!submitted.ok) throw new Error(JSON.stringify(submitted.error));
    expect(submitted.data).toMatchObject({ status: 'submitted', response: { category: 'billing' } });
    expect((await customer.tasks.get(taskId)).data).toMatchObject({ status: 'completed', response: { category: 'billing' } });
    const who = await customer.GET('/v1/task/{taskId}/assignments', { params: { path: { taskId } } });
    expect(who.data?.docs).toEqual([expect.objectContaining({ worker: w.workerId, role: 'attempt', status: 'submitted' })]);
  });

  it('logs in to the workforce it names when the address and password open workers of several (409 workforce_required)', async () => {
    const secrets = await freshAccount(server);
    const email = `both-modes-${Math.random().toString(16).slice(2)}@example.com`;
    const ids: Record<string, string> = {};
    for (const apiKey of [secrets.test_key, secrets.live_key]) {
      const customer = createClient({ apiKey, baseUrl: server.url, throwOnError: true });
      const { data } = await customer.POST('/v1/workforce/workers', {
        body: { email, display_name: 'Both', roles: ['labeler'], password: 'one-password-for-both' },
      });
      ids[data!.workforce_id] = data!.worker_id;
    }
    const c = createWorkerClient({ baseUrl: server.url });
    const ambiguous = await c.login(email, 'one-password-for-both');
    expect(!ambiguous.ok && [ambiguous.status, ambiguous.error.code]).toEqual([409, 'workforce_required']);
    for (const [workforceId, workerId] of Object.entries(ids)) {
      const login = await c.login(email, 'one-password-for-both', { workforceId });
      expect(login.ok && login.data.worker.worker_id).toBe(workerId);
    }
  });

  it("sends a task back for a redo after the customer's rejecting audit, the comments as a feedback item", async () => {
    const { customer, live, worker } = await account();
    const taskId = await live();
    const w = await worker();
    const first = await w.next();
    if (!first.ok || first.status !== 200) throw new Error('no work');
    await w.submit(first.data.assignment_id, { lease_token: first.data.lease_token!, active_ms: 100, response: { category: 'billing' } });
    await customer.tasks.audit(taskId, { accepted: false, comments: 'It is a support request.' });
    const redo = await w.next();
    if (!redo.ok || redo.status !== 200) throw new Error(`no redo: ${redo.status}`);
    expect(redo.data).toMatchObject({
      role: 'redo',
      task: { task_id: taskId },
      previous_response: { category: 'billing' },
      feedback: { result: 'rejected', feedback_items: [{ category: 'other', text: 'It is a support request.' }] },
    });
  });

  it('answers 204 with Retry-After when there is no work, and a long poll is answered as soon as work comes', async () => {
    const { live, worker } = await account();
    const w = await worker();
    const none = await w.next();
    expect([none.ok, none.status, none.data, none.response.headers.get('retry-after')]).toEqual([true, 204, undefined, '5']);
    const started = Date.now();
    const waiting = w.next({ wait: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const taskId = await live();
    const got = await waiting;
    expect(got.status).toBe(200);
    expect(got.ok && got.status === 200 && got.data.task.task_id).toBe(taskId);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('gives errors as the customer clients do: typed results with the code, or HumantaskError with throwOnError', async () => {
    const { live, worker } = await account();
    await live();
    const w = await worker();
    const next = await w.next();
    if (!next.ok || next.status !== 200) throw new Error('no work');
    const stale = await w.heartbeat(next.data.assignment_id, { lease_token: 'lt_not_the_lease', active_ms: 0 });
    expect(stale.ok).toBe(false);
    if (stale.ok) return;
    expect(stale.status).toBe(409);
    expect(stale.error).toMatchObject({ status_code: 409, code: 'lease_lost' });
    const invalid = await w.submit(next.data.assignment_id, {
      lease_token: next.data.lease_token!,
      active_ms: 0,
      response: { category: 'weather' },
    });
    expect(invalid.ok || [invalid.status, invalid.error.code]).toEqual([400, 'invalid_request']);

    const strict = createWorkerClient({ baseUrl: server.url, token: w.token!, throwOnError: true });
    const thrown = await strict.get('asg_000000000000000000000000').catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(HumantaskError);
    expect(thrown).toMatchObject({ status: 404, operation: 'GET /v1/assignments/{assignmentId}', body: { code: 'not_found' } });
    const anonymous = await createWorkerClient({ baseUrl: server.url }).me();
    expect([anonymous.status, anonymous.error?.code]).toEqual([401, 'unauthenticated']);
  });

  it('retries a submit whose connection was reset after the server stored it: the answer is replayed, stored once', async () => {
    const { customer, live, worker } = await account();
    const taskId = await live();
    const w = await worker();
    const next = await w.next();
    if (!next.ok || next.status !== 200) throw new Error('no work');
    const proxy = await resetOnceProxy(server.url);
    try {
      const via = createWorkerClient({ baseUrl: proxy.url, token: w.token!, retry: { minDelayMs: 10 } });
      const submitted = await via.submit(next.data.assignment_id, {
        lease_token: next.data.lease_token!,
        active_ms: 100,
        response: { category: 'support' },
      });
      expect(proxy.resets).toBe(1);
      expect(submitted.ok && submitted.data.status).toBe('submitted');
      expect(submitted.response.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await proxy.close();
    }
    const who = await customer.GET('/v1/task/{taskId}/assignments', { params: { path: { taskId } } });
    expect(who.data?.docs).toHaveLength(1);
    expect((await customer.tasks.get(taskId)).data).toMatchObject({ status: 'completed', response: { category: 'support' } });
  });

  it('reviews: a rejection sends the task back to its author as a redo with the feedback; another reviewer accepts', async () => {
    const { customer, live, worker } = await account();
    await customer.projects.create({ type: 'categorization', name: 'checked' });
    const author = await worker({ roles: ['labeler'] });
    const [first, second] = [await worker({ roles: ['reviewer'] }), await worker({ roles: ['reviewer'] })];
    const staffed = await customer.PUT('/v1/projects/{projectName}/staffing', {
      params: { path: { projectName: 'checked' } },
      body: { attempt: [author.workerId], review: [first.workerId, second.workerId], review_sampling: { new_worker_tasks: 5, rate: 0 } },
    });
    expect(staffed.response.status).toBe(200);
    const taskId = await live({ project: 'checked' });

    const take = async (w: typeof author, role?: 'review') => {
      const r = await w.next(role ? { role } : {});
      if (!r.ok || r.status !== 200) throw new Error(`no ${role ?? 'attempt'} for ${w.workerId}: ${r.status}`);
      return r.data;
    };
    const attempt = await take(author);
    await author.submit(attempt.assignment_id, { lease_token: attempt.lease_token!, active_ms: 100, response: { category: 'billing' } });
    const review = await take(first, 'review');
    expect(review.under_review?.response).toEqual({ category: 'billing' });
    const feedback_items = [{ category: 'wrong_label' as const, text: 'It is a support request.', scope: { field: 'category' } }];
    const rejected = await first.review(review.assignment_id, {
      lease_token: review.lease_token!,
      result: 'rejected',
      feedback_items,
      active_ms: 200,
    });
    expect(rejected.ok && rejected.data.review).toMatchObject({ result: 'rejected', feedback_items });

    const redo = await take(author);
    expect(redo).toMatchObject({ role: 'redo', previous_response: { category: 'billing' }, feedback: { feedback_items } });
    await author.submit(redo.assignment_id, { lease_token: redo.lease_token!, active_ms: 100, response: { category: 'support' } });
    const check = await take(second, 'review');
    const accepted = await second.review(check.assignment_id, { lease_token: check.lease_token!, result: 'accepted', active_ms: 300 });
    expect(accepted.ok).toBe(true);
    expect((await customer.tasks.get(taskId)).data).toMatchObject({
      status: 'completed',
      response: { category: 'support' },
      times_redone: 1,
      audits: [expect.objectContaining({ audited_by: second.workerId, audit_result: 'accepted' })],
    });

    const history: string[] = [];
    for await (const a of author.iterateHistory({ limit: 1 })) history.push(`${a.role} ${a.status}`);
    expect(history).toEqual(['redo reviewed', 'attempt reviewed']);
  });

  it('skips and releases; API tokens for scripts; log-out drops the token', async () => {
    const { live, worker } = await account();
    const first = await live();
    const w = await worker();
    const a = await w.next();
    if (!a.ok || a.status !== 200) throw new Error('no work');
    const released = await w.release(a.data.assignment_id, { lease_token: a.data.lease_token!, active_ms: 10 });
    expect(released.ok && released.data.status).toBe('released');
    const again = await w.next();
    if (!again.ok || again.status !== 200) throw new Error('no work');
    expect(again.data.task.task_id).toBe(first);
    const skipped = await w.skip(again.data.assignment_id, { lease_token: again.data.lease_token!, reason: 'Cannot read it.' });
    expect(skipped.ok && skipped.data).toMatchObject({ status: 'skipped', skip_reason: 'Cannot read it.' });
    expect((await w.next()).status).toBe(204);
    const page = await w.history({ status: 'skipped' });
    expect(page.ok && page.data.docs.map((d) => d.assignment_id)).toEqual([again.data.assignment_id]);

    const created = await w.tokens.create({ name: 'labeling script' });
    if (!created.ok) throw new Error(JSON.stringify(created.error));
    const script = createWorkerClient({ baseUrl: server.url, token: created.data.token });
    expect((await script.me()).status).toBe(200);
    expect((await w.tokens.list()).data?.docs.map((t) => t.token_id)).toEqual([created.data.token_id]);
    expect((await w.tokens.revoke(created.data.token_id)).status).toBe(204);
    expect((await script.me()).status).toBe(401);

    expect((await w.logout()).status).toBe(204);
    expect(w.token).toBeUndefined();
    expect((await w.me()).status).toBe(401);
  });
});
