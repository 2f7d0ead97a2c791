// Hidden evaluation (issue 31, finding 4) on PGlite and PostgreSQL, tried as an attacker would: three
// workers take every task of a project that mixes in evaluation tasks promoted from audited live
// tasks, and record everything the worker API answers (each assignment as claimed, the heartbeat's
// and the submit's answers, the assignment taken again after a release, the history, the stats).
// Per feature (each field path with its value's pattern, the order of the ids as served, the gaps
// between their times, what a release gives back), a Fisher exact test compares evaluation and
// live assignments: none tells them apart better than chance. The tells the attack found are also
// asserted directly: `params.instruction`, another instruction, an id dated after the next task's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { testClock, type TestClock } from '../support/clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { createWorker, workerClient, type WorkerAnswer } from '../support/workers.ts';

/** A seeded random source (mulberry32): the server's draws of which claims become evaluations. */
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

const logFactorials = [0];
const logFactorial = (n: number) => {
  while (logFactorials.length <= n) logFactorials.push(logFactorials.at(-1)! + Math.log(logFactorials.length));
  return logFactorials[n]!;
};

/** Two-sided Fisher exact test of the 2×2 table [[a, b], [c, d]]: the p-value. */
function fisher(a: number, b: number, c: number, d: number): number {
  const [r1, r2, c1] = [a + b, c + d, a + c];
  const n = r1 + r2;
  const p = (x: number) =>
    Math.exp(
      logFactorial(r1) +
        logFactorial(r2) +
        logFactorial(c1) +
        logFactorial(n - c1) -
        logFactorial(n) -
        logFactorial(x) -
        logFactorial(r1 - x) -
        logFactorial(c1 - x) -
        logFactorial(r2 - c1 + x),
    );
  const observed = p(a);
  let total = 0;
  for (let x = Math.max(0, c1 - r2); x <= Math.min(r1, c1); x++) {
    const px = p(x);
    if (px <= observed * (1 + 1e-9)) total += px;
  }
  return Math.min(1, total);
}

/** A string's pattern: times, ids and numbers replaced by their kind. */
const pattern = (s: string) =>
  s
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/[0-9a-f]{32}/g, '<hex32>')
    .replace(/[0-9a-f]{24}/g, '<hex24>')
    .replace(/\d+/g, '<n>');

/** Every field path of a JSON value with its value's pattern, and every object's keys in their order. */
function fieldFeatures(prefix: string, value: unknown, path = ''): string[] {
  if (Array.isArray(value))
    return [`${prefix}${path}:array(${value.length})`, ...value.flatMap((v) => fieldFeatures(prefix, v, `${path}[]`))];
  if (value !== null && typeof value === 'object')
    return [
      `${prefix}${path}:keys(${Object.keys(value).join(',')})`,
      ...Object.entries(value).flatMap(([k, v]) => fieldFeatures(prefix, v, `${path}.${k}`)),
    ];
  return [`${prefix}${path}=${typeof value === 'string' ? pattern(value) : `${typeof value}:${String(value)}`}`];
}

const idTime = (id: string) => Number.parseInt(id.slice(0, 12), 16);
const bucket = (ms: number) => (ms <= 0 ? String(ms) : `2^${Math.floor(Math.log2(ms))}`);

interface Observed {
  worker: number;
  claim: WorkerAnswer;
  heartbeat: WorkerAnswer;
  /** After a release: the next claim's answer (the same task again?). */
  again?: WorkerAnswer;
  submit: WorkerAnswer;
  draft: Record<string, unknown>;
  history?: unknown;
  releasedHistory?: unknown;
  evaluation?: boolean;
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('hidden evaluation on %s', (db) => {
  let server: TestServer;
  let clock: TestClock;
  let n = 0;

  beforeAll(async () => {
    clock = testClock();
    server = await startTestServer(db, { WORK_SWEEP_POLL_MS: '0' }, undefined, { random: seeded(31), now: clock.now });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A fresh account with the project `project` of `type` and `params`; its live client and own workers. */
  async function account(type: string, project: string, params: Record<string, unknown>) {
    const secrets = await createAccount(server.uow, `hidden-${db}-${n++}`, new Date());
    const live = client(server, 'current', secrets.live_key);
    const made = await live('POST', '/v1/projects', { json: { type, name: project } });
    expect(made.status, made.text).toBe(200);
    const set = await live('POST', `/v1/projects/${project}/setParams`, { json: params });
    expect(set.status, set.text).toBe(200);
    const policy = async (evaluation: Record<string, unknown>) => {
      const put = await live('PUT', `/v1/projects/${project}/quality_policy`, { json: { training: { required: 0 }, evaluation } });
      expect(put.status, put.text).toBe(200);
    };
    const worker = async () => workerClient(server, (await createWorker(server, { accountId: secrets.account_id })).token);
    return { live, policy, worker };
  }

  /**
   * A categorization project `pets` with `count` evaluation tasks made as a customer makes them (live
   * tasks answered, accepted and promoted), evaluation then mixed into half of the work (pause_below
   * 0: nobody is paused); its live client, its workers and a maker of its live tasks.
   */
  async function petsWithEvaluations(count: number) {
    const { live, policy, worker } = await account('categorization', 'pets', {
      instruction: 'Pick',
      attachment_type: 'text',
      categories: ['cat', 'dog'],
    });
    await policy({ rate_new: 0, rate_trusted: 0 });
    const seeder = await worker();
    const newTask = async () => {
      const r = await live('POST', '/v1/task/categorization', {
        json: { project: 'pets', callback_url: 'https://example.com/cb', attachment: 'a cat' },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.task_id as string;
    };
    for (let i = 0; i < count; i++) {
      const taskId = await newTask();
      const a = (await seeder('POST', '/v1/assignments/next', {})).body;
      await seeder('POST', `/v1/assignments/${a.assignment_id}/submit`, {
        lease_token: a.lease_token,
        response: { category: 'cat' },
        active_ms: 1,
      });
      expect((await live('POST', `/v1/task/${taskId}/audit`, { json: { accepted: true } })).status).toBe(200);
      expect((await live('POST', `/v1/task/${taskId}/promote`, { json: { kind: 'evaluation' } })).status).toBe(200);
    }
    await policy({ rate_new: 0.5, rate_trusted: 0.5, pause_below: 0 });
    return { live, worker, newTask };
  }

  it('answers evaluation and live assignments alike: no field, value, id, order or history tells them apart better than chance', async () => {
    const { live, policy, worker } = await account('categorization', 'pets', {
      instruction: 'Pick the animal',
      attachment_type: 'text',
      categories: ['cat', 'dog', 'fish'],
    });
    let made = 0;
    const newTask = async (batch?: string) => {
      const r = await live('POST', '/v1/task/categorization', {
        json: {
          project: 'pets',
          ...(batch ? { batch } : {}),
          callback_url: 'https://example.com/cb',
          instruction: 'Look closely',
          attachment: `photo ${made++}`,
        },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.task_id as string;
    };

    // The evaluation tasks, as a customer makes them: live tasks answered, audited and promoted.
    await policy({ rate_new: 0, rate_trusted: 0 });
    const seeder = await worker();
    for (let i = 0; i < 30; i++) {
      const taskId = await newTask();
      const a = await seeder('POST', '/v1/assignments/next', {});
      expect(a.body.task.task_id).toBe(taskId);
      const done = await seeder('POST', `/v1/assignments/${a.body.assignment_id}/submit`, {
        lease_token: a.body.lease_token,
        response: { category: 'cat' },
        active_ms: 900,
      });
      expect(done.status, done.text).toBe(200);
      expect((await live('POST', `/v1/task/${taskId}/audit`, { json: { accepted: true } })).status).toBe(200);
      const promoted = await live('POST', `/v1/task/${taskId}/promote`, { json: { kind: 'evaluation' } });
      expect(promoted.status, promoted.text).toBe(200);
      // What the attack found: a promoted task keeps its instruction in its params.
      expect(promoted.body.params.instruction).toBe('Pick the animal\n\nLook closely');
    }
    await policy({ rate_new: 0.25, rate_trusted: 0.25, pause_below: 0 });
    expect((await live('POST', '/v1/batches', { json: { project: 'pets', name: 'week-1' } })).status).toBe(200);
    const liveIds: string[] = [];
    for (let i = 0; i < 120; i++) liveIds.push(await newTask(i % 3 === 0 ? 'week-1' : undefined));
    expect((await live('POST', '/v1/batches/week-1/finalize')).status).toBe(200);

    // Three workers ask for work in a random order until none gets anything more.
    const workers = [await worker(), await worker(), await worker()];
    const observed: Observed[] = [];
    const taken = [0, 0, 0];
    const turns = seeded(4);
    for (const idle = new Set<number>(); idle.size < workers.length; ) {
      const i = Math.floor(turns() * workers.length);
      const call = workers[i]!;
      const claim = await call('POST', '/v1/assignments/next', {});
      if (claim.status === 204) {
        idle.add(i);
        continue;
      }
      idle.clear();
      expect(claim.status, claim.text).toBe(200);
      const k = taken[i]!++;
      const draft = { category: 'fish', note: `draft ${k}` };
      let a = claim.body;
      const heartbeat = await call('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, {
        lease_token: a.lease_token,
        // Less than any time a request takes: the active time the server counts is the one sent, not the time that passed.
        active_ms: 1,
        draft,
      });
      expect(heartbeat.status, heartbeat.text).toBe(200);
      let again: WorkerAnswer | undefined;
      if (k % 6 === 5) {
        const released = await call('POST', `/v1/assignments/${a.assignment_id}/release`, { lease_token: a.lease_token, active_ms: 1 });
        expect(released.status, released.text).toBe(200);
        again = await call('POST', '/v1/assignments/next', {});
        expect(again.status, again.text).toBe(200);
        a = again.body;
      }
      const submit = await call('POST', `/v1/assignments/${a.assignment_id}/submit`, {
        lease_token: a.lease_token,
        response: { category: 'dog' },
        active_ms: 1,
      });
      expect(submit.status, submit.text).toBe(200);
      observed.push({ worker: i, claim, heartbeat, ...(again ? { again } : {}), submit, draft });
    }

    // What was what, as the customer knows it: an evaluation's id is no task of theirs.
    for (const o of observed) {
      const got = await live('GET', `/v1/task/${o.claim.body.task.task_id}`);
      expect([200, 404]).toContain(got.status);
      o.evaluation = got.status === 404;
    }
    const evaluations = observed.filter((o) => o.evaluation);
    expect(evaluations.length).toBeGreaterThanOrEqual(20);
    expect(new Set(evaluations.map((o) => o.worker)).size).toBe(workers.length);

    // Each worker's history and figures.
    for (const [i, call] of workers.entries()) {
      const entries = new Map<string, unknown>();
      let next: string | undefined;
      do {
        const page = await call('GET', `/v1/assignments?limit=100${next ? `&next_token=${next}` : ''}`);
        expect(page.status, page.text).toBe(200);
        for (const doc of page.body.docs) entries.set(doc.assignment_id, doc);
        next = page.body.next_token;
      } while (next);
      for (const o of observed.filter((x) => x.worker === i)) {
        o.history = entries.get((o.again ?? o.claim).body.assignment_id);
        if (o.again) o.releasedHistory = entries.get(o.claim.body.assignment_id);
        expect(o.history).toBeDefined();
      }
      const stats = await call('GET', '/v1/stats');
      expect(stats.status, stats.text).toBe(200);
      const mine = observed.filter((o) => o.worker === i);
      const releases = mine.filter((o) => o.again).length;
      // Evaluations count as the project's work, as live tasks do: nothing in the figures singles them out.
      expect(stats.body.projects).toHaveLength(1);
      expect(stats.body.projects[0]).toMatchObject({
        project: 'pets',
        counts: expect.objectContaining({ issued: mine.length + releases, submitted: mine.length, released: releases }),
      });
    }

    // Per feature: is it more (or less) common on evaluation assignments than on live ones?
    const featuresOf = observed.map((o) => {
      const mine = observed.filter((x) => x.worker === o.worker);
      const at = mine.indexOf(o);
      const id = o.claim.body.task.task_id as string;
      const prev = mine[at - 1]?.claim.body.task.task_id as string | undefined;
      const next = mine[at + 1]?.claim.body.task.task_id as string | undefined;
      const c = o.claim.body;
      const features = [
        ...fieldFeatures('claim', c),
        `claim:headers(${[...o.claim.headers.keys()].join(',')})`,
        `claim:lease=${Date.parse(c.lease_expires_at) - Date.parse(c.created_at)}`,
        `claim:deadline=${Date.parse(c.hard_deadline) - Date.parse(c.created_at)}`,
        ...fieldFeatures('heartbeat', o.heartbeat.body),
        `heartbeat:deadline-unchanged=${o.heartbeat.body.hard_deadline === c.hard_deadline}`,
        ...fieldFeatures('submit', o.submit.body),
        `submit:headers(${[...o.submit.headers.keys()].join(',')})`,
        ...fieldFeatures('history', o.history),
        ...(o.releasedHistory ? fieldFeatures('released', o.releasedHistory) : []),
        ...(o.again
          ? [
              ...fieldFeatures('again', o.again.body),
              `again:same-task=${o.again.body.task.task_id === id}`,
              `again:draft-kept=${JSON.stringify(o.again.body.draft) === JSON.stringify(o.draft)}`,
            ]
          : []),
        `order:after-previous=${prev === undefined ? 'first' : id > prev}`,
        `order:before-next=${next === undefined ? 'last' : id < next}`,
        `order:same-ms-as-previous=${prev !== undefined && idTime(prev) === idTime(id)}`,
        `order:same-ms-as-next=${next !== undefined && idTime(next) === idTime(id)}`,
        `order:gap-to-previous=${prev === undefined ? '-' : bucket(idTime(id) - idTime(prev))}`,
        `order:gap-to-next=${next === undefined ? '-' : bucket(idTime(next) - idTime(id))}`,
        `order:id-before-claim=${idTime(id) < Date.parse(c.created_at)}`,
        `order:claim-gap=${bucket(Date.parse(c.created_at) - idTime(id))}`,
      ];
      return new Set(features);
    });
    const all = new Set(featuresOf.flatMap((f) => [...f]));
    const evalCount = evaluations.length;
    const liveCount = observed.length - evalCount;
    const tells: string[] = [];
    for (const feature of all) {
      const inEval = observed.filter((o, i) => o.evaluation && featuresOf[i]!.has(feature)).length;
      const inLive = observed.filter((o, i) => !o.evaluation && featuresOf[i]!.has(feature)).length;
      const p = fisher(inEval, evalCount - inEval, inLive, liveCount - inLive);
      if (p < 1e-6)
        tells.push(`${feature}: ${inEval} of ${evalCount} evaluations, ${inLive} of ${liveCount} live (p ${p.toExponential(1)})`);
    }
    expect(tells).toEqual([]);

    // Every live task was done, once, by the workers.
    const liveTaken = observed.filter((o) => !o.evaluation).map((o) => o.claim.body.task.task_id as string);
    expect(liveTaken.sort()).toEqual([...liveIds].sort());

    // The tells the attack found, asserted directly.
    for (const o of observed) {
      for (const answer of [o.claim, o.again, o.submit].filter((x) => x !== undefined))
        expect(answer.body.task.params).not.toHaveProperty('instruction');
      expect(o.claim.body.task.instruction).toBe('Pick the animal\n\nLook closely');
    }
    for (const i of workers.keys()) {
      // Each worker's tasks come oldest first: every id, evaluations' included, sorts after the one served before it.
      const ids = observed.filter((o) => o.worker === i).map((o) => o.claim.body.task.task_id as string);
      for (let j = 1; j < ids.length; j++) expect(ids[j]! > ids[j - 1]!, `${ids[j - 1]} then ${ids[j]}`).toBe(true);
    }
  });

  /** The worker's next assignments until one is an evaluation (the customer knows it by its id: no task of theirs); the live ones are answered. */
  async function untilEvaluation(call: ReturnType<typeof workerClient>, live: ReturnType<typeof client>, answer: unknown) {
    const lives: any[] = [];
    for (let i = 0; i < 40; i++) {
      const next = await call('POST', '/v1/assignments/next', {});
      expect(next.status, next.text).toBe(200);
      if ((await live('GET', `/v1/task/${next.body.task.task_id}`)).status === 404) return { evaluation: next.body, lives };
      lives.push(next.body);
      const done = await call('POST', `/v1/assignments/${next.body.assignment_id}/submit`, {
        lease_token: next.body.lease_token,
        response: answer,
        active_ms: 1,
      });
      expect(done.status, done.text).toBe(200);
    }
    throw new Error('no evaluation in 40 assignments');
  }

  it("shows an evaluation made with its own parameters as the project's live task would store them: the project's under its own, direct links, the stored key order", async () => {
    const params = {
      instruction: 'Box every car.',
      annotation_attributes: { parked: { description: 'Is it parked?', choices: ['Yes', 'No'] } },
      attachment_type: 'image',
    };
    const { live, policy, worker } = await account('imageannotation', 'streets', params);
    // A preview link, which a live task stores as its direct link; no attachment_type nor attributes (the project has them).
    const body = {
      geometries: { box: { objects_to_annotate: ['car'] } },
      attachment: 'https://github.com/acme/data/blob/main/street-7.jpg',
    };
    const evaluation = await live('POST', '/v1/evaluation_tasks/imageannotation', {
      json: { ...body, expected_response: { annotations: [] } },
    });
    expect(evaluation.status, evaluation.text).toBe(200);
    await policy({ rate_new: 0.5, rate_trusted: 0.5, pause_below: 0 });
    for (let i = 0; i < 40; i++) {
      const made = await live('POST', '/v1/task/imageannotation', {
        json: { project: 'streets', callback_url: 'https://example.com/cb', instruction: 'Mind the parked ones.', ...body },
      });
      expect(made.status, made.text).toBe(200);
    }
    const { evaluation: shown, lives } = await untilEvaluation(await worker(), live, { annotations: [] });
    expect(lives.length).toBeGreaterThan(0);
    const { task_id: _e, ...evaluationTask } = shown.task;
    const { task_id: _l, ...liveTask } = lives[0].task;
    // The same text: values and the order of every key.
    expect(JSON.stringify(evaluationTask)).toBe(JSON.stringify(liveTask));
    expect(shown.task.params.attachment).toBe('https://raw.githubusercontent.com/acme/data/main/street-7.jpg');
    expect(shown.task.instruction).toBe('Box every car.\n\nMind the parked ones.');
  });

  it('gives an evaluation handed back (released, or its lease lapsed) again in its place, draft included, as a live task comes back; a skipped one never', async () => {
    const { live, worker, newTask } = await petsWithEvaluations(3);
    for (let i = 0; i < 40; i++) await newTask();
    const call = await worker();
    const { evaluation } = await untilEvaluation(call, live, { category: 'cat' });
    const draft = { category: 'dog', note: 'half done' };
    const beat = async (a: any) =>
      expect(
        (await call('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, { lease_token: a.lease_token, active_ms: 1, draft })).status,
      ).toBe(200);

    // Released: the next claim gives the same task again, with the draft (as a released live task comes back).
    await beat(evaluation);
    const released = await call('POST', `/v1/assignments/${evaluation.assignment_id}/release`, { lease_token: evaluation.lease_token });
    expect(released.status, released.text).toBe(200);
    const again = (await call('POST', '/v1/assignments/next', {})).body;
    expect(again).toMatchObject({ task: evaluation.task, draft, status: 'active' });
    expect(again.assignment_id).not.toBe(evaluation.assignment_id);
    // Its lease lapses (the server's clock moves past it): the same again.
    await beat(again);
    clock.advance(11 * 60_000);
    const lapsed = (await call('POST', '/v1/assignments/next', {})).body;
    expect(lapsed).toMatchObject({ task: evaluation.task, draft });
    expect((await call('GET', `/v1/assignments/${again.assignment_id}`)).body.status).toBe('expired');
    // Skipped: never again, as a skipped live task; the worker goes on in the queue's order.
    const skipped = await call('POST', `/v1/assignments/${lapsed.assignment_id}/skip`, {
      lease_token: lapsed.lease_token,
      reason: 'unclear',
    });
    expect(skipped.status, skipped.text).toBe(200);
    let next = await call('POST', '/v1/assignments/next', {});
    expect(next.body.task.task_id > evaluation.task.task_id).toBe(true);
    for (; next.status === 200; next = await call('POST', '/v1/assignments/next', {})) {
      expect(next.body.task.task_id).not.toBe(evaluation.task.task_id);
      const done = await call('POST', `/v1/assignments/${next.body.assignment_id}/submit`, {
        lease_token: next.body.lease_token,
        response: { category: 'cat' },
        active_ms: 1,
      });
      expect(done.status, done.text).toBe(200);
    }
    expect(next.status).toBe(204);
  });

  it('gives a worker the live task an evaluation took the place of once they have nothing else to do, so that a project of one worker is done', async () => {
    const { live, worker, newTask } = await petsWithEvaluations(6);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await newTask());
    // The only worker takes everything there is.
    const call = await worker();
    let evaluations = 0;
    for (
      let next = await call('POST', '/v1/assignments/next', {});
      next.status === 200;
      next = await call('POST', '/v1/assignments/next', {})
    ) {
      if ((await live('GET', `/v1/task/${next.body.task.task_id}`)).status === 404) evaluations++;
      const done = await call('POST', `/v1/assignments/${next.body.assignment_id}/submit`, {
        lease_token: next.body.lease_token,
        response: { category: 'cat' },
        active_ms: 1,
      });
      expect(done.status, done.text).toBe(200);
    }
    expect(evaluations).toBeGreaterThan(0);
    for (const id of ids) expect((await live('GET', `/v1/task/${id}`)).body.status).toBe('completed');
  });
});
