// Workforce checks of what the customer manages with its API key (tag Workforce of the current
// generation): its own workers (/v1/workforce/workers...) and the staffing of its projects and
// batches. Who worked on a task (GET /v1/task/{taskId}/assignments) is checked by the work-loop
// checks (workforce.ts, workforce-review.ts). Each check removes the workers it made.
import { randomBytes } from 'node:crypto';
import { type Check, type CheckContext, expectStatus, expectThat } from '../types.ts';
import { categorization, createTask, expectError, readTask } from './helpers.ts';
import { workerCall } from './workforce.ts';
import { crewOf, logIn, submit, take } from './workforce-review.ts';

const area = 'Workforce';

const workerPath = (id: string, rest = '') => `/v1/workforce/workers/${encodeURIComponent(id)}${rest}`;
/** A well-formed worker id that names nobody. */
const unknownWorkerId = () => `wkr_${randomBytes(12).toString('hex')}`;

/** Walks the account's worker list (newest first) with `status`, up to 10 pages: the ids seen. */
async function listedIds(ctx: CheckContext, status: string): Promise<string[]> {
  const ids: string[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < 10; page++) {
    const ex = await ctx.call('GET', '/v1/workforce/workers', {
      key: 'live',
      query: { status, limit: 100, ...(nextToken ? { next_token: nextToken } : {}) },
    });
    expectStatus(ex, 200, `listing the account's workers with status ${status}`);
    const docs: any[] = ex.body?.docs ?? [];
    expectThat(
      docs.every((w) => w.status === status),
      `GET /v1/workforce/workers?status=${status} lists only workers with that status`,
      docs.map((w) => w.status),
    );
    ids.push(...docs.map((w) => w.worker_id));
    if (!ex.body?.has_more) break;
    nextToken = ex.body.next_token;
  }
  return ids;
}

async function getStaffing(ctx: CheckContext, path: string, what: string) {
  const ex = await ctx.call('GET', path, { key: 'live' });
  expectStatus(ex, 200, `reading the staffing of ${what}`);
  return ex.body;
}

const common = {
  area,
  kind: 'behaviour' as const,
  generations: ['current' as const],
  needs: ['liveKey' as const],
};

export const workforceManageChecks: Check[] = [
  {
    ...common,
    id: 'workforce/own-workers',
    seed: "Workforce: an account's own workers (decision: /v1/workforce/workers)",
    rule: "An account creates its own workers (with a password, or one the server shows once), one per e-mail address (409), reads, lists by status, changes, pauses (no new work: 403 worker_paused), unpauses (an unknown project named → 404, nothing changed), resets the password (every token revoked) and removes them (tokens stop working; removing again answers the same); a malformed request gets 400, an unknown worker 404, and another account's key sees none of them.",
    async run(ctx) {
      const crew = crewOf(ctx);
      try {
        const ana = await crew.add('own-worker', ['labeler']);
        const read = await ctx.call('GET', workerPath(ana.workerId), { key: 'live' });
        expectStatus(read, 200, 'reading a worker just created');
        expectThat(
          read.body?.email === ana.email && read.body?.status === 'active' && read.body?.roles?.join() === 'labeler',
          `the worker reads back as created (e-mail ${ana.email}, status active, roles [labeler])`,
          read.body,
        );
        expectThat(
          read.body?.initial_password === undefined,
          'a password is shown only in the creation answer, and only when the server chose it',
          read.body,
        );

        // The server chooses the password when none is sent, and shows it once.
        const boEmail = `${ctx.unique('own-worker')}@example.com`;
        const bo = await ctx.call('POST', '/v1/workforce/workers', {
          key: 'live',
          json: { email: boEmail, display_name: 'Conformance Bo', roles: ['reviewer', 'labeler'] },
        });
        expectStatus(bo, 200, 'creating a worker without a password');
        const boId: string = bo.body?.worker_id;
        try {
          expectThat(
            typeof bo.body?.initial_password === 'string',
            'a worker created without a password gets one chosen by the server, in initial_password',
            bo.body,
          );
          await logIn(ctx, boEmail, bo.body.initial_password);
        } finally {
          await ctx.call('DELETE', workerPath(boId), { key: 'live' });
        }

        expectError(
          await ctx.call('POST', '/v1/workforce/workers', {
            key: 'live',
            json: { email: ana.email.toUpperCase(), display_name: 'Twin', roles: ['labeler'], password: 'another-long-passphrase' },
          }),
          409,
          'a second worker with the same e-mail address (in capitals)',
        );
        expectError(
          await ctx.call('POST', '/v1/workforce/workers', {
            key: 'live',
            json: { email: `${ctx.unique('own-worker')}@example.com`, display_name: 'Bad role', roles: ['boss'] },
          }),
          400,
          'a worker with an unknown role',
        );
        expectError(await ctx.call('GET', workerPath(unknownWorkerId()), { key: 'live' }), 404, 'reading a worker that does not exist');
        if (ctx.options.otherKey) {
          expectError(
            await ctx.call('GET', workerPath(ana.workerId), { key: 'other' }),
            404,
            "another account reading this account's worker",
          );
          const theirs = await ctx.call('GET', '/v1/workforce/workers', { key: 'other', query: { limit: 100 } });
          expectStatus(theirs, 200, 'another account listing its workers');
          expectThat(
            !(theirs.body?.docs ?? []).some((w: any) => w.worker_id === ana.workerId),
            "another account's list never shows this account's worker",
            theirs.body,
          );
        } else ctx.note('without --other-key the isolation of workers between accounts was not checked');

        expectThat((await listedIds(ctx, 'active')).includes(ana.workerId), 'the list of active workers shows the new worker');

        const patched = await ctx.call('PATCH', workerPath(ana.workerId), {
          key: 'live',
          json: { roles: ['labeler', 'reviewer'], display_name: 'Conformance Ana' },
        });
        expectStatus(patched, 200, "changing a worker's roles and display name");
        expectThat(
          [...(patched.body?.roles ?? [])].sort().join() === 'labeler,reviewer' && patched.body?.display_name === 'Conformance Ana',
          'the changed worker shows the new roles and display name',
          patched.body,
        );
        expectError(
          await ctx.call('PATCH', workerPath(ana.workerId), { key: 'live', json: {} }),
          400,
          'a change that changes nothing ({})',
        );

        const paused = await ctx.call('POST', workerPath(ana.workerId, '/pause'), { key: 'live' });
        expectStatus(paused, 200, 'pausing a worker');
        expectThat(paused.body?.status === 'paused', `a paused worker shows status paused, got ${paused.body?.status}`, paused.body);
        const refused = await workerCall(ctx, 'POST', '/v1/assignments/next', {}, { token: ana.token });
        expectError(refused, 403, 'a paused worker asking for work');
        expectThat(
          refused.body?.code === 'worker_paused',
          `a paused worker gets code worker_paused, got ${refused.body?.code}`,
          refused.body,
        );
        expectThat((await listedIds(ctx, 'paused')).includes(ana.workerId), 'the list of paused workers shows the paused worker');
        const noProject = await ctx.call('POST', workerPath(ana.workerId, '/unpause'), {
          key: 'live',
          json: { project: `no-such-project-${ana.workerId}` },
        });
        expectError(noProject, 404, 'unpausing a worker for a project the account does not have');
        expectThat(
          (await listedIds(ctx, 'paused')).includes(ana.workerId),
          'an unpause refused for an unknown project leaves the worker paused',
        );
        const unpaused = await ctx.call('POST', workerPath(ana.workerId, '/unpause'), { key: 'live' });
        expectStatus(unpaused, 200, 'unpausing a worker');
        expectThat(unpaused.body?.status === 'active', `an unpaused worker is active again, got ${unpaused.body?.status}`, unpaused.body);

        const reset = await ctx.call('POST', workerPath(ana.workerId, '/reset_password'), { key: 'live', json: {} });
        expectStatus(reset, 200, "resetting a worker's password (the server chooses)");
        expectThat(
          typeof reset.body?.password === 'string' && reset.body?.revoked_tokens >= 1,
          'a reset without a password shows the one the server chose and counts the revoked tokens (the session at least)',
          reset.body,
        );
        const oldToken = await workerCall(ctx, 'GET', '/v1/me', undefined, { token: ana.token });
        expectStatus(oldToken, 401, 'the session of a worker whose password was reset');
        const token = await logIn(ctx, ana.email, reset.body.password);

        const removed = await ctx.call('DELETE', workerPath(ana.workerId), { key: 'live' });
        expectStatus(removed, 200, 'removing a worker');
        expectThat(removed.body?.status === 'removed', `a removed worker shows status removed, got ${removed.body?.status}`, removed.body);
        const twice = await ctx.call('DELETE', workerPath(ana.workerId), { key: 'live' });
        expectStatus(twice, 200, 'removing a removed worker (answers the same)');
        expectThat(twice.body?.status === 'removed', 'removing a removed worker answers it removed', twice.body);
        expectStatus(await workerCall(ctx, 'GET', '/v1/me', undefined, { token }), 401, 'the token of a removed worker');
        expectError(await ctx.call('POST', workerPath(ana.workerId, '/pause'), { key: 'live' }), 400, 'pausing a removed worker');
      } finally {
        await crew.remove();
      }
    },
  },
  {
    ...common,
    id: 'workforce/staffing',
    seed: 'Workforce: staffing of projects and batches (decision: /v1/projects/{projectName}/staffing)',
    rule: "A project without staffing shows the default (source default); a PUT replaces it (source project) and a batch follows its project's until it gets its own (source batch, review_sampling defaulting to 20 first tasks and 10 %); an unknown worker id gets 404 naming it, a malformed staffing 400, and neither changes what is in force; an unknown project or batch gets 404.",
    async run(ctx) {
      const crew = crewOf(ctx);
      try {
        const worker = await crew.add('staffed', ['labeler', 'reviewer']);
        const project = ctx.unique('workforce-staffing');
        expectStatus(
          await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'categorization', name: project } }),
          200,
          `creating project ${project}`,
        );
        const projectPath = `/v1/projects/${encodeURIComponent(project)}/staffing`;
        const initial = await getStaffing(ctx, projectPath, `the new project ${project}`);
        expectThat(initial?.source === 'default', `a project without staffing shows source default, got ${initial?.source}`, initial);

        const staffing = {
          attempt: [worker.workerId, 'operator'],
          review: [worker.workerId],
          review_sampling: { new_worker_tasks: 5, rate: 0.5 },
        };
        const set = await ctx.call('PUT', projectPath, { key: 'live', json: staffing });
        expectStatus(set, 200, `staffing project ${project}`);
        const same = (s: any) =>
          s?.source === 'project' &&
          [...(s.attempt ?? [])].sort().join() === [...staffing.attempt].sort().join() &&
          s.review?.join() === worker.workerId &&
          s.review_sampling?.new_worker_tasks === 5 &&
          s.review_sampling?.rate === 0.5;
        expectThat(same(set.body), 'the PUT answers the staffing as set, with source project', set.body);
        expectThat(same(await getStaffing(ctx, projectPath, project)), 'a GET shows the staffing as set');

        const missing = unknownWorkerId();
        const unknown = await ctx.call('PUT', projectPath, { key: 'live', json: { attempt: [missing], review: [] } });
        expectError(unknown, 404, 'staffing with a worker id that names nobody');
        expectThat(String(unknown.body?.error).includes(missing), `the 404 names the unknown worker id ${missing}`, unknown.body);
        expectError(
          await ctx.call('PUT', projectPath, { key: 'live', json: { ...staffing, review_sampling: { rate: 2 } } }),
          400,
          'a review_sampling rate above 1',
        );
        expectError(await ctx.call('PUT', projectPath, { key: 'live', json: { attempt: ['operator'] } }), 400, 'a staffing without review');
        expectThat(same(await getStaffing(ctx, projectPath, project)), 'refused staffings leave the one in force unchanged');

        const batch = ctx.unique('batch');
        expectStatus(
          await ctx.call('POST', '/v1/batches', { key: 'live', json: { project, name: batch } }),
          200,
          `creating batch ${batch} in project ${project}`,
        );
        const batchPath = `/v1/batches/${encodeURIComponent(batch)}/staffing`;
        const follows = await getStaffing(ctx, batchPath, `the new batch ${batch}`);
        expectThat(
          follows?.source === 'project' && follows.review?.join() === worker.workerId,
          `a batch without staffing of its own follows its project's (source project), got ${JSON.stringify(follows)}`,
          follows,
        );
        const own = await ctx.call('PUT', batchPath, { key: 'live', json: { attempt: ['operator'], review: [] } });
        expectStatus(own, 200, `staffing batch ${batch}`);
        expectThat(
          own.body?.source === 'batch' &&
            own.body.attempt?.join() === 'operator' &&
            own.body.review?.length === 0 &&
            own.body.review_sampling?.new_worker_tasks === 20 &&
            own.body.review_sampling?.rate === 0.1,
          "a batch's own staffing shows source batch, and review_sampling left out gets the defaults (20 first tasks, then 10 %)",
          own.body,
        );
        expectThat(
          (await getStaffing(ctx, batchPath, batch))?.source === 'batch',
          "a GET of the batch's staffing shows its own (source batch)",
        );
        expectThat(same(await getStaffing(ctx, projectPath, project)), "a batch's staffing leaves its project's unchanged");
        expectError(
          await ctx.call('PUT', batchPath, { key: 'live', json: { attempt: ['nobody'], review: [] } }),
          400,
          'a batch staffing naming something that is neither a worker id nor operator',
        );
        expectError(
          await ctx.call('GET', `/v1/projects/${encodeURIComponent(ctx.unique('no-such-project'))}/staffing`, { key: 'live' }),
          404,
          'the staffing of a project that does not exist',
        );
        expectError(
          await ctx.call('GET', `/v1/batches/${encodeURIComponent(ctx.unique('no-such-batch'))}/staffing`, { key: 'live' }),
          404,
          'the staffing of a batch that does not exist',
        );
      } finally {
        await crew.remove();
      }
    },
  },
  {
    ...common,
    id: 'workforce/modes',
    seed: "Workforce: the key's mode is the workforce's mode (decision 13)",
    rule: "A worker made with the test key is a test-mode worker: while a live task of the account waits, it gets none (assignments/next → 204); each key sees and removes only its own mode's workers (the other mode's → 404); an e-mail address is one worker per workforce, so the live key may use the address the test key's worker has.",
    async run(ctx) {
      const email = `${ctx.unique('mode-worker')}@example.com`;
      const passwords = { main: `pw-${ctx.unique('secret')}`, live: `pw-${ctx.unique('secret')}` };
      const made: { key: 'main' | 'live'; id: string }[] = [];
      const project = ctx.unique('workforce-modes');
      let taskId: string | undefined;
      try {
        expectStatus(
          await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'categorization', name: project } }),
          200,
          `creating project ${project}`,
        );
        taskId = (await createTask(ctx, 'categorization', categorization({ project }), { key: 'live' })).task_id as string;
        for (const key of ['main', 'live'] as const) {
          const created = await ctx.call('POST', '/v1/workforce/workers', {
            key,
            json: { email, display_name: `Conformance ${key}`, roles: ['labeler', 'reviewer'], password: passwords[key] },
          });
          expectStatus(created, 200, `creating a worker with the ${key === 'main' ? 'test' : 'live'} key (the same address for both)`);
          made.push({ key, id: created.body?.worker_id });
        }
        const [test, live] = made as [{ key: 'main'; id: string }, { key: 'live'; id: string }];
        const token = await logIn(ctx, email, passwords.main);
        for (const body of [{}, { project }, { role: 'review' }]) {
          const next = await workerCall(ctx, 'POST', '/v1/assignments/next', body, { token });
          expectStatus(next, 204, `the test key's worker asking for work (${JSON.stringify(body)}) while live task ${taskId} waits`);
        }
        expectError(await ctx.call('GET', workerPath(live.id), { key: 'main' }), 404, "the test key reading the live key's worker");
        expectError(await ctx.call('DELETE', workerPath(live.id), { key: 'main' }), 404, "the test key removing the live key's worker");
        expectError(await ctx.call('GET', workerPath(test.id), { key: 'live' }), 404, "the live key reading the test key's worker");
        expectError(
          await ctx.call('POST', workerPath(test.id, '/pause'), { key: 'live' }),
          404,
          "the live key pausing the test key's worker",
        );
        const still = await ctx.call('GET', workerPath(live.id), { key: 'live' });
        expectThat(still.body?.status === 'active', "the live key's worker is still active after the test key's attempts", still.body);
      } finally {
        for (const w of made) await ctx.call('DELETE', workerPath(w.id), { key: w.key });
        if (taskId) await ctx.call('POST', `/v1/task/${taskId}/cancel`, { key: 'live' });
      }
    },
  },
  {
    ...common,
    id: 'workforce/pause-ends-held-work',
    seed: 'Workforce: pausing a worker (decision 13)',
    rule: 'Pausing a worker ends the assignment they hold: their submit on it then gets 403 worker_paused, the task stays pending and goes back to the queue (after an unpause the worker takes it again under a new assignment).',
    async run(ctx) {
      const crew = crewOf(ctx);
      try {
        const ana = await crew.add('paused-worker', ['labeler']);
        const project = ctx.unique('workforce-pause');
        expectStatus(
          await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'categorization', name: project } }),
          200,
          `creating project ${project}`,
        );
        expectStatus(
          await ctx.call('PUT', `/v1/projects/${encodeURIComponent(project)}/staffing`, {
            key: 'live',
            json: { attempt: [ana.workerId], review: [], review_sampling: { new_worker_tasks: 0, rate: 0 } },
          }),
          200,
          `staffing project ${project} with the worker alone`,
        );
        const task = await createTask(ctx, 'categorization', categorization({ project }), { key: 'live' });
        const held = await take(ctx, ana, project, 'attempt', task.task_id, 'before the pause');
        expectStatus(await ctx.call('POST', workerPath(ana.workerId, '/pause'), { key: 'live' }), 200, 'pausing the worker');
        const late = await workerCall(
          ctx,
          'POST',
          `/v1/assignments/${held.assignment_id}/submit`,
          { lease_token: held.lease_token, response: { category: 'billing' }, active_ms: 1000 },
          { token: ana.token },
        );
        expectError(late, 403, "a paused worker's submit on the assignment they held");
        expectThat(
          late.body?.code === 'worker_paused',
          `the refusal names worker_paused, got ${JSON.stringify(late.body?.code)}`,
          late.body,
        );
        expectThat((await readTask(ctx, task.task_id, 'live'))?.status === 'pending', 'the task stays pending after the refused submit');
        expectStatus(await ctx.call('POST', workerPath(ana.workerId, '/unpause'), { key: 'live' }), 200, 'unpausing the worker');
        const again = await take(ctx, ana, project, 'attempt', task.task_id, 'after the unpause');
        expectThat(
          again.assignment_id !== held.assignment_id,
          'the task went back to the queue: it is taken again under a new assignment',
          again,
        );
        await submit(ctx, ana, again, 'billing', 'after the unpause');
      } finally {
        await crew.remove();
      }
    },
  },
];
