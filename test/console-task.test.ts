// The console's task view (issue 35) in Chromium against the real server. A manager opens a live task
// from the data manager with the keyboard: its answer drawn by the labeling app's categorization
// player read-only, the worker as their handle, the failed callback deliveries; redelivers the callback
// (the receiver gets it), rejects the result with remarks (the worker gets the redo, with the remarks),
// then accepts the redone result. A viewer sees the task but is offered no review or redeliver, and the
// server refuses them anyway. Test-mode tasks of other types: text entities and form cells drawn by
// their players. axe-core on every state.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { takeAndSubmit } from './support/assignments.ts';
import { testBrowser } from './support/browser.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole } from './support/console.ts';
import { accountWithOwner, memberWithRole, type MemberSession } from './support/members.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from './support/server.ts';
import { createWorker, workerClient } from './support/workers.ts';

/** What the browser logged, less the 401 of the page asking for a session before the log-in. */
const logged = (problems: string[]) => problems.filter((p) => !p.includes('status of 401'));

let browser: Browser;
beforeAll(async () => {
  browser = await testBrowser(inject('browserEndpoint'));
});
afterAll(async () => {
  await browser?.close();
});

/** Presses Tab until the focus is on the element matched (at most `limit` presses). */
async function tabTo(page: Page, selector: string, limit = 60) {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the task view on %s', (db) => {
  let server: TestServer;
  let receiver: Receiver;
  let owner: MemberSession;
  let manager: MemberSession;
  let viewer: MemberSession;
  let work: ReturnType<typeof workerClient>;
  let taskId: string;
  const account = `task-view-${db}`;

  beforeAll(async () => {
    // Callbacks go out at once, to a loopback receiver that refuses the first one (the retry gets in).
    receiver = await startReceiver((n) => (n === 1 ? 500 : 200));
    server = await startTestServer(db, {
      DELIVERY_POLL_MS: '50',
      ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
      CALLBACK_SCHEDULE_SCALE: '0.001',
    });
    ({ owner } = await accountWithOwner(server, account));
    manager = await memberWithRole(server, account, owner, 'manager');
    viewer = await memberWithRole(server, account, owner, 'viewer');
    const worker = await createWorker(server);
    work = workerClient(server, worker.token);
    const created = await manager.call('POST', '/v1/task/categorization', {
      mode: 'live',
      json: {
        callback_url: receiver.url,
        instruction: 'Which department should handle this **ticket**?',
        attachment_type: 'text',
        attachment: 'My invoice is wrong.',
        categories: ['billing', 'support'],
        tags: ['north'],
      },
    });
    expect(created.status, created.text).toBe(200);
    taskId = created.body.task_id;
    await takeAndSubmit(work, taskId, { category: 'support' });
    // The completion callback was refused, then delivered on its retry.
    await receiver.waitFor(2, 'the callback and its retry');
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  const taskOf = async (id: string, mode: 'test' | 'live' = 'live') => (await manager.call('GET', `/v1/task/${id}`, { mode })).body;
  const player = (page: Page) => page.getByRole('region', { name: /The response, drawn read-only/ });

  it('shows a task drawn by its player, redelivers its callback, and reviews it: reject with remarks, the redo, accept', async () => {
    const { page, problems, close } = await openConsole(browser, `${server.url}/console/tasks?mode=live&tags=north`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await page.getByText('1 task matches').waitFor();
      // From the data manager with the keyboard: the task's id is a link.
      await tabTo(page, 'table.tasks a');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: `Task ${taskId}` }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/tasks/${taskId}`);

      // The answer, drawn by the labeling app's categorization player, read-only.
      await player(page).waitFor();
      expect(
        await player(page)
          .getByRole('radio', { name: /support/ })
          .isChecked(),
      ).toBe(true);
      expect(
        await player(page)
          .getByRole('radio', { name: /billing/ })
          .isChecked(),
      ).toBe(false);
      // The instruction as the worker saw it (Markdown rendered), the params as JSON.
      expect(await page.locator('.instruction strong').textContent()).toBe('ticket');
      await page.getByText('"categories": [').waitFor();

      // The worker as their handle, the same the API shows.
      const assignments = (await manager.call('GET', `/v1/task/${taskId}/assignments`, { mode: 'live' })).body.docs;
      expect(assignments).toHaveLength(1);
      expect(assignments[0].worker).toMatch(/^opw_/);
      await page.getByRole('cell', { name: assignments[0].worker }).waitFor();

      // The refused attempt and the retry that got in; the manager has it sent once more.
      const deliveries = page.locator('table.deliveries tbody tr');
      await page.getByRole('cell', { name: 'HTTP 500' }).waitFor();
      expect(await deliveries.count()).toBe(2);
      expect(await deliveries.nth(1).getByRole('cell', { name: 'HTTP 200' }).count()).toBe(1);
      await expectNoAxeViolation(page);
      await page.getByRole('button', { name: 'Redeliver the callback' }).focus();
      await page.keyboard.press('Enter');
      await page.getByText('The callback is queued again.').waitFor();
      await receiver.waitFor(3, 'the redelivery');
      expect(receiver.bodiesOf(taskId)).toHaveLength(3);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await deliveries.nth(2).getByRole('cell', { name: 'HTTP 200' }).waitFor();
      await page.evaluate(() => window.scrollTo(0, 0));
      await consoleScreenshot(page, 'task');

      // Reject with remarks: the audit is recorded, and the worker gets the task back with the remarks.
      await page.getByLabel(/^Remarks/).fill('The invoice is a billing matter.');
      await page.getByRole('button', { name: 'Reject and have it redone' }).click();
      await page.getByText('Rejected: the task is being redone.').waitFor();
      await page.getByRole('cell', { name: 'The invoice is a billing matter.' }).waitFor();
      expect((await taskOf(taskId)).customer_review_status).toBe('rejected');
      await expectNoAxeViolation(page);
      const redo = await takeAndSubmit(work, taskId, { category: 'billing' });
      expect(redo.role).toBe('redo');
      expect(JSON.stringify(redo.feedback)).toContain('The invoice is a billing matter.');

      // The redone answer, drawn; then accepted.
      await page.reload();
      await player(page).waitFor();
      expect(
        await player(page)
          .getByRole('radio', { name: /billing/ })
          .isChecked(),
      ).toBe(true);
      await page.getByRole('cell', { name: 'redo', exact: true }).waitFor();
      await page.getByRole('button', { name: 'Accept the result' }).click();
      await page.getByRole('cell', { name: 'accepted' }).waitFor();
      expect(await taskOf(taskId)).toMatchObject({ customer_review_status: 'accepted', response: { category: 'billing' } });
      await expectNoAxeViolation(page);
      expect(logged(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('offers a viewer no review and no redeliver, and the server refuses both', async () => {
    const { page, problems, close } = await openConsole(browser, `${server.url}/console/tasks/${taskId}?mode=live`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      await page.getByRole('heading', { name: `Task ${taskId}` }).waitFor();
      await player(page).waitFor();
      await page.getByRole('heading', { name: 'Callback deliveries' }).waitFor();
      expect(await page.getByRole('button', { name: /Redeliver|Accept|Reject/ }).count()).toBe(0);
      expect(await page.getByRole('heading', { name: 'Your review' }).count()).toBe(0);
      await expectNoAxeViolation(page);
      expect(logged(problems)).toEqual([]);
      const refused = await page.evaluate(async (id) => {
        const session = await (await fetch('/v1/session', { headers: { 'humantask-mode': 'live' } })).json();
        const headers = { 'humantask-mode': 'live', 'x-csrf-token': session.csrf_token, 'content-type': 'application/json' };
        const audit = await fetch(`/v1/task/${id}/audit`, { method: 'POST', headers, body: JSON.stringify({ accepted: false }) });
        const redeliver = await fetch(`/v1/task/${id}/callbacks/redeliver`, { method: 'POST', headers });
        return [
          { status: audit.status, code: (await audit.json()).code },
          { status: redeliver.status, code: (await redeliver.json()).code },
        ];
      }, taskId);
      expect(refused).toEqual([
        { status: 403, code: 'role_missing' },
        { status: 403, code: 'role_missing' },
      ]);
      expect((await taskOf(taskId)).customer_review_status).toBe('accepted');
    } finally {
      await close();
    }
  });

  it('draws text entities and form cells with their players, read-only (test mode)', async () => {
    const make = async (type: string, json: Record<string, unknown>) => {
      const created = await manager.call('POST', `/v1/task/${type}`, {
        mode: 'test',
        json: { callback_url: 'https://example.com/cb', ...json },
      });
      expect(created.status, created.text).toBe(200);
      return created.body.task_id as string;
    };
    const ner = await make('namedentityrecognition', {
      instruction: 'Mark the people and places.',
      text: 'Ada Lovelace was born in London.',
      labels: [{ name: 'PER' }, { name: 'LOC' }],
    });
    const form = await make('datacollection', {
      instruction: 'Find the phone number.',
      attachment_type: 'text',
      attachment: 'La Piazza, Main Street 1',
      fields: { phone: 'The phone number' },
    });
    for (const id of [ner, form]) expect((await taskOf(id, 'test')).status).toBe('completed');
    const { page, problems, close } = await openConsole(browser, `${server.url}/console/tasks/${ner}`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await player(page).waitFor();
      const entities = (await taskOf(ner, 'test')).response.annotations as { text: string }[];
      for (const e of entities) await player(page).getByText(e.text, { exact: false }).first().waitFor();
      await expectNoAxeViolation(page);

      await page.goto(`${server.url}/console/tasks/${form}`);
      await player(page).waitFor();
      const phone = (await taskOf(form, 'test')).response.fields.phone as string;
      expect(await player(page).getByLabel('The phone number').inputValue()).toBe(phone);
      // Read-only: the field takes no edit.
      expect(await player(page).getByLabel('The phone number').isEditable()).toBe(false);
      await expectNoAxeViolation(page);
      expect(logged(problems)).toEqual([]);
    } finally {
      await close();
    }
  });
});
