// The console's quality screen (issue 35) in Chromium against the real server. Two of the account's
// workers answer the same live tasks of a project that asks two answers of each (through the worker
// API, as the labeling app does): they agree on one task and not on the other. A viewer chooses the
// project and the period (both land in the address) and sees the agreement, each worker by name with
// their figures, and the chart drawn; axe-core on the screen.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { takeAndSubmit } from './support/assignments.ts';
import { testBrowser } from './support/browser.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole, paintedPixels } from './support/console.ts';
import { accountWithOwner, memberWithRole, type MemberSession } from './support/members.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { logIn, workerClient } from './support/workers.ts';

let browser: Browser;
let server: TestServer;
let viewer: MemberSession;
const account = 'quality';

beforeAll(async () => {
  [browser, server] = await Promise.all([testBrowser(inject('browserEndpoint')), startTestServer('pglite')]);
  const { owner } = await accountWithOwner(server, account);
  const manager = await memberWithRole(server, account, owner, 'manager');
  viewer = await memberWithRole(server, account, owner, 'viewer');
  const live = async (method: string, path: string, json?: unknown) => {
    const r = await manager.call(method, path, { mode: 'live', ...(json ? { json } : {}) });
    expect(r.status, `${method} ${path}: ${r.text}`).toBe(200);
    return r.body;
  };
  await live('POST', '/v1/projects', { name: 'pets', type: 'categorization' });
  await live('PUT', '/v1/projects/pets/quality_policy', { overlap: 2, training: { required: 0 }, consensus: { threshold: 0.5 } });
  const workers = [];
  for (const [email, name] of [
    ['ana@example.com', 'Ana Lima'],
    ['bo@example.com', 'Bo Chen'],
  ] as const) {
    const w = await live('POST', '/v1/workforce/workers', { email, display_name: name, roles: ['labeler'], password: `pw-${email}-long` });
    workers.push(workerClient(server, await logIn(server, email, `pw-${email}-long`)));
    expect(w.worker_id).toMatch(/./);
  }
  const task = async () =>
    (
      await live('POST', '/v1/task/categorization', {
        project: 'pets',
        callback_url: 'https://example.com/cb',
        instruction: 'Which animal?',
        attachment_type: 'text',
        attachment: 'It purrs.',
        categories: ['cat', 'dog'],
      })
    ).task_id as string;
  // Both answer each task (overlap 2): alike on the first, apart on the second.
  for (const answers of [
    ['cat', 'cat'],
    ['cat', 'dog'],
  ]) {
    const id = await task();
    for (const [i, category] of answers.entries()) await takeAndSubmit(workers[i]!, id, { category });
  }
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the quality screen', () => {
  it("shows a project's agreement and each worker's figures by name, for the project and period in the address", async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/quality?mode=live`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      await page.getByText('Choose a project and a period, then Show.').waitFor();
      await page.getByLabel('Project', { exact: true }).selectOption('pets');
      await page.getByLabel('Period', { exact: true }).selectOption('7');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.getByText('50 % on average over 2 tasks with two answers or more.').waitFor();
      expect(new URL(page.url()).search).toBe('?project=pets&days=7&mode=live');
      const rows = page.locator('table.quality-workers tbody tr');
      expect(await rows.count()).toBe(2);
      for (const name of ['Ana Lima', 'Bo Chen']) {
        const row = rows.filter({ has: page.getByRole('cell', { name, exact: true }) });
        // Each submitted two answers and agreed with the other on one task of two.
        expect(await row.locator('td').nth(2).textContent()).toBe('2');
        expect(await row.locator('td').nth(5).textContent()).toBe('50 %');
      }
      const canvas = page.getByRole('img', { name: /Evaluation accuracy and agreement of 2 workers/ });
      await expect.poll(() => paintedPixels(canvas)).toBeGreaterThan(1000);
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'quality');
      // The address alone shows the same view.
      await page.reload();
      await page.getByText('50 % on average over 2 tasks with two answers or more.').waitFor();
    } finally {
      await close();
    }
  });
});
