// Reviews over the worker API (issue 20), on PGlite and PostgreSQL: what a redo says about the
// rejection that caused it and what its own review says; a review of a task several workers
// attempted (overlap) decides about the attempt the reviewer picks (accept, fix on it, reject it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { petsAccount } from '../support/accounts.ts';
import { takeAndSubmit } from '../support/assignments.ts';
import { testClock } from '../support/clock.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { createWorker, workerClient } from '../support/workers.ts';

type Call = ReturnType<typeof workerClient>;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('reviews on %s', (db) => {
  let server: TestServer;
  let hook: Receiver;
  const clock = testClock();

  beforeAll(async () => {
    hook = await startReceiver();
    server = await startTestServer(
      db,
      { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0' },
      undefined,
      { now: clock.now },
    );
  });
  afterAll(async () => {
    await server?.close();
    await hook?.close();
  });

  /** A call of the worker API with a worker's token. */
  const as = (token: string) => workerClient(server, token);

  /** A fresh account with a categorization project `pets`; its workers. */
  async function account() {
    const { secrets, live, newTask } = await petsAccount(server, `review-${db}-${Math.random().toString(16).slice(2)}`, hook.url);
    const worker = async (roles: ('labeler' | 'reviewer')[] = ['labeler']) => {
      const w = await createWorker(server, { accountId: secrets.account_id, roles });
      return { id: w.workerId, call: as(w.token) };
    };
    return { live, worker, newTask };
  }

  /** The worker takes their next work (expected to be of this task) and answers it; the assignment taken. */
  const answer = (call: Call, taskId: string, category: string) => takeAndSubmit(call, taskId, { category });

  /** The reviewer takes the next review (of this task) and decides it; the review as taken. */
  async function decide(call: Call, taskId: string, decision: Record<string, unknown>) {
    const review = await call('POST', '/v1/assignments/next', { role: 'review' });
    expect(review.status, review.text).toBe(200);
    expect(review.body.task.task_id).toBe(taskId);
    const decided = await call('POST', `/v1/assignments/${review.body.assignment_id}/review`, {
      lease_token: review.body.lease_token,
      active_ms: 1000,
      ...decision,
    });
    expect(decided.status, decided.text).toBe(200);
    return review.body;
  }

  it('a redo carries the remarks of the rejection that caused it; its own review only its own: none after an accept or a fix without remarks', async () => {
    const { live, worker, newTask } = await account();
    const author = await worker();
    const reviewers = [await worker(['reviewer']), await worker(['reviewer']), await worker(['reviewer'])];
    const staffed = await live('PUT', '/v1/projects/pets/staffing', {
      json: { attempt: [author.id], review: reviewers.map((r) => r.id), review_sampling: { new_worker_tasks: 10, rate: 0 } },
    });
    expect(staffed.status, staffed.text).toBe(200);
    const first = [{ category: 'wrong_label', text: 'It is a cat.', scope: { field: 'category' } }];
    const second = [{ category: 'instructions', text: 'Read the text again: it says cat.' }];

    const taskId = await newTask();
    await answer(author.call, taskId, 'dog');
    const review1 = await decide(reviewers[0]!.call, taskId, { result: 'rejected', feedback_items: first });
    expect(review1.under_review.earlier_reviews).toBeUndefined();
    const redo1 = await answer(author.call, taskId, 'fish');
    expect(redo1).toMatchObject({ role: 'redo', feedback: { result: 'rejected', feedback_items: first } });
    expect(redo1.review).toBeUndefined();
    // The reviewer of a redo sees the remarks of the review it answers (oldest first), to check them.
    const review2 = await decide(reviewers[1]!.call, taskId, { result: 'rejected', feedback_items: second });
    expect(review2.under_review).toMatchObject({
      response: { category: 'fish' },
      earlier_reviews: [{ result: 'rejected', feedback_items: first }],
    });
    // The second redo carries the second rejection's remarks, not the first's.
    const redo2 = await answer(author.call, taskId, 'cat');
    expect(redo2).toMatchObject({ role: 'redo', feedback: { result: 'rejected', feedback_items: second } });
    const review3 = await decide(reviewers[2]!.call, taskId, { result: 'accepted' });
    expect(review3.under_review.earlier_reviews).toMatchObject([
      { result: 'rejected', feedback_items: first },
      { result: 'rejected', feedback_items: second },
    ]);

    const mine = async (id: string) => (await author.call('GET', `/v1/assignments/${id}`)).body;
    expect(await mine(redo2.assignment_id)).toMatchObject({
      status: 'reviewed',
      feedback: { result: 'rejected', feedback_items: second },
      review: { result: 'accepted', feedback_items: [] },
    });
    expect(await mine(redo1.assignment_id)).toMatchObject({
      feedback: { result: 'rejected', feedback_items: first },
      review: { result: 'rejected', feedback_items: second },
    });

    // A fix without remarks: the fixed redo's review has none either.
    const fixed = await newTask();
    await answer(author.call, fixed, 'dog');
    await decide(reviewers[0]!.call, fixed, { result: 'rejected', feedback_items: first });
    const redo3 = await answer(author.call, fixed, 'fish');
    await decide(reviewers[1]!.call, fixed, { result: 'fixed', response: { category: 'cat' } });
    expect(await mine(redo3.assignment_id)).toMatchObject({
      feedback: { result: 'rejected', feedback_items: first },
      review: { result: 'fixed', feedback_items: [] },
    });
    await hook.waitFor(() => hook.byTask.has(fixed), 'the callback of the fixed task');
    expect(hook.bodiesOf(fixed).map((b) => b.response)).toEqual([{ category: 'cat' }]);
  });

  it("overlap 3, the workers disagree: the reviewer sees every attempt, rejects one (its author redoes it), then accepts another, whose author redoes a customer's rejection; a fix is made on the attempt picked", async () => {
    const { live, worker, newTask } = await account();
    const policy = await live('PUT', '/v1/projects/pets/quality_policy', {
      json: { overlap: 3, consensus: { threshold: 0.8, max_extra: 0 } },
    });
    expect(policy.status, policy.text).toBe(200);
    const labelers = [await worker(), await worker(), await worker()];
    const [first, second] = [await worker(['reviewer']), await worker(['reviewer'])];
    const who = async (taskId: string) =>
      (await live('GET', `/v1/task/${taskId}/assignments`)).body.docs.map((d: { worker: string; role: string; review_result?: string }) => [
        d.worker,
        d.role,
        d.review_result,
      ]);

    const taskId = await newTask();
    const attempts = [];
    for (const [i, category] of ['cat', 'dog', 'fish'].entries()) attempts.push(await answer(labelers[i]!.call, taskId, category));
    const remarks = [{ category: 'wrong_label', text: 'Not a dog.', scope: { field: 'category' } }];
    const review = await decide(first.call, taskId, { result: 'rejected', attempt: 2, feedback_items: remarks });
    expect(review.under_review.attempts.map((x: { response: unknown }) => x.response)).toEqual([
      { category: 'cat' },
      { category: 'dog' },
      { category: 'fish' },
    ]);
    expect(review.under_review.response).toEqual(review.under_review.attempts[review.under_review.attempt - 1].response);
    // The author of the second attempt redoes it, with the remarks; the others have nothing to do.
    for (const i of [0, 2]) expect((await labelers[i]!.call('POST', '/v1/assignments/next', {})).status).toBe(204);
    const redo = await answer(labelers[1]!.call, taskId, 'fish');
    expect(redo).toMatchObject({
      role: 'redo',
      previous_response: { category: 'dog' },
      feedback: { result: 'rejected', feedback_items: remarks },
    });
    // The redo is reviewed beside the attempts still standing (the redo in the place of the rejected one).
    const again = await decide(second.call, taskId, { result: 'accepted', attempt: 1 });
    expect(again.under_review).toMatchObject({ response: { category: 'fish' }, attempt: 3 });
    expect(again.under_review.attempts.map((x: { response: unknown }) => x.response)).toEqual([
      { category: 'cat' },
      { category: 'fish' },
      { category: 'fish' },
    ]);
    await hook.waitFor(() => hook.byTask.has(taskId), 'the callback of the accepted attempt');
    expect(hook.bodiesOf(taskId).map((b) => b.response)).toEqual([{ category: 'cat' }]);
    // The customer rejects the result: the author of the accepted attempt redoes it, not the last to submit.
    expect((await live('POST', `/v1/task/${taskId}/audit`, { json: { accepted: false, comments: 'It is a fish.' } })).status).toBe(200);
    // The audit is written on the attempt whose answer the customer received (the first), not on the redo submitted last.
    const audits = await server.store.execute<{ worker_id: string; assignment_id: string; data: unknown }>({
      name: `review_audited_${db}`,
      text: "SELECT worker_id, assignment_id, data FROM work_events WHERE task_id = $1 AND kind = 'audited'",
      values: [taskId],
    });
    expect(audits).toEqual([
      { worker_id: labelers[0]!.id, assignment_id: attempts[0].assignment_id, data: { result: 'rejected', by: 'customer', score: 0 } },
    ]);
    for (const i of [1, 2]) expect((await labelers[i]!.call('POST', '/v1/assignments/next', {})).status).toBe(204);
    const audited = (await labelers[0]!.call('POST', '/v1/assignments/next', {})).body;
    expect(audited).toMatchObject({
      role: 'redo',
      task: { task_id: taskId },
      previous_response: { category: 'cat' },
      feedback: { result: 'rejected', feedback_items: [{ text: 'It is a fish.' }] },
    });
    const redone = await labelers[0]!.call('POST', `/v1/assignments/${audited.assignment_id}/submit`, {
      lease_token: audited.lease_token,
      response: { category: 'fish' },
      active_ms: 1000,
    });
    expect(redone.status, redone.text).toBe(200);
    expect((await live('GET', `/v1/task/${taskId}`)).body).toMatchObject({ response: { category: 'fish' }, times_redone: 1 });
    expect((await who(taskId)).slice(0, 6)).toEqual([
      [labelers[0]!.id, 'attempt', 'rejected'],
      [labelers[1]!.id, 'attempt', 'rejected'],
      [labelers[2]!.id, 'attempt', undefined],
      [first.id, 'review', 'rejected'],
      [labelers[1]!.id, 'redo', undefined],
      [second.id, 'review', 'accepted'],
    ]);

    const fixed = await newTask();
    for (const [i, category] of ['cat', 'dog', 'fish'].entries()) await answer(labelers[i]!.call, fixed, category);
    const held = (await first.call('POST', '/v1/assignments/next', { role: 'review' })).body;
    const beyond = await first.call('POST', `/v1/assignments/${held.assignment_id}/review`, {
      lease_token: held.lease_token,
      result: 'accepted',
      attempt: 4,
      active_ms: 10,
    });
    expect([beyond.status, beyond.body.error]).toEqual([400, 'attempt 4 is not one of the 3 attempts under review (1 to 3).']);
    const fix = await first.call('POST', `/v1/assignments/${held.assignment_id}/review`, {
      lease_token: held.lease_token,
      result: 'fixed',
      attempt: 3,
      response: { category: 'dog' },
      active_ms: 10,
    });
    expect(fix.status, fix.text).toBe(200);
    expect(fix.body.under_review).toMatchObject({ response: { category: 'fish' }, attempt: 3 });
    await hook.waitFor(() => hook.byTask.has(fixed), 'the callback of the fixed attempt');
    expect(hook.bodiesOf(fixed).map((b) => b.response)).toEqual([{ category: 'dog' }]);
    expect((await who(fixed)).map((r: unknown[]) => r[2])).toEqual([undefined, undefined, 'fixed', 'fixed']);
  });
  it("says when the review was decided, not when the work was submitted: in the history, the redo and the reviewer's own", async () => {
    const { live, worker, newTask } = await account();
    const author = await worker();
    const reviewer = await worker(['reviewer']);
    const staffed = await live('PUT', '/v1/projects/pets/staffing', {
      json: { attempt: [author.id], review: [reviewer.id], review_sampling: { new_worker_tasks: 10, rate: 0 } },
    });
    expect(staffed.status, staffed.text).toBe(200);
    const taskId = await newTask();
    const attempt = await answer(author.call, taskId, 'dog');
    const submitted = (await author.call('GET', `/v1/assignments/${attempt.assignment_id}`)).body.submitted_at as string;
    // The review is decided ten minutes after the submit.
    clock.advance(600_000);
    const review = await decide(reviewer.call, taskId, {
      result: 'rejected',
      feedback_items: [{ category: 'other', text: 'Look again.' }],
    });
    const decidedAt = (await reviewer.call('GET', `/v1/assignments/${review.assignment_id}`)).body.review.reviewed_at as string;
    expect(Date.parse(decidedAt) - Date.parse(submitted)).toBeGreaterThanOrEqual(600_000);
    const history = await author.call('GET', '/v1/assignments');
    const listed = history.body.docs.find((a: { assignment_id: string }) => a.assignment_id === attempt.assignment_id);
    expect(listed.review).toMatchObject({ result: 'rejected', reviewed_at: decidedAt });
    const redo = await author.call('POST', '/v1/assignments/next', {});
    expect(redo.body).toMatchObject({ role: 'redo', feedback: { result: 'rejected', reviewed_at: decidedAt } });
  });
});
