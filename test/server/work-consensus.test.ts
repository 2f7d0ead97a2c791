// Overlap and consensus in the work loop (issue 19 item 5), on PGlite and PostgreSQL: a project
// whose quality policy asks for overlap N gets N distinct workers per live task; once their
// answers are in they are combined: agreement at or above the threshold completes the task with
// the combined answer (one callback); below it, workers are added up to max_extra, then the task
// goes to review with the attempts beside the reviewed one. A worker never attempts a task twice,
// and the last two submits of a task, at once, complete it once.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId } from '../../server/domain/ids.ts';
import type { Caller } from '../../server/domain/model.ts';
import type { Assignment } from '../../server/domain/workforce/model.ts';
import type { WorkerPrincipal } from '../../server/domain/workforce/worker.ts';
import { reviewAssignment, submitAssignment } from '../../server/domain/workforce/answers.ts';
import { assignmentWork } from '../../server/domain/workforce/assignments.ts';
import { claimNext, type WorkSettings } from '../../server/domain/workforce/work.ts';
import { loadContract } from '../../server/http/contract.ts';
import { petsAccount } from '../support/accounts.ts';
import { takeAndSubmit } from '../support/assignments.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { createWorker, storedWorker, workerClient } from '../support/workers.ts';

const checkSchema = loadContract('current').checkResponse;
const settings: WorkSettings = { leaseMs: 60_000, hardCapMs: 600_000, redoReserveMs: 3_600_000 };
const round = (x: number) => Math.round(x * 1e6) / 1e6;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('overlap and consensus on %s', (db) => {
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

  /** A fresh account with a categorization project under this quality policy. */
  async function project(policy: Record<string, unknown>) {
    const { secrets, live, newTask } = await petsAccount(server, `consensus-${db}-${n++}`, hook.url, policy);
    const caller: Caller = { account: (await server.uow.accounts.findById(secrets.account_id))!, mode: 'live' };
    const worker = (id: string, roles: WorkerPrincipal['roles'] = ['labeler']) =>
      storedWorker(
        server.uow,
        {
          workerId: `wkr_${randomBytes(12).toString('hex')}`,
          accountId: secrets.account_id,
          mode: 'live',
          roles,
          calibrator: false,
          status: 'active',
        },
        id,
      );
    return { secrets, caller, live, worker, newTask };
  }

  const claim = (w: WorkerPrincipal, random?: () => number) => claimNext(server.uow, w, {}, settings, new Date(), random);
  const submit = (w: WorkerPrincipal, a: Assignment, category: string) =>
    submitAssignment(server.uow, w, a.assignmentId, { leaseToken: a.leaseToken, response: { category } }, checkSchema, new Date());
  const task = (caller: Caller, taskId: string) => server.uow.tasks.get(caller.account.accountId, 'live', taskId);
  const callbacks = async (caller: Caller, taskId: string) =>
    (await server.uow.outbox.forSubject(caller.account.accountId, taskId)).filter((m) => m.event === 'task_completed');
  const events = (taskId: string, kind: string) =>
    server.store.execute<{ data: Record<string, unknown> }>({
      name: `consensus_events_${db}`,
      text: 'SELECT data FROM work_events WHERE task_id = $1 AND kind = $2 ORDER BY id',
      values: [taskId, kind],
    });

  /** Each worker claims (and gets this task), then submits its category, in order; the outcomes. */
  async function answer(taskId: string, given: Array<[WorkerPrincipal, string]>) {
    const outcomes: string[] = [];
    for (const [w, category] of given) {
      const a = (await claim(w))!;
      expect(a).toMatchObject({ taskId, role: 'attempt' });
      outcomes.push((await submit(w, a, category)).next);
    }
    return outcomes;
  }

  it('overlap 3, the workers agree: three distinct workers, then the task completes with the combined answer and one callback', async () => {
    const { caller, worker, newTask } = await project({ overlap: 3 });
    const taskId = await newTask();
    const [w1, w2, w3, w4] = [await worker('w1'), await worker('w2'), await worker('w3'), await worker('w4')];
    expect((await server.uow.work.getTaskWork(taskId))!).toMatchObject({ needed: 3, openSlots: 3 });

    const a1 = (await claim(w1))!;
    expect((await submit(w1, a1, 'cat')).next).toBe('waiting');
    // The task waits for the others; its first worker does not get it again.
    expect(await task(caller, taskId)).toMatchObject({ status: 'pending', response: null });
    expect(await claim(w1)).toBeNull();
    expect(
      await answer(taskId, [
        [w2, 'cat'],
        [w3, 'cat'],
      ]),
    ).toEqual(['waiting', 'completed']);
    // Three slots, three workers: a fourth finds nothing.
    expect(await claim(w4)).toBeNull();

    expect(await task(caller, taskId)).toMatchObject({ status: 'completed', response: { category: 'cat' } });
    const sent = await callbacks(caller, taskId);
    expect(sent).toHaveLength(1);
    expect((sent[0]!.payload as { response: unknown }).response).toEqual({ category: 'cat' });
    expect((await events(taskId, 'combined')).map((e) => e.data)).toEqual([
      {
        project: 'pets',
        type: 'categorization',
        agreement: 1,
        workers: 3,
        fields: { category: 1 },
        method: 'combined',
        outcome: 'completed',
        threshold: 0.8,
        // No evaluation scores yet: each at the default weight, ln 3.
        answers: [w1, w2, w3].map((w) => ({
          assignment_id: expect.any(String),
          worker_id: w.workerId,
          weight: round(Math.log(3)),
          score: 1,
          agreement: 1,
        })),
      },
    ]);
    expect(await events(taskId, 'completed')).toHaveLength(1);
  });

  it("the task's response is the combined answer (the majority), not the last one submitted", async () => {
    const { caller, worker, newTask } = await project({ overlap: 3, consensus: { threshold: 0.3 } });
    const taskId = await newTask();
    expect(
      await answer(taskId, [
        [await worker('a'), 'dog'],
        [await worker('b'), 'dog'],
        [await worker('c'), 'cat'],
      ]),
    ).toEqual(['waiting', 'waiting', 'completed']);
    expect(await task(caller, taskId)).toMatchObject({ status: 'completed', response: { category: 'dog' } });
    const [combined] = await events(taskId, 'combined');
    expect(combined!.data).toMatchObject({ agreement: 1 / 3, workers: 3, outcome: 'completed' });
  });

  /**
   * A project whose three qualified workers first answer the account's two evaluation tasks (the
   * expected categories `cat`, `dog`; each claim swaps in one while any is unseen), giving `given`
   * for them: their rolling accuracy is the share they got right.
   */
  async function evaluated(given: Array<[string, string]>) {
    const p = await project({
      overlap: 3,
      training: { required: 0 },
      evaluation: { rate_new: 0.5, rate_trusted: 0.5, min_scored: 2, pause_below: 0 },
      consensus: { threshold: 0.3 },
    });
    for (const [i, category] of ['cat', 'dog'].entries())
      await server.uow.training.insert({
        id: newTaskId(new Date()),
        accountId: p.secrets.account_id,
        mode: 'live',
        kind: 'evaluation',
        type: 'categorization',
        params: { attachment_type: 'text', attachment: 'an animal', categories: ['cat', 'dog', 'fish'] },
        expectedResponse: { category },
        initialResponse: null,
        createdAt: new Date(Date.now() - 60_000 + i),
      });
    const workers: WorkerPrincipal[] = [];
    for (const [i, answers] of given.entries()) {
      const w = await p.worker(`e${i}`);
      workers.push(w);
      // Qualified in the project already (a first claim would record it, and keep the live task it claimed).
      await server.uow.qualification.put({
        workerId: w.workerId,
        accountId: p.secrets.account_id,
        project: 'pets',
        state: 'qualified',
        tries: 0,
        tryStartedAt: null,
        retryAfter: null,
        trainingScore: null,
        lastGoodAt: new Date(),
        pausedAccuracy: null,
        evaluationSince: null,
        updatedAt: new Date(),
      });
      // Each evaluation takes the place of a live task in the worker's queue: one each, canceled once answered.
      const fillers = [];
      for (const category of answers) {
        fillers.push(await p.newTask());
        const a = (await claim(w, () => 0))!;
        expect(a).toMatchObject({ purpose: 'evaluation', standsFor: fillers.at(-1) });
        await submit(w, a, category);
      }
      for (const id of fillers) expect((await p.live('POST', `/v1/task/${id}/cancel`)).status).toBe(200);
    }
    const taskId = await p.newTask();
    return { ...p, taskId, workers };
  }

  it("weighs each answer by its worker's evaluation accuracy: one accurate worker outweighs two who agree and often err", async () => {
    // The strong worker got both evaluation tasks right (accuracy 1, capped at 0.99: weight 4.6), the weak ones one of two (0.5: the floor, 0.1).
    const { caller, live, taskId, workers } = await evaluated([
      ['cat', 'dog'],
      ['cat', 'cat'],
      ['dog', 'dog'],
    ]);
    const [strong, weak1, weak2] = workers as [WorkerPrincipal, WorkerPrincipal, WorkerPrincipal];
    const outcomes = [];
    for (const [w, category] of [
      [weak1, 'dog'],
      [strong, 'cat'],
      [weak2, 'dog'],
    ] as const) {
      const a = (await claim(w, () => 0))!;
      expect(a).toMatchObject({ taskId, purpose: 'live' });
      outcomes.push((await submit(w, a, category)).next);
    }
    expect(outcomes).toEqual(['waiting', 'waiting', 'completed']);
    expect(await task(caller, taskId)).toMatchObject({ status: 'completed', response: { category: 'cat' } });
    const [combined] = await events(taskId, 'combined');
    expect(combined!.data).toMatchObject({ agreement: 1 / 3, threshold: 0.3, outcome: 'completed' });
    expect((combined!.data.answers as Array<Record<string, unknown>>).map((x) => [x.worker_id, x.weight, x.score])).toEqual([
      [weak1.workerId, 0.1, 0],
      [strong.workerId, round(Math.log(99)), 1],
      [weak2.workerId, 0.1, 0],
    ]);

    // The figures: each worker's accuracy, agreement with the others, and with the combined answer.
    const reply = await live('GET', '/v1/projects/pets/quality');
    expect(reply.status, reply.text).toBe(200);
    const figures = reply.body;
    const byWorker = new Map(figures.workers.map((w: { worker: string }) => [w.worker, w]));
    expect(byWorker.get(strong.workerId)).toMatchObject({
      state: 'qualified',
      accuracy: 1,
      evaluation_scored: 2,
      agreement: 0,
      consensus: { tasks: 1, agreed: 1, agreed_rate: 1, mean_score: 1 },
    });
    for (const w of [weak1, weak2])
      expect(byWorker.get(w.workerId)).toMatchObject({
        state: 'qualified',
        accuracy: 0.5,
        agreement: 0.5,
        consensus: { tasks: 1, agreed: 0, agreed_rate: 0, mean_score: 0 },
      });
  });

  it('workers of equal accuracy weigh the same: the plain majority', async () => {
    const { caller, taskId, workers } = await evaluated([
      ['cat', 'dog'],
      ['cat', 'dog'],
      ['cat', 'dog'],
    ]);
    for (const [i, category] of ['cat', 'dog', 'dog'].entries()) {
      const w = workers[i] as WorkerPrincipal;
      const a = (await claim(w, () => 0))!;
      expect(a).toMatchObject({ taskId, purpose: 'live' });
      await submit(w, a, category);
    }
    expect(await task(caller, taskId)).toMatchObject({ status: 'completed', response: { category: 'dog' } });
  });

  it('overlap 3, the workers disagree: an extra worker is added, and still under the threshold the task goes to review with the attempts', async () => {
    const { caller, worker, newTask } = await project({ overlap: 3, consensus: { threshold: 0.8, max_extra: 1 } });
    const taskId = await newTask();
    const [w1, w2, w3, w4, w5] = [await worker('w1'), await worker('w2'), await worker('w3'), await worker('w4'), await worker('w5')];
    expect(
      await answer(taskId, [
        [w1, 'cat'],
        [w2, 'dog'],
        [w3, 'cat'],
      ]),
    ).toEqual(['waiting', 'waiting', 'waiting']);
    // One more worker: none of the three gets the task again.
    expect((await server.uow.work.getTaskWork(taskId))!).toMatchObject({ stage: 'attempt', needed: 4, openSlots: 1 });
    for (const w of [w1, w2, w3]) expect(await claim(w)).toBeNull();
    expect(await answer(taskId, [[w4, 'fish']])).toEqual(['review']);
    expect(await claim(w5)).toBeNull();
    expect((await events(taskId, 'combined')).map((e) => [e.data.workers, e.data.outcome])).toEqual([
      [3, 'extra'],
      [4, 'review'],
    ]);
    expect(await task(caller, taskId)).toMatchObject({ status: 'pending' });
    expect(await callbacks(caller, taskId)).toHaveLength(0);

    // A reviewer who attempted the task cannot review it; another one gets the medoid attempt and sees the others.
    const reviewer = await worker('reviewer', ['reviewer']);
    const review = (await claimNext(server.uow, reviewer, { role: 'review' }, settings, new Date()))!;
    expect(review).toMatchObject({ taskId, role: 'review' });
    const work = await assignmentWork(server.uow, review);
    expect(work.reviewed?.response).toEqual({ category: 'cat' });
    expect(work.reviewed?.workerId).toBe(w1.workerId);
    expect(work.attempts?.map((a) => a.response)).toEqual([
      { category: 'cat' },
      { category: 'dog' },
      { category: 'cat' },
      { category: 'fish' },
    ]);
    await reviewAssignment(
      server.uow,
      reviewer,
      review.assignmentId,
      { leaseToken: review.leaseToken, result: 'fixed', response: { category: 'dog' } },
      checkSchema,
      settings,
      new Date(),
    );
    expect(await task(caller, taskId)).toMatchObject({ status: 'completed', response: { category: 'dog' }, audits: [{ result: 'fixed' }] });
    expect(await callbacks(caller, taskId)).toHaveLength(1);
  });

  it('the last two submits of a task, at once, complete it once', async () => {
    const { caller, worker, newTask } = await project({ overlap: 3 });
    const taskId = await newTask();
    const ws = [await worker('w1'), await worker('w2'), await worker('w3')];
    const held = [];
    for (const w of ws) held.push((await claim(w))!);
    expect(held.map((a) => a.taskId)).toEqual([taskId, taskId, taskId]);
    expect(new Set(held.map((a) => a.workerId)).size).toBe(3);
    expect((await submit(ws[0]!, held[0]!, 'cat')).next).toBe('waiting');
    const outcomes = await Promise.all([submit(ws[1]!, held[1]!, 'cat'), submit(ws[2]!, held[2]!, 'cat')]);
    expect(outcomes.map((o) => o.next).sort()).toEqual(['completed', 'waiting']);
    expect(await task(caller, taskId)).toMatchObject({ status: 'completed', response: { category: 'cat' } });
    expect(await callbacks(caller, taskId)).toHaveLength(1);
    expect(await events(taskId, 'combined')).toHaveLength(1);
    expect(await events(taskId, 'completed')).toHaveLength(1);
  });

  it('overlap 1 (the default) completes a task with its one answer, as without a policy', async () => {
    const { caller, worker, newTask } = await project({});
    const taskId = await newTask();
    expect((await server.uow.work.getTaskWork(taskId))!).toMatchObject({ needed: 1, openSlots: 1 });
    expect(await answer(taskId, [[await worker('solo'), 'fish']])).toEqual(['completed']);
    expect(await task(caller, taskId)).toMatchObject({ status: 'completed', response: { category: 'fish' } });
    expect(await events(taskId, 'combined')).toHaveLength(0);
  });

  it('over HTTP: three workers of the worker API agree, and the receiver gets the combined answer once; a reviewer of a disagreement sees every attempt', async () => {
    const { secrets, newTask } = await project({ overlap: 3, consensus: { threshold: 0.8, max_extra: 0 } });
    const as = (token: string) => workerClient(server, token);
    const workers: Array<ReturnType<typeof as>> = [];
    for (let i = 0; i < 3; i++) workers.push(as((await createWorker(server, { accountId: secrets.account_id })).token));
    /** Each worker takes the task and answers it. */
    const work = async (taskId: string, categories: string[]) => {
      for (const [i, category] of categories.entries()) {
        const w = workers[i]!;
        await takeAndSubmit(w, taskId, { category });
        // The worker is not handed the same task again.
        expect((await w('POST', '/v1/assignments/next', {})).status).toBe(204);
      }
    };

    const agreed = await newTask();
    await work(agreed, ['dog', 'dog', 'dog']);
    await hook.waitFor(() => hook.byTask.has(agreed), 'the callback of the agreed task');
    const sent = hook.bodiesOf(agreed);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.response).toEqual({ category: 'dog' });

    const disputed = await newTask();
    await work(disputed, ['cat', 'dog', 'dog']);
    const reviewer = as((await createWorker(server, { accountId: secrets.account_id, roles: ['reviewer'] })).token);
    const review = await reviewer('POST', '/v1/assignments/next', { role: 'review' });
    expect(review.status, review.text).toBe(200);
    expect(review.body).toMatchObject({ role: 'review', task: { task_id: disputed } });
    expect(review.body.under_review.response).toEqual({ category: 'dog' });
    expect(review.body.under_review.attempts.map((x: { response: unknown }) => x.response)).toEqual([
      { category: 'cat' },
      { category: 'dog' },
      { category: 'dog' },
    ]);
    const accepted = await reviewer('POST', `/v1/assignments/${review.body.assignment_id}/review`, {
      lease_token: review.body.lease_token,
      result: 'accepted',
      active_ms: 1000,
    });
    expect(accepted.status, accepted.text).toBe(200);
    await hook.waitFor(() => hook.byTask.has(disputed), 'the callback of the reviewed task');
    expect(hook.bodiesOf(disputed).map((b) => b.response)).toEqual([{ category: 'dog' }]);
    // Every callback of the agreed task came once.
    expect(hook.bodiesOf(agreed)).toHaveLength(1);
  });
});
