// Training, hidden evaluation and pausing (issue 19) on PGlite and PostgreSQL: a worker new to a
// project gets its training tasks before any live task, sees score and differences after each
// submit, waits after a failed try and stops after the last; a qualified worker's queue mixes in
// evaluation tasks at the policy's rate (seeded), which look on the wire exactly as live ones; a
// rolling accuracy under the mark pauses the worker for that project only and sends their answers
// under review back to the queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { newTaskId } from '../../server/domain/ids.ts';
import type { Caller } from '../../server/domain/model.ts';
import { setQualityPolicy, type QualityPolicyInput } from '../../server/domain/quality/policy.ts';
import type { Assignment } from '../../server/domain/workforce/model.ts';
import { changeWorker } from '../../server/domain/workforce/identity.ts';
import { operatorWorkforce } from '../../server/domain/workforce/handles.ts';
import { putStaffing } from '../../server/domain/workforce/staffing.ts';
import { submitAssignment } from '../../server/domain/workforce/answers.ts';
import { claimNext, giveBack, type WorkSettings } from '../../server/domain/workforce/work.ts';
import type { WorkerPrincipal } from '../../server/domain/workforce/worker.ts';
import { loadContract } from '../../server/http/contract.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker } from '../support/workers.ts';

const checkSchema = loadContract('current').checkResponse;
const settings: WorkSettings = { leaseMs: 60_000, hardCapMs: 600_000, redoReserveMs: 3_600_000 };

/** A seeded random source (mulberry32): the same seed, the same draws. */
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

const never = () => 0.999_999;
const always = () => 0;
const params = { attachment_type: 'text', attachment: 'a cat', categories: ['cat', 'dog'] };

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('training, evaluation and pausing on %s', (db) => {
  let server: TestServer;
  let n = 0;

  beforeAll(async () => {
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A fresh account with categorization projects `p` and `q`, and helpers. */
  async function account() {
    const secrets = await createAccount(server.uow, `qt-${db}-${n++}`, new Date());
    const caller: Caller = { account: (await server.uow.accounts.findById(secrets.account_id))!, mode: 'live' };
    const current = client(server, 'current', secrets.live_key);
    for (const name of ['p', 'q']) {
      const r = await current('POST', '/v1/projects', { json: { type: 'categorization', name } });
      expect(r.status, r.text).toBe(200);
    }
    const policy = (project: string, input: QualityPolicyInput) => setQualityPolicy(server.uow, caller, project, input, new Date());
    const live = async (project = 'p', instruction: string | undefined = 'Pick') => {
      const r = await current('POST', '/v1/task/categorization', {
        json: { callback_url: 'https://example.com/cb', ...(instruction ? { instruction } : {}), project, ...params },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.task_id as string;
    };
    /** A training or evaluation task made in the store (as a promotion makes one): categorization, expected `category`. */
    // Each a millisecond after the last: "creation order" is by time (ties fall to the random id).
    let made = Date.now() - 60_000;
    const qualityTask = async (kind: 'training' | 'evaluation', category: string) => {
      const id = newTaskId(new Date());
      await server.uow.training.insert({
        id,
        accountId: secrets.account_id,
        mode: 'live',
        kind,
        type: 'categorization',
        params,
        expectedResponse: { category },
        initialResponse: null,
        createdAt: new Date(made),
      });
      made += 1;
      return id;
    };
    const worker = async (): Promise<WorkerPrincipal & { token: string }> => {
      const w = await createWorker(server, { accountId: secrets.account_id });
      return {
        workerId: w.workerId,
        accountId: secrets.account_id,
        mode: 'live',
        roles: ['labeler'],
        calibrator: false,
        status: 'active',
        token: w.token,
      };
    };
    return { secrets, caller, current, policy, live, qualityTask, worker };
  }

  const claim = (w: WorkerPrincipal, at: Date, random: () => number = never, project?: string) =>
    claimNext(server.uow, w, project ? { project } : {}, settings, at, random);
  const submit = async (w: WorkerPrincipal, a: Assignment, category: string, at: Date) =>
    (await submitAssignment(server.uow, w, a.assignmentId, { leaseToken: a.leaseToken, response: { category } }, checkSchema, at))
      .assignment;

  it('gives a new worker the training tasks first, with feedback; a failed try waits, the last try ends the project for them', async () => {
    const { policy, live, qualityTask, worker } = await account();
    await policy('p', { training: { required: 2, pass_score: 0.8, retry_after_s: 60, max_tries: 2, show_expected: true } });
    const t1 = await qualityTask('training', 'cat');
    const t2 = await qualityTask('training', 'dog');
    const liveId = await live('p');
    const w = await worker();
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000);

    // Try 1: both training tasks, in creation order, before the live task.
    const a1 = (await claim(w, at(0)))!;
    expect(a1).toMatchObject({ purpose: 'training', taskId: t1, qualityProject: 'p', role: 'attempt', status: 'active' });
    const s1 = await submit(w, a1, 'dog', at(1));
    expect(s1.score).toBe(0);
    expect(s1.trainingFeedback).toMatchObject({
      score: 0,
      passed: false,
      expected_response: { category: 'cat' },
      progress: { state: 'training', scored: 1, required: 2, tries: 1, max_tries: 2, pass_score: 0.8 },
    });
    expect((s1.trainingFeedback!.differences as unknown[]).length).toBeGreaterThan(0);
    const a2 = (await claim(w, at(2)))!;
    expect(a2).toMatchObject({ purpose: 'training', taskId: t2 });
    const s2 = await submit(w, a2, 'dog', at(3));
    expect(s2.trainingFeedback).toMatchObject({
      score: 1,
      passed: true,
      differences: [],
      progress: { state: 'waiting', mean_score: 0.5, tries: 1 },
    });
    expect((s2.trainingFeedback!.progress as { retry_after: string }).retry_after).toBe(at(63).toISOString());

    // Waiting: no live task, no training.
    expect(await claim(w, at(30))).toBeNull();
    // Try 2 after the wait: the same tasks again; failing it ends training for this project.
    const b1 = (await claim(w, at(64)))!;
    expect(b1).toMatchObject({ purpose: 'training', taskId: t1 });
    await submit(w, b1, 'dog', at(65));
    const b2 = (await claim(w, at(66)))!;
    expect(b2).toMatchObject({ purpose: 'training', taskId: t2 });
    const last = await submit(w, b2, 'cat', at(67));
    expect(last.trainingFeedback).toMatchObject({ score: 0, progress: { state: 'failed', tries: 2, mean_score: 0 } });
    expect(await claim(w, at(1000))).toBeNull();
    expect(await server.uow.tasks.get(w.accountId!, 'live', liveId)).toMatchObject({ status: 'pending' });

    // Another worker passes at the first try and gets the live task at once.
    const v = await worker();
    const c1 = (await claim(v, at(0)))!;
    await submit(v, c1, 'cat', at(1));
    const c2 = (await claim(v, at(2)))!;
    const passed = await submit(v, c2, 'dog', at(3));
    expect(passed.trainingFeedback).toMatchObject({ passed: true, progress: { state: 'qualified', mean_score: 1, scored: 2 } });
    expect(await claim(v, at(4))).toMatchObject({ purpose: 'live', taskId: liveId });
  });

  it('lets a worker in training go to live work once the policy asks for no training', async () => {
    const { policy, live, qualityTask, worker } = await account();
    await policy('p', { training: { required: 1 } });
    await qualityTask('training', 'cat');
    const liveId = await live('p');
    const w = await worker();
    const t = (await claim(w, new Date()))!;
    expect(t.purpose).toBe('training');
    await giveBack(server.uow, w, t.assignmentId, { leaseToken: t.leaseToken, status: 'released' }, new Date());
    await policy('p', { training: { required: 0 } });
    expect(await claim(w, new Date())).toMatchObject({ purpose: 'live', taskId: liveId });
  });

  it('hides the expected answer when the policy says so, and shows the feedback in the worker API', async () => {
    const { policy, qualityTask, worker, live } = await account();
    await policy('p', { training: { required: 1, show_expected: false } });
    const t1 = await qualityTask('training', 'cat');
    await live('p');
    const w = await worker();
    const auth = { authorization: `Bearer ${w.token}` };
    const next = await fetch(`${server.url}/worker/v1/assignments/next`, { method: 'POST', headers: auth });
    expect(next.status).toBe(200);
    const a = (await next.json()) as Record<string, any>;
    expect(a.task.task_id).toBe(t1);
    expect(a.training).toEqual({ project: 'p' });
    const sent = await fetch(`${server.url}/worker/v1/assignments/${a.assignment_id}/submit`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ lease_token: a.lease_token, response: { category: 'dog' }, active_ms: 10 }),
    });
    const body = (await sent.json()) as Record<string, any>;
    expect(sent.status, JSON.stringify(body)).toBe(200);
    expect(body.training.project).toBe('p');
    expect(body.training.feedback).toMatchObject({ score: 0, passed: false, progress: { state: 'waiting', tries: 1, max_tries: 3 } });
    expect(body.training.feedback.expected_response).toBeUndefined();
    expect(body.training.feedback.differences[0]).toMatchObject({ kind: 'mismatch', field: 'category', score: 0 });
    const again = await fetch(`${server.url}/worker/v1/assignments/${a.assignment_id}`, { headers: auth });
    expect(((await again.json()) as Record<string, any>).training).toEqual(body.training);
  });

  it('mixes evaluation tasks in at the policy rate, replayable from the seed, and at the trusted rate after trusted_after', async () => {
    const { policy, live, qualityTask, worker } = await account();
    await policy('p', { training: { required: 0 }, evaluation: { rate_new: 0.5, rate_trusted: 0, trusted_after: 6 } });
    for (let i = 0; i < 12; i++) await qualityTask('evaluation', 'cat');
    for (let i = 0; i < 20; i++) await live('p');
    const w = await worker();
    const random = seeded(19);
    const replay = seeded(19);
    const got: string[] = [];
    const expected: string[] = [];
    let liveDone = 0;
    for (let i = 0; i < 20; i++) {
      // The first claim records the worker's standing (no draw); then one draw a claim while new.
      const draw = i === 0 ? null : liveDone < 6 ? replay() : null;
      expected.push(draw !== null && draw < 0.5 ? 'evaluation' : 'live');
      const a = (await claim(w, new Date(), random))!;
      got.push(a.purpose);
      await submit(w, a, 'cat', new Date());
      if (a.purpose === 'live') liveDone++;
    }
    expect(got).toEqual(expected);
    expect(got.filter((p) => p === 'evaluation').length).toBeGreaterThan(0);
    // Trusted after 6 live answers: rate_trusted 0, no evaluation since.
    expect(got.slice(got.indexOf('live', got.lastIndexOf('evaluation'))).every((p) => p === 'live')).toBe(true);
  });

  it('shows an evaluation assignment and its submit answer on the wire exactly as a live one', async () => {
    const { policy, live, qualityTask, worker, current } = await account();
    const set = await current('POST', '/v1/projects/p/setParams', { json: { instruction: 'Pick the animal' } });
    expect(set.status, set.text).toBe(200);
    await policy('p', { training: { required: 0 }, evaluation: { rate_new: 0.5 } });
    await qualityTask('evaluation', 'cat');
    const liveIds = [await live('p', ''), await live('p', '')];
    const w = await worker();
    const auth = { authorization: `Bearer ${w.token}` };
    const t0 = Date.now();
    const l = (await claim(w, new Date(), never))!;
    expect(l.purpose).toBe('live');
    const ev = async (a: Assignment) => {
      const got = await fetch(`${server.url}/worker/v1/assignments/${a.assignmentId}`, { headers: auth });
      return { status: got.status, headers: [...got.headers.keys()].sort(), body: (await got.json()) as Record<string, any> };
    };
    const liveView = await ev(l);
    const liveSubmit = await fetch(`${server.url}/worker/v1/assignments/${l.assignmentId}/submit`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ lease_token: l.leaseToken, response: { category: 'cat' }, active_ms: 10 }),
    });
    const e = (await claim(w, new Date(), always))!;
    expect(e.purpose).toBe('evaluation');
    const evalView = await ev(e);
    const evalSubmit = await fetch(`${server.url}/worker/v1/assignments/${e.assignmentId}/submit`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ lease_token: e.leaseToken, response: { category: 'dog' }, active_ms: 10 }),
    });

    /** Every key path of a JSON value, with the kind of value found there. */
    const shape = (v: unknown, path = ''): string[] =>
      v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.entries(v).flatMap(([k, x]) => [`${path}.${k}`, ...shape(x, `${path}.${k}`)])
        : [`${path}:${Array.isArray(v) ? 'array' : typeof v}`];
    expect(evalView.status).toBe(liveView.status);
    expect(evalView.headers).toEqual(liveView.headers);
    expect(shape(evalView.body)).toEqual(shape(liveView.body));
    const { assignment_id: _a1, lease_token: _l1, lease_expires_at: _x1, hard_deadline: _h1, created_at: _c1, ...liveRest } = liveView.body;
    const { assignment_id: _a2, lease_token: _l2, lease_expires_at: _x2, hard_deadline: _h2, created_at: _c2, ...evalRest } = evalView.body;
    // Same task content (the project's instruction, params, project), another id of the same shape.
    expect({ ...evalRest, task: { ...evalRest.task, task_id: 'x' } }).toEqual({ ...liveRest, task: { ...liveRest.task, task_id: 'x' } });
    expect(evalView.body.task.instruction).toBe('Pick the animal');
    expect(evalView.body.assignment_id).toMatch(/^asg_[0-9a-f]{24}$/);
    expect(evalView.body.task.task_id).toMatch(/^[0-9a-f]{24}$/);
    expect(liveIds).not.toContain(evalView.body.task.task_id);
    // The id's time is that of a task of the queue (not the time of the claim).
    const idTime = Number.parseInt(evalView.body.task.task_id.slice(0, 12), 16);
    const queueTime = Number.parseInt(liveIds[1]!.slice(0, 12), 16);
    expect(idTime).toBeGreaterThanOrEqual(queueTime);
    expect(idTime).toBeLessThan(Math.max(queueTime + 1000, t0));
    expect(Date.parse(evalView.body.created_at)).toBeGreaterThan(idTime);

    expect(evalSubmit.status).toBe(liveSubmit.status);
    expect([...evalSubmit.headers.keys()].sort()).toEqual([...liveSubmit.headers.keys()].sort());
    const liveAnswer = (await liveSubmit.json()) as Record<string, any>;
    const evalAnswer = (await evalSubmit.json()) as Record<string, any>;
    expect(shape(evalAnswer)).toEqual(shape(liveAnswer));
    expect(evalAnswer.status).toBe('submitted');
    expect(evalAnswer.training).toBeUndefined();
    // The worker's own figures count the evaluation as work of the project, as a live task.
    const stats = (await (await fetch(`${server.url}/worker/v1/stats`, { headers: auth })).json()) as Record<string, any>;
    expect(stats.projects).toEqual([
      expect.objectContaining({ project: 'p', counts: expect.objectContaining({ issued: 2, submitted: 2 }) }),
    ]);
    // The wrong answer was scored, out of sight; no customer task changed.
    expect((await server.uow.work.get(e.assignmentId, null))!.score).toBe(0);
    expect(await server.uow.tasks.get(w.accountId!, 'live', evalView.body.task.task_id)).toBeNull();
  });

  it('pauses a worker whose rolling accuracy falls under the mark for that project only, and requeues their answers under review', async () => {
    const { caller, policy, live, qualityTask, worker } = await account();
    await policy('p', { training: { required: 0 }, evaluation: { rate_new: 0.5, window: 4, min_scored: 2, pause_below: 0.7 } });
    await policy('q', { training: { required: 0 }, evaluation: { rate_new: 0 } });
    for (let i = 0; i < 3; i++) await qualityTask('evaluation', 'cat');
    const delivered = await live('p');
    const w = await worker();
    // Delivered before reviews were sampled: stays as delivered.
    const d = (await claim(w, new Date(), never))!;
    expect(d.taskId).toBe(delivered);
    await submit(w, d, 'cat', new Date());
    await putStaffing(server.uow, caller, { project: 'p' }, { reviewFirst: 100 }, new Date());
    const [first, more, third, fourth] = [await live('p'), await live('p'), await live('p'), await live('p')];
    const underReview = [first, third];
    const other = await live('q');

    const l1 = (await claim(w, new Date(), never, 'p'))!;
    await submit(w, l1, 'cat', new Date());
    // The evaluation takes the place of the second task, which the worker's queue then passes over.
    const e1 = (await claim(w, new Date(), always, 'p'))!;
    expect(e1).toMatchObject({ purpose: 'evaluation', standsFor: more });
    await submit(w, e1, 'dog', new Date());
    const l2 = (await claim(w, new Date(), never, 'p'))!;
    await submit(w, l2, 'cat', new Date());
    expect([l1.taskId, l2.taskId]).toEqual(underReview);
    expect((await server.uow.work.getTaskWork(l1.taskId))!.stage).toBe('review');
    const e2 = (await claim(w, new Date(), always, 'p'))!;
    expect(e2).toMatchObject({ purpose: 'evaluation', standsFor: fourth });
    await submit(w, e2, 'dog', new Date());

    // Paused for p: its answers under review are back in the queue, the delivered one stays.
    const standing = await server.uow.qualification.get(w.workerId, w.accountId!, 'p');
    expect(standing).toMatchObject({ state: 'paused', pausedAccuracy: 0 });
    for (const taskId of underReview) {
      expect(await server.uow.work.getTaskWork(taskId)).toMatchObject({ stage: 'attempt', openSlots: 1, parentAssignmentId: null });
      const mine = (await server.uow.work.forTask(taskId)).find((a) => a.workerId === w.workerId)!;
      expect(mine.status).toBe('rejected');
    }
    expect(await server.uow.tasks.get(w.accountId!, 'live', delivered)).toMatchObject({ status: 'completed' });
    expect((await server.uow.work.getTaskWork(delivered))!.stage).toBe('done');
    const logged = await server.store.execute<{ kind: string; data: Record<string, unknown> }>({
      name: `quality_events_${db}`,
      text: `SELECT kind, data FROM work_events WHERE worker_id = $1 AND kind IN ('scored', 'paused') ORDER BY id`,
      values: [w.workerId],
    });
    expect(logged).toEqual([
      { kind: 'scored', data: { purpose: 'evaluation', score: 0, project: 'p', type: 'categorization' } },
      { kind: 'scored', data: { purpose: 'evaluation', score: 0, project: 'p', type: 'categorization' } },
      { kind: 'paused', data: { project: 'p', accuracy: 0, window: 2, requeued: 2 } },
    ]);
    // Nothing more of p for the paused worker (not even with p asked for); q's work still comes.
    expect(await claim(w, new Date(), never, 'p')).toBeNull();
    expect(await claim(w, new Date(), never)).toMatchObject({ purpose: 'live', taskId: other });
    // Another worker takes the requeued tasks.
    const v = await worker();
    const taken = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const a = (await claim(v, new Date(), never, 'p'))!;
      taken.add(a.taskId);
      await submit(v, a, 'cat', new Date());
    }
    expect(taken).toEqual(new Set([...underReview, more, fourth]));
  });
  it('lets a lead return a worker paused for a project, or out of training tries, to work (unpause with the project)', async () => {
    const { current, policy, live, qualityTask, worker } = await account();
    await policy('p', { training: { required: 0 }, evaluation: { rate_new: 0.5, window: 4, min_scored: 2, pause_below: 0.7 } });
    await policy('q', { training: { required: 1, pass_score: 0.8, max_tries: 1 } });
    for (let i = 0; i < 3; i++) await qualityTask('evaluation', 'cat');
    await qualityTask('training', 'cat');
    // Each evaluation takes the place of a live task in the worker's queue: five live tasks for two answers and three evaluations.
    const [l1, , , l4] = [await live('p'), await live('p'), await live('p'), await live('p'), await live('p')];
    const w = await worker();
    const figuresOf = async (project: string, workerId: string) => {
      const r = await current('GET', `/v1/projects/${project}/quality`);
      expect(r.status, r.text).toBe(200);
      return r.body.workers.find((x: { worker: string }) => x.worker === workerId);
    };
    const unpause = (workerId: string, json?: unknown) =>
      current('POST', `/v1/workforce/workers/${workerId}/unpause`, json === undefined ? {} : { json });

    // Paused for p by two wrong evaluation answers.
    const a1 = (await claim(w, new Date(), never, 'p'))!;
    expect(a1.taskId).toBe(l1);
    await submit(w, a1, 'cat', new Date());
    for (let i = 0; i < 2; i++) {
      const e = (await claim(w, new Date(), always, 'p'))!;
      expect(e.purpose).toBe('evaluation');
      await submit(w, e, 'dog', new Date());
    }
    expect(await claim(w, new Date(), never, 'p')).toBeNull();
    expect(await figuresOf('p', w.workerId)).toMatchObject({ state: 'paused', accuracy: 0, evaluation_scored: 2 });
    // The lead also paused the worker wholly; an unknown project changes nothing.
    expect((await current('POST', `/v1/workforce/workers/${w.workerId}/pause`)).body.status).toBe('paused');
    const unknown = await unpause(w.workerId, { project: 'nope' });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'Project "nope" not found.']);
    expect((await current('GET', `/v1/workforce/workers/${w.workerId}`)).body.status).toBe('paused');
    expect((await unpause(w.workerId, { project: '' })).status).toBe(400);

    // Unpaused for p: active, qualified again, the scores that paused them no longer count.
    const back = await unpause(w.workerId, { project: 'p' });
    expect([back.status, back.body.status]).toEqual([200, 'active']);
    expect(await server.uow.qualification.get(w.workerId, w.accountId!, 'p')).toMatchObject({ state: 'qualified', pausedAccuracy: null });
    const after = await figuresOf('p', w.workerId);
    expect(after.state).toBe('qualified');
    expect(after).not.toHaveProperty('accuracy');
    const a2 = (await claim(w, new Date(), never, 'p'))!;
    expect(a2).toMatchObject({ purpose: 'live', taskId: l4 });
    await submit(w, a2, 'cat', new Date());
    // One wrong answer since: fewer than min_scored, no pause.
    const e3 = (await claim(w, new Date(), always, 'p'))!;
    expect(e3.purpose).toBe('evaluation');
    await submit(w, e3, 'dog', new Date());
    expect(await figuresOf('p', w.workerId)).toMatchObject({ state: 'qualified', accuracy: 0, evaluation_scored: 1 });
    // Unpausing again changes nothing more: one event for the one change.
    expect((await unpause(w.workerId, { project: 'p' })).status).toBe(200);
    const logged = await server.store.execute<{ data: Record<string, unknown> }>({
      name: `unpaused_events_${db}`,
      text: `SELECT data FROM work_events WHERE worker_id = $1 AND kind = 'unpaused' ORDER BY id`,
      values: [w.workerId],
    });
    expect(logged.map((e) => e.data)).toEqual([{ project: 'p', from: 'paused', by: 'customer' }]);

    // Failed q's training (one try): a reset gives the tries again, the first at once.
    const liveQ = await live('q');
    const u = await worker();
    const t1 = (await claim(u, new Date(), never, 'q'))!;
    expect(t1.purpose).toBe('training');
    expect((await submit(u, t1, 'dog', new Date())).trainingFeedback).toMatchObject({ progress: { state: 'failed', tries: 1 } });
    expect(await claim(u, new Date(), never, 'q')).toBeNull();
    expect((await unpause(u.workerId, { project: 'q' })).status).toBe(200);
    expect(await server.uow.qualification.get(u.workerId, u.accountId!, 'q')).toMatchObject({ state: 'waiting', tries: 0 });
    const t2 = (await claim(u, new Date(), never, 'q'))!;
    expect(t2.purpose).toBe('training');
    expect((await submit(u, t2, 'cat', new Date())).trainingFeedback).toMatchObject({ progress: { state: 'qualified', tries: 1 } });
    const l = (await claim(u, new Date(), never, 'q'))!;
    expect(l).toMatchObject({ purpose: 'live', taskId: liveQ });
    await submit(u, l, 'cat', new Date());
    expect(await figuresOf('q', u.workerId)).toMatchObject({ state: 'qualified' });
  });

  it("lets a lead return a worker of the operator's workforce, named by its handle, to the account's project; the worker's own pause stays the operator's", async () => {
    const { current, caller, live, policy, qualityTask } = await account();
    // A project name of this account alone: the operator's worker serves every account.
    const project = `operator-${db}`;
    expect((await current('POST', '/v1/projects', { json: { type: 'categorization', name: project } })).status).toBe(200);
    await policy(project, { training: { required: 0 }, evaluation: { rate_new: 0.5, window: 4, min_scored: 2, pause_below: 0.7 } });
    for (let i = 0; i < 2; i++) await qualityTask('evaluation', 'cat');
    const [l1, l2] = [await live(project), await live(project), await live(project)];
    const created = await createWorker(server);
    const w: WorkerPrincipal = {
      workerId: created.workerId,
      accountId: null,
      mode: 'live',
      roles: ['labeler'],
      calibrator: false,
      status: 'active',
    };
    const a1 = (await claim(w, new Date(), never, project))!;
    expect(a1.taskId).toBe(l1);
    await submit(w, a1, 'cat', new Date());
    for (let i = 0; i < 2; i++) await submit(w, (await claim(w, new Date(), always, project))!, 'dog', new Date());
    expect(await claim(w, new Date(), never, project)).toBeNull();
    const figures = await current('GET', `/v1/projects/${project}/quality`);
    const [seen] = figures.body.workers;
    expect(seen).toMatchObject({ worker: expect.stringMatching(/^opw_[0-9a-f]{24}$/), state: 'paused' });

    // The operator paused the worker wholly too: that pause is the operator's.
    await changeWorker(server.uow, operatorWorkforce, w.workerId, { status: 'paused' }, new Date());
    const whole = await current('POST', `/v1/workforce/workers/${seen.worker}/unpause`, { json: {} });
    expect([whole.status, whole.body.error]).toEqual([
      400,
      `${seen.worker} is a worker of the operator's workforce: only their standing in one of your projects can be reset (give project).`,
    ]);
    // A project where the handle has no standing, and another account using the handle: 404.
    const nowhere = await current('POST', `/v1/workforce/workers/${seen.worker}/unpause`, { json: { project: 'p' } });
    expect([nowhere.status, nowhere.body.error]).toEqual([404, `Worker ${seen.worker} has no standing in project "p".`]);
    const other = await account();
    expect((await other.current('POST', '/v1/projects', { json: { type: 'categorization', name: project } })).status).toBe(200);
    const elsewhere = await other.current('POST', `/v1/workforce/workers/${seen.worker}/unpause`, { json: { project } });
    expect(elsewhere.status).toBe(404);
    expect(await server.uow.qualification.get(w.workerId, caller.account.accountId, project)).toMatchObject({ state: 'paused' });

    const back = await current('POST', `/v1/workforce/workers/${seen.worker}/unpause`, { json: { project } });
    expect([back.status, back.body]).toEqual([200, { worker: seen.worker, project, state: 'qualified' }]);
    expect((await current('GET', `/v1/projects/${project}/quality`)).body.workers[0]).toMatchObject({
      worker: seen.worker,
      state: 'qualified',
    });
    expect((await server.uow.workers.get(w.workerId))!.status).toBe('paused');
    // Once the operator lets them work again, the project's live work is theirs to take.
    await changeWorker(server.uow, operatorWorkforce, w.workerId, { status: 'active' }, new Date());
    expect(await claim(w, new Date(), never, project)).toMatchObject({ purpose: 'live', taskId: l2 });
  });

  it("takes a paused worker's answer out of an overlapping task that still waits for the other answers", async () => {
    const { policy, live, qualityTask, worker } = await account();
    await policy('p', {
      overlap: 2,
      training: { required: 0 },
      evaluation: { rate_new: 0.5, window: 2, min_scored: 2, pause_below: 0.7 },
      consensus: { threshold: 0.5 },
    });
    for (let i = 0; i < 2; i++) await qualityTask('evaluation', 'cat');
    const waiting = await live('p');
    const w = await worker();
    const mine = (await claim(w, new Date(), never))!;
    expect(mine.taskId).toBe(waiting);
    await submit(w, mine, 'dog', new Date());
    expect(await server.uow.work.getTaskWork(waiting)).toMatchObject({ stage: 'attempt', openSlots: 1, needed: 2 });
    for (let i = 0; i < 2; i++) {
      await live('p');
      const e = (await claim(w, new Date(), always))!;
      expect(e.purpose).toBe('evaluation');
      await submit(w, e, 'dog', new Date());
    }
    expect(await server.uow.qualification.get(w.workerId, w.accountId!, 'p')).toMatchObject({ state: 'paused' });

    // Its answer no longer counts: the slot is open again, and two other workers settle the task.
    expect(await server.uow.work.getTaskWork(waiting)).toMatchObject({ stage: 'attempt', openSlots: 2, needed: 2 });
    expect((await server.uow.work.get(mine.assignmentId, null))!.status).toBe('rejected');
    for (const v of [await worker(), await worker()]) {
      const a = (await claim(v, new Date(), never, 'p'))!;
      expect(a.taskId).toBe(waiting);
      await submit(v, a, 'cat', new Date());
    }
    expect(await server.uow.tasks.get(w.accountId!, 'live', waiting)).toMatchObject({ status: 'completed', response: { category: 'cat' } });
  });
});
