// Workforce checks of the quality loop (issue 19): training before live work, and the pause that
// hidden evaluation leads to. Each check makes its own workers (the account's own workforce),
// staffs a fresh text-collection project with exactly them, sets the project's quality policy,
// and removes its workers when it ends. Training and evaluation tasks are made with the live key
// (the account's, of the project's type); earlier runs may have left some, so the checks read
// expected answers from what the server shows instead of assuming theirs come first.
import { type Check, type CheckContext, expectStatus, expectThat } from '../types.ts';
import { postTask, SINK, trainingBody } from './helpers.ts';
import { crewOf, type CrewWorker } from './workforce-review.ts';
import { workerCall } from './workforce.ts';

const area = 'Workforce';
const common = { area, kind: 'behaviour' as const, generations: ['current' as const], needs: ['liveKey' as const] };

async function withWorkers(ctx: CheckContext, labels: string[], body: (workers: CrewWorker[]) => Promise<void>): Promise<void> {
  const crew = crewOf(ctx);
  try {
    const workers: CrewWorker[] = [];
    for (const label of labels) workers.push(await crew.add(label, ['labeler']));
    await body(workers);
  } finally {
    await crew.remove();
  }
}

/** A fresh live text-collection project staffed with exactly these workers (no review), with this quality policy. */
async function qualityProject(ctx: CheckContext, workers: CrewWorker[], policy: unknown): Promise<string> {
  const project = ctx.unique('workforce-quality');
  const path = `/v1/projects/${encodeURIComponent(project)}`;
  expectStatus(
    await ctx.call('POST', '/v1/projects', { key: 'live', json: { type: 'textcollection', name: project } }),
    200,
    `creating project ${project}`,
  );
  expectStatus(
    await ctx.call('PUT', `${path}/staffing`, {
      key: 'live',
      json: { attempt: workers.map((w) => w.workerId), review: [], review_sampling: { new_worker_tasks: 0, rate: 0 } },
    }),
    200,
    `staffing project ${project}`,
  );
  expectStatus(
    await ctx.call('PUT', `${path}/quality_policy`, { key: 'live', json: policy }),
    200,
    `setting the quality policy of ${project}`,
  );
  return project;
}

/** A live text-collection task of the project (the training body's fields, without its answer). */
async function liveTextTask(ctx: CheckContext, project: string, label: string): Promise<string> {
  const { expected_response: _answer, ...params } = trainingBody(label);
  const ex = await postTask(ctx, 'textcollection', { ...params, project, callback_url: SINK }, { key: 'live' });
  expectStatus(ex, 200, `creating a live task of project ${project}: ${JSON.stringify(ex.body)}`);
  return ex.body.task_id as string;
}

const next = (ctx: CheckContext, worker: CrewWorker, project: string) =>
  workerCall(ctx, 'POST', '/v1/assignments/next', { project, role: 'attempt' }, { token: worker.token });

const submit = (ctx: CheckContext, worker: CrewWorker, assignment: any, response: unknown) =>
  workerCall(
    ctx,
    'POST',
    `/v1/assignments/${assignment.assignment_id}/submit`,
    { lease_token: assignment.lease_token, response, active_ms: 1000 },
    { token: worker.token },
  );

const wrongAnswer = { annotations: { summary: 'Nothing like the expected answer at all, zz qq xx.' } };

/** Every key path of a JSON value (objects only; arrays and values as leaves). */
const shape = (v: unknown, path = ''): string[] =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.entries(v).flatMap(([k, x]) => [`${path}.${k}`, ...shape(x, `${path}.${k}`)])
    : [];

export const workforceQualityChecks: Check[] = [
  {
    ...common,
    id: 'workforce/training-gate',
    seed: 'Workforce: training (decision: QualityTrainingPolicy, AssignmentTraining)',
    rule: "In a project whose policy requires training, a new worker's first assignment is a training task (it carries training.project), never the project's pending live task; the submit answers the score, whether it passed, what differed and the expected answer; a worker whose last try failed gets no work of the project (204), while a worker who passes gets the live task next.",
    async run(ctx) {
      await withWorkers(ctx, ['trainee', 'passer'], async ([failing, passing]) => {
        const project = await qualityProject(ctx, [failing!, passing!], {
          training: { required: 1, pass_score: 1, max_tries: 1, show_expected: true },
          evaluation: { rate_new: 0, rate_trusted: 0 },
        });
        expectStatus(
          await ctx.call('POST', '/v1/training_tasks/textcollection', { key: 'live', json: trainingBody(ctx.unique('training')) }),
          200,
          'creating a training task of the live account',
        );
        const liveId = await liveTextTask(ctx, project, 'gated');
        const first = await next(ctx, failing!, project);
        expectStatus(first, 200, `the trainee asking for work of ${project}`);
        expectThat(
          first.body?.training?.project === project && first.body?.task?.task_id !== liveId,
          `a new worker's first assignment should be a training task of ${project} (training.project set), not live task ${liveId}`,
          first.body,
        );
        const failed = await submit(ctx, failing!, first.body, wrongAnswer);
        expectStatus(failed, 200, `submitting a wrong training answer: ${JSON.stringify(failed.body)}`);
        const feedback = failed.body?.training?.feedback;
        expectThat(
          feedback?.passed === false &&
            typeof feedback?.score === 'number' &&
            feedback.score < 1 &&
            Array.isArray(feedback?.differences) &&
            feedback.differences.length > 0 &&
            feedback?.expected_response !== undefined &&
            feedback?.progress?.state === 'failed',
          'a wrong training answer should answer training.feedback: passed false, a score under 1, the differences, the expected answer, progress state failed (max_tries 1)',
          failed.body,
        );
        const after = await next(ctx, failing!, project);
        expectStatus(after, 204, `a worker who failed training asking for work of ${project} (its live task ${liveId} is pending)`);

        const trial = await next(ctx, passing!, project);
        expectStatus(trial, 200, `the second worker asking for work of ${project}`);
        expectThat(trial.body?.training?.project === project, 'the second new worker should get a training task first', trial.body);
        const passed = await submit(ctx, passing!, trial.body, feedback.expected_response);
        expectStatus(passed, 200, 'submitting the expected answer of the training task');
        expectThat(
          passed.body?.training?.feedback?.passed === true && passed.body.training.feedback.progress?.state === 'qualified',
          'the expected answer should pass (progress state qualified)',
          passed.body,
        );
        const live = await next(ctx, passing!, project);
        expectStatus(live, 200, `a qualified worker asking for work of ${project}`);
        expectThat(
          live.body?.task?.task_id === liveId && live.body?.training === undefined,
          `a qualified worker should get live task ${liveId}`,
          live.body,
        );
      });
    },
  },
  {
    ...common,
    id: 'workforce/evaluation-pause',
    seed: 'Workforce: hidden evaluation (decision: QualityEvaluationPolicy)',
    rule: "With evaluation mixed in (rate 0.5) a worker's queue holds a task that is none of the project's live tasks yet has the same fields as a live assignment and no training object; once its wrong answer brings the rolling accuracy under pause_below, the worker gets no more work of that project (204 while its live tasks are pending), but still gets work of another project.",
    async run(ctx) {
      await withWorkers(ctx, ['evaluated'], async ([worker]) => {
        const policy = {
          training: { required: 0 },
          evaluation: { rate_new: 0.5, rate_trusted: 0.5, window: 1, min_scored: 1, pause_below: 0.5 },
        };
        const project = await qualityProject(ctx, [worker!], policy);
        const other = await qualityProject(ctx, [worker!], { training: { required: 0 }, evaluation: { rate_new: 0, rate_trusted: 0 } });
        expectStatus(
          await ctx.call('POST', '/v1/evaluation_tasks/textcollection', { key: 'live', json: trainingBody(ctx.unique('evaluation')) }),
          200,
          'creating an evaluation task of the live account',
        );
        const live = new Set<string>();
        for (let i = 0; i < 40; i++) live.add(await liveTextTask(ctx, project, `live ${i}`));
        const otherId = await liveTextTask(ctx, other, 'other');
        let liveShape: string[] | null = null;
        let evaluation: any = null;
        // Bounded: at rate 0.5, 40 claims without an evaluation happen once in 10^12 runs.
        for (let i = 0; i < 40 && !evaluation; i++) {
          const claim = await next(ctx, worker!, project);
          expectStatus(claim, 200, `claim ${i + 1} of work of ${project} (live tasks are pending)`);
          const a = claim.body;
          if (live.has(a?.task?.task_id)) liveShape ??= shape(a).filter((k) => !k.startsWith('.draft'));
          else evaluation = a;
          expectStatus(await submit(ctx, worker!, a, wrongAnswer), 200, `submitting claim ${i + 1}`);
        }
        expectThat(
          evaluation !== null,
          `40 claims at evaluation rate 0.5 should hold an evaluation task (a task none of the project's 40 live ones)`,
        );
        expectThat(
          /^[0-9a-f]{24}$/.test(evaluation.task.task_id) && evaluation.training === undefined && evaluation.task.project === project,
          'an evaluation assignment looks like a live one: a task id of the live shape, the project, no training object',
          evaluation,
        );
        if (liveShape)
          expectThat(
            JSON.stringify(shape(evaluation)) === JSON.stringify(liveShape),
            `an evaluation assignment should have the fields of a live one: ${liveShape.join(' ')}`,
            evaluation,
          );
        const paused = await next(ctx, worker!, project);
        expectStatus(
          paused,
          204,
          `a worker paused for ${project} (accuracy under pause_below after a wrong evaluation answer) asking for its work`,
        );
        const elsewhere = await next(ctx, worker!, other);
        expectStatus(elsewhere, 200, `the worker paused for ${project} asking for work of ${other}`);
        expectThat(
          elsewhere.body?.task?.task_id === otherId,
          `the pause is per project: ${other}'s task ${otherId} should come`,
          elsewhere.body,
        );
      });
    },
  },
];
