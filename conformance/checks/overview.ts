// Our addition (the console's overview, GET /v1/overview): the counts of the account's work in the mode.
import { expectStatus, expectThat, type Check } from '../types.ts';
import { SINK, createTask, expectError } from './helpers.ts';

const area = 'Overview';

export const overviewChecks: Check[] = [
  {
    id: 'overview/counts',
    area,
    seed: 'Our addition (the console overview): GET /v1/overview',
    rule: "The overview counts a project's pending live tasks as they are created and canceled, lays out one entry per day of the window (today, UTC, last), and refuses a window outside 1 to 90 days (400 naming days).",
    kind: 'behaviour',
    generations: ['current'],
    // Live tasks wait for workers: their count is exact (a test-mode task may complete at once).
    needs: ['liveKey'],
    async run(ctx) {
      const live = { key: 'live' as const };
      const project = ctx.unique('ovw');
      expectStatus(
        await ctx.call('POST', '/v1/projects', { ...live, json: { type: 'categorization', name: project } }),
        200,
        'creating a project',
      );
      const body = {
        callback_url: SINK,
        project,
        attachment_type: 'text',
        attachment: 'A ticket.',
        categories: ['a', 'b'],
        instruction: 'Pick one.',
      };
      const made = [await createTask(ctx, 'categorization', body, live), await createTask(ctx, 'categorization', body, live)];
      const pendingOf = async () => {
        const read = await ctx.call('GET', '/v1/overview?days=7', live);
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
      const two = await pendingOf();
      expectThat(two === 2, `the project should count its 2 pending tasks, got ${two}`);
      expectStatus(await ctx.call('POST', `/v1/task/${made[0].task_id}/cancel`, live), 200, 'canceling one task');
      const one = await pendingOf();
      expectThat(one === 1, `after one was canceled the project should count 1 pending task, got ${one}`);
      expectError(await ctx.call('GET', '/v1/overview?days=91', live), 400, 'an overview of 91 days');
    },
  },
];
