// The console's workforce and a project's staffing (issue 35) in Chromium against the real server. A
// manager adds two workers (the password shown once logs in to the worker API), changes a worker's
// roles, pauses one (the worker API then refuses them work) and unpauses them, gives one a new password
// (their old session ends), removes one after a confirmation; then staffs a project with one worker,
// who alone gets its live task. A viewer sees the workers and the staffing with no change offered, and
// the server refuses the changes anyway. What was stored is read back through the API; axe-core on
// every screen.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole } from './support/console.ts';
import { accountWithOwner, memberWithRole, send, type MemberSession } from './support/members.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from './support/server.ts';
import { bearer } from './support/workers.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await testBrowser(inject('browserEndpoint'));
});
afterAll(async () => {
  await browser?.close();
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the workforce in the console on %s', (db) => {
  let server: TestServer;
  let manager: MemberSession;
  let viewer: MemberSession;
  const account = `workforce-${db}`;
  const ana = `ana-${db}@example.com`;
  const bo = `bo-${db}@example.com`;

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
  const workerByEmail = async (email: string) =>
    (await live('GET', '/v1/workforce/workers?limit=100')).body.docs.find((w: { email: string }) => w.email === email);
  /** A worker's log-in to the worker API: its session token, or the refusal's status. */
  const logIn = async (email: string, password: string) => {
    const res = await send(`${server.url}/worker/v1/session`, 'POST', { json: { email, password } });
    return res.status === 200 ? (res.body.token as string) : res.status;
  };
  const next = (token: string) => send(`${server.url}/worker/v1/assignments/next`, 'POST', { headers: bearer(token), json: {} });

  it('adds workers, changes roles, pauses, gives a new password, removes, and staffs a project', async () => {
    const { page, problems, close } = await openConsole(browser, `${server.url}/console/workforce?mode=live`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await page.getByRole('heading', { name: 'Workforce' }).waitFor();
      await page.getByText('No worker matches.').waitFor();
      await expectNoAxeViolation(page);

      // Ana, a labeler (the roles' default): the password the server chose is shown once and logs in.
      await page.getByLabel('E-mail address').fill(ana);
      await page.getByLabel('Name', { exact: true }).fill('Ana Lima');
      await page.getByRole('button', { name: 'Create the worker' }).click();
      await page.getByText('Created Ana Lima.').waitFor();
      const first = (await page.locator('.notice code.secret').textContent())!;
      const anaSession = await logIn(ana, first);
      expect(typeof anaSession).toBe('string');
      // Bo, a reviewer only.
      await page.getByLabel('E-mail address').fill(bo);
      await page.getByLabel('Name', { exact: true }).fill('Bo Chen');
      const roles = page.getByRole('group', { name: 'Roles', exact: true });
      await roles.getByLabel('labeler').uncheck();
      await roles.getByLabel('reviewer').check();
      await page.getByRole('button', { name: 'Create the worker' }).click();
      await page.getByText('Created Bo Chen.').waitFor();
      expect(await workerByEmail(bo)).toMatchObject({ display_name: 'Bo Chen', roles: ['reviewer'], status: 'active' });
      const boSession = (await logIn(bo, (await page.locator('.notice code.secret').textContent())!)) as string;
      await page.getByRole('cell', { name: 'Bo Chen', exact: true }).waitFor();
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'workforce');

      // Ana's roles: labeler and reviewer.
      await page.getByRole('button', { name: 'Change the roles of Ana Lima' }).click();
      await page.getByRole('group', { name: 'Roles of Ana Lima' }).getByLabel('reviewer').check();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Ana Lima is now labeler, reviewer.').waitFor();
      expect((await workerByEmail(ana)).roles).toEqual(['labeler', 'reviewer']);

      // Bo paused: the worker API refuses him work; unpaused, it answers again.
      await page.getByRole('button', { name: 'Pause Bo Chen' }).click();
      await page.getByText('Paused Bo Chen: no new work for them.').waitFor();
      expect((await workerByEmail(bo)).status).toBe('paused');
      expect((await next(boSession)).body).toMatchObject({ code: 'worker_paused' });
      await page.getByRole('button', { name: 'Unpause Bo Chen' }).click();
      await page.getByText('Bo Chen may work again.').waitFor();
      expect((await next(boSession)).status).toBe(204);

      // A new password for Ana: shown once; her old session ends, the new password logs in.
      await page.getByRole('button', { name: 'New password for Ana Lima' }).click();
      const reset = await page.getByText(/^New password for Ana Lima, shown this once: /).textContent();
      const second = /shown this once: (\S+)\. Their sessions ended\./.exec(reset!)![1]!;
      expect((await next(anaSession as string)).status).toBe(401);
      expect(await logIn(ana, first)).toBe(401);
      const anaAgain = (await logIn(ana, second)) as string;

      // Bo removed, after a confirmation; the removed ones are a filter away, in the address.
      await page.getByRole('button', { name: 'Remove Bo Chen…' }).click();
      await expectNoAxeViolation(page);
      await page.getByRole('button', { name: 'Yes, remove' }).click();
      await page.getByText('Removed Bo Chen.').waitFor();
      expect((await workerByEmail(bo)).status).toBe('removed');
      await page.getByLabel('Status').selectOption('removed');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByRole('cell', { name: bo }).waitFor();
      expect(new URL(page.url()).search).toBe('?status=removed&mode=live');

      // A project staffed with Ana alone, every later attempt reviewed at a rate of one in two.
      expect((await live('POST', '/v1/projects', { name: 'receipts', type: 'categorization' })).status).toBe(200);
      await page.goto(`${server.url}/console/projects/receipts?mode=live`);
      await page.getByRole('heading', { name: 'Staffing' }).waitFor();
      await page.getByText('Nothing set: the default').waitFor();
      await page.getByText('No attempt: a submitted answer completes the task').waitFor();
      await page.getByText('Change the staffing').click();
      const attempt = page.getByRole('group', { name: 'Who may attempt (and redo)' });
      await attempt.getByLabel("The operator's workforce").uncheck();
      await attempt.getByLabel(/Ana Lima/).check();
      const review = page.getByRole('group', { name: 'Who may review' });
      await review.getByLabel("The operator's workforce").uncheck();
      await review.getByLabel(/Ana Lima/).check();
      // The default reviews nothing: now every attempt of a worker's first 20, then one in two.
      await page.getByLabel("Every attempt among a worker's first (attempts in this project)").fill('20');
      await page.getByLabel('Then this share of their later attempts (0 to 1)').fill('0.5');
      await expectNoAxeViolation(page);
      await page.getByRole('button', { name: 'Save the staffing' }).click();
      await page.getByText('Saved the staffing.').waitFor();
      await page.getByText("Every attempt among a worker's first 20, then 50 % of the later ones").waitFor();
      const anaId = (await workerByEmail(ana)).worker_id;
      expect((await live('GET', '/v1/projects/receipts/staffing')).body).toMatchObject({
        attempt: [anaId],
        review: [anaId],
        review_sampling: { new_worker_tasks: 20, rate: 0.5 },
        source: 'project',
      });
      await consoleScreenshot(page, 'staffing');

      // The staffing is what the workers get: Ana takes the project's live task.
      const task = await live('POST', '/v1/task/categorization', {
        callback_url: 'https://example.com/cb',
        instruction: 'Which shop?',
        attachment_type: 'text',
        attachment: 'receipt 1',
        categories: ['grocery', 'fuel'],
        project: 'receipts',
      });
      expect(task.status, task.text).toBe(200);
      const taken = await next(anaAgain);
      expect(taken.status, taken.text).toBe(200);
      expect(taken.body.task.task_id).toBe(task.body.task_id);
      expect(problems.filter(unexpected)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('offers a viewer no change, and the server refuses the changes anyway', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/workforce?mode=live`);
    try {
      await logInWithKeyboard(page, account, viewer.email, viewer.password);
      await page.getByRole('cell', { name: 'Ana Lima', exact: true }).waitFor();
      expect(
        await page
          .getByRole('button')
          .filter({ hasText: /Pause|Roles|Remove|New password|Create/ })
          .count(),
      ).toBe(0);
      await page.goto(`${server.url}/console/projects/receipts?mode=live`);
      await page.getByText('On the project,', { exact: false }).waitFor();
      expect(await page.getByText('Change the staffing').count()).toBe(0);
      await expectNoAxeViolation(page);
      const anaId = (await workerByEmail(ana)).worker_id;
      const refused = await page.evaluate(async (workerId) => {
        const session = await (await fetch('/v1/session', { headers: { 'humantask-mode': 'live' } })).json();
        const res = await fetch(`/v1/workforce/workers/${workerId}/pause`, {
          method: 'POST',
          headers: { 'humantask-mode': 'live', 'x-csrf-token': session.csrf_token },
        });
        return [res.status, (await res.json()).code];
      }, anaId);
      expect(refused).toEqual([403, 'role_missing']);
      expect((await workerByEmail(ana)).status).toBe('active');
    } finally {
      await close();
    }
  });
});
