// The console's API keys and activity log (issue 35, Settings) in Chromium against the real server. An
// admin creates a key with the keyboard (its secret shown once works, and only for its scope), revokes
// it (the server then refuses it), and finds both in the activity log through the filters, which land
// in the address. A manager is offered neither screen, and the server refuses their operations.
// axe-core on every state.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole } from './support/console.ts';
import { accountWithOwner, memberWithRole, send, type MemberSession } from './support/members.ts';
import { basicAuth } from './support/net.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from './support/server.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await testBrowser(inject('browserEndpoint'));
});
afterAll(async () => {
  await browser?.close();
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('API keys and activity in the console on %s', (db) => {
  let server: TestServer;
  let admin: MemberSession;
  let manager: MemberSession;
  const account = `settings-${db}`;

  beforeAll(async () => {
    server = await startTestServer(db);
    const { owner } = await accountWithOwner(server, account);
    admin = await memberWithRole(server, account, owner, 'admin');
    manager = await memberWithRole(server, account, owner, 'manager');
  });
  afterAll(async () => {
    await server?.close();
  });

  const withKey = (secret: string, method: string, path: string, json?: unknown) =>
    send(`${server.url}${path}`, method, { headers: { authorization: basicAuth(secret) }, ...(json ? { json } : {}) });

  it('creates a key whose secret is shown once and works for its scope, revokes it, and finds both in the activity log', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/api-keys`);
    try {
      await logInWithKeyboard(page, account, admin.email, admin.password);
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      await page.getByRole('cell', { name: 'Key of old' }).first().waitFor();
      await expectNoAxeViolation(page);

      // The keyboard alone: a name, the scope already chosen (tasks:read), Enter.
      await page.getByLabel('Name').focus();
      await page.keyboard.type('nightly reader');
      await page.keyboard.press('Enter');
      await page.getByText('Created nightly reader.').waitFor();
      const secret = (await page.locator('code.secret').textContent())!;
      await page.getByRole('cell', { name: 'nightly reader', exact: true }).waitFor();
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'api-keys');

      // The secret works, for its scope only.
      expect((await withKey(secret, 'GET', '/v1/tasks')).status).toBe(200);
      const refused = await withKey(secret, 'POST', '/v1/task/categorization', {
        callback_url: 'https://example.com/cb',
        instruction: 'Pick one',
        attachment_type: 'text',
        attachment: 'x',
        categories: ['a', 'b'],
      });
      expect(refused.status).toBe(403);
      // Shown once: the list has its prefix, never the secret.
      const listed = await admin.call('GET', '/v1/api_keys');
      expect(listed.text).not.toContain(secret);
      const key = listed.body.docs.find((k: { name: string }) => k.name === 'nightly reader');
      expect(secret.startsWith(key.prefix)).toBe(true);

      await page.getByRole('button', { name: 'Revoke nightly reader' }).click();
      await page.getByText(`Revoked nightly reader (${key.prefix}…).`).waitFor();
      // The list is read again after the notice shows: the revoked key's row goes with that answer.
      await expect.poll(() => page.getByRole('cell', { name: 'nightly reader', exact: true }).count()).toBe(0);
      expect((await withKey(secret, 'GET', '/v1/tasks')).status).toBe(401);

      // The activity log, filtered in the address and through the form.
      await page.getByRole('link', { name: 'Activity' }).click();
      await page.getByRole('heading', { name: 'Activity' }).waitFor();
      await page.getByLabel('Action (e.g. api_key.created)').fill('api_key.created');
      await page.keyboard.press('Enter');
      // The unfiltered list shows api_key.created too: wait for the filtered one, a single row.
      await page.waitForURL((url) => url.search === '?action=api_key.created');
      await expect.poll(() => page.locator('table.activity tbody tr').count()).toBe(1);
      await page.getByRole('cell', { name: 'api_key.created' }).waitFor();
      await page.getByRole('cell', { name: `member: ${admin.email}` }).waitFor();
      await page.goto(`${server.url}/console/activity?action=api_key.revoked`);
      await page.getByRole('cell', { name: 'api_key.revoked' }).waitFor();
      await page.getByRole('cell', { name: new RegExp(key.key_id) }).waitFor();
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'activity');
    } finally {
      await close();
    }
  });

  it('offers a manager neither screen, and the server refuses their operations', async () => {
    const { page, close } = await openConsole(browser, `${server.url}/console/api-keys`);
    try {
      await logInWithKeyboard(page, account, manager.email, manager.password);
      await page.getByRole('heading', { name: 'Not for your role' }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Screens' });
      expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
      expect(await nav.getByRole('link', { name: 'Activity' }).count()).toBe(0);
      await expectNoAxeViolation(page);
      for (const [method, path] of [
        ['GET', '/v1/api_keys'],
        ['GET', '/v1/activity'],
      ] as const) {
        const refused = await manager.call(method, path);
        expect(refused.status).toBe(403);
        expect(refused.body.code).toBe('role_missing');
      }
      const created = await manager.call('POST', '/v1/api_keys', { json: { name: 'mine', mode: 'test', scopes: ['tasks:read'] } });
      expect(created.status).toBe(403);
    } finally {
      await close();
    }
  });
});
