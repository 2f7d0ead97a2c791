// The console's projects and batches (issue 35) in Chromium against the real server. A manager creates a
// project with its instruction, sees it as a worker would, saves a new parameter version and compares
// the two (the address names them), is told plainly when the parameters are no JSON (nothing stored),
// archives the project; finalizes a staging batch of a Studio project and sees its progress, and is told
// why a Rapid production batch cannot be finalized before calibration. A viewer sees both screens with
// no change offered, and the server refuses the changes anyway. What was stored is read back through
// the API; axe-core on every screen.
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

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('projects and batches in the console on %s', (db) => {
  let server: TestServer;
  let manager: MemberSession;
  let viewer: MemberSession;
  const account = `projects-${db}`;

  beforeAll(async () => {
    server = await startTestServer(db);
    const { owner } = await accountWithOwner(server, account);
    manager = await memberWithRole(server, account, owner, 'manager');
    viewer = await memberWithRole(server, account, owner, 'viewer');
  });
  afterAll(async () => {
    await server?.close();
  });

  /** What the browser logged that no screen answers for (a refusal in the network log is the screen's to show). */
  const unexpected = (problem: string) => !problem.startsWith('Failed to load resource');
  const live = (method: string, path: string, json?: unknown) => manager.call(method, path, { mode: 'live', ...(json ? { json } : {}) });

  it('creates a project, previews its instruction, saves and compares a version, refuses a bad one, archives it', async () => {
    const { page, problems, close } = await openConsole(browser, `${server.url}/console/projects?mode=live`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      await page.getByText('No project yet in this mode.').waitFor();
      await expectNoAxeViolation(page);

      await page.getByLabel('Name').fill('street-signs');
      await page.getByLabel('Task type').selectOption('categorization');
      await page.getByLabel('Instruction (Markdown; optional)').fill('Pick the **sign** you see.');
      await page.getByRole('button', { name: 'Create the project' }).click();
      await page.getByRole('heading', { name: 'Project street-signs' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/console/projects/street-signs');
      // The instruction as a worker sees it: the Markdown drawn.
      expect(await page.locator('.instruction strong').textContent()).toBe('sign');
      const created = await live('GET', '/v1/projects/street-signs');
      expect(created.body).toMatchObject({
        type: 'categorization',
        archived: false,
        param_history: [{ version: 0, instruction: 'Pick the **sign** you see.' }],
      });

      // A new version: a line added to the instruction, categories given as JSON.
      await page.getByLabel('Instruction (Markdown)', { exact: true }).fill('Pick the **sign** you see.\nSkip a blurred one.');
      await page.getByLabel('The other parameters (JSON)').fill('{"categories": ["stop", "yield"]}');
      await page.getByRole('button', { name: 'Save as version 1' }).click();
      await page.getByText('Saved version 1.').waitFor();
      await page.getByRole('heading', { name: 'Version 0 and version 1 compared' }).waitFor();
      const change = (name: string) =>
        page.locator('table.diff tbody tr').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
      expect(await page.locator('table.diff tbody th').allTextContents()).toEqual(expect.arrayContaining(['instruction', 'categories']));
      expect(await change('instruction').locator('td').first().textContent()).toBe('changed');
      expect(await change('instruction').locator('ins').allTextContents()).toEqual(['+ Skip a blurred one.']);
      expect(await change('instruction').locator('del').count()).toBe(0);
      expect(await change('categories').locator('td').first().textContent()).toBe('added');
      expect(await page.locator('.instruction').textContent()).toContain('Skip a blurred one.');
      const saved = (await live('GET', '/v1/projects/street-signs')).body;
      expect(saved.param_history).toHaveLength(2);
      expect(saved.param_history[1]).toMatchObject({
        version: 1,
        instruction: 'Pick the **sign** you see.\nSkip a blurred one.',
        categories: ['stop', 'yield'],
      });
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'project');

      // The comparison is in the address: version 1 against itself shows no change.
      await page.getByLabel('From').selectOption('1');
      await page.getByRole('button', { name: 'Compare' }).click();
      await page.getByText('The two versions hold the same parameters.').waitFor();
      expect(new URL(page.url()).searchParams.get('from')).toBe('1');

      // Parameters that are no JSON: said plainly, nothing stored.
      await page.getByLabel('The other parameters (JSON)').fill('{"categories": [stop]}');
      await page.getByRole('button', { name: 'Save as version 2' }).click();
      await page.getByRole('alert').filter({ hasText: 'The other parameters are not JSON' }).waitFor();
      // Parameters the server refuses: its reason shown, nothing stored.
      await page.getByLabel('The other parameters (JSON)').fill('{"categories": "stop"}');
      await page.getByRole('button', { name: 'Save as version 2' }).click();
      await page.getByRole('alert').filter({ hasText: 'categories must be array' }).waitFor();
      expect((await live('GET', '/v1/projects/street-signs')).body.param_history).toHaveLength(2);

      await page.getByRole('button', { name: 'Archive' }).click();
      await page.getByText('Archived street-signs: it takes no new task.').waitFor();
      expect((await live('GET', '/v1/projects/street-signs')).body.archived).toBe(true);
      await page.getByRole('link', { name: 'All projects' }).click();
      await page.getByText('No project yet in this mode.').waitFor();
      await page.getByRole('link', { name: 'Show the archived projects' }).click();
      await page.getByRole('link', { name: 'street-signs' }).waitFor();
      await expectNoAxeViolation(page);
      expect(problems.filter(unexpected)).toEqual([]);
    } finally {
      await close();
    }
  });

  it("shows each batch's progress, finalizes a staging batch, and says why a Rapid batch waits for calibration", async () => {
    expect((await live('POST', '/v1/projects', { name: 'receipts', type: 'categorization', studio: true })).status).toBe(200);
    expect((await live('POST', '/v1/projects', { name: 'rapid-signs', type: 'categorization', rapid: true })).status).toBe(200);
    expect(
      (await live('POST', '/v1/batches', { project: 'receipts', name: 'receipts-1', callback: 'https://example.com/batch' })).status,
    ).toBe(200);
    expect((await live('POST', '/v1/batches', { project: 'rapid-signs', name: 'rapid-1' })).status).toBe(200);
    const tasks: string[] = [];
    for (const n of [1, 2, 3]) {
      const t = await live('POST', '/v1/task/categorization', {
        callback_url: 'https://example.com/cb',
        instruction: 'Which shop?',
        attachment_type: 'text',
        attachment: `receipt ${n}`,
        categories: ['grocery', 'fuel'],
        project: 'receipts',
        batch: 'receipts-1',
      });
      expect(t.status, t.text).toBe(200);
      tasks.push(t.body.task_id);
    }
    expect((await live('POST', `/v1/task/${tasks[0]}/cancel`)).status).toBe(200);

    const { page, problems, close } = await openConsole(browser, `${server.url}/console/batches?mode=live`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await page.getByRole('heading', { name: 'Batches' }).waitFor();
      const row = (name: string) => page.locator('table.batches tbody tr').filter({ has: page.getByRole('link', { name, exact: true }) });
      await row('receipts-1').getByText('1 of 3 done · 2 pending · 1 canceled').waitFor();
      expect(await row('receipts-1').locator('td').nth(2).textContent()).toBe('staging');
      expect(await row('receipts-1').getByText('https://example.com/batch').count()).toBe(1);
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'batches');

      await page.getByRole('button', { name: 'Finalize receipts-1' }).click();
      await page.getByText('Finalized receipts-1: its tasks go to workers.').waitFor();
      await row('receipts-1').getByRole('cell', { name: 'in_progress' }).waitFor();
      expect((await live('GET', '/v1/batches/receipts-1')).body.status).toBe('in_progress');
      expect(await page.getByRole('button', { name: 'Finalize receipts-1' }).count()).toBe(0);

      // A Rapid production batch before any calibration batch completed: the server's reason, shown.
      await page.getByRole('button', { name: 'Finalize rapid-1' }).click();
      await page.getByText(/^rapid-1 was not finalized: .*calibration/).waitFor();
      expect((await live('GET', '/v1/batches/rapid-1')).body.status).toBe('staging');

      // The filters are in the address.
      await page.getByLabel('Project').fill('receipts');
      await page.keyboard.press('Enter');
      await page.getByText('Batches 1 to 1 of 1, the newest first.').waitFor();
      expect(new URL(page.url()).search).toBe('?project=receipts&mode=live');
      await expectNoAxeViolation(page);
      expect(problems.filter(unexpected)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('offers a viewer no change, and the server refuses the changes anyway', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/batches?mode=live`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      await page.getByRole('link', { name: 'rapid-1', exact: true }).waitFor();
      expect(await page.getByRole('button', { name: /Finalize/ }).count()).toBe(0);
      await page.getByRole('link', { name: 'Projects' }).click();
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      await page.getByRole('link', { name: 'receipts' }).click();
      await page.getByRole('heading', { name: 'Project receipts' }).waitFor();
      expect(
        await page
          .getByRole('button')
          .filter({ hasText: /Archive|Save as version/ })
          .count(),
      ).toBe(0);
      await expectNoAxeViolation(page);
      const refused = await page.evaluate(async () => {
        const session = await (await fetch('/v1/session', { headers: { 'humantask-mode': 'live' } })).json();
        const headers = { 'humantask-mode': 'live', 'x-csrf-token': session.csrf_token };
        const finalize = await fetch('/v1/batches/rapid-1/finalize', { method: 'POST', headers });
        const create = await fetch('/v1/projects', {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'sneaky', type: 'categorization' }),
        });
        return [finalize.status, (await finalize.json()).code, create.status, (await create.json()).code];
      });
      expect(refused).toEqual([403, 'role_missing', 403, 'role_missing']);
      expect((await live('GET', '/v1/projects/sneaky')).status).toBe(404);
    } finally {
      await close();
    }
  });
});
