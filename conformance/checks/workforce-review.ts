// Workforce checks of review, redo and leases. Each check makes the workers it needs itself, as the
// account's own workers (POST /v1/workforce/workers with the live key, then POST /worker/v1/session):
// a review needs a labeler and reviewers who are not the labeler, a lapsed lease another worker.
// Each staffs a fresh project with exactly these workers, so no other worker (the --worker-token
// one included) can take its tasks, and removes its workers when it ends.
import { CheckSkipped, type Check, type CheckContext, expectStatus, expectThat } from '../types.ts';
import { categorization, createTask, expectError, readTask } from './helpers.ts';
import { workerCall } from './workforce.ts';

const area = 'Workforce';
/** The longest lease the lease-expiry check waits out (longer: the check is skipped). */
const maxLeaseMs = 15_000;

export interface CrewWorker {
  workerId: string;
  email: string;
  password: string;
  token: string;
}

/** The workers a check made; `remove` takes them all away again (errors ignored: tidying only). */
export interface Crew {
  /** `more`: further fields of the worker (e.g. `calibrator: true`). */
  add(label: string, roles: string[], more?: Record<string, unknown>): Promise<CrewWorker>;
  remove(): Promise<void>;
}

export function crewOf(ctx: CheckContext): Crew {
  const made: CrewWorker[] = [];
  return {
    async add(label, roles, more = {}) {
      const email = `${ctx.unique(label)}@example.com`;
      const password = `pw-${ctx.unique('secret')}`;
      const created = await ctx.call('POST', '/v1/workforce/workers', {
        key: 'live',
        json: { email, display_name: `Conformance ${label}`, roles, password, ...more },
      });
      expectStatus(created, 200, `creating the account's own worker ${email} (roles ${roles.join(', ')})`);
      const worker = { workerId: created.body?.worker_id as string, email, password, token: '' };
      made.push(worker);
      worker.token = await logIn(ctx, email, password);
      return worker;
    },
    async remove() {
      for (const w of made) {
        try {
          await ctx.call('DELETE', `/v1/workforce/workers/${encodeURIComponent(w.workerId)}`, { key: 'live' });
        } catch {
          // Tidying only.
        }
      }
    },
  };
}

/** POST /worker/v1/session: the session token. */
export async function logIn(ctx: CheckContext, email: string, password: string): Promise<string> {
  const session = await workerCall(ctx, 'POST', '/v1/session', { email, password }, { token: null });
  expectStatus(session, 200, `logging in as ${email}`);
  expectThat(typeof session.body?.token === 'string', 'a log-in answers a token', session.body);
  return session.body.token;
}

/** Runs `body` with a crew, removing its workers afterwards whatever happened. */
export async function withCrew(ctx: CheckContext, body: (crew: Crew) => Promise<void>): Promise<void> {
  const crew = crewOf(ctx);
  try {
    await body(crew);
  } finally {
    await crew.remove();
  }
}

/** A fresh live project of categorization tasks, staffed with exactly these workers. */
async function staffedProject(
  ctx: CheckContext,
  staffing: { attempt: CrewWorker[]; review: CrewWorker[]; reviewAll: boolean },
): Promise<string> {
  const project = ctx.unique('workforce-review');
  expectStatus(
    await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'categorization', name: project } }),
    200,
    `creating project ${project}`,
  );
  const set = await ctx.call('PUT', `/v1/projects/${encodeURIComponent(project)}/staffing`, {
    key: 'live',
    json: {
      attempt: staffing.attempt.map((w) => w.workerId),
      review: staffing.review.map((w) => w.workerId),
      review_sampling: staffing.reviewAll ? { new_worker_tasks: 0, rate: 1 } : { new_worker_tasks: 0, rate: 0 },
    },
  });
  expectStatus(set, 200, `staffing project ${project}`);
  return project;
}

/** The worker takes work of the project (attempt or review) and must get this task. */
export async function take(
  ctx: CheckContext,
  worker: CrewWorker,
  project: string,
  role: 'attempt' | 'review',
  taskId: string,
  what: string,
) {
  const claim = await workerCall(ctx, 'POST', '/v1/assignments/next', { project, role }, { token: worker.token });
  expectStatus(claim, 200, `${what}: ${worker.email} asking for ${role} work of project ${project}`);
  expectThat(
    claim.body?.task?.task_id === taskId && typeof claim.body?.lease_token === 'string',
    `${what}: ${worker.email} should get task ${taskId} with a lease, got ${claim.body?.task?.task_id}`,
    claim.body,
  );
  return claim.body;
}

export async function submit(ctx: CheckContext, worker: CrewWorker, assignment: any, category: string, what: string) {
  const ex = await workerCall(
    ctx,
    'POST',
    `/v1/assignments/${assignment.assignment_id}/submit`,
    { lease_token: assignment.lease_token, response: { category }, active_ms: 1000 },
    { token: worker.token },
  );
  expectStatus(ex, 200, `${what}: submitting {"category":"${category}"}`);
  return ex.body;
}

export async function review(ctx: CheckContext, worker: CrewWorker, assignment: any, decision: Record<string, unknown>, what: string) {
  const ex = await workerCall(
    ctx,
    'POST',
    `/v1/assignments/${assignment.assignment_id}/review`,
    { lease_token: assignment.lease_token, active_ms: 2000, ...decision },
    { token: worker.token },
  );
  expectStatus(ex, 200, `${what}: the review decision ${JSON.stringify(decision)}`);
  expectThat(
    ex.body?.status === 'reviewed' && ex.body?.review?.result === decision.result,
    `${what}: a decided review shows status reviewed and review.result ${String(decision.result)}`,
    ex.body,
  );
  return ex.body;
}

/** Creates a live task in the project (callback to `callbackUrl` or the sink). */
async function liveTask(ctx: CheckContext, project: string, callbackUrl?: string) {
  return createTask(ctx, 'categorization', categorization({ project, ...(callbackUrl ? { callback_url: callbackUrl } : {}) }), {
    key: 'live',
  });
}

const categoryOf = (task: any) => JSON.stringify(task?.response);

function expectAudit(task: any, reviewer: CrewWorker, result: string, what: string) {
  const audits: any[] = Array.isArray(task.audits) ? task.audits : [];
  const last = audits.at(-1);
  expectThat(
    last?.audit_result === result &&
      last?.audited_by === reviewer.workerId &&
      last?.audit_source !== 'customer' &&
      typeof last?.audit_time_secs === 'number' &&
      last.audit_time_secs >= 0,
    `${what}: the task's last audit should be {audit_result: ${result}, audited_by: ${reviewer.workerId} (the reviewer), audit_source: the operator's, audit_time_secs}, got ${JSON.stringify(last)}`,
    task.audits,
  );
}

async function assignmentsOf(ctx: CheckContext, taskId: string): Promise<any[]> {
  const who = await ctx.call('GET', `/v1/task/${taskId}/assignments`, { key: 'live' });
  expectStatus(who, 200, `the customer listing who worked on task ${taskId}`);
  return who.body?.docs ?? [];
}

const common = {
  area,
  kind: 'behaviour' as const,
  generations: ['current' as const],
  needs: ['liveKey' as const],
};

export const workforceReviewChecks: Check[] = [
  {
    ...common,
    id: 'workforce/review-accept-fix',
    seed: 'Workforce: review (decision: the worker API)',
    rule: "In a project whose every attempt is reviewed, a submit leaves the task pending until a reviewer (never the author) decides: accepted adopts the answer, fixed adopts the reviewer's correction; each completes the task with an audit naming the reviewer (audit_result accepted or fixed, not from the customer) and times_redone 0, and the task's assignments show the attempt and the review.",
    async run(ctx) {
      await withCrew(ctx, async (crew) => {
        const labeler = await crew.add('labeler', ['labeler']);
        const reviewer = await crew.add('reviewer', ['reviewer']);
        const project = await staffedProject(ctx, { attempt: [labeler], review: [reviewer], reviewAll: true });
        for (const [decision, expected] of [
          [{ result: 'accepted' }, 'billing'],
          [{ result: 'fixed', response: { category: 'sales' } }, 'sales'],
        ] as const) {
          const what = `review ${decision.result}`;
          const created = await liveTask(ctx, project);
          const attempt = await take(ctx, labeler, project, 'attempt', created.task_id, what);
          await submit(ctx, labeler, attempt, 'billing', what);
          const waiting = await readTask(ctx, created.task_id, 'live');
          expectThat(
            waiting.status === 'pending',
            `${what}: a submit that is sampled for review leaves the task pending until the review, got ${waiting.status}`,
            waiting,
          );
          const rev = await take(ctx, reviewer, project, 'review', created.task_id, what);
          expectThat(
            rev.role === 'review' && rev.under_review?.response?.category === 'billing',
            `${what}: a review assignment shows the answer under review ({"category":"billing"}), got ${JSON.stringify(rev.under_review)}`,
            rev,
          );
          await review(ctx, reviewer, rev, decision, what);
          const task = await readTask(ctx, created.task_id, 'live');
          expectThat(
            task.status === 'completed' && task.response?.category === expected,
            `${what}: the task should be completed with {"category":"${expected}"}, got status ${task.status} and ${categoryOf(task)}`,
            task,
          );
          expectAudit(task, reviewer, decision.result, what);
          expectThat((task.times_redone ?? 0) === 0, `${what}: no redo happened, times_redone should be 0, got ${task.times_redone}`);
          const docs = await assignmentsOf(ctx, created.task_id);
          expectThat(
            docs.some((a) => a.assignment_id === attempt.assignment_id && a.role === 'attempt' && a.review_result === decision.result) &&
              docs.some((a) => a.assignment_id === rev.assignment_id && a.role === 'review'),
            `${what}: the task's assignments list the attempt (review_result ${decision.result}) and the review`,
            docs,
          );
        }
      });
    },
  },
  {
    ...common,
    id: 'workforce/review-reject-redo',
    seed: 'Workforce: review and redo (decision: the worker API)',
    rule: 'A rejected review sends the task back as a redo to its author, carrying the feedback and the earlier answer, the task still pending; the redo is reviewed again, and the reviewer who rejected it may take that review (so that a task every staffed reviewer rejected once is still reviewed); when accepted the task completes with the redone answer and times_redone 1.',
    async run(ctx) {
      await withCrew(ctx, async (crew) => {
        const labeler = await crew.add('labeler', ['labeler']);
        const first = await crew.add('reviewer', ['reviewer']);
        const second = await crew.add('reviewer', ['reviewer']);
        const project = await staffedProject(ctx, { attempt: [labeler], review: [first, second], reviewAll: true });
        const created = await liveTask(ctx, project);
        const attempt = await take(ctx, labeler, project, 'attempt', created.task_id, 'the attempt');
        await submit(ctx, labeler, attempt, 'billing', 'the attempt');
        // The first reviewer to ask takes the review, and the review of the redo too (the other one stays idle).
        const rev = await take(ctx, first, project, 'review', created.task_id, 'the first review');
        const remark = 'The ticket is about a sale, not a bill.';
        await review(
          ctx,
          first,
          rev,
          { result: 'rejected', feedback_items: [{ scope: { field: 'category' }, category: 'wrong_label', text: remark }] },
          'the first review',
        );
        const rejected = await readTask(ctx, created.task_id, 'live');
        expectThat(
          rejected.status === 'pending',
          `a rejected review leaves the task pending (it is redone), got ${rejected.status}`,
          rejected,
        );
        const redo = await take(ctx, labeler, project, 'attempt', created.task_id, 'the redo');
        expectThat(redo.role === 'redo', `the rejected work comes back to its author as a redo, got role ${redo.role}`, redo);
        expectThat(
          redo.feedback?.result === 'rejected' && redo.feedback?.feedback_items?.some((f: any) => f.text === remark),
          `the redo carries the rejection's feedback (result rejected, the item "${remark}"), got ${JSON.stringify(redo.feedback)}`,
          redo,
        );
        expectThat(
          redo.previous_response?.category === 'billing',
          `the redo carries the worker's earlier answer {"category":"billing"}, got ${JSON.stringify(redo.previous_response)}`,
          redo,
        );
        await submit(ctx, labeler, redo, 'sales', 'the redo');
        const rev2 = await take(ctx, first, project, 'review', created.task_id, 'the review of the redo, by the reviewer who rejected it');
        expectThat(
          rev2.under_review?.response?.category === 'sales',
          `the review of the redo shows the redone answer {"category":"sales"}, got ${JSON.stringify(rev2.under_review)}`,
          rev2,
        );
        await review(ctx, first, rev2, { result: 'accepted' }, 'the review of the redo');
        const task = await readTask(ctx, created.task_id, 'live');
        expectThat(
          task.status === 'completed' && task.response?.category === 'sales',
          `after the accepted redo the task is completed with the redone answer {"category":"sales"}, got status ${task.status} and ${categoryOf(task)}`,
          task,
        );
        expectThat(task.times_redone === 1, `after one redo times_redone is 1, got ${task.times_redone}`, task);
        expectAudit(task, first, 'accepted', 'the review of the redo');
        const docs = await assignmentsOf(ctx, created.task_id);
        const roles = docs.map((a) => a.role).join(', ');
        expectThat(
          roles === 'attempt, review, redo, review',
          `the task's assignments, oldest first: attempt, review, redo, review; got ${roles}`,
          docs,
        );
      });
    },
  },
  {
    ...common,
    id: 'workforce/review-final',
    seed: 'Workforce: review and redo (decision: the worker API)',
    rule: "No task waits in review for ever: with one staffed reviewer, who rejects, the redo's review comes back to that reviewer; after the rejections the server allows (2 by default, at most 10 here), the next review shows under_review.final true; rejecting it is refused with 400 and changes nothing (the review still held, the task pending); accepting it completes the task with the answer.",
    async run(ctx) {
      await withCrew(ctx, async (crew) => {
        const labeler = await crew.add('labeler', ['labeler']);
        const reviewer = await crew.add('reviewer', ['reviewer']);
        const project = await staffedProject(ctx, { attempt: [labeler], review: [reviewer], reviewAll: true });
        const created = await liveTask(ctx, project);
        const reject = { result: 'rejected', feedback_items: [{ category: 'other', text: 'Read it again.' }] };
        let work = await take(ctx, labeler, project, 'attempt', created.task_id, 'the attempt');
        let rejections = 0;
        for (;;) {
          await submit(ctx, labeler, work, 'billing', rejections === 0 ? 'the attempt' : `redo ${rejections}`);
          const rev = await take(
            ctx,
            reviewer,
            project,
            'review',
            created.task_id,
            `review ${rejections + 1}, by the only staffed reviewer`,
          );
          if (rev.under_review?.final === true) {
            const refused = await workerCall(
              ctx,
              'POST',
              `/v1/assignments/${rev.assignment_id}/review`,
              { lease_token: rev.lease_token, active_ms: 1000, ...reject },
              { token: reviewer.token },
            );
            expectError(refused, 400, `rejecting the final review (after ${rejections} rejections)`);
            const held = await workerCall(ctx, 'GET', `/v1/assignments/${rev.assignment_id}`, undefined, { token: reviewer.token });
            expectThat(
              held.body?.status === 'active',
              `a refused rejection leaves the final review active, got ${held.body?.status}`,
              held.body,
            );
            const pending = await readTask(ctx, created.task_id, 'live');
            expectThat(pending.status === 'pending', `a refused rejection leaves the task pending, got ${pending.status}`, pending);
            await review(ctx, reviewer, rev, { result: 'accepted' }, 'the final review');
            break;
          }
          expectThat(rejections < 10, `after ${rejections} rejections the review of task ${created.task_id} is still not final`, rev);
          await review(ctx, reviewer, rev, reject, `review ${rejections + 1}`);
          rejections++;
          work = await take(ctx, labeler, project, 'attempt', created.task_id, `redo ${rejections}`);
        }
        const task = await readTask(ctx, created.task_id, 'live');
        expectThat(
          task.status === 'completed' && task.response?.category === 'billing',
          `after the final review accepts, the task is completed with {"category":"billing"}, got status ${task.status} and ${categoryOf(task)}`,
          task,
        );
        expectAudit(task, reviewer, 'accepted', 'the final review');
      });
    },
  },
  {
    ...common,
    id: 'workforce/review-attempt',
    seed: 'Workforce: review of several attempts (decision: the worker API)',
    rule: "When two workers' answers to a task disagree (quality policy: overlap 2, no agreement reached), a reviewer sees both attempts, numbered from 1; a decision naming an attempt number that does not exist is refused with 400 naming it and changes nothing; accepting another attempt than the one under review completes the task with that attempt's answer, and the task's assignments show that attempt accepted.",
    async run(ctx) {
      await withCrew(ctx, async (crew) => {
        const labelers = [await crew.add('labeler', ['labeler']), await crew.add('labeler', ['labeler'])] as const;
        const reviewer = await crew.add('reviewer', ['reviewer']);
        const project = await staffedProject(ctx, { attempt: [...labelers], review: [reviewer], reviewAll: false });
        const policy = { overlap: 2, consensus: { threshold: 0.8, max_extra: 0 } };
        expectStatus(
          await ctx.call('PUT', `/v1/projects/${encodeURIComponent(project)}/quality_policy`, { key: 'live', json: policy }),
          200,
          `setting the quality policy ${JSON.stringify(policy)} of ${project}`,
        );
        const created = await liveTask(ctx, project);
        const attempts = [];
        for (const [i, category] of (['billing', 'sales'] as const).entries()) {
          const attempt = await take(ctx, labelers[i]!, project, 'attempt', created.task_id, `attempt ${i + 1}`);
          await submit(ctx, labelers[i]!, attempt, category, `attempt ${i + 1}`);
          attempts.push(attempt);
        }
        const rev = await take(ctx, reviewer, project, 'review', created.task_id, 'the review of two disagreeing attempts');
        const listed: string[] = (rev.under_review?.attempts ?? []).map((a: any) => a?.response?.category);
        const shown = rev.under_review?.attempt;
        expectThat(
          listed.length === 2 && listed.includes('billing') && listed.includes('sales') && (shown === 1 || shown === 2),
          `the review shows both attempts (under_review.attempts: billing and sales) and the number of the one under review (under_review.attempt 1 or 2), got ${JSON.stringify(rev.under_review)}`,
          rev,
        );
        const beyond = await workerCall(
          ctx,
          'POST',
          `/v1/assignments/${rev.assignment_id}/review`,
          { lease_token: rev.lease_token, active_ms: 2000, result: 'accepted', attempt: 3 },
          { token: reviewer.token },
        );
        expectError(beyond, 400, 'a decision about attempt 3 of 2');
        expectThat(
          /attempt/i.test(beyond.body.error) && beyond.body.error.includes('3'),
          `the 400 should name the attempt that does not exist (3), got ${JSON.stringify(beyond.body.error)}`,
          beyond.body,
        );
        const pending = await readTask(ctx, created.task_id, 'live');
        expectThat(
          pending.status === 'pending',
          `a refused decision changes nothing: the task stays pending, got ${pending.status}`,
          pending,
        );
        // The attempt that is not the one under review: the decision must apply to it.
        const picked = shown === 1 ? 2 : 1;
        const expected = listed[picked - 1]!;
        await review(ctx, reviewer, rev, { result: 'accepted', attempt: picked }, `accepting attempt ${picked}`);
        const task = await readTask(ctx, created.task_id, 'live');
        expectThat(
          task.status === 'completed' && task.response?.category === expected,
          `accepting attempt ${picked} completes the task with its answer {"category":"${expected}"}, got status ${task.status} and ${categoryOf(task)}`,
          task,
        );
        expectAudit(task, reviewer, 'accepted', `accepting attempt ${picked}`);
        const author = attempts[(['billing', 'sales'] as string[]).indexOf(expected)]!;
        const docs = await assignmentsOf(ctx, created.task_id);
        expectThat(
          docs.some((a) => a.assignment_id === author.assignment_id && a.review_result === 'accepted') &&
            !docs.some((a) => a.role !== 'review' && a.assignment_id !== author.assignment_id && a.review_result === 'accepted'),
          `the task's assignments show the attempt answered {"category":"${expected}"} accepted, and no other attempt accepted`,
          docs,
        );
      });
    },
  },
  {
    ...common,
    id: 'workforce/customer-audit-redo',
    seed: "Workforce: a customer's rejection of a live task (decision: POST /v1/task/{taskId}/audit)",
    rule: "A customer's rejecting audit of a completed live task sends it to a redo by its worker, with the customer's comments as feedback; the task stays completed meanwhile; after the redo its response is the new answer, times_redone is 1, customer_review_status fixed, updated_at moved, completed_at kept, and the callback is sent again with the new answer.",
    needs: ['liveKey', 'callback'],
    async run(ctx) {
      await withCrew(ctx, async (crew) => {
        const labeler = await crew.add('labeler', ['labeler']);
        const project = await staffedProject(ctx, { attempt: [labeler], review: [], reviewAll: false });
        const receiver = await ctx.receiver();
        const label = ctx.unique('customer-audit');
        const created = await liveTask(ctx, project, receiver.url(label));
        const attempt = await take(ctx, labeler, project, 'attempt', created.task_id, 'the attempt');
        await submit(ctx, labeler, attempt, 'billing', 'the attempt');
        const done = await readTask(ctx, created.task_id, 'live');
        expectThat(
          done.status === 'completed' && done.response?.category === 'billing',
          `an attempt that is not sampled for review completes the task, got status ${done.status} and ${categoryOf(done)}`,
          done,
        );
        await ctx.until('the first completion callback', async () => receiver.received(label).length >= 1);
        const comments = 'The ticket is about a sale.';
        const audit = await ctx.call('POST', `/v1/task/${created.task_id}/audit`, {
          key: 'live',
          json: { accepted: false, comments },
        });
        expectStatus(audit, 200, "the customer's rejecting audit of the completed live task");
        const waiting = await readTask(ctx, created.task_id, 'live');
        expectThat(
          waiting.status === 'completed' && waiting.customer_review_status === 'rejected' && waiting.response?.category === 'billing',
          `while its redo waits the task stays completed with its answer and customer_review_status rejected, got status ${waiting.status}, ${waiting.customer_review_status}, ${categoryOf(waiting)}`,
          waiting,
        );
        const redo = await take(ctx, labeler, project, 'attempt', created.task_id, "the redo after the customer's rejection");
        expectThat(redo.role === 'redo', `the rejected task comes back to its worker as a redo, got role ${redo.role}`, redo);
        expectThat(
          redo.feedback?.result === 'rejected' &&
            redo.feedback?.feedback_items?.some((f: any) => typeof f.text === 'string' && f.text.includes(comments)),
          `the redo carries the customer's comments as feedback ("${comments}"), got ${JSON.stringify(redo.feedback)}`,
          redo,
        );
        await submit(ctx, labeler, redo, 'sales', "the redo after the customer's rejection");
        const task = await readTask(ctx, created.task_id, 'live');
        expectThat(
          task.status === 'completed' && task.response?.category === 'sales',
          `after the redo the task shows the new answer {"category":"sales"}, got status ${task.status} and ${categoryOf(task)}`,
          task,
        );
        expectThat(task.times_redone === 1, `after one redo times_redone is 1, got ${task.times_redone}`, task);
        expectThat(
          task.customer_review_status === 'fixed',
          `after the redo of a customer's rejection customer_review_status is fixed, got ${task.customer_review_status}`,
          task,
        );
        expectThat(
          task.completed_at === done.completed_at && Date.parse(task.updated_at) > Date.parse(done.updated_at),
          `a redo moves updated_at (was ${done.updated_at}, now ${task.updated_at}) and keeps completed_at (was ${done.completed_at}, now ${task.completed_at})`,
          task,
        );
        const callbacks = await ctx.until('the completion callback sent again after the redo', async () => {
          const list = receiver.received(label);
          return list.length >= 2 ? list : undefined;
        });
        const last = callbacks.at(-1)!.body;
        expectThat(
          last?.response?.category === 'sales',
          `the callback sent after the redo carries the new answer {"category":"sales"}, got ${JSON.stringify(last?.response)}`,
          last,
        );
      });
    },
  },
  {
    ...common,
    id: 'workforce/lease-expiry',
    seed: 'Workforce: leases (decision: the worker API)',
    rule: "When a lease lapses without a heartbeat the task goes back to the queue and another worker gets it; the first worker's late heartbeat and submit get 409 lease_lost and change nothing: the task stays pending until the new holder submits, and then has the new holder's answer.",
    async run(ctx) {
      await withCrew(ctx, async (crew) => {
        const late = await crew.add('labeler', ['labeler']);
        const next = await crew.add('labeler', ['labeler']);
        const project = await staffedProject(ctx, { attempt: [late, next], review: [], reviewAll: false });
        const created = await liveTask(ctx, project);
        const first = await take(ctx, late, project, 'attempt', created.task_id, 'the first claim');
        const leaseMs = Date.parse(first.lease_expires_at) - Date.parse(first.created_at);
        if (!(leaseMs <= maxLeaseMs))
          throw new CheckSkipped(
            `the server's lease is ${Math.round(leaseMs / 1000)} s; this check waits for a lease to lapse only when it is at most ${maxLeaseMs / 1000} s (ours: WORK_LEASE_SECONDS)`,
          );
        await new Promise((r) => setTimeout(r, leaseMs + 250));
        // The task comes back when the server notices the lapse (a sweeper may run every second or so).
        const taken = await ctx.until(
          'the task of the lapsed lease to go to another worker',
          async () => {
            const claim = await workerCall(
              ctx,
              'POST',
              '/v1/assignments/next',
              { project, role: 'attempt' },
              { token: next.token, query: 'wait=5' },
            );
            return claim.status === 200 ? claim : undefined;
          },
          20_000,
        );
        const second = taken.body;
        expectThat(
          second?.task?.task_id === created.task_id && second.assignment_id !== first.assignment_id,
          `after the lease lapsed another worker should get task ${created.task_id} in a new assignment, got ${second?.task?.task_id}`,
          second,
        );
        const beat = await workerCall(
          ctx,
          'POST',
          `/v1/assignments/${first.assignment_id}/heartbeat`,
          { lease_token: first.lease_token, active_ms: 1000 },
          { token: late.token },
        );
        expectError(beat, 409, 'a heartbeat on the lapsed lease');
        const lateSubmit = await workerCall(
          ctx,
          'POST',
          `/v1/assignments/${first.assignment_id}/submit`,
          { lease_token: first.lease_token, response: { category: 'billing' }, active_ms: 1000 },
          { token: late.token },
        );
        expectError(lateSubmit, 409, 'a submit on the lapsed lease');
        expectThat(
          lateSubmit.body?.code === 'lease_lost',
          `a submit on a lapsed lease answers code lease_lost, got ${lateSubmit.body?.code}`,
          lateSubmit.body,
        );
        const pending = await readTask(ctx, created.task_id, 'live');
        expectThat(pending.status === 'pending', `the late submit changes nothing: the task stays pending, got ${pending.status}`, pending);
        const held = await workerCall(ctx, 'GET', `/v1/assignments/${second.assignment_id}`, undefined, { token: next.token });
        expectStatus(held, 200, "reading the new holder's assignment");
        expectThat(held.body?.status === 'active', `the new holder's assignment stays active, got ${held.body?.status}`, held.body);
        await submit(ctx, next, second, 'sales', "the new holder's submit");
        const task = await readTask(ctx, created.task_id, 'live');
        expectThat(
          task.status === 'completed' && task.response?.category === 'sales',
          `the task is completed with the new holder's answer {"category":"sales"}, got status ${task.status} and ${categoryOf(task)}`,
          task,
        );
      });
    },
  },
];
