// A worker's own figures (GET /worker/v1/stats, issue 19), counted from the work event log, on PGlite
// and PostgreSQL: a labeler takes, skips, gives back and submits live tasks whose every attempt is
// reviewed; a reviewer accepts one and rejects one. Each sees exactly what they did, per project,
// with active time; a period that names nothing they did shows zeros; a bad period is a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { newTaskId } from '../../server/domain/ids.ts';
import type { WorkEvent } from '../../server/domain/workforce/model.ts';
import { testClock } from '../support/clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, workerClient } from '../support/workers.ts';

const zero = { issued: 0, submitted: 0, skipped: 0, released: 0, expired: 0, accepted: 0, fixed: 0, rejected: 0, reviews: 0 };

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the worker figures on %s', (db) => {
  let server: TestServer;
  const clock = testClock();

  beforeAll(async () => {
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '0' }, undefined, { now: clock.now });
  });
  afterAll(async () => {
    await server?.close();
  });

  const as = (token: string) => workerClient(server, token);

  /** An account with a project "pets" that asks for one training task (its pass mark), the training task, and one live task. */
  const petsWithTraining = async (name: string, training: { required: number; pass_score?: number }) => {
    const secrets = await createAccount(server.uow, name, new Date());
    const live = client(server, 'current', secrets.live_key);
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'pets' } })).status).toBe(200);
    const policy = await live('PUT', '/v1/projects/pets/quality_policy', { json: { training } });
    expect(policy.status, policy.text).toBe(200);
    const params = { attachment_type: 'text', attachment: 'a cat', categories: ['cat', 'dog'] };
    await server.uow.training.insert({
      id: newTaskId(new Date()),
      accountId: secrets.account_id,
      mode: 'live',
      kind: 'training',
      type: 'categorization',
      params,
      expectedResponse: { category: 'cat' },
      initialResponse: null,
      createdAt: new Date(),
    });
    const created = await live('POST', '/v1/task/categorization', {
      json: { callback_url: 'https://example.com/cb', instruction: 'Which animal?', project: 'pets', ...params },
    });
    expect(created.status, created.text).toBe(200);
    return secrets;
  };

  // First in the file: the operator's worker takes every unstaffed live task on the server.
  it("keeps apart two accounts' projects of the same name for a worker of the operator's workforce", async () => {
    const worker = await createWorker(server);
    const w = as(worker.token);
    const now = new Date();
    const beforeToday = new Date(Math.floor(now.getTime() / 86_400_000) * 86_400_000 - 1);
    // Two accounts, each with a project "pets" (its own training pass mark), a training task and a live task.
    const accounts = [];
    for (const [name, pass_score] of [
      [`stats-a-${db}`, 0.8],
      [`stats-b-${db}`, 0.5],
    ] as const)
      accounts.push({ name, secrets: await petsWithTraining(name, { required: 1, pass_score }) });
    // The worker trains in both and does both live tasks.
    for (let i = 0; i < 4; i++) {
      const next = await w('POST', '/v1/assignments/next', {});
      expect(next.status, next.text).toBe(200);
      const done = await w('POST', `/v1/assignments/${next.body.assignment_id}/submit`, {
        lease_token: next.body.lease_token,
        active_ms: 1000,
        response: { category: 'cat' },
      });
      expect(done.status, done.text).toBe(200);
    }
    expect((await w('POST', '/v1/assignments/next', {})).status).toBe(204);
    // Evaluation scores (before today, so counted): 1 in the first account, 0.5 in the second.
    await server.uow.work.addEvents(
      accounts.map(
        ({ secrets }, i): WorkEvent => ({
          at: beforeToday,
          accountId: secrets.account_id,
          workerId: worker.workerId,
          assignmentId: null,
          taskId: null,
          kind: 'scored',
          data: { purpose: 'evaluation', score: i === 0 ? 1 : 0.5, project: 'pets', type: 'categorization' },
        }),
      ),
    );

    const mine = await w('GET', '/v1/stats');
    expect(mine.status, mine.text).toBe(200);
    const counts = { ...zero, issued: 2, submitted: 2 };
    expect(mine.body.counts).toEqual({ ...zero, issued: 4, submitted: 4 });
    const entry = (pass_score: number, accuracy: number) => ({
      project: 'pets',
      account: expect.stringMatching(/^acw_[0-9a-f]{24}$/),
      counts,
      active_ms: expect.any(Number),
      training: { state: 'qualified', scored: 1, required: 1, mean_score: 1, pass_score, tries: 1, max_tries: 3 },
      accuracy: { value: accuracy, scored: 1, as_of: new Date(beforeToday.getTime() + 1).toISOString() },
    });
    expect(mine.body.projects).toHaveLength(2);
    expect(mine.body.projects).toEqual(expect.arrayContaining([entry(0.8, 1), entry(0.5, 0.5)]));
    // Each entry names its account by a handle of the worker's own, never by the account's id or name.
    const [first, second] = mine.body.projects;
    expect(first.account).not.toBe(second.account);
    for (const { name, secrets } of accounts) {
      expect(mine.text).not.toContain(secrets.account_id);
      expect(mine.text).not.toContain(name);
    }
    const again = await w('GET', '/v1/stats');
    expect(again.body.projects.map((p: { account: string }) => p.account).sort()).toEqual([first.account, second.account].sort());
  });

  it('counts what each worker did, per project, with active time; nothing of anyone else', async () => {
    const secrets = await createAccount(server.uow, `stats-${db}`, new Date());
    const live = client(server, 'current', secrets.live_key);
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: 'pets' } })).status).toBe(200);
    const labeler = await createWorker(server, { accountId: secrets.account_id });
    const reviewer = await createWorker(server, { accountId: secrets.account_id, roles: ['reviewer'] });
    const bystander = await createWorker(server, { accountId: secrets.account_id });
    const staffed = await live('PUT', '/v1/projects/pets/staffing', {
      json: { attempt: [labeler.workerId], review: [reviewer.workerId], review_sampling: { new_worker_tasks: 0, rate: 1 } },
    });
    expect(staffed.status, staffed.text).toBe(200);
    for (const animal of ['a cat', 'a dog', 'a cow', 'a hen']) {
      const created = await live('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Which animal?',
          project: 'pets',
          attachment_type: 'text',
          attachment: animal,
          categories: ['cat', 'dog'],
        },
      });
      expect(created.status, created.text).toBe(200);
    }
    const w = as(labeler.token);
    const take = async () => {
      const next = await w('POST', '/v1/assignments/next', {});
      expect(next.status, next.text).toBe(200);
      return next.body as { assignment_id: string; lease_token: string };
    };

    const first = await take();
    expect(
      (await w('POST', `/v1/assignments/${first.assignment_id}/heartbeat`, { lease_token: first.lease_token, active_ms: 1000 })).status,
    ).toBe(200);
    const submitted = await w('POST', `/v1/assignments/${first.assignment_id}/submit`, {
      lease_token: first.lease_token,
      active_ms: 2000,
      response: { category: 'cat' },
    });
    expect(submitted.status, submitted.text).toBe(200);
    const skipped = await take();
    expect(
      (
        await w('POST', `/v1/assignments/${skipped.assignment_id}/skip`, {
          lease_token: skipped.lease_token,
          reason: 'Unclear.',
          active_ms: 0,
        })
      ).status,
    ).toBe(200);
    const released = await take();
    expect(
      (await w('POST', `/v1/assignments/${released.assignment_id}/release`, { lease_token: released.lease_token, active_ms: 0 })).status,
    ).toBe(200);
    const second = await take();
    expect(
      (
        await w('POST', `/v1/assignments/${second.assignment_id}/submit`, {
          lease_token: second.lease_token,
          active_ms: 4000,
          response: { category: 'dog' },
        })
      ).status,
    ).toBe(200);

    const r = as(reviewer.token);
    for (const result of ['accepted', 'rejected'] as const) {
      const review = await r('POST', '/v1/assignments/next', {});
      expect(review.status, review.text).toBe(200);
      // Three seconds at each review (the server counts no more active time than has passed since issue).
      clock.advance(3000);
      const decided = await r('POST', `/v1/assignments/${review.body.assignment_id}/review`, {
        lease_token: review.body.lease_token,
        result,
        active_ms: 2500,
        ...(result === 'rejected' ? { feedback_items: [{ category: 'wrong_label', text: 'Look again.' }] } : {}),
      });
      expect(decided.status, decided.text).toBe(200);
    }

    const mine = await w('GET', '/v1/stats');
    expect(mine.status, mine.text).toBe(200);
    const labelerCounts = { ...zero, issued: 4, submitted: 2, skipped: 1, released: 1, accepted: 1, rejected: 1 };
    expect(mine.body).toEqual({
      since: expect.any(String),
      as_of: expect.any(String),
      counts: labelerCounts,
      active_ms: expect.any(Number),
      median_active_ms: expect.any(Number),
      projects: [
        { project: 'pets', account: expect.stringMatching(/^acw_[0-9a-f]{24}$/), counts: labelerCounts, active_ms: mine.body.active_ms },
      ],
    });
    // The server bounds active time by the time since issue; the submits recorded at most 2 s and 4 s.
    expect(mine.body.active_ms).toBeLessThanOrEqual(6000);
    expect(mine.body.median_active_ms).toBeLessThanOrEqual(4000);
    expect(Date.parse(mine.body.as_of) - Date.parse(mine.body.since)).toBe(30 * 86_400_000);

    const theirs = await r('GET', '/v1/stats');
    const reviewerCounts = { ...zero, issued: 2, reviews: 2 };
    // The reviews' active time counts as a submit's does: 2.5 s each.
    expect(theirs.body).toMatchObject({
      counts: reviewerCounts,
      active_ms: 5000,
      projects: [{ project: 'pets', counts: reviewerCounts, active_ms: 5000 }],
    });
    expect(theirs.body).not.toHaveProperty('median_active_ms');

    const nobody = await as(bystander.token)('GET', '/v1/stats');
    expect(nobody.body).toEqual({ since: expect.any(String), as_of: expect.any(String), counts: zero, active_ms: 0, projects: [] });

    // A period that begins after the work shows none of it; one in the future is refused.
    const afterWork = new Date(clock.now().getTime() + 1);
    clock.advance(5);
    const recent = await w('GET', `/v1/stats?since=${afterWork.toISOString()}`);
    expect(recent.status, recent.text).toBe(200);
    expect(recent.body).toEqual({ since: afterWork.toISOString(), as_of: expect.any(String), counts: zero, active_ms: 0, projects: [] });
    const later = await w('GET', `/v1/stats?since=${encodeURIComponent(new Date(clock.now().getTime() + 60_000).toISOString())}`);
    expect([later.status, later.body.code]).toEqual([400, 'invalid_request']);
    expect(later.body.error).toMatch(/^since is .*: in the future\.$/);
  });

  it("shows per project the worker's training standing and rolling accuracy, which moves once a day", async () => {
    const secrets = await petsWithTraining(`stats-quality-${db}`, { required: 1 });
    const worker = await createWorker(server, { accountId: secrets.account_id });
    const w = as(worker.token);
    const training = await w('POST', '/v1/assignments/next', {});
    expect(training.body.training, training.text).toBeDefined();
    const passed = await w('POST', `/v1/assignments/${training.body.assignment_id}/submit`, {
      lease_token: training.body.lease_token,
      active_ms: 1000,
      response: { category: 'cat' },
    });
    expect(passed.status, passed.text).toBe(200);

    // Evaluation scores as the evaluation rules write them: two before today (counted), one today (not yet).
    const now = new Date();
    const dayStart = new Date(Math.floor(now.getTime() / 86_400_000) * 86_400_000);
    const scored = (score: number, at: Date): WorkEvent => ({
      at,
      accountId: secrets.account_id,
      workerId: worker.workerId,
      assignmentId: null,
      taskId: null,
      kind: 'scored',
      data: { purpose: 'evaluation', score, project: 'pets', type: 'categorization' },
    });
    await server.uow.work.addEvents([
      scored(1, new Date(dayStart.getTime() - 3_600_000)),
      scored(0.5, new Date(dayStart.getTime() - 1)),
      scored(0, now),
    ]);
    const mine = await w('GET', '/v1/stats');
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.projects).toEqual([
      {
        project: 'pets',
        account: expect.stringMatching(/^acw_[0-9a-f]{24}$/),
        counts: expect.objectContaining({ issued: 1, submitted: 1 }),
        active_ms: expect.any(Number),
        training: { state: 'qualified', scored: 1, required: 1, mean_score: 1, pass_score: 0.8, tries: 1, max_tries: 3 },
        accuracy: { value: 0.75, scored: 2, as_of: dayStart.toISOString() },
      },
    ]);
  });

  it('refuses a period longer than 366 days or a since that is not a date, naming since', async () => {
    const worker = await createWorker(server);
    const w = as(worker.token);
    const old = await w('GET', '/v1/stats?since=2020-01-01');
    expect([old.status, old.body.code, old.body.error]).toEqual([
      400,
      'invalid_request',
      'since is 2020-01-01T00:00:00.000Z: at most 366 days back.',
    ]);
    const bad = await w('GET', '/v1/stats?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('since');
    expect((await fetch(`${server.url}/worker/v1/stats`)).status).toBe(401);
  });
});
