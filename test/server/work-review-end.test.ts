// No task waits in review for ever (issue 31, finding 10), on PGlite and PostgreSQL, over the worker
// API: a reviewer may review a redo of what they rejected (before, a task every staffed reviewer had
// rejected once waited with no reviewer left), and after REVIEW_MAX_REJECTIONS rejections (2) the
// next review is final: it accepts or fixes, a rejection answers 400. A randomized run of reviewers
// who reject half of what they see ends with every task completed and its callback delivered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { petsAccount } from '../support/accounts.ts';
import { takeAndSubmit } from '../support/assignments.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, workerClient } from '../support/workers.ts';

type Call = ReturnType<typeof workerClient>;

/** A seeded random source (mulberry32): the reviewers' decisions replay. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('reviews end on %s', (db) => {
  let server: TestServer;
  let hook: Receiver;
  let n = 0;

  beforeAll(async () => {
    hook = await startReceiver();
    server = await startTestServer(db, { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', WORK_SWEEP_POLL_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
    await hook?.close();
  });

  /** A fresh account with a project `pets` whose every answer is reviewed by `reviewers`; its workers. */
  async function account(labelers: number, reviewers: number) {
    const { secrets, live, newTask } = await petsAccount(server, `review-end-${db}-${n++}`, hook.url);
    const make = async (roles: ('labeler' | 'reviewer')[]) => {
      const w = await createWorker(server, { accountId: secrets.account_id, roles });
      return { id: w.workerId, call: workerClient(server, w.token) };
    };
    const authors = [];
    for (let i = 0; i < labelers; i++) authors.push(await make(['labeler']));
    const checkers = [];
    for (let i = 0; i < reviewers; i++) checkers.push(await make(['reviewer']));
    const staffed = await live('PUT', '/v1/projects/pets/staffing', {
      json: {
        attempt: authors.map((w) => w.id),
        review: checkers.map((w) => w.id),
        review_sampling: { new_worker_tasks: 1000, rate: 1 },
      },
    });
    expect(staffed.status, staffed.text).toBe(200);
    return { live, newTask, authors, checkers };
  }

  /** The reviewer's next review: the answer (204 when there is none). */
  const nextReview = (call: Call) => call('POST', '/v1/assignments/next', { role: 'review' });
  const decide = (call: Call, review: { assignment_id: string; lease_token: string }, decision: Record<string, unknown>) =>
    call('POST', `/v1/assignments/${review.assignment_id}/review`, { lease_token: review.lease_token, active_ms: 1000, ...decision });
  const remarks = [{ category: 'wrong_label', text: 'Look again.', scope: { field: 'category' } }];

  it('a task every staffed reviewer rejected gets a review again; after two rejections the review is final: it accepts or fixes, never rejects', async () => {
    const { live, newTask, authors, checkers } = await account(1, 2);
    const [author] = authors;
    const [first, second] = checkers;
    const taskId = await newTask();
    await takeAndSubmit(author!.call, taskId, { category: 'dog' });
    const r1 = await nextReview(first!.call);
    expect(r1.body).toMatchObject({ role: 'review', task: { task_id: taskId } });
    expect(r1.body.under_review).not.toHaveProperty('final');
    expect((await decide(first!.call, r1.body, { result: 'rejected', feedback_items: remarks })).status).toBe(200);
    await takeAndSubmit(author!.call, taskId, { category: 'fish' });
    const r2 = await nextReview(second!.call);
    expect(r2.body.under_review).not.toHaveProperty('final');
    expect((await decide(second!.call, r2.body, { result: 'rejected', feedback_items: remarks })).status).toBe(200);
    await takeAndSubmit(author!.call, taskId, { category: 'dog' });

    // Both staffed reviewers rejected it once: before, neither could review it again and it waited for good.
    const r3 = await nextReview(first!.call);
    expect(r3.status, r3.text).toBe(200);
    expect(r3.body).toMatchObject({
      role: 'review',
      task: { task_id: taskId },
      under_review: { response: { category: 'dog' }, final: true },
    });
    const refused = await decide(first!.call, r3.body, { result: 'rejected', feedback_items: remarks });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/rejected the work of task \w+ 2 times: this review is final/);
    // Nothing changed: the review is still held, the task still in review.
    expect((await first!.call('GET', `/v1/assignments/${r3.body.assignment_id}`)).body).toMatchObject({ status: 'active' });
    expect((await live('GET', `/v1/task/${taskId}`)).body.status).toBe('pending');
    const fixed = await decide(first!.call, r3.body, { result: 'fixed', response: { category: 'cat' } });
    expect(fixed.status, fixed.text).toBe(200);
    expect((await live('GET', `/v1/task/${taskId}`)).body).toMatchObject({
      status: 'completed',
      response: { category: 'cat' },
      audits: [expect.objectContaining({ audit_result: 'fixed', audit_source: 'humantask' })],
    });
    await hook.waitFor(() => hook.byTask.has(taskId), 'the callback of the task');
    expect(hook.bodiesOf(taskId).map((b) => b.response)).toEqual([{ category: 'cat' }]);
  });

  it('one staffed reviewer reviews the redo of what they rejected, until the final review accepts it', async () => {
    const { live, newTask, authors, checkers } = await account(1, 1);
    const [author] = authors;
    const [only] = checkers;
    const taskId = await newTask();
    await takeAndSubmit(author!.call, taskId, { category: 'dog' });
    for (let round = 0; round < 2; round++) {
      const review = await nextReview(only!.call);
      expect(review.status, review.text).toBe(200);
      expect(review.body.task.task_id).toBe(taskId);
      expect((await decide(only!.call, review.body, { result: 'rejected', feedback_items: remarks })).status).toBe(200);
      const redo = await takeAndSubmit(author!.call, taskId, { category: 'fish' });
      expect(redo).toMatchObject({ role: 'redo', feedback: { result: 'rejected' } });
    }
    const last = await nextReview(only!.call);
    expect(last.body).toMatchObject({ task: { task_id: taskId }, under_review: { final: true } });
    expect((await decide(only!.call, last.body, { result: 'accepted' })).status).toBe(200);
    expect((await live('GET', `/v1/task/${taskId}`)).body).toMatchObject({ status: 'completed', response: { category: 'fish' } });
    expect((await nextReview(only!.call)).status).toBe(204);
  });

  it('randomized: reviewers who reject half of what they see, two reviewers for three labelers; every task ends, with its callback', async () => {
    const { live, newTask, authors, checkers } = await account(3, 2);
    const tasks: string[] = [];
    for (let i = 0; i < 40; i++) tasks.push(await newTask());
    const random = seeded(10);
    const everyone = [
      ...authors.map((w) => ({ ...w, role: 'attempt' as const })),
      ...checkers.map((w) => ({ ...w, role: 'review' as const })),
    ];
    const rejectedBy = new Map<string, number>();
    let idle = new Set<string>();
    for (let turn = 0; idle.size < everyone.length && turn < 2000; turn++) {
      const who = everyone[Math.floor(random() * everyone.length)]!;
      const next = await who.call('POST', '/v1/assignments/next', { role: who.role });
      if (next.status === 204) {
        idle.add(who.id);
        continue;
      }
      expect(next.status, next.text).toBe(200);
      idle = new Set();
      const a = next.body;
      if (who.role === 'attempt') {
        const answer = ['cat', 'dog', 'fish'][Math.floor(random() * 3)];
        const done = await who.call('POST', `/v1/assignments/${a.assignment_id}/submit`, {
          lease_token: a.lease_token,
          response: { category: answer },
          active_ms: 1000,
        });
        expect(done.status, done.text).toBe(200);
        continue;
      }
      const draw = random();
      const decision =
        !a.under_review.final && draw < 0.5
          ? { result: 'rejected', feedback_items: remarks }
          : draw < 0.75
            ? { result: 'accepted' }
            : { result: 'fixed', response: { category: 'cat' } };
      const done = await decide(who.call, a, decision);
      expect(done.status, done.text).toBe(200);
      if (decision.result === 'rejected') rejectedBy.set(a.task.task_id, (rejectedBy.get(a.task.task_id) ?? 0) + 1);
    }
    expect(idle.size, 'everyone ran out of work').toBe(everyone.length);
    // Reviews rejected some tasks twice, and those too ended.
    expect([...rejectedBy.values()].filter((r) => r === 2).length).toBeGreaterThan(0);
    for (const taskId of tasks) {
      const task = (await live('GET', `/v1/task/${taskId}`)).body;
      expect(task.status, `task ${taskId}`).toBe('completed');
      const reviews = (await live('GET', `/v1/task/${taskId}/assignments`)).body.docs.filter((d: { role: string }) => d.role === 'review');
      expect(reviews.filter((r: { review_result?: string }) => r.review_result === 'rejected').length).toBeLessThanOrEqual(2);
    }
    await hook.waitFor(() => tasks.every((t) => hook.byTask.has(t)), 'every task called back');
  });
});
