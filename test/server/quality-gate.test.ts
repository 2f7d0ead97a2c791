// The calibration gate, promotion and a project's quality figures (issue 19), on PGlite and on
// PostgreSQL: production batches wait until a calibration batch's reviewed score reaches the
// policy's gate (the batch status says why meanwhile; a lower gate opens it); an audited task
// becomes a training or evaluation task in one idempotent call; GET /v1/projects/{name}/quality
// shows the figures the event log holds (reviews, customer audits, and the quality loop's own
// 'scored', 'paused' and 'combined' events, written here through the store).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import type { Caller } from '../../server/domain/model.ts';
import { auditTask } from '../../server/domain/task-changes.ts';
import type { WorkEvent } from '../../server/domain/workforce/model.ts';
import type { WorkerPrincipal } from '../../server/domain/workforce/worker.ts';
import { reviewAssignment, submitAssignment } from '../../server/domain/workforce/answers.ts';
import { claimNext, type WorkSettings } from '../../server/domain/workforce/work.ts';
import { loadContract } from '../../server/http/contract.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { storedWorker } from '../support/workers.ts';

const checkSchema = loadContract('current').checkResponse;
const settings: WorkSettings = { leaseMs: 60_000, hardCapMs: 600_000, redoReserveMs: 3_600_000 };

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('calibration gate, promotion and quality figures on %s', (db) => {
  let server: TestServer;
  let n = 0;

  beforeAll(async () => {
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function account() {
    const secrets: AccountSecrets = await createAccount(server.uow, `gate-${db}-${n++}`, new Date());
    const caller: Caller = { account: (await server.uow.accounts.findById(secrets.account_id))!, mode: 'live' };
    const worker = (id: string, more: Partial<WorkerPrincipal> = {}) =>
      storedWorker(
        server.uow,
        {
          workerId: `wkr_${randomBytes(12).toString('hex')}`,
          accountId: secrets.account_id,
          mode: 'live',
          roles: ['labeler'],
          calibrator: false,
          status: 'active',
          ...more,
        },
        id,
      );
    const live = client(server, 'current', secrets.live_key);
    const test = client(server, 'current', secrets.test_key);
    const categorization = async (extra: Record<string, unknown> = {}, call = live) => {
      const r = await call('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Pick the animal',
          attachment_type: 'text',
          attachment: 'a cat',
          categories: ['cat', 'dog'],
          ...extra,
        },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.task_id as string;
    };
    /** The next task the labeler claims, answered with `category`; the reviewer then decides (fixed: to `fix`). */
    const work = async (
      labeler: WorkerPrincipal,
      category: string,
      reviewer?: WorkerPrincipal,
      result?: 'accepted' | 'rejected' | 'fixed',
      fix?: string,
    ) => {
      const a = (await claimNext(server.uow, labeler, {}, settings, new Date()))!;
      expect(a, 'a task to claim').not.toBeNull();
      await submitAssignment(
        server.uow,
        labeler,
        a.assignmentId,
        { leaseToken: a.leaseToken, response: { category } },
        checkSchema,
        new Date(),
      );
      if (reviewer && result) {
        const r = (await claimNext(server.uow, reviewer, { role: 'review' }, settings, new Date()))!;
        await reviewAssignment(
          server.uow,
          reviewer,
          r.assignmentId,
          {
            leaseToken: r.leaseToken,
            result,
            ...(fix ? { response: { category: fix } } : {}),
            ...(result === 'rejected' ? { feedback: [{ category: 'other', text: 'no' }] } : {}),
          },
          checkSchema,
          settings,
          new Date(),
        );
      }
      return a;
    };
    return { secrets, caller, worker, live, test, categorization, work };
  }

  it('holds production until the calibration batch passes the gate, says why in the batch status, and opens when the gate is lowered', async () => {
    const { worker, live, categorization, work } = await account();
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'p', rapid: true } })).status).toBe(200);
    expect((await live('POST', '/v1/batches', { json: { project: 'p', name: `cal-${db}`, calibration_batch: true } })).status).toBe(200);
    expect((await live('POST', '/v1/batches', { json: { project: 'p', name: `prod-${db}` } })).status).toBe(200);
    await categorization({ batch: `cal-${db}` });
    await categorization({ batch: `cal-${db}` });
    const prod = await categorization({ batch: `prod-${db}` });
    expect((await live('POST', `/v1/batches/cal-${db}/finalize`)).status).toBe(200);

    const calibrator = await worker('cal', { calibrator: true });
    const reviewer = await worker('rev', { roles: ['reviewer'], calibrator: true });
    // One attempt accepted (1), one fixed from cat to dog (categorization: exact match, 0): 0.5 < 0.8.
    await work(calibrator, 'cat', reviewer, 'accepted');
    const figuresMidReply = await live('GET', '/v1/projects/p/quality');
    expect(figuresMidReply.status, figuresMidReply.text).toBe(200);
    const figuresMid = figuresMidReply.body;
    expect(figuresMid.calibration).toEqual([{ batch: `cal-${db}`, status: 'in_progress', reviewed: 1, score: 1, passed: false }]);
    await work(calibrator, 'cat', reviewer, 'fixed', 'dog');
    expect((await live('GET', `/v1/batches/cal-${db}`)).body.status).toBe('completed');
    expect((await live('POST', `/v1/batches/prod-${db}/finalize`)).status).toBe(200);

    // Completed below the gate: production stays held, and the production batch's status says why.
    expect(await claimNext(server.uow, await worker('plain'), {}, settings, new Date())).toBeNull();
    const status = await live('GET', `/v1/batches/prod-${db}/status`);
    expect(status.status).toBe(200);
    expect(status.body.held).toBe(
      `Held by the calibration gate: calibration batch "cal-${db}" of project "p" completed with calibration score 0.5 over 2 reviewed attempts, below the gate 0.8: add a new calibration batch or lower calibration.gate_score in the project's quality policy.`,
    );
    expect((await live('GET', `/v1/batches/cal-${db}/status`)).body.held).toBeUndefined();
    const figures = (await live('GET', '/v1/projects/p/quality')).body;
    expect(figures.calibration).toEqual([{ batch: `cal-${db}`, status: 'completed', reviewed: 2, score: 0.5, passed: false }]);
    expect(figures.review).toEqual({ reviewed: 2, accepted: 1, fixed: 1, rejected: 0, reject_rate: 0 });

    // The customer lowers the gate: production is dispatched at once.
    expect((await live('PUT', '/v1/projects/p/quality_policy', { json: { calibration: { gate_score: 0.5 } } })).status).toBe(200);
    expect((await live('GET', `/v1/batches/prod-${db}/status`)).body.held).toBeUndefined();
    expect((await live('GET', '/v1/projects/p/quality')).body.calibration[0].passed).toBe(true);
    expect((await claimNext(server.uow, await worker('plain2'), {}, settings, new Date()))!.taskId).toBe(prod);
  });

  it('opens with a new calibration batch that passes; a customer rejection counts 0 for the attempt it judged', async () => {
    const { caller, worker, live, categorization, work } = await account();
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'q', rapid: true } })).status).toBe(200);
    await live('PUT', '/v1/projects/q/quality_policy', { json: { calibration: { gate_score: 1 } } });
    for (const name of [`c1-${db}`, `c2-${db}`])
      expect((await live('POST', '/v1/batches', { json: { project: 'q', name, calibration_batch: true } })).status).toBe(200);
    expect((await live('POST', '/v1/batches', { json: { project: 'q', name: `run-${db}` } })).status).toBe(200);
    const first = await categorization({ batch: `c1-${db}` });
    const prod = await categorization({ batch: `run-${db}` });
    expect((await live('POST', `/v1/batches/c1-${db}/finalize`)).status).toBe(200);
    const calibrator = await worker('cal', { calibrator: true });
    const reviewer = await worker('rev', { roles: ['reviewer'], calibrator: true });
    await work(calibrator, 'cat', reviewer, 'accepted');
    // The reviewer accepted (1), the customer disagrees: the latest decision on the attempt counts (0).
    await auditTask(server.uow, caller, first, { accepted: false, comments: 'It is a dog.' }, new Date(), settings);
    expect((await live('GET', '/v1/projects/q/quality')).body.calibration).toContainEqual({
      batch: `c1-${db}`,
      status: 'completed',
      reviewed: 1,
      score: 0,
      passed: false,
    });
    expect((await live('POST', `/v1/batches/run-${db}/finalize`)).status).toBe(200);
    expect((await live('GET', `/v1/batches/run-${db}/status`)).body.held).toMatch(/^Held by the calibration gate: calibration batch "c2-/);
    // The redo of the rejected task is the calibrator's; then a second calibration batch, which passes.
    // (Another reviewer: a task's reviewer does not review it again.)
    await work(calibrator, 'dog', await worker('rev2', { roles: ['reviewer'], calibrator: true }), 'accepted');
    await categorization({ batch: `c2-${db}` });
    expect((await live('POST', `/v1/batches/c2-${db}/finalize`)).status).toBe(200);
    expect(await claimNext(server.uow, await worker('plain'), {}, settings, new Date())).toBeNull();
    await work(calibrator, 'cat', reviewer, 'accepted');
    const calibration = (await live('GET', '/v1/projects/q/quality')).body.calibration;
    expect(calibration.find((c: { batch: string }) => c.batch === `c2-${db}`)).toEqual({
      batch: `c2-${db}`,
      status: 'completed',
      reviewed: 1,
      score: 1,
      passed: true,
    });
    expect((await live('GET', `/v1/batches/run-${db}/status`)).body.held).toBeUndefined();
    expect((await claimNext(server.uow, await worker('plain2'), {}, settings, new Date()))!.taskId).toBe(prod);
  });

  it('promotes an audited task to a training or an evaluation task, idempotently, and refuses what is not audited', async () => {
    const { caller, worker, live, test, categorization, work } = await account();
    const reviewed = await categorization();
    const reviewer = await worker('rev', { roles: ['reviewer'] });
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'staffed' } })).status).toBe(200);
    await server.uow.work.putStaffing({
      accountId: caller.account.accountId,
      mode: 'live',
      project: 'staffed',
      batch: '',
      attemptSubjects: null,
      reviewSubjects: null,
      reviewFirst: 10,
      reviewRate: 0,
      updatedAt: new Date(),
    });
    // A task without a project completes on submit, unreviewed: promoting it is refused (400) until audited.
    const labeler = await worker('lab');
    await work(labeler, 'dog');
    // The other tasks are worked before anything is promoted: once the account has training and
    // evaluation tasks of the type, a new worker trains first and meets hidden evaluations.
    const fixedTask = await categorization({ project: 'staffed' });
    await work(labeler, 'cat', reviewer, 'fixed', 'dog');
    const other = await categorization();
    await work(labeler, 'cat');
    const before = await live('POST', `/v1/task/${reviewed}/promote`, { json: { kind: 'evaluation' } });
    expect([before.status, before.body.error]).toEqual([
      400,
      `Task ${reviewed} has no accepted or fixed review: audit it first (POST /v1/task/{taskId}/audit).`,
    ]);
    expect((await live('POST', `/v1/task/${reviewed}/audit`, { json: { accepted: true } })).status).toBe(200);

    const evaluation = await live('POST', `/v1/task/${reviewed}/promote`, {
      json: { kind: 'evaluation', initial_response: { category: 'cat' } },
    });
    expect(evaluation.status, evaluation.text).toBe(200);
    expect(evaluation.body).toMatchObject({
      type: 'categorization',
      kind: 'evaluation',
      params: { instruction: 'Pick the animal', attachment_type: 'text', attachment: 'a cat', categories: ['cat', 'dog'] },
      expected_response: { category: 'dog' },
      initial_response: { category: 'cat' },
    });
    expect(evaluation.body.params.callback_url).toBeUndefined();
    // Again: the same evaluation task, none other made; a training task is another one.
    const again = await live('POST', `/v1/task/${reviewed}/promote`, { json: { kind: 'evaluation' } });
    expect([again.status, again.body.id]).toEqual([200, evaluation.body.id]);
    const training = await live('POST', `/v1/task/${reviewed}/promote`, { json: { kind: 'training' } });
    expect(training.status).toBe(200);
    expect(training.body.id).not.toBe(evaluation.body.id);
    expect((await live('GET', `/v1/evaluation_tasks/${evaluation.body.id}`)).body).toEqual(evaluation.body);
    expect((await live('GET', '/v1/evaluation_tasks')).body.total).toBe(1);
    expect((await live('GET', `/v1/training_tasks/${training.body.id}`)).body.expected_response).toEqual({ category: 'dog' });

    // A reviewer's fix is an audit that keeps an answer: the fix is the expected answer.
    const fromFix = await live('POST', `/v1/task/${fixedTask}/promote`, { json: { kind: 'training' } });
    expect([fromFix.status, fromFix.body.expected_response]).toEqual([200, { category: 'dog' }]);

    // Refusals: initial_response with training or not of the type's shape, a bad kind, unknown task, pending task, the other mode.
    expect((await live('POST', `/v1/task/${other}/audit`, { json: { accepted: true } })).status).toBe(200);
    expect((await live('POST', `/v1/task/${other}/promote`, { json: { kind: 'training', initial_response: {} } })).body.error).toMatch(
      /^initial_response is only sent with kind "evaluation"/,
    );
    const bad = await live('POST', `/v1/task/${other}/promote`, { json: { kind: 'evaluation', initial_response: { category: 7 } } });
    expect([bad.status, bad.body.error]).toEqual([
      400,
      expect.stringMatching(/^initial_response does not match the categorization response schema/),
    ]);
    expect((await live('POST', `/v1/task/${other}/promote`, { json: { kind: 'bogus' } })).status).toBe(400);
    expect((await test('POST', `/v1/task/${other}/promote`, { json: { kind: 'training' } })).status).toBe(404);
    const unknown = await live('POST', '/v1/task/65f1c0a2b3c4d5e6f7a8b9c0/promote', { json: { kind: 'training' } });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'Task 65f1c0a2b3c4d5e6f7a8b9c0 not found.']);
    const pending = await categorization();
    const notDone = await live('POST', `/v1/task/${pending}/promote`, { json: { kind: 'training' } });
    expect([notDone.status, notDone.body.error]).toEqual([
      400,
      `Task ${pending} is pending; only a completed, audited task can be promoted.`,
    ]);
    // Nothing was made by the refused requests.
    expect((await live('GET', '/v1/evaluation_tasks')).body.total).toBe(1);

    // Test mode: a synthetic answer the customer accepted is promoted as well.
    const synthetic = await categorization({}, test);
    await expect.poll(async () => (await test('GET', `/v1/task/${synthetic}`)).body.status).toBe('completed');
    expect((await test('POST', `/v1/task/${synthetic}/audit`, { json: { accepted: true } })).status).toBe(200);
    const promoted = await test('POST', `/v1/task/${synthetic}/promote`, { json: { kind: 'training' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body.expected_response).toEqual((await test('GET', `/v1/task/${synthetic}`)).body.response);
  });

  it('counts the project figures from the event log: reviews and audits, evaluation scores, pauses, agreement', async () => {
    const { caller, secrets, worker, live, categorization, work } = await account();
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'm' } })).status).toBe(200);
    const empty = (await live('GET', '/v1/projects/m/quality')).body;
    expect(empty).toMatchObject({
      project: 'm',
      type: 'categorization',
      policy_version: null,
      agreement: { tasks: 0, by_field: [] },
      workers: [],
      workers_total: 0,
      review: { reviewed: 0, accepted: 0, fixed: 0, rejected: 0 },
      calibration: [],
    });
    expect(empty.agreement.mean).toBeUndefined();
    await server.uow.work.putStaffing({
      accountId: secrets.account_id,
      mode: 'live',
      project: 'm',
      batch: '',
      attemptSubjects: null,
      reviewSubjects: null,
      reviewFirst: 1,
      reviewRate: 0,
      updatedAt: new Date(),
    });
    const good = await worker('good');
    const bad = await worker('bad');
    const reviewer = await worker('rev', { roles: ['reviewer'] });
    const t1 = await categorization({ project: 'm' });
    await work(good, 'cat', reviewer, 'accepted');
    const t2 = await categorization({ project: 'm' });
    await work(bad, 'dog', reviewer, 'rejected');
    await work(bad, 'cat', await worker('rev2', { roles: ['reviewer'] }), 'accepted'); // the redo, reviewed too (by another reviewer)
    await categorization({ project: 'm' });
    await work(good, 'cat'); // past review_first (1): not reviewed
    await auditTask(server.uow, caller, t1, { accepted: true }, new Date(), settings);

    // The quality loop's own events, as q-train and q-consensus write them.
    const at = new Date();
    const ev = (
      workerId: string | null,
      kind: WorkEvent['kind'],
      data: Record<string, unknown>,
      taskId: string | null = null,
    ): WorkEvent => ({
      at,
      accountId: secrets.account_id,
      workerId,
      assignmentId: null,
      taskId,
      kind,
      data,
    });
    await server.uow.work.addEvents([
      ev(good.workerId, 'scored', { purpose: 'training', score: 1, project: 'm', type: 'categorization' }),
      ...[1, 0.5, 1].map((score) => ev(good.workerId, 'scored', { purpose: 'evaluation', score, project: 'm', type: 'categorization' })),
      ...[0, 0.5].map((score) => ev(bad.workerId, 'scored', { purpose: 'evaluation', score, project: 'm', type: 'categorization' })),
      ev(bad.workerId, 'scored', { purpose: 'evaluation', score: 1, project: 'other', type: 'categorization' }),
      ev(bad.workerId, 'paused', { project: 'm', accuracy: 0.25, window: 20 }),
      ev(null, 'combined', { project: 'm', type: 'categorization', agreement: 1, workers: 3, fields: { category: 1 } }, t1),
      ev(null, 'combined', { project: 'm', type: 'categorization', agreement: 0.5, workers: 3, fields: { category: 0.5 } }, t2),
    ]);
    // The pause itself, as the evaluation rules record it: the standing, not the event, is the state.
    const standing = (await server.uow.qualification.get(bad.workerId, secrets.account_id, 'm'))!;
    expect(standing.state).toBe('qualified');
    await server.uow.qualification.put({ ...standing, state: 'paused', pausedAccuracy: 0.25, updatedAt: at });
    const figures = (await live('GET', '/v1/projects/m/quality')).body;
    expect(figures.agreement).toEqual({ tasks: 2, mean: 0.75, by_field: [{ field: 'category', tasks: 2, mean: 0.75 }] });
    expect(figures.workers_total).toBe(2);
    expect(figures.workers).toEqual([
      {
        worker: good.workerId,
        state: 'qualified',
        submitted: 5, // two live submits and three evaluation scores
        active_ms: expect.any(Number),
        accuracy: 0.833333,
        evaluation_scored: 3,
        review: { reviewed: 2, accepted: 2, fixed: 0, rejected: 0, reject_rate: 0 }, // the reviewer's and the customer's
      },
      {
        worker: bad.workerId,
        state: 'paused',
        submitted: 4,
        active_ms: expect.any(Number),
        accuracy: 0.25,
        evaluation_scored: 2,
        review: { reviewed: 2, accepted: 1, fixed: 0, rejected: 1, reject_rate: 0.5 },
      },
    ]);
    expect(figures.review).toEqual({ reviewed: 4, accepted: 3, fixed: 0, rejected: 1, reject_rate: 0.25 });
    // Another account sees none of it; test mode has no workers.
    const stranger = client(server, 'current', (await createAccount(server.uow, `gate-other-${db}-${n++}`, new Date())).live_key);
    expect((await stranger('GET', '/v1/projects/m/quality')).status).toBe(404);
    expect((await live('GET', '/v1/projects/m/quality?since=2020-01-01T00:00:00Z')).status).toBe(400);
  });
});
