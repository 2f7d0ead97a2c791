// Our addition (the console's overview, GET /v1/overview): the counts of the account's work in the mode.
import { expectStatus, expectThat, type Check } from '../types.ts';
import { SINK, createTask, expectError } from './helpers.ts';

const area = 'Overview';

export const overviewChecks: Check[] = [
  {
    id: 'overview/counts',
    area,
    seed: 'Our addition (the console overview): GET /v1/overview',
    rule: 'The overview counts the pending tasks of a project, lays out one entry per day of the window (today, UTC, last), and refuses a window outside 1 to 90 days (400 naming days).',
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const project = ctx.unique('ovw');
      expectStatus(await ctx.call('POST', '/v1/projects', { json: { type: 'categorization', name: project } }), 200, 'creating a project');
      const body = {
        callback_url: SINK,
        project,
        attachment_type: 'text',
        attachment: 'A ticket.',
        categories: ['a', 'b'],
        instruction: 'Pick one.',
      };
      const made = [await createTask(ctx, 'categorization', body), await createTask(ctx, 'categorization', body)];
      const pendingOf = async () => {
        const read = await ctx.call('GET', '/v1/overview?days=7');
        expectStatus(read, 200, 'reading the overview');
        const days: { day: string }[] = read.body?.completed_per_day ?? [];
        expectThat(days.length === 7, `completed_per_day should hold the 7 days asked for, got ${days.length}`, days);
        const today = new Date().toISOString().slice(0, 10);
        const last = days.at(-1)?.day;
        // Read around midnight UTC, the server's today may be the next day.
        expectThat(last !== undefined && last >= today, `the last day should be today (${today}), got ${last}`, days);
        const entries: { project: string | null; count: number }[] = read.body?.pending_by_project ?? [];
        return entries.find((e) => e.project === project)?.count ?? 0;
      };
      // A test-mode task may complete at once: count the ones still pending as the tasks say.
      const pendingNow = async () => {
        let n = 0;
        for (const t of made) if ((await ctx.call('GET', `/v1/task/${t.task_id}`)).body?.status === 'pending') n++;
        return n;
      };
      const expected = await pendingNow();
      const counted = await pendingOf();
      expectThat(
        counted === expected || counted === (await pendingNow()),
        `the project should count ${expected} pending tasks, got ${counted}`,
      );
      expectError(await ctx.call('GET', '/v1/overview?days=91'), 400, 'an overview of 91 days');
    },
  },
];
