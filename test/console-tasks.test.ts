// The console's data manager (issue 35) in Chromium against the real server: a manager filters the
// live tasks by tag (the filter lands in the address and survives a reload), walks the rows with the
// arrow keys, selects two with Space and cancels them, then cancels everything else the filter
// matches; what the server stored is read back through the API. A viewer is offered no cancel and
// the server refuses it. axe-core on the screen.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole } from './support/console.ts';
import { accountWithOwner, memberWithRole, type MemberSession } from './support/members.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from './support/server.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await testBrowser(inject('browserEndpoint'));
});
afterAll(async () => {
  await browser?.close();
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the data manager on %s', (db) => {
  let server: TestServer;
  let manager: MemberSession;
  let viewer: MemberSession;
  const account = `tasks-${db}`;
  const north: string[] = [];
  const south: string[] = [];

  beforeAll(async () => {
    server = await startTestServer(db);
    const { owner } = await accountWithOwner(server, account);
    manager = await memberWithRole(server, account, owner, 'manager');
    viewer = await memberWithRole(server, account, owner, 'viewer');
    for (const [tag, ids] of [
      ['north', north],
      ['north', north],
      ['north', north],
      ['south', south],
      ['south', south],
    ] as const) {
      const created = await manager.call('POST', '/v1/task/categorization', {
        mode: 'live',
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Pick one',
          attachment_type: 'text',
          attachment: `ticket ${ids.length}`,
          categories: ['billing', 'support'],
          tags: [tag],
          unique_id: `${tag}-${ids.length}`,
        },
      });
      expect(created.status, created.text).toBe(200);
      ids.push(created.body.task_id);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  const statusOf = async (id: string) => (await manager.call('GET', `/v1/task/${id}`, { mode: 'live' })).body.status;

  it('filters by the address, walks and selects rows with the keyboard, cancels a selection and then the whole filter', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/tasks?mode=live`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
      await page.getByText('5 tasks match').waitFor();
      await expectNoAxeViolation(page);

      // A filter typed and sent with Enter lands in the address; a reload shows the same view.
      await page.getByLabel('Tags (comma-separated, all must match)').fill('north');
      await page.keyboard.press('Enter');
      await page.getByText('3 tasks match').waitFor();
      expect(new URL(page.url()).search).toBe('?tags=north&mode=live');
      await page.reload();
      await page.getByText('3 tasks match').waitFor();
      expect(await page.getByLabel('Tags (comma-separated, all must match)').inputValue()).toBe('north');

      // A column chosen is in the address too.
      await page.getByText('Columns', { exact: true }).click();
      await page.getByRole('checkbox', { name: 'Unique id' }).check();
      await page.getByRole('columnheader', { name: 'Unique id' }).waitFor();
      expect(new URL(page.url()).searchParams.get('columns')).toBe('task_id,created,type,status,project,batch,tags,unique_id');
      await consoleScreenshot(page, 'tasks');

      // The keyboard alone: the first row, down, Space; down, Space.
      const rows = page.locator('table.tasks tbody tr');
      await rows.first().focus();
      await page.keyboard.press('ArrowDown');
      expect(await rows.nth(1).evaluate((e) => e === document.activeElement)).toBe(true);
      await page.keyboard.press('Space');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Space');
      expect(await rows.nth(1).getAttribute('aria-selected')).toBe('true');
      expect(await rows.nth(2).getAttribute('aria-selected')).toBe('true');
      expect(await rows.nth(0).getAttribute('aria-selected')).toBe('false');
      const chosen = [await rows.nth(1).locator('td').nth(1).textContent(), await rows.nth(2).locator('td').nth(1).textContent()];
      await page.getByRole('button', { name: 'Cancel selected (2)' }).focus();
      await page.keyboard.press('Enter');
      await page.getByText('Canceled 2 tasks.').waitFor();
      for (const id of north) expect(await statusOf(id)).toBe(chosen.includes(id) ? 'canceled' : 'pending');

      // The whole filter, after a confirmation: the one left, and nothing of the other tag.
      await page.getByRole('button', { name: 'Cancel all that match…' }).click();
      await expectNoAxeViolation(page);
      await page.getByRole('button', { name: 'Yes, cancel them' }).click();
      await page.getByText('Canceled 1 pending task that matched the filters.').waitFor();
      for (const id of north) expect(await statusOf(id)).toBe('canceled');
      for (const id of south) expect(await statusOf(id)).toBe('pending');
      await expectNoAxeViolation(page);
    } finally {
      await close();
    }
  });

  it('offers a viewer no cancel, and the server refuses it anyway', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/tasks?mode=live&tags=south`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      await page.getByText('2 tasks match').waitFor();
      expect(await page.getByRole('button', { name: /Cancel/ }).count()).toBe(0);
      expect(await page.getByRole('checkbox', { name: /Select task/ }).count()).toBe(0);
      const refused = await page.evaluate(async () => {
        const session = await (await fetch('/v1/session', { headers: { 'humantask-mode': 'live' } })).json();
        const res = await fetch('/v1/tasks/cancel?tags=south', {
          method: 'POST',
          headers: { 'humantask-mode': 'live', 'x-csrf-token': session.csrf_token },
        });
        return { status: res.status, body: await res.json() };
      });
      expect(refused).toMatchObject({ status: 403, body: { code: 'role_missing' } });
      for (const id of south) expect(await statusOf(id)).toBe('pending');
      await expectNoAxeViolation(page);
    } finally {
      await close();
    }
  });
});
