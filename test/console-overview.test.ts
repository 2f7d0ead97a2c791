// The console's overview (issue 35) in Chromium against the real server: what a member sees first. The
// mode's tasks by type and status (each count opens the data manager on those tasks), completions per
// day drawn as a chart with its figures as a table, pending tasks by project, and what needs attention
// (callbacks given up on, paused workers), for the mode the address names. axe-core on the screen.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole, paintedPixels } from './support/console.ts';
import { accountWithOwner, memberWithRole, type MemberSession } from './support/members.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { until } from './support/wait.ts';
import { ticketTask } from './support/tasks.ts';

let browser: Browser;
let server: TestServer;
let viewer: MemberSession;
const account = 'overview';

beforeAll(async () => {
  [browser, server] = await Promise.all([testBrowser(inject('browserEndpoint')), startTestServer('pglite')]);
  const { owner } = await accountWithOwner(server, account);
  const manager = await memberWithRole(server, account, owner, 'manager');
  viewer = await memberWithRole(server, account, owner, 'viewer');
  const live = (method: string, path: string, json?: unknown) => manager.call(method, path, { mode: 'live', ...(json ? { json } : {}) });
  expect((await live('POST', '/v1/projects', { name: 'receipts', type: 'categorization' })).status).toBe(200);
  for (const extra of [{ project: 'receipts' }, { project: 'receipts' }, { project: 'receipts' }, {}])
    expect((await live('POST', '/v1/task/categorization', ticketTask(extra))).status).toBe(200);
  const worker = await live('POST', '/v1/workforce/workers', { email: 'wen@example.com', display_name: 'Wen', roles: ['labeler'] });
  expect((await live('POST', `/v1/workforce/workers/${worker.body.worker_id}/pause`)).status).toBe(200);
  // Test mode: two tasks that complete at once.
  for (let i = 0; i < 2; i++) expect((await manager.call('POST', '/v1/task/categorization', { json: ticketTask() })).status).toBe(200);
  await until(
    async () => (await manager.call('GET', '/v1/overview')).body.completed_per_day.at(-1).count === 2,
    'the test tasks completed',
  );
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the overview', () => {
  it("shows the live mode's tasks, pending work and what needs attention; a count opens those tasks", async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/?mode=live`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      await page.getByRole('heading', { name: 'Tasks', exact: true }).waitFor();
      const row = page.locator('table.counts tbody tr').filter({ has: page.getByRole('rowheader', { name: 'categorization' }) });
      expect(await row.locator('td').allTextContents()).toEqual(['4', '0', '0', '0']);
      const pending = page.locator('ul.pending li');
      expect(await pending.allTextContents()).toEqual(['receipts: 3 pending', 'Of no project: 1 pending']);
      await page.getByRole('link', { name: '1 worker is paused' }).waitFor();
      await page.getByText('No callback was given up on in the last 30 days.').waitFor();
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'overview');

      // A count is a link to those tasks in the data manager.
      await row.getByRole('link', { name: '4' }).click();
      await page.getByText('4 tasks match').waitFor();
      expect(new URL(page.url()).search).toBe('?type=categorization&status=pending&mode=live');
    } finally {
      await close();
    }
  });

  it('draws the completions per day, with each day in a table', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      const canvas = page.getByRole('img', { name: /Tasks completed per day over the last 30 days: 2 in all/ });
      await canvas.waitFor();
      // The chart drew something: the canvas has painted pixels.
      await expect.poll(() => paintedPixels(canvas)).toBeGreaterThan(1000);
      await page.getByText('Each day as a table').click();
      const today = new Date().toISOString().slice(0, 10);
      const days = page.locator('table.days tbody tr');
      expect(await days.count()).toBe(30);
      expect(await days.last().locator('td').allTextContents()).toEqual([today, '2']);
      expect(await page.locator('table.counts tbody td').allTextContents()).toEqual(['0', '2', '0', '0']);
      await page.getByText('Nothing is pending.').waitFor();
      await expectNoAxeViolation(page);
    } finally {
      await close();
    }
  });
});
