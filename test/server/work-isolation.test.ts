// Live work is safe (issue 31), attacked as an attacker would, on PGlite and PostgreSQL:
// - a worker made with an account's test key reaches no live work, and each key sees, changes and
//   removes only its own mode's workers (finding 3);
// - creating a worker answers the same whether or not another workforce uses the address, no
//   account can block the operator (or another account) from an address, and a log-in opens the
//   worker whose password it carries (finding 7);
// - a customer never sees the global id of one of the operator's workers: audits of both
//   generations, callbacks, assignments and quality figures show the `opw_` handle (finding 8);
// - sessions are capped, a paused worker's held work goes back to the queue and what they send on
//   it is refused, a removed worker's token says so, Idempotency-Keys are per mode (finding 12).
// Workers of the operator's workforce are made and removed with the operator's command (what
// `humantask workers` runs); everything else goes through HTTP.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkerCommand, type WorkerCommand } from '../../server/admin.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { testClock } from '../support/clock.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { workerClient } from '../support/workers.ts';

/** The operator's command at the lowest hashing cost (as the test server's). */
const operatorSettings = { passwordCost: 10, sessionTtlMs: 3_600_000, sessionMaxMs: 86_400_000 };

const unique = (label: string) => `${label}-${randomBytes(5).toString('hex')}`;
const address = (label: string) => `${unique(label)}@example.com`;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('live work is safe on %s', (db) => {
  let server: TestServer;
  let hook: Receiver;
  // Log-ins are ordered by the server's clock, which the session test moves on.
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

  const as = (token: string) => workerClient(server, token);
  const anonymous = () => workerClient(server, null);
  const logInAnswer = (email: string, password: string, workforceId?: string) =>
    anonymous()('POST', '/v1/session', { email, password, ...(workforceId ? { workforce_id: workforceId } : {}) });
  async function logIn(email: string, password: string, workforceId?: string): Promise<{ token: string; workerId: string }> {
    const res = await logInAnswer(email, password, workforceId);
    expect(res.status, res.text).toBe(200);
    return { token: res.body.token, workerId: res.body.worker.worker_id };
  }
  const operator = (command: WorkerCommand) => runWorkerCommand(server.uow, command, operatorSettings) as Promise<any>;

  /** A fresh account with a categorization project of its own name (operator workers claim by project). */
  async function account() {
    const secrets = await createAccount(server.uow, unique(`isolation-${db}`), new Date());
    const live = client(server, 'current', secrets.live_key);
    const test = client(server, 'current', secrets.test_key);
    const project = unique('project');
    expect((await live('POST', '/v1/projects', { json: { type: 'categorization', name: project } })).status).toBe(200);
    const newTask = async () => {
      const r = await live('POST', '/v1/task/categorization', {
        json: {
          project,
          callback_url: hook.url,
          instruction: 'Pick',
          attachment_type: 'text',
          attachment: 'a cat',
          categories: ['cat', 'dog'],
        },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.task_id as string;
    };
    /** A worker of the account's own workforce, made with the key of `mode`, and logged in. */
    const worker = async (mode: 'test' | 'live', roles = ['labeler'], email = address('own')) => {
      const password = `pw-${randomBytes(12).toString('hex')}`;
      const made = await (mode === 'live' ? live : test)('POST', '/v1/workforce/workers', {
        json: { email, display_name: 'Own', roles, password },
      });
      expect(made.status, made.text).toBe(200);
      const session = await logIn(email, password, made.body.workforce_id);
      return { id: made.body.worker_id as string, workforceId: made.body.workforce_id as string, email, password, call: as(session.token) };
    };
    return { secrets, live, test, legacy: client(server, 'legacy', secrets.live_key), project, newTask, worker };
  }

  it("a test key's worker reaches no live task, and each key sees, changes and removes only its own mode's workers (404)", async () => {
    const acct = await account();
    const taskId = await acct.newTask();
    // The attack: a worker made with the test key, as a lead (attempts and reviews), asks for work.
    const intruder = await acct.worker('test', ['lead']);
    expect((await intruder.call('GET', '/v1/me')).body).toMatchObject({
      worker_id: intruder.id,
      workforce: 'account',
      workforce_id: intruder.workforceId,
      mode: 'test',
    });
    for (const body of [{}, { role: 'attempt' }, { role: 'review' }, { project: acct.project }]) {
      const next = await intruder.call('POST', '/v1/assignments/next', body);
      expect(next.status, `${JSON.stringify(body)}: ${next.text}`).toBe(204);
    }
    expect((await intruder.call('GET', '/v1/assignments')).body.docs).toEqual([]);

    // The live key's workers are out of the test key's reach, and the other way round.
    const staff = await acct.worker('live');
    expect(staff.workforceId).not.toBe(intruder.workforceId);
    for (const [key, id] of [
      [acct.test, staff.id],
      [acct.live, intruder.id],
    ] as const) {
      for (const [method, path, json] of [
        ['GET', `/v1/workforce/workers/${id}`, undefined],
        ['PATCH', `/v1/workforce/workers/${id}`, { roles: ['reviewer'] }],
        ['POST', `/v1/workforce/workers/${id}/pause`, undefined],
        ['POST', `/v1/workforce/workers/${id}/unpause`, undefined],
        ['POST', `/v1/workforce/workers/${id}/reset_password`, {}],
        ['DELETE', `/v1/workforce/workers/${id}`, undefined],
      ] as const) {
        const res = await key(method, path, json !== undefined ? { json } : {});
        expect(res.status, `${method} ${path}`).toBe(404);
      }
    }
    expect((await acct.test('GET', '/v1/workforce/workers')).body.docs.map((w: { worker_id: string }) => w.worker_id)).toEqual([
      intruder.id,
    ]);
    expect((await acct.live('GET', '/v1/workforce/workers')).body.docs.map((w: { worker_id: string }) => w.worker_id)).toEqual([staff.id]);
    // A live project's staffing cannot name the test key's worker.
    const staffed = await acct.live('PUT', `/v1/projects/${acct.project}/staffing`, { json: { attempt: [intruder.id], review: [] } });
    expect([staffed.status, staffed.body.error]).toEqual([404, `Worker ${intruder.id} not found in this account's workforce.`]);

    // Nothing changed for the live worker, who takes the live task and completes it.
    expect((await staff.call('GET', '/v1/me')).body).toMatchObject({ status: 'active', mode: 'live' });
    const next = await staff.call('POST', '/v1/assignments/next', {});
    expect([next.status, next.body.task.task_id]).toEqual([200, taskId]);
    const done = await staff.call('POST', `/v1/assignments/${next.body.assignment_id}/submit`, {
      lease_token: next.body.lease_token,
      active_ms: 1000,
      response: { category: 'cat' },
    });
    expect(done.status, done.text).toBe(200);
    expect((await acct.live('GET', `/v1/task/${taskId}`)).body).toMatchObject({ status: 'completed', response: { category: 'cat' } });
  });

  it('an address another workforce uses is neither revealed nor blocked; a log-in opens the worker its password belongs to', async () => {
    const victim = await account();
    const attacker = await account();
    const own = await victim.worker('live');
    const opsEmail = address('ops');
    const ops = await operator({ command: 'create', email: opsEmail, roles: ['labeler'] });
    const attackerPassword = 'the-attackers-own-password';
    const probe = (email: string) =>
      attacker.live('POST', '/v1/workforce/workers', {
        json: { email, display_name: 'Probe', roles: ['labeler'], password: attackerPassword },
      });
    // The oracle: creation answers alike for an unused address and for the victim's and the operator's.
    const fresh = await probe(address('fresh'));
    expect(fresh.status, fresh.text).toBe(200);
    const shape = (body: Record<string, unknown>) => Object.keys(body).sort();
    for (const email of [own.email, opsEmail.toUpperCase()]) {
      const res = await probe(email);
      expect(res.status, res.text).toBe(200);
      expect(shape(res.body)).toEqual(shape(fresh.body));
      expect(res.body).toMatchObject({ email, status: 'active', workforce_id: fresh.body.workforce_id });
    }
    // email_taken stays within one workforce.
    const twice = await probe(own.email);
    expect([twice.status, twice.body.code]).toEqual([409, 'email_taken']);

    // Squatting: the attacker registers an address first; the operator still creates the worker ...
    const squatted = address('squatted');
    const squatter = await probe(squatted);
    expect(squatter.status).toBe(200);
    const hired = await operator({ command: 'create', email: squatted, roles: ['labeler'] });
    expect(hired).toMatchObject({ email: squatted, status: 'active', password: expect.any(String) });

    // ... and every log-in opens the worker its password belongs to.
    expect((await logIn(own.email, own.password)).workerId).toBe(own.id);
    expect((await logIn(opsEmail, ops.password)).workerId).toBe(ops.worker_id);
    expect((await logIn(squatted, hired.password)).workerId).toBe(hired.worker_id);
    expect((await logIn(squatted, attackerPassword)).workerId).toBe(squatter.body.worker_id);
    // A wrong password and an unknown address get the same 401.
    for (const [email, password] of [
      [own.email, 'not-the-password'],
      [address('nobody'), own.password],
    ] as const) {
      const res = await logInAnswer(email, password);
      expect([res.status, res.body.code, res.body.error]).toEqual([401, 'unauthenticated', 'Wrong e-mail address or password.']);
    }

    // The operator removes its own worker by address; the account's worker with it stays.
    expect(await operator({ command: 'remove', email: squatted })).toMatchObject({ worker_id: hired.worker_id, status: 'removed' });
    expect((await attacker.live('GET', `/v1/workforce/workers/${squatter.body.worker_id}`)).body.status).toBe('active');
    expect((await logInAnswer(squatted, hired.password)).status).toBe(401);

    // One person, one address and password in two workforces: the log-in names the workforce.
    const tester = await victim.worker('test', ['labeler'], own.email.toUpperCase());
    // Each password opens its own worker ...
    expect((await logIn(own.email, tester.password)).workerId).toBe(tester.id);
    expect((await logIn(own.email, own.password)).workerId).toBe(own.id);
    // ... and the same password in both asks which workforce.
    const same = await victim.test('POST', `/v1/workforce/workers/${tester.id}/reset_password`, { json: { password: own.password } });
    expect(same.status).toBe(200);
    const ambiguous = await logInAnswer(own.email, own.password);
    expect([ambiguous.status, ambiguous.body.code]).toEqual([409, 'workforce_required']);
    expect((await logIn(own.email, own.password, own.workforceId)).workerId).toBe(own.id);
    expect((await logIn(own.email, own.password, tester.workforceId)).workerId).toBe(tester.id);
    // Another workforce's id opens nothing.
    expect((await logInAnswer(own.email, own.password, fresh.body.workforce_id)).status).toBe(401);
    expect((await logInAnswer(own.email, own.password, 'operator')).status).toBe(401);
  });

  it("a customer sees one of the operator's workers only by its handle: audits of both generations, callbacks, assignments, quality", async () => {
    const acct = await account();
    const staffed = await acct.live('PUT', `/v1/projects/${acct.project}/staffing`, {
      json: { attempt: ['operator'], review: ['operator'], review_sampling: { new_worker_tasks: 10, rate: 1 } },
    });
    expect(staffed.status, staffed.text).toBe(200);
    const labeler = await operator({ command: 'create', email: address('ops-labeler'), roles: ['labeler'] });
    const reviewer = await operator({ command: 'create', email: address('ops-reviewer'), roles: ['reviewer'] });
    const labelerCall = as((await logIn(labeler.email, labeler.password)).token);
    const reviewerCall = as((await logIn(reviewer.email, reviewer.password)).token);

    const taskId = await acct.newTask();
    const attempt = await labelerCall('POST', '/v1/assignments/next', { project: acct.project });
    expect([attempt.status, attempt.body.task?.task_id]).toEqual([200, taskId]);
    const submitted = await labelerCall('POST', `/v1/assignments/${attempt.body.assignment_id}/submit`, {
      lease_token: attempt.body.lease_token,
      active_ms: 1000,
      response: { category: 'cat' },
    });
    expect(submitted.status, submitted.text).toBe(200);
    const review = await reviewerCall('POST', '/v1/assignments/next', { role: 'review', project: acct.project });
    expect([review.status, review.body.task?.task_id]).toEqual([200, taskId]);
    const accepted = await reviewerCall('POST', `/v1/assignments/${review.body.assignment_id}/review`, {
      lease_token: review.body.lease_token,
      active_ms: 2000,
      result: 'accepted',
    });
    expect(accepted.status, accepted.text).toBe(200);

    const who = await acct.live('GET', `/v1/task/${taskId}/assignments`);
    const reviewerHandle = who.body.docs.find((a: { role: string }) => a.role === 'review').worker as string;
    const labelerHandle = who.body.docs.find((a: { role: string }) => a.role === 'attempt').worker as string;
    expect(reviewerHandle).toMatch(/^opw_[0-9a-f]{24}$/);
    const task = await acct.live('GET', `/v1/task/${taskId}`);
    expect(task.body).toMatchObject({ status: 'completed', audits: [{ audited_by: reviewerHandle, audit_result: 'accepted' }] });
    const legacy = await acct.legacy('GET', `/v1/task/${taskId}`);
    expect(legacy.body.audits).toEqual(task.body.audits);
    await hook.waitFor((all) => all.some((r) => r.json?.task_id === taskId), `the callback of ${taskId}`);
    const sent = hook.bodiesOf(taskId);
    expect(sent.at(-1)).toMatchObject({ task: { audits: [{ audited_by: reviewerHandle }] } });
    const quality = await acct.live('GET', `/v1/projects/${acct.project}/quality`);
    expect(quality.status, quality.text).toBe(200);
    for (const [what, text] of [
      ['the task', task.text],
      ['the older generation', legacy.text],
      ['the assignments', who.text],
      ['the callbacks', JSON.stringify(sent)],
      ['the quality figures', quality.text],
    ] as const) {
      expect(text, what).not.toContain(labeler.worker_id);
      expect(text, what).not.toContain(reviewer.worker_id);
      expect(text, what).not.toMatch(/wkr_[0-9a-f]{24}/);
    }

    // The operator's workforce is live: the account's test key reaches none of it, not even by handle.
    const byTest = await acct.test('POST', `/v1/workforce/workers/${labelerHandle}/unpause`, { json: { project: acct.project } });
    expect(byTest.status).toBe(404);
    const byLive = await acct.live('POST', `/v1/workforce/workers/${labelerHandle}/unpause`, { json: { project: acct.project } });
    expect([byLive.status, byLive.body.worker]).toEqual([200, labelerHandle]);
  });

  it('a worker has at most 10 live sessions: the 11th log-in revokes the oldest', async () => {
    const acct = await account();
    const w = await acct.worker('live');
    const tokens: string[] = [];
    for (let i = 0; i < 11; i++) {
      clock.advance(1000);
      tokens.push((await logIn(w.email, w.password)).token);
    }
    // The helper's own session (the first of all) and the first of these eleven are revoked.
    const first = await as(tokens[0]!)('GET', '/v1/me');
    expect([first.status, first.body.code]).toEqual([401, 'unauthenticated']);
    expect((await w.call('GET', '/v1/me')).status).toBe(401);
    for (const token of tokens.slice(1)) expect((await as(token)('GET', '/v1/me')).status).toBe(200);
  });

  it('pausing a worker sends the task they hold back to the queue; what they send on it later gets 403 worker_paused', async () => {
    const acct = await account();
    const taskId = await acct.newTask();
    const paused = await acct.worker('live');
    const other = await acct.worker('live');
    const held = await paused.call('POST', '/v1/assignments/next', {});
    expect([held.status, held.body.task.task_id]).toEqual([200, taskId]);
    const lease = { lease_token: held.body.lease_token, active_ms: 1000 };
    expect(
      (await paused.call('POST', `/v1/assignments/${held.body.assignment_id}/heartbeat`, { ...lease, draft: { category: 'dog' } })).status,
    ).toBe(200);

    expect((await acct.live('POST', `/v1/workforce/workers/${paused.id}/pause`)).body.status).toBe('paused');
    for (const [op, body] of [
      ['submit', { ...lease, response: { category: 'dog' } }],
      ['heartbeat', lease],
      ['skip', { ...lease, reason: 'unclear' }],
      ['release', lease],
    ] as const) {
      const res = await paused.call('POST', `/v1/assignments/${held.body.assignment_id}/${op}`, body);
      expect([res.status, res.body.code], op).toEqual([403, 'worker_paused']);
    }
    expect((await paused.call('GET', `/v1/assignments/${held.body.assignment_id}`)).body).toMatchObject({
      status: 'released',
      draft: { category: 'dog' },
    });
    expect((await acct.live('GET', `/v1/task/${taskId}`)).body.status).toBe('pending');
    // Another worker takes the task at once and answers it.
    const taken = await other.call('POST', '/v1/assignments/next', {});
    expect([taken.status, taken.body.task.task_id]).toEqual([200, taskId]);
    const done = await other.call('POST', `/v1/assignments/${taken.body.assignment_id}/submit`, {
      lease_token: taken.body.lease_token,
      active_ms: 1000,
      response: { category: 'cat' },
    });
    expect(done.status, done.text).toBe(200);
    expect((await acct.live('GET', `/v1/task/${taskId}`)).body).toMatchObject({ status: 'completed', response: { category: 'cat' } });
  });

  it("a removed worker's token answers 401 worker_removed, and the task they held goes back to the queue", async () => {
    const acct = await account();
    const taskId = await acct.newTask();
    const leaving = await acct.worker('live');
    const other = await acct.worker('live');
    const held = await leaving.call('POST', '/v1/assignments/next', {});
    expect([held.status, held.body.task.task_id]).toEqual([200, taskId]);
    expect((await acct.live('DELETE', `/v1/workforce/workers/${leaving.id}`)).body.status).toBe('removed');
    for (const [method, path, body] of [
      ['GET', '/v1/me', undefined],
      ['POST', `/v1/assignments/${held.body.assignment_id}/submit`, { lease_token: held.body.lease_token, response: { category: 'dog' } }],
    ] as const) {
      const res = await leaving.call(method, path, body);
      expect([res.status, res.body.code], path).toEqual([401, 'worker_removed']);
    }
    // A token that was never issued still says nothing more than unauthenticated.
    expect((await as(`wks_${randomBytes(32).toString('base64url')}`)('GET', '/v1/me')).body.code).toBe('unauthenticated');
    const taken = await other.call('POST', '/v1/assignments/next', {});
    expect([taken.status, taken.body.task.task_id]).toEqual([200, taskId]);
  });

  it('an Idempotency-Key used with the test key is free for the live key; each key replays its own answer', async () => {
    const acct = await account();
    const headers = { 'Idempotency-Key': unique('key') };
    const body = { callback_url: hook.url, instruction: 'Pick', attachment_type: 'text', attachment: 'a cat', categories: ['cat', 'dog'] };
    const test = await acct.test('POST', '/v1/task/categorization', { json: body, headers });
    expect(test.status, test.text).toBe(200);
    const live = await acct.live('POST', '/v1/task/categorization', { json: body, headers });
    expect(live.status, live.text).toBe(200);
    expect(live.headers.get('idempotent-replayed')).toBeNull();
    expect(live.body.task_id).not.toBe(test.body.task_id);
    for (const [call, first] of [
      [acct.test, test],
      [acct.live, live],
    ] as const) {
      const again = await call('POST', '/v1/task/categorization', { json: body, headers });
      expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, first.text, 'true']);
    }
    expect((await acct.live('GET', `/v1/task/${test.body.task_id}`)).status).toBe(404);
  });
});
