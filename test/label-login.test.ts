// Log-in in the labeling app when one e-mail address and password open workers of two workforces
// (issue 31, finding 7; decision 13): the server asks which (409 workforce_required), the app shows a
// Workforce field with the server's words, and the link a workforce gives its workers
// (`/label/?workforce=wkf_...`) names it from the start. Chromium against the real server (PGlite).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { createAccount } from '../server/domain/accounts.ts';
import { testBrowser } from './support/browser.ts';
import { client, startTestServer, type TestServer } from './support/server.ts';

let server: TestServer;
let browser: Browser;
const email = 'bo@example.com';
const password = 'one-password-for-two-jobs';
/** The workforce ids of the two accounts' workers made with the same address and password. */
const workforces: string[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer('pglite'), testBrowser(inject('browserEndpoint'))]);
  const other = await createAccount(server.uow, 'second-customer', new Date());
  for (const [key, name] of [
    [server.dev.live_key, 'Bo at the first customer'],
    [other.live_key, 'Bo at the second customer'],
  ] as const) {
    const made = await client(server, 'current', key)('POST', '/v1/workforce/workers', {
      json: { email, password, display_name: name, roles: ['labeler'] },
    });
    expect(made.status, made.text).toBe(200);
    workforces.push((made.body as { workforce_id: string }).workforce_id);
  }
  // The app's bundle is built on its first request.
  await fetch(`${server.url}/label/app.js`).then((r) => r.text());
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function logIn(page: Page) {
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

it('asks which workforce when the address and password open two, and logs in to the one named', async () => {
  const page = await browser.newPage();
  try {
    await page.goto(`${server.url}/label/`);
    expect(await page.getByLabel('Workforce').isVisible()).toBe(false);
    await logIn(page);
    await page
      .getByRole('alert')
      .filter({ hasText: /workforce/i })
      .waitFor();
    expect(await page.getByLabel('Workforce').isVisible()).toBe(true);
    await page.getByLabel('Workforce').fill(workforces[1]!);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('Bo at the second customer').first().waitFor();
  } finally {
    await page.close();
  }
});

it('takes the workforce from the link a workforce gives its workers', async () => {
  const page = await browser.newPage();
  try {
    await page.goto(`${server.url}/label/?workforce=${workforces[0]}`);
    expect(await page.getByLabel('Workforce').inputValue()).toBe(workforces[0]);
    await logIn(page);
    await page.getByText('Bo at the first customer').first().waitFor();
  } finally {
    await page.close();
  }
});
