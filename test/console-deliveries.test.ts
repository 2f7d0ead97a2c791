// The console's Deliveries (issue 35) in Chromium against the real server. Callbacks delivered and given
// up on are made by a dispatcher on a moved clock (test/support/delivery-clock.ts, the real retry
// ladder). A manager filters the failed ones (the filter lands in the address), selects the failed
// callback and sends it again: the API then lists a new callback of that task waiting to be sent.
// A viewer is offered no redelivery. axe-core on the screen.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createMailer } from '../server/delivery/mail.ts';
import { testBrowser } from './support/browser.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole } from './support/console.ts';
import { startClockedDispatcher } from './support/delivery-clock.ts';
import { accountWithOwner, memberWithRole, type MemberSession } from './support/members.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { ticketTask } from './support/tasks.ts';

let browser: Browser;
let server: TestServer;
let ok: Receiver;
let bad: Receiver;
let manager: MemberSession;
let viewer: MemberSession;
let accountId: string;
let delivered: string;
let failed: string;
const account = 'deliveries';

beforeAll(async () => {
  [browser, server, ok, bad] = await Promise.all([
    testBrowser(inject('browserEndpoint')),
    startTestServer('pglite', { ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' }),
    startReceiver(200),
    startReceiver(500),
  ]);
  const made = await accountWithOwner(server, account);
  manager = await memberWithRole(server, account, made.owner, 'manager');
  viewer = await memberWithRole(server, account, made.owner, 'viewer');
  const created = async (url: string) => {
    const r = await manager.call('POST', '/v1/task/categorization', { json: ticketTask({ callback_url: url }) });
    expect(r.status, r.text).toBe(200);
    return r.body.task_id as string;
  };
  accountId = (await manager.call('GET', '/v1/session')).body.account.account_id;
  const dispatcher = startClockedDispatcher(server.uow, createMailer(undefined));
  try {
    delivered = await created(ok.url);
    await dispatcher.runRetries(accountId, delivered);
    failed = await created(bad.url);
    await dispatcher.runRetries(accountId, failed);
  } finally {
    await dispatcher.stop();
  }
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([ok?.close(), bad?.close()]);
  await server?.close();
});

describe('deliveries', () => {
  it('lists the failed callbacks by the address, and sends a selected one again', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/deliveries`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
      const rows = page.locator('table.deliveries tbody tr');
      await expect.poll(() => rows.count()).toBe(2);
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'deliveries');

      await page.getByLabel('State').selectOption('failed');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL((url) => url.search === '?state=failed');
      await expect.poll(() => rows.count()).toBe(1);
      const row = rows.first();
      expect(await row.locator('td').nth(5).textContent()).toBe('failed');
      expect(await row.locator('td').nth(6).textContent()).toBe('21');
      expect(await row.locator('td').nth(7).textContent()).toMatch(/^500 /);

      // The failed callback, selected and sent again: a new callback of the task waits to be sent.
      await page.getByRole('checkbox', { name: `Select the callback of task ${failed}` }).check();
      await page.getByRole('button', { name: 'Redeliver selected (1)' }).click();
      await page.getByText('Queued 1 callback again.').waitFor();
      const pending = await manager.call('GET', '/v1/callbacks?state=pending');
      expect(pending.body.docs.map((d: { task_id: string }) => d.task_id)).toEqual([failed]);
      expect(pending.body.docs[0]).toMatchObject({ attempts: 0, url: bad.url });
      await expectNoAxeViolation(page);
    } finally {
      await close();
    }
  });

  it('offers a viewer no redelivery', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/deliveries?state=delivered`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      await page.getByRole('link', { name: delivered }).waitFor();
      expect(await page.getByRole('checkbox').count()).toBe(0);
      expect(await page.getByRole('button', { name: /Redeliver/ }).count()).toBe(0);
    } finally {
      await close();
    }
  });
});
