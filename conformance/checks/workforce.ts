// Workforce checks: the worker API (`/worker/v1`, contract generated/workforce.openapi.yaml) with the
// token of a worker given by --worker-token. Each check creates a live task in a fresh project of
// the account, takes it with `{"project": ...}` (so no other work of the account is touched) and
// leaves no assignment active: a worker holds one at a time, and the next check must get its own.
import { loadContract } from '../contract.ts';
import { describeExchange, shapeProblems } from '../shape.ts';
import { type Check, type CheckContext, ConformanceFailure, type Exchange, expectStatus, expectThat, freshConnection } from '../types.ts';
import { categorization, createTask, expectError, readTask } from './helpers.ts';

const area = 'Workforce';
const requestTimeoutMs = 30_000;

export interface WorkerCallOptions {
  /** The worker's token (default --worker-token); null: no Authorization header (logging in). */
  token?: string | null;
  headers?: Record<string, string>;
  /** `?wait=` of assignments/next (a long poll, in seconds). */
  query?: string;
}

/**
 * A request of a worker (Bearer token) to `${baseUrl}/worker${path}`; its answer must fit the
 * workforce contract (status documented, body and headers), else the check fails.
 */
export async function workerCall(
  ctx: CheckContext,
  method: string,
  path: string,
  json?: unknown,
  options: WorkerCallOptions = {},
): Promise<Exchange> {
  const contract = loadContract('workforce');
  const url = `${ctx.options.baseUrl.replace(/\/+$/, '')}/worker${path}${options.query ? `?${options.query}` : ''}`;
  const token = options.token === undefined ? ctx.options.workerToken : options.token;
  const headers: Record<string, string> = {
    ...freshConnection,
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...options.headers,
  };
  const body = json === undefined ? undefined : JSON.stringify(json);
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(requestTimeoutMs) });
  } catch (err) {
    throw new ConformanceFailure(`${method} ${url} got no answer: ${(err as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const op = contract.match(method, path);
  const ex: Exchange = {
    generation: ctx.generation,
    method,
    path: `/worker${path}`,
    ...(op ? { operationId: op.operationId, template: op.path } : {}),
    status: res.status,
    headers: res.headers,
    text,
    body: parsed,
    shapeProblems: [],
    url,
    ...(body !== undefined ? { requestText: body } : {}),
  };
  const problems = shapeProblems(contract, op, ex);
  if (problems.length) {
    throw new ConformanceFailure(
      `${method} /worker${path} answered off the workforce contract: ${problems.map((p) => `${p.rule}: ${p.message}`).join('; ')}`,
      describeExchange(ex),
    );
  }
  return ex;
}

interface Claimed {
  taskId: string;
  project: string;
  assignment: any;
}

/** Creates a live categorization task in a fresh project and takes it as the worker (200 with a lease). */
async function claimOwnTask(ctx: CheckContext): Promise<Claimed> {
  const project = ctx.unique('workforce');
  expectStatus(
    await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'categorization', name: project } }),
    200,
    `creating project ${project}`,
  );
  const task = await createTask(ctx, 'categorization', categorization({ project }), { key: 'live' });
  const claim = await workerCall(ctx, 'POST', '/v1/assignments/next', { project });
  expectStatus(claim, 200, `taking the live task ${task.task_id} of project ${project}`);
  const assignment = claim.body;
  expectThat(
    assignment?.task?.task_id === task.task_id,
    `the worker should get the pending live task of project ${project} (${task.task_id}), got ${assignment?.task?.task_id}`,
    assignment,
  );
  expectThat(
    typeof assignment.lease_token === 'string' && typeof assignment.lease_expires_at === 'string',
    'a taken assignment carries lease_token and lease_expires_at',
    assignment,
  );
  return { taskId: task.task_id, project, assignment };
}

/** Gives the assignment back (skip) if it is still active, so that the worker holds none after the check. */
async function giveBack(ctx: CheckContext, claimed: Claimed | undefined): Promise<void> {
  if (!claimed) return;
  const id = claimed.assignment.assignment_id;
  try {
    const read = await workerCall(ctx, 'GET', `/v1/assignments/${id}`);
    if (read.status !== 200 || read.body.status !== 'active') return;
    await workerCall(ctx, 'POST', `/v1/assignments/${id}/skip`, {
      lease_token: claimed.assignment.lease_token,
      reason: 'conformance check ended',
    });
  } catch {
    // Tidying only: the check's own outcome stands.
  }
}

/** Runs `body` with an assignment of a fresh task, giving it back afterwards whatever happened. */
async function withClaimed(ctx: CheckContext, body: (claimed: Claimed) => Promise<void>): Promise<void> {
  let claimed: Claimed | undefined;
  try {
    claimed = await claimOwnTask(ctx);
    await body(claimed);
  } finally {
    await giveBack(ctx, claimed);
  }
}

const common = {
  area,
  kind: 'behaviour' as const,
  generations: ['current' as const],
  needs: ['liveKey' as const, 'workerToken' as const],
};

export const workforceChecks: Check[] = [
  {
    ...common,
    id: 'workforce/claim-submit',
    seed: 'Workforce: take, heartbeat, submit (decision: the worker API)',
    rule: "A pending live task is handed out by POST /worker/v1/assignments/next with a lease; a heartbeat renews the lease; a valid answer completes the task: the customer's GET shows it completed with that response, and its assignments list the attempt.",
    async run(ctx) {
      await withClaimed(ctx, async ({ taskId, assignment }) => {
        const id = assignment.assignment_id;
        const heartbeat = await workerCall(ctx, 'POST', `/v1/assignments/${id}/heartbeat`, {
          lease_token: assignment.lease_token,
          active_ms: 1000,
        });
        expectStatus(heartbeat, 200, 'a heartbeat with the current lease token');
        expectThat(
          Date.parse(heartbeat.body.lease_expires_at) >= Date.parse(assignment.lease_expires_at),
          `a heartbeat renews the lease: lease_expires_at ${heartbeat.body.lease_expires_at} is before the claim's ${assignment.lease_expires_at}`,
          heartbeat.body,
        );
        const submit = await workerCall(ctx, 'POST', `/v1/assignments/${id}/submit`, {
          lease_token: assignment.lease_token,
          response: { category: 'billing' },
          active_ms: 1000,
        });
        expectStatus(submit, 200, 'a submit of a valid answer');
        const task = await readTask(ctx, taskId, 'live');
        expectThat(task.status === 'completed', `after the submit the customer should see the task completed, got ${task.status}`, task);
        expectThat(
          task.response?.category === 'billing',
          `the completed task's response should be the submitted answer {"category":"billing"}, got ${JSON.stringify(task.response)}`,
          task,
        );
        const who = await ctx.call('GET', `/v1/task/${taskId}/assignments`, { key: 'live' });
        expectStatus(who, 200, 'the customer listing who worked on the task');
        expectThat(
          who.body?.docs?.some((a: { assignment_id?: string; role?: string }) => a.assignment_id === id && a.role === 'attempt'),
          `GET /v1/task/${taskId}/assignments should list the attempt ${id}`,
          who.body,
        );
      });
    },
  },
  {
    ...common,
    id: 'workforce/submit-invalid',
    seed: 'Workforce: submit checks the answer against the task (decision: the worker API)',
    rule: "A submitted answer that breaks the task's params (a category not among its categories) gets 400, and nothing is stored: the assignment stays active, the task pending.",
    async run(ctx) {
      await withClaimed(ctx, async ({ taskId, assignment }) => {
        const id = assignment.assignment_id;
        expectError(
          await workerCall(ctx, 'POST', `/v1/assignments/${id}/submit`, {
            lease_token: assignment.lease_token,
            response: { category: 'not-a-category' },
            active_ms: 1000,
          }),
          400,
          "a submit whose category is not one of the task's categories",
        );
        const read = await workerCall(ctx, 'GET', `/v1/assignments/${id}`);
        expectStatus(read, 200, 'reading the assignment after the refused submit');
        expectThat(read.body.status === 'active', `a refused submit leaves the assignment active, got ${read.body.status}`, read.body);
        const task = await readTask(ctx, taskId, 'live');
        expectThat(task.status === 'pending', `a refused submit leaves the task pending, got ${task.status}`, task);
      });
    },
  },
  {
    ...common,
    id: 'workforce/stale-lease',
    seed: 'Workforce: leases (decision: the worker API)',
    rule: 'A submit with a lease_token that is not the current one gets 409 with code lease_lost, and the task stays pending.',
    async run(ctx) {
      await withClaimed(ctx, async ({ taskId, assignment }) => {
        const id = assignment.assignment_id;
        const stale = `lt_${'0'.repeat(32)}` === assignment.lease_token ? `lt_${'1'.repeat(32)}` : `lt_${'0'.repeat(32)}`;
        const submit = await workerCall(ctx, 'POST', `/v1/assignments/${id}/submit`, {
          lease_token: stale,
          response: { category: 'billing' },
          active_ms: 1000,
        });
        expectError(submit, 409, 'a submit with a wrong lease_token');
        expectThat(
          submit.body?.code === 'lease_lost',
          `a wrong lease_token answers code lease_lost, got ${submit.body?.code}`,
          submit.body,
        );
        const task = await readTask(ctx, taskId, 'live');
        expectThat(task.status === 'pending', `a refused submit leaves the task pending, got ${task.status}`, task);
      });
    },
  },
  {
    ...common,
    id: 'workforce/submit-replay',
    seed: 'Workforce: a retried submit (decision: the worker API, Idempotency-Key)',
    rule: 'A submit retried with the same Idempotency-Key and body gets the first answer again (Idempotent-Replayed: true) and stores nothing more; the same key with another body gets 409 with code idempotency_mismatch.',
    async run(ctx) {
      await withClaimed(ctx, async ({ taskId, assignment }) => {
        const id = assignment.assignment_id;
        const headers = { 'Idempotency-Key': ctx.unique('submit') };
        const body = { lease_token: assignment.lease_token, response: { category: 'billing' }, active_ms: 1000 };
        const first = await workerCall(ctx, 'POST', `/v1/assignments/${id}/submit`, body, { headers });
        expectStatus(first, 200, 'a submit with an Idempotency-Key');
        const replay = await workerCall(ctx, 'POST', `/v1/assignments/${id}/submit`, body, { headers });
        expectStatus(replay, 200, 'the same submit again, with the same Idempotency-Key (a retry)');
        expectThat(
          replay.headers.get('idempotent-replayed') === 'true',
          `a replayed submit carries Idempotent-Replayed: true, got ${replay.headers.get('idempotent-replayed')}`,
        );
        expectThat(
          replay.body?.assignment_id === id && replay.body?.status === first.body?.status && replay.body?.response?.category === 'billing',
          'a replayed submit answers the first answer again (the same assignment, status and response)',
          { first: first.body, replay: replay.body },
        );
        const other = await workerCall(
          ctx,
          'POST',
          `/v1/assignments/${id}/submit`,
          { ...body, response: { category: 'sales' } },
          { headers },
        );
        expectError(other, 409, 'a submit with the same Idempotency-Key and another answer');
        expectThat(
          other.body?.code === 'idempotency_mismatch',
          `the same Idempotency-Key with another body answers code idempotency_mismatch, got ${other.body?.code}`,
          other.body,
        );
        const task = await readTask(ctx, taskId, 'live');
        expectThat(
          task.status === 'completed' && task.response?.category === 'billing',
          `the task keeps the first answer {"category":"billing"}, got status ${task.status} and ${JSON.stringify(task.response)}`,
          task,
        );
      });
    },
  },
  {
    ...common,
    id: 'workforce/nothing-to-do',
    seed: 'Workforce: take the next piece of work (decision: the worker API)',
    rule: 'With no work to take (a project without tasks), POST /worker/v1/assignments/next answers 204 with Retry-After.',
    async run(ctx) {
      const project = ctx.unique('workforce-empty');
      expectStatus(
        await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'categorization', name: project } }),
        200,
        `creating project ${project}`,
      );
      const claim = await workerCall(ctx, 'POST', '/v1/assignments/next', { project });
      expectStatus(claim, 204, `asking for work of project ${project}, which has no task`);
      const retryAfter = claim.headers.get('retry-after');
      expectThat(
        retryAfter !== null && /^\d+$/.test(retryAfter.trim()),
        `a 204 of assignments/next carries Retry-After (seconds), got ${retryAfter}`,
      );
    },
  },
];
