// The work loop at the domain and store level (issue 18), on PGlite and PostgreSQL: live tasks made
// through the API are claimed (one statement, overlap never exceeded), kept with heartbeats,
// submitted (answers checked against schema and params), completed with their callback queued,
// swept when a lease lapses, ended by a cancel, reviewed, redone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { DomainError } from '../../server/domain/errors.ts';
import type { Caller } from '../../server/domain/model.ts';
import { auditTask, cancelTask } from '../../server/domain/task-changes.ts';
import type { Assignment, FeedbackItem } from '../../server/domain/workforce/model.ts';
import type { WorkerPrincipal } from '../../server/domain/workforce/worker.ts';
import { reviewAssignment, submitAssignment } from '../../server/domain/workforce/answers.ts';
import { getOwnAssignment, listOwnAssignments } from '../../server/domain/workforce/assignments.ts';
import {
  claimNext,
  claimNextWaiting,
  expireLapsedLeases,
  giveBack,
  heartbeat,
  type WorkSettings,
} from '../../server/domain/workforce/work.ts';
import { getStaffing, putStaffing } from '../../server/domain/workforce/staffing.ts';
import { loadContract } from '../../server/http/contract.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, storedWorker } from '../support/workers.ts';

const contract = loadContract('current');
const checkSchema = contract.checkResponse;
const settings: WorkSettings = { leaseMs: 60_000, hardCapMs: 600_000, redoReserveMs: 3_600_000 };
const later = (ms: number) => new Date(Date.now() + ms);

/** The error a promise rejects with (fails when it resolves). */
async function failure(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a domain error');
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the work loop on %s', (db) => {
  let server: TestServer;
  let n = 0;

  beforeAll(async () => {
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A fresh account (its tasks are the only ones its workers see) with workers of its own. */
  async function account() {
    const secrets: AccountSecrets = await createAccount(server.uow, `work-${db}-${n++}`, new Date());
    const found = await server.uow.accounts.findById(secrets.account_id);
    const caller: Caller = { account: found!, mode: 'live' };
    /** A worker as a request presents it (no record: for workers that must not exist). */
    const principal = (id: string, more: Partial<WorkerPrincipal> = {}): WorkerPrincipal => ({
      workerId: `${secrets.account_id}-${id}`,
      accountId: secrets.account_id,
      mode: 'live',
      roles: ['labeler'],
      calibrator: false,
      status: 'active',
      ...more,
    });
    /** A worker of the account with its record (assignments and events reference workers). */
    const worker = (id: string, more: Partial<WorkerPrincipal> = {}) => storedWorker(server.uow, principal(id, more), id);
    const current = client(server, 'current', secrets.live_key);
    const legacy = client(server, 'legacy', secrets.live_key);
    const categorization = async (extra: Record<string, unknown> = {}) => {
      const r = await current('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Pick',
          attachment_type: 'text',
          attachment: 'a cat',
          categories: ['cat', 'dog'],
          ...extra,
        },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.task_id as string;
    };
    return { secrets, caller, worker, principal, current, legacy, categorization };
  }

  const task = (caller: Caller, taskId: string) => server.uow.tasks.get(caller.account.accountId, 'live', taskId);
  const callbacks = async (caller: Caller, taskId: string) =>
    (await server.uow.outbox.forSubject(caller.account.accountId, taskId)).filter((m) => m.event === 'task_completed');

  it('hands a live task to a worker, keeps it with heartbeats, and completes it on submit with its callback queued', async () => {
    const { caller, worker, categorization } = await account();
    const taskId = await categorization();
    const w = await worker('w1');
    const a = (await claimNext(server.uow, w, {}, settings, new Date()))!;
    expect(a).toMatchObject({ taskId, workerId: w.workerId, role: 'attempt', status: 'active' });
    expect(a.assignmentId).toMatch(/^asg_[0-9a-f]{24}$/);
    expect(a.leaseToken).toMatch(/^lt_[0-9a-f]{32}$/);
    expect(a.leaseExpiresAt.getTime() - a.issuedAt.getTime()).toBe(settings.leaseMs);
    // Nothing more for anyone: overlap 1.
    expect(await claimNext(server.uow, await worker('w2'), {}, settings, new Date())).toBeNull();

    const beat = await heartbeat(
      server.uow,
      w,
      a.assignmentId,
      { leaseToken: a.leaseToken, draft: { category: 'dog' }, activeMs: 5 },
      settings,
      later(1000),
    );
    expect(beat.draft).toEqual({ category: 'dog' });
    expect(beat.leaseExpiresAt.getTime()).toBeGreaterThan(a.leaseExpiresAt.getTime());
    const lost = await failure(heartbeat(server.uow, w, a.assignmentId, { leaseToken: 'stale' }, settings, new Date()));
    expect([lost.kind, lost.code]).toEqual(['conflict', 'lease_lost']);

    const out = await submitAssignment(
      server.uow,
      w,
      a.assignmentId,
      { leaseToken: a.leaseToken, response: { category: 'cat' }, activeMs: 1200 },
      checkSchema,
      later(2000),
    );
    expect(out.next).toBe('completed');
    expect(out.assignment).toMatchObject({ status: 'submitted', response: { category: 'cat' } });
    const done = (await task(caller, taskId))!;
    expect(done).toMatchObject({ status: 'completed', response: { category: 'cat' }, customerReviewStatus: 'pending', timesRedone: 0 });
    expect(done.completedAt).not.toBeNull();
    const [cb, ...more] = await callbacks(caller, taskId);
    expect(more).toEqual([]);
    expect(cb!.payload).toMatchObject({ task_id: taskId, response: { category: 'cat' }, task: { status: 'completed' } });
    // A second submit with the same lease: the assignment has ended.
    const again = await failure(
      submitAssignment(
        server.uow,
        w,
        a.assignmentId,
        { leaseToken: a.leaseToken, response: { category: 'dog' } },
        checkSchema,
        later(3000),
      ),
    );
    expect([again.kind, again.code]).toEqual(['conflict', 'assignment_closed']);
    expect((await task(caller, taskId))!.response).toEqual({ category: 'cat' });
  });

  it('orders the queue by urgency (older generation), newer-generation tasks counting as day, then by age', async () => {
    const { worker, categorization, legacy } = await account();
    const legacyTask = async (urgency: string) => {
      const r = await legacy('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Pick',
          attachment_type: 'text',
          attachment: 'x',
          categories: ['a', 'b'],
          urgency,
        },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.task_id as string;
    };
    const week = await legacyTask('week');
    const current = await categorization();
    const day = await legacyTask('day');
    const immediate = await legacyTask('immediate');
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push((await claimNext(server.uow, await worker(`q${i}`), {}, settings, new Date()))!.taskId);
    expect(order).toEqual([immediate, current, day, week]);
  });

  it('never exceeds overlap: 50 workers claiming at once against 20 tasks get exactly 20 assignments, no task twice', async () => {
    const { worker, categorization } = await account();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await categorization());
    const crowd = await Promise.all(Array.from({ length: 50 }, (_, i) => worker(`c${i}`)));
    const claims = await Promise.all(crowd.map((w) => claimNext(server.uow, w, {}, settings, new Date())));
    const got = claims.filter((c): c is Assignment => c !== null);
    expect(got).toHaveLength(20);
    expect(new Set(got.map((c) => c.taskId))).toEqual(new Set(ids));
    expect(new Set(got.map((c) => c.workerId)).size).toBe(20);
    for (const id of ids) expect((await server.uow.work.forTask(id)).filter((x) => x.status === 'active')).toHaveLength(1);
  });

  it('sweeps a lapsed lease: the task goes to another worker, and the first worker’s late submit is a conflict that changes nothing', async () => {
    const { caller, worker, categorization } = await account();
    const taskId = await categorization();
    const [w1, w2] = [await worker('slow'), await worker('next')];
    const a = (await claimNext(server.uow, w1, {}, settings, new Date()))!;
    // Not lapsed yet: the sweep (of every account) leaves it.
    await expireLapsedLeases(server.uow, later(settings.leaseMs - 1000));
    expect((await server.uow.work.get(a.assignmentId, null))!.status).toBe('active');
    expect(await claimNext(server.uow, w2, {}, settings, later(settings.leaseMs - 1000))).toBeNull();
    // Lapsed: even before the sweep, the lease is no longer held.
    const early = await failure(
      submitAssignment(
        server.uow,
        w1,
        a.assignmentId,
        { leaseToken: a.leaseToken, response: { category: 'cat' } },
        checkSchema,
        later(settings.leaseMs + 1000),
      ),
    );
    expect(early.code).toBe('lease_lost');
    expect(await expireLapsedLeases(server.uow, later(settings.leaseMs + 1000))).toBeGreaterThanOrEqual(1);
    expect((await server.uow.work.get(a.assignmentId, null))!.status).toBe('expired');
    const b = (await claimNext(server.uow, w2, {}, settings, later(settings.leaseMs + 2000)))!;
    expect(b.taskId).toBe(taskId);
    const late = await failure(
      submitAssignment(
        server.uow,
        w1,
        a.assignmentId,
        { leaseToken: a.leaseToken, response: { category: 'cat' } },
        checkSchema,
        later(settings.leaseMs + 3000),
      ),
    );
    expect([late.kind, late.code, late.message]).toEqual(['conflict', 'lease_lost', expect.stringMatching(/lapsed/)]);
    expect(await task(caller, taskId)).toMatchObject({ status: 'pending', response: null });
    expect((await server.uow.work.get(b.assignmentId, null))!.status).toBe('active');
  });

  it('heartbeats renew a lease up to the hard cap, not beyond', async () => {
    const { worker, categorization } = await account();
    await categorization();
    const w = await worker('long');
    const a = (await claimNext(server.uow, w, {}, { ...settings, hardCapMs: 90_000 }, new Date()))!;
    expect(a.hardDeadline.getTime() - a.issuedAt.getTime()).toBe(90_000);
    const beat = await heartbeat(server.uow, w, a.assignmentId, { leaseToken: a.leaseToken }, settings, later(50_000));
    expect(beat.leaseExpiresAt.getTime()).toBe(a.hardDeadline.getTime());
  });

  it('skip (with a reason) and release give the task back; the skipper does not get it again, the releaser may (with the draft)', async () => {
    const { worker, categorization } = await account();
    const taskId = await categorization();
    const [w1, w2] = [await worker('skipper'), await worker('other')];
    const a = (await claimNext(server.uow, w1, {}, settings, new Date()))!;
    expect(
      (await failure(giveBack(server.uow, w1, a.assignmentId, { leaseToken: a.leaseToken, status: 'skipped' }, new Date()))).kind,
    ).toBe('invalid');
    expect(
      await giveBack(server.uow, w1, a.assignmentId, { leaseToken: a.leaseToken, status: 'skipped', reason: 'cannot read it' }, new Date()),
    ).toMatchObject({ status: 'skipped', skipReason: 'cannot read it' });
    expect(await claimNext(server.uow, w1, {}, settings, new Date())).toBeNull();
    const b = (await claimNext(server.uow, w2, {}, settings, new Date()))!;
    expect(b.taskId).toBe(taskId);
    await heartbeat(server.uow, w2, b.assignmentId, { leaseToken: b.leaseToken, draft: { category: 'dog' } }, settings, new Date());
    await giveBack(server.uow, w2, b.assignmentId, { leaseToken: b.leaseToken, status: 'released' }, new Date());
    // Unlike a skip, a release lets the same worker take the task again, with the saved draft.
    const again = (await claimNext(server.uow, w2, {}, settings, new Date()))!;
    expect(again).toMatchObject({ taskId, draft: { category: 'dog' } });
  });

  it('canceling a task ends its assignment: the next heartbeat and submit are told task_canceled', async () => {
    const { caller, worker, categorization } = await account();
    const taskId = await categorization();
    const w = await worker('w');
    const a = (await claimNext(server.uow, w, {}, settings, new Date()))!;
    await cancelTask(server.uow, caller, taskId, false, new Date());
    expect((await failure(heartbeat(server.uow, w, a.assignmentId, { leaseToken: a.leaseToken }, settings, new Date()))).code).toBe(
      'task_canceled',
    );
    const e = await failure(
      submitAssignment(server.uow, w, a.assignmentId, { leaseToken: a.leaseToken, response: { category: 'cat' } }, checkSchema, new Date()),
    );
    expect([e.kind, e.code]).toEqual(['conflict', 'task_canceled']);
    expect(await task(caller, taskId)).toMatchObject({ status: 'canceled', response: null });
    expect(await claimNext(server.uow, await worker('w2'), {}, settings, new Date())).toBeNull();
  });

  it('rejects an invalid answer with a 400-kind error naming the rule, storing nothing', async () => {
    const { caller, worker, categorization } = await account();
    const taskId = await categorization();
    const w = await worker('w');
    const a = (await claimNext(server.uow, w, {}, settings, new Date()))!;
    const submit = (response: Record<string, unknown>) =>
      failure(submitAssignment(server.uow, w, a.assignmentId, { leaseToken: a.leaseToken, response }, checkSchema, new Date()));
    expect((await submit({ category: 'bird' })).message).toBe(`response.category "bird" is not one of the task's categories.`);
    expect((await submit({ category: ['cat'] })).message).toBe('response.category must be one category (the task does not allow several).');
    expect((await submit({ category: 5 })).message).toMatch(
      /^response does not match the categorization response schema: category must be/,
    );
    expect((await submit({ colour: 'red' })).kind).toBe('invalid');
    expect(await task(caller, taskId)).toMatchObject({ status: 'pending', response: null });
    expect((await server.uow.work.get(a.assignmentId, null))!).toMatchObject({ status: 'active', response: null });
  });

  it('keeps an account’s workers to its own tasks; the operator workforce serves every account unless the project is staffed otherwise', async () => {
    const one = await account();
    const two = await account();
    const mine = await one.categorization();
    expect(await claimNext(server.uow, await two.worker('stranger'), {}, settings, new Date())).toBeNull();
    const own = (await claimNext(server.uow, await one.worker('own'), {}, settings, new Date()))!;
    expect(own.taskId).toBe(mine);

    // A project staffed with the account's own workers only: the operator's workers are left out.
    expect((await two.current('POST', '/v1/projects', { json: { type: 'categorization', name: 'inhouse' } })).status).toBe(200);
    const staffed = await two.categorization({ project: 'inhouse' });
    await server.uow.work.putStaffing({
      accountId: two.secrets.account_id,
      mode: 'live',
      project: 'inhouse',
      batch: '',
      attemptSubjects: ['account'],
      reviewSubjects: null,
      reviewFirst: 0,
      reviewRate: 0,
      updatedAt: new Date(),
    });
    const operator: WorkerPrincipal = {
      workerId: (await createWorker(server)).workerId,
      accountId: null,
      mode: 'live',
      roles: ['labeler'],
      calibrator: false,
      status: 'active',
    };
    const seen: string[] = [];
    for (
      let a = await claimNext(server.uow, operator, {}, settings, new Date());
      a;
      a = await claimNext(server.uow, operator, {}, settings, new Date())
    ) {
      seen.push(a.taskId);
      await giveBack(server.uow, operator, a.assignmentId, { leaseToken: a.leaseToken, status: 'skipped', reason: 'test' }, new Date());
    }
    expect(seen).not.toContain(staffed);
    expect((await claimNext(server.uow, await two.worker('inhouse'), { project: 'inhouse' }, settings, new Date()))!.taskId).toBe(staffed);
  });

  it('serves a calibration batch only to calibrators, and holds production batches until it is completed', async () => {
    const { worker, current, categorization } = await account();
    expect((await current('POST', '/v1/projects', { json: { type: 'categorization', name: 'p', rapid: true } })).status).toBe(200);
    expect((await current('POST', '/v1/batches', { json: { project: 'p', name: `cal-${db}`, calibration_batch: true } })).status).toBe(200);
    expect((await current('POST', '/v1/batches', { json: { project: 'p', name: `prod-${db}` } })).status).toBe(200);
    const cal = await categorization({ batch: `cal-${db}` });
    const prod = await categorization({ batch: `prod-${db}` });
    expect((await current('POST', `/v1/batches/cal-${db}/finalize`)).status).toBe(200);
    // A batch still staging is not served (the production batch cannot be finalized before calibration completes).
    expect((await current('POST', `/v1/batches/prod-${db}/finalize`)).status).toBe(400);
    expect(await claimNext(server.uow, await worker('plain'), {}, settings, new Date())).toBeNull();
    const calibrator = await worker('cal', { calibrator: true });
    const a = (await claimNext(server.uow, calibrator, {}, settings, new Date()))!;
    expect(a.taskId).toBe(cal);
    // Calibration work is always reviewed; the production batch still waits.
    expect(
      (
        await submitAssignment(
          server.uow,
          calibrator,
          a.assignmentId,
          { leaseToken: a.leaseToken, response: { category: 'cat' } },
          checkSchema,
          new Date(),
        )
      ).next,
    ).toBe('review');
    expect(await claimNext(server.uow, await worker('plain2'), {}, settings, new Date())).toBeNull();
    const reviewer = await worker('rev', { roles: ['reviewer'], calibrator: true });
    const r = (await claimNext(server.uow, reviewer, { role: 'review' }, settings, new Date()))!;
    await reviewAssignment(
      server.uow,
      reviewer,
      r.assignmentId,
      { leaseToken: r.leaseToken, result: 'accepted' },
      checkSchema,
      settings,
      new Date(),
    );
    expect((await current('GET', `/v1/batches/cal-${db}`)).body.status).toBe('completed');
    expect((await current('POST', `/v1/batches/prod-${db}/finalize`)).status).toBe(200);
    expect((await claimNext(server.uow, await worker('plain3'), {}, settings, new Date()))!.taskId).toBe(prod);
  });

  it('reviews: accept and fix complete the task with an operator audit; reject sends a redo with feedback to the author, then it completes with times_redone', async () => {
    const { caller, secrets, worker, current, categorization } = await account();
    expect((await current('POST', '/v1/projects', { json: { type: 'categorization', name: 'reviewed' } })).status).toBe(200);
    await server.uow.work.putStaffing({
      accountId: secrets.account_id,
      mode: 'live',
      project: 'reviewed',
      batch: '',
      attemptSubjects: null,
      reviewSubjects: null,
      reviewFirst: 10,
      reviewRate: 0,
      updatedAt: new Date(),
    });
    const labeler = await worker('author');
    const reviewer = await worker('checker', { roles: ['reviewer'] });
    const lead = await worker('lead', { roles: ['lead'] });
    const submitted = async (category: string) => {
      const taskId = await categorization({ project: 'reviewed' });
      const a = (await claimNext(server.uow, labeler, {}, settings, new Date()))!;
      expect(a.taskId).toBe(taskId);
      expect(
        (
          await submitAssignment(
            server.uow,
            labeler,
            a.assignmentId,
            { leaseToken: a.leaseToken, response: { category } },
            checkSchema,
            new Date(),
          )
        ).next,
      ).toBe('review');
      expect(await task(caller, taskId)).toMatchObject({ status: 'pending' });
      return { taskId, a };
    };
    // The author never reviews their own work; a labeler without the reviewer role takes no review.
    const first = await submitted('cat');
    expect((await failure(claimNext(server.uow, labeler, { role: 'review' }, settings, new Date()))).code).toBe('role_missing');
    const r1 = (await claimNext(server.uow, reviewer, { role: 'review' }, settings, new Date()))!;
    expect(r1).toMatchObject({ role: 'review', taskId: first.taskId, parentAssignmentId: first.a.assignmentId });
    await reviewAssignment(
      server.uow,
      reviewer,
      r1.assignmentId,
      { leaseToken: r1.leaseToken, result: 'accepted', activeMs: 4000 },
      checkSchema,
      settings,
      later(5000),
    );
    expect(await task(caller, first.taskId)).toMatchObject({
      status: 'completed',
      response: { category: 'cat' },
      audits: [{ auditedBy: reviewer.workerId, result: 'accepted', source: 'humantask', auditTimeSecs: 4 }],
    });
    expect((await server.uow.work.get(first.a.assignmentId, null))!.status).toBe('accepted');

    const second = await submitted('cat');
    const r2 = (await claimNext(server.uow, lead, { role: 'review' }, settings, new Date()))!;
    expect(
      (
        await failure(
          reviewAssignment(
            server.uow,
            lead,
            r2.assignmentId,
            { leaseToken: r2.leaseToken, result: 'fixed', response: { category: 'fish' } },
            checkSchema,
            settings,
            new Date(),
          ),
        )
      ).message,
    ).toMatch(/"fish" is not one of/);
    await reviewAssignment(
      server.uow,
      lead,
      r2.assignmentId,
      { leaseToken: r2.leaseToken, result: 'fixed', response: { category: 'dog' } },
      checkSchema,
      settings,
      new Date(),
    );
    expect(await task(caller, second.taskId)).toMatchObject({
      status: 'completed',
      response: { category: 'dog' },
      audits: [{ result: 'fixed', auditedBy: lead.workerId }],
    });
    expect(await callbacks(caller, second.taskId)).toHaveLength(1);

    const third = await submitted('dog');
    const r3 = (await claimNext(server.uow, reviewer, { role: 'review' }, settings, new Date()))!;
    const feedback: FeedbackItem[] = [{ scope: { field: 'category' }, category: 'wrong_label', text: 'It is a cat.' }];
    await reviewAssignment(
      server.uow,
      reviewer,
      r3.assignmentId,
      { leaseToken: r3.leaseToken, result: 'rejected', feedback },
      checkSchema,
      settings,
      new Date(),
    );
    expect((await server.uow.work.get(third.a.assignmentId, null))!).toMatchObject({ status: 'rejected', feedback });
    expect(await task(caller, third.taskId)).toMatchObject({ status: 'pending', audits: [] });
    // Reserved for its author: another labeler does not get it.
    expect(await claimNext(server.uow, await worker('someone'), {}, settings, new Date())).toBeNull();
    const redo = (await claimNext(server.uow, labeler, {}, settings, new Date()))!;
    // The remarks stay on the rejected work (the redo's view shows them from there); the redo has none of its own yet.
    expect(redo).toMatchObject({ role: 'redo', taskId: third.taskId, parentAssignmentId: third.a.assignmentId, feedback: null });
    // The redo of a rejected review is reviewed again.
    expect(
      (
        await submitAssignment(
          server.uow,
          labeler,
          redo.assignmentId,
          { leaseToken: redo.leaseToken, response: { category: 'cat' } },
          checkSchema,
          new Date(),
        )
      ).next,
    ).toBe('review');
    // By any staffed reviewer but its author: here the lead, who asks first (the reviewer who rejected it could too).
    const r4 = (await claimNext(server.uow, lead, { role: 'review' }, settings, new Date()))!;
    expect(r4.parentAssignmentId).toBe(redo.assignmentId);
    await reviewAssignment(
      server.uow,
      lead,
      r4.assignmentId,
      { leaseToken: r4.leaseToken, result: 'accepted' },
      checkSchema,
      settings,
      new Date(),
    );
    expect(await task(caller, third.taskId)).toMatchObject({
      status: 'completed',
      response: { category: 'cat' },
      timesRedone: 1,
      audits: [{ result: 'accepted' }],
    });
    expect(await callbacks(caller, third.taskId)).toHaveLength(1);
  });

  it("a customer's rejecting audit of a live task sends it to a worker to redo; the redo moves updated_at, counts in times_redone and is called back again", async () => {
    const { caller, worker, categorization } = await account();
    const taskId = await categorization();
    const w = await worker('w');
    const a = (await claimNext(server.uow, w, {}, settings, new Date()))!;
    await submitAssignment(
      server.uow,
      w,
      a.assignmentId,
      { leaseToken: a.leaseToken, response: { category: 'dog' } },
      checkSchema,
      new Date(),
    );
    const completed = (await task(caller, taskId))!;
    await auditTask(server.uow, caller, taskId, { accepted: false, comments: 'It is a cat.' }, later(1000), settings);
    expect(await task(caller, taskId)).toMatchObject({
      status: 'completed',
      customerReviewStatus: 'rejected',
      response: { category: 'dog' },
    });
    const redo = (await claimNext(server.uow, w, {}, settings, later(2000)))!;
    expect(redo).toMatchObject({ role: 'redo', taskId, parentAssignmentId: a.assignmentId, feedback: null });
    expect((await server.uow.work.get(a.assignmentId, null))!.feedback).toMatchObject([{ text: 'It is a cat.' }]);
    await submitAssignment(
      server.uow,
      w,
      redo.assignmentId,
      { leaseToken: redo.leaseToken, response: { category: 'cat' } },
      checkSchema,
      later(3000),
    );
    const redone = (await task(caller, taskId))!;
    expect(redone).toMatchObject({ status: 'completed', response: { category: 'cat' }, timesRedone: 1, customerReviewStatus: 'fixed' });
    expect(redone.completedAt).toEqual(completed.completedAt);
    expect(redone.updatedAt.getTime()).toBeGreaterThan(completed.updatedAt.getTime());
    const sent = await callbacks(caller, taskId);
    expect(sent.map((m) => (m.payload.response as { category: string }).category)).toEqual(['dog', 'cat']);
  });

  it('a waiting claim is woken by a new live task (the NOTIFY after its commit), and one that finds nothing ends empty', async () => {
    const { worker, categorization } = await account();
    const w = await worker('waiter');
    expect(await claimNextWaiting(server.uow, w, {}, settings, { waitMs: 50, available: server.workAvailable })).toBeNull();
    // Rechecking only after 60 s: within the test's 15 s only the nudge can bring the task.
    const waiting = claimNextWaiting(server.uow, w, {}, settings, { waitMs: 60_000, available: server.workAvailable, recheckMs: 60_000 });
    await new Promise((r) => setTimeout(r, 50));
    const taskId = await categorization();
    expect((await waiting)!.taskId).toBe(taskId);
  }, 15_000);

  it('sets staffing per project and batch: validated, kept where a change leaves it out, and a batch row wins over its project', async () => {
    const { caller, principal, current, categorization } = await account();
    expect((await current('POST', '/v1/projects', { json: { type: 'categorization', name: 'sp' } })).status).toBe(200);
    expect((await current('POST', '/v1/batches', { json: { project: 'sp', name: `sb-${db}` } })).status).toBe(200);
    expect(await getStaffing(server.uow, caller, { project: 'sp' })).toMatchObject({
      attemptSubjects: null,
      reviewSubjects: null,
      reviewFirst: 0,
      reviewRate: 0,
    });
    expect((await failure(getStaffing(server.uow, caller, { project: 'nope' }))).kind).toBe('not_found');
    expect((await failure(putStaffing(server.uow, caller, { project: 'sp' }, { reviewRate: 2 }, new Date()))).message).toMatch(
      /review_rate is 2/,
    );
    // Only workers of the account's own workforce can be named.
    expect(
      (await failure(putStaffing(server.uow, caller, { project: 'sp' }, { attempt: [principal('ghost').workerId] }, new Date()))).kind,
    ).toBe('not_found');
    const real = async () => principal('', { workerId: (await createWorker(server, { accountId: caller.account.accountId })).workerId });
    const w1 = await real();
    const w2 = await real();
    await putStaffing(server.uow, caller, { project: 'sp' }, { attempt: [w1.workerId], reviewFirst: 3 }, new Date());
    expect(await putStaffing(server.uow, caller, { project: 'sp' }, { reviewRate: 0.5 }, new Date())).toMatchObject({
      attemptSubjects: [w1.workerId],
      reviewFirst: 3,
      reviewRate: 0.5,
    });
    await putStaffing(server.uow, caller, { project: 'sp', batch: `sb-${db}` }, { attempt: [w2.workerId] }, new Date());
    const inProject = await categorization({ project: 'sp' });
    const inBatch = await categorization({ batch: `sb-${db}` });
    const held = (await claimNext(server.uow, w1, {}, settings, new Date()))!;
    expect(held.taskId).toBe(inProject);
    // Asking again while it is held answers the same assignment (a reloaded tab resumes its work).
    expect(await claimNext(server.uow, w1, {}, settings, new Date())).toEqual(held);
    await giveBack(server.uow, w1, held.assignmentId, { leaseToken: held.leaseToken, status: 'skipped', reason: 'x' }, new Date());
    expect(await claimNext(server.uow, w1, {}, settings, new Date())).toBeNull();
    expect((await claimNext(server.uow, w2, {}, settings, new Date()))!.taskId).toBe(inBatch);
  });

  it("lists a worker's own assignments newest first, page by page, and shows one only to its worker", async () => {
    const { worker, principal, categorization } = await account();
    const w = await worker('hist');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      await categorization();
      const a = (await claimNext(server.uow, w, {}, settings, new Date(Date.now() + i)))!;
      ids.unshift(a.assignmentId);
      if (i < 2)
        await submitAssignment(
          server.uow,
          w,
          a.assignmentId,
          { leaseToken: a.leaseToken, response: { category: 'cat' } },
          checkSchema,
          new Date(Date.now() + i),
        );
    }
    const one = await listOwnAssignments(server.uow, w, { limit: 2 });
    expect(one.assignments.map((a) => a.assignmentId)).toEqual(ids.slice(0, 2));
    const two = await listOwnAssignments(server.uow, w, { limit: 2, nextToken: one.nextToken! });
    expect([two.assignments.map((a) => a.assignmentId), two.nextToken]).toEqual([ids.slice(2), null]);
    expect((await listOwnAssignments(server.uow, w, { limit: 5, statuses: ['active'] })).assignments.map((a) => a.assignmentId)).toEqual([
      ids[0],
    ]);
    expect((await getOwnAssignment(server.uow, w, ids[0]!)).task.params).toMatchObject({ categories: ['cat', 'dog'] });
    expect((await failure(getOwnAssignment(server.uow, principal('other'), ids[0]!))).kind).toBe('not_found');
  });

  it('writes an append-only log of the work', async () => {
    const { caller, worker, categorization } = await account();
    const taskId = await categorization();
    const w = await worker('w');
    const a = (await claimNext(server.uow, w, {}, settings, new Date()))!;
    await heartbeat(server.uow, w, a.assignmentId, { leaseToken: a.leaseToken }, settings, new Date());
    await submitAssignment(
      server.uow,
      w,
      a.assignmentId,
      { leaseToken: a.leaseToken, response: { category: 'cat' } },
      checkSchema,
      new Date(),
    );
    const rows = await server.store.execute<{ kind: string; worker_id: string }>({
      name: `events_${db}`,
      text: 'SELECT kind, worker_id FROM work_events WHERE task_id = $1 ORDER BY id',
      values: [taskId],
    });
    expect(rows.map((r) => r.kind)).toEqual(['issued', 'heartbeat', 'submitted', 'completed']);
    expect(caller.account.accountId).toBeTruthy();
  });
});
