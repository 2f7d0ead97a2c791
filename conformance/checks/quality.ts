// Quality checks (tag Quality, issue 19): the calibration gate holds a project's production
// batches until a calibration batch's reviewed score reaches the policy's gate, and an audited task
// is promoted to an evaluation task in one idempotent call. The gate check makes its own workers
// (as the workforce review checks do) and staffs a fresh Rapid project with exactly them.
import { type Check, type CheckContext, expectStatus, expectThat } from '../types.ts';
import { categorization, completedTask, createTask, expectError } from './helpers.ts';
import { workerCall } from './workforce.ts';
import { review, submit, take, withCrew } from './workforce-review.ts';

const area = 'Quality';
const enc = encodeURIComponent;

async function putGate(ctx: CheckContext, project: string, gate: number) {
  const put = await ctx.call('PUT', `/v1/projects/${enc(project)}/quality_policy`, {
    key: 'live',
    json: { calibration: { gate_score: gate } },
  });
  expectStatus(put, 200, `setting calibration.gate_score ${gate} in project ${project}'s quality policy`);
}

export const qualityChecks: Check[] = [
  {
    area,
    kind: 'behaviour',
    generations: ['current'],
    needs: ['liveKey'],
    id: 'quality/calibration-gate',
    seed: 'Batches: calibration batches check readiness before production batches (decision: the calibration gate, docs/decisions/0011-quality.md)',
    rule: "A production batch of a project is not dispatched while its calibration batch's reviewed score is below the quality policy's calibration.gate_score (an attempt fixed to another category scores 0), even once the calibration batch has completed: a worker gets no work (204), the batch status says why in `held`, and the project's quality figures show the calibration score, not passed. Lowering the gate to the score opens production at once.",
    async run(ctx) {
      await withCrew(ctx, async (crew) => {
        const calibrator = await crew.add('calibrator', ['labeler'], { calibrator: true });
        const reviewer = await crew.add('calibration-reviewer', ['reviewer'], { calibrator: true });
        const plain = await crew.add('labeler', ['labeler']);
        const project = ctx.unique('quality-gate');
        expectStatus(
          await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'categorization', name: project, rapid: true } }),
          200,
          `creating the Rapid project ${project}`,
        );
        const staffing = await ctx.call('PUT', `/v1/projects/${enc(project)}/staffing`, {
          key: 'live',
          json: {
            attempt: [calibrator.workerId, plain.workerId],
            review: [reviewer.workerId],
            review_sampling: { new_worker_tasks: 0, rate: 0 },
          },
        });
        expectStatus(staffing, 200, `staffing project ${project}`);
        await putGate(ctx, project, 0.5);
        const [cal, prod] = [ctx.unique('calibration'), ctx.unique('production')];
        for (const [name, calibration] of [
          [cal, true],
          [prod, false],
        ] as const) {
          const made = await ctx.call('POST', '/v1/batches', { key: 'live', json: { project, name, calibration_batch: calibration } });
          expectStatus(made, 200, `creating batch ${name} (calibration_batch ${calibration})`);
        }
        const calTask = await createTask(ctx, 'categorization', categorization({ batch: cal }), { key: 'live' });
        const prodTask = await createTask(ctx, 'categorization', categorization({ batch: prod }), { key: 'live' });
        expectStatus(
          await ctx.call('POST', `/v1/batches/${enc(cal)}/finalize`, { key: 'live' }),
          200,
          `finalizing calibration batch ${cal}`,
        );

        const what = 'calibration';
        const attempt = await take(ctx, calibrator, project, 'attempt', calTask.task_id, what);
        await submit(ctx, calibrator, attempt, 'billing', what);
        const rev = await take(ctx, reviewer, project, 'review', calTask.task_id, what);
        await review(ctx, reviewer, rev, { result: 'fixed', response: { category: 'sales' } }, what);
        expectStatus(
          await ctx.call('POST', `/v1/batches/${enc(prod)}/finalize`, { key: 'live' }),
          200,
          `finalizing production batch ${prod} once calibration batch ${cal} completed`,
        );

        const held = await workerCall(ctx, 'POST', '/v1/assignments/next', { project }, { token: plain.token });
        expectStatus(held, 204, `a worker asking for work of project ${project} while its calibration score (0) is below the gate (0.5)`);
        const status = await ctx.call('GET', `/v1/batches/${enc(prod)}/status`, { key: 'live' });
        expectStatus(status, 200, `reading the status of production batch ${prod}`);
        expectThat(
          typeof status.body?.held === 'string' && status.body.held.includes(cal),
          `the held production batch's status should say why in \`held\`, naming calibration batch ${cal}; got ${JSON.stringify(status.body?.held)}`,
          status.body,
        );
        const figures = await ctx.call('GET', `/v1/projects/${enc(project)}/quality`, { key: 'live' });
        expectStatus(figures, 200, `reading project ${project}'s quality figures`);
        const score = (figures.body?.calibration ?? []).find((c: { batch?: string }) => c.batch === cal);
        expectThat(
          score?.status === 'completed' && score?.reviewed === 1 && score?.score === 0 && score?.passed === false,
          `project ${project}'s figures should show calibration batch ${cal} completed, 1 reviewed attempt, score 0 (fixed to another category), not passed; got ${JSON.stringify(score)}`,
          figures.body,
        );

        await putGate(ctx, project, 0);
        const open = await take(ctx, plain, project, 'attempt', prodTask.task_id, 'production after the gate was lowered to 0');
        await submit(ctx, plain, open, 'support', 'production');
      });
    },
  },
  {
    area,
    kind: 'behaviour',
    generations: ['current'],
    id: 'quality/promote',
    seed: 'Training and evaluation tasks (decision: promotion of an audited task, docs/decisions/0011-quality.md)',
    rule: "POST /v1/task/{taskId}/promote refuses a task no audit kept (400); once the customer accepted it, it makes an evaluation task of the task's type whose params are the task's and whose expected_response is the task's response; promoting again answers the same evaluation task, which GET /v1/evaluation_tasks/{id} shows.",
    async run(ctx) {
      const task = await completedTask(ctx, 'categorization', categorization());
      const path = `/v1/task/${task.task_id}/promote`;
      expectError(await ctx.call('POST', path, { json: { kind: 'evaluation' } }), 400, 'promoting a completed task nobody audited');
      expectStatus(
        await ctx.call('POST', `/v1/task/${task.task_id}/audit`, { json: { accepted: true } }),
        200,
        'the customer accepting the task',
      );
      const promoted = await ctx.call('POST', path, { json: { kind: 'evaluation' } });
      expectStatus(promoted, 200, 'promoting the audited task to an evaluation task');
      const made = promoted.body;
      expectThat(
        made?.kind === 'evaluation' &&
          made?.type === 'categorization' &&
          JSON.stringify(made?.expected_response) === JSON.stringify(task.response) &&
          JSON.stringify(made?.params?.categories) === JSON.stringify(task.params?.categories),
        `the evaluation task should be of type categorization, with the task's categories and its response ${JSON.stringify(task.response)} as expected_response; got ${JSON.stringify(made)}`,
        made,
      );
      const again = await ctx.call('POST', path, { json: { kind: 'evaluation' } });
      expectStatus(again, 200, 'promoting the same task to an evaluation task again');
      expectThat(
        again.body?.id === made.id,
        `promoting again should answer the same evaluation task ${made.id}, got ${again.body?.id}`,
        again.body,
      );
      const read = await ctx.call('GET', `/v1/evaluation_tasks/${enc(String(made.id))}`);
      expectStatus(read, 200, `reading evaluation task ${made.id}`);
    },
  },
];
