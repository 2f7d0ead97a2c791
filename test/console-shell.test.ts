// The console's shell (issue 35) in Chromium against the real server: the page and its bundle as
// served (headers, compression, caching), the log-in with the keyboard alone (a password, then a TOTP
// code for a member who has one), the page of an invitation's link, the mode switch in the URL, the
// navigation that offers each role only what it may open (and the server's refusal of the rest),
// log-out, and axe-core on each screen.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TOTP } from 'otpauth';
import { testBrowser } from './support/browser.ts';
import { testProvider } from './support/oidc.ts';
import { consoleScreenshot, expectNoAxeViolation, logInWithKeyboard, openConsole } from './support/console.ts';
import { accountWithOwner, memberWithRole, send, type MemberSession } from './support/members.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from './support/server.ts';

/** An OpenID Connect provider on loopback whose person, Ana, logs in and consents at once. */
async function identityProvider(redirectUri: string) {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const op = testProvider({ issuer, redirectUri, users: { ana: { email: 'ana@example.com', name: 'Ana Lima' } } });
  server.on('request', (req, res) => void op.handle(req, res));
  return { issuer, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let browser: Browser;
beforeAll(async () => {
  browser = await testBrowser(inject('browserEndpoint'));
});
afterAll(async () => {
  await browser?.close();
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the console shell on %s', (db) => {
  let server: TestServer;
  let owner: MemberSession;
  const members: Partial<Record<'manager' | 'reviewer' | 'viewer', MemberSession>> = {};
  const account = `console-${db}`;

  beforeAll(async () => {
    // The identity provider is on loopback.
    server = await startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
    ({ owner } = await accountWithOwner(server, account));
    for (const role of ['manager', 'reviewer', 'viewer'] as const) members[role] = await memberWithRole(server, account, owner, role);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('serves the shell for every screen, and its bundle compressed, cached and under a strict policy', async () => {
    const shell = await fetch(`${server.url}/console/`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = shell.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("img-src 'self' data: blob:");
    expect(shell.headers.get('x-frame-options')).toBe('DENY');
    expect(shell.headers.get('x-content-type-options')).toBe('nosniff');
    expect(shell.headers.get('referrer-policy')).toBe('no-referrer');
    // A screen's address (a copied link) is the same shell: the app routes by the URL.
    const deep = await fetch(`${server.url}/console/tasks/task_0123?status=pending&mode=live`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(await shell.text());
    expect((await fetch(`${server.url}/console`, { redirect: 'manual' })).headers.get('location')).toBe('/console/');
    expect((await fetch(`${server.url}/console/no-such-file.js`)).status).toBe(404);

    // The bundle: Brotli or gzip as accepted (fetch decodes it), revalidated by its ETag.
    const plain = await fetch(`${server.url}/console/app.js`, { headers: { 'accept-encoding': 'identity' } });
    const body = await plain.text();
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(plain.headers.get('cache-control')).toBe('no-cache');
    expect(plain.headers.get('vary')).toBe('Accept-Encoding');
    for (const encoding of ['br', 'gzip']) {
      const packed = await fetch(`${server.url}/console/app.js`, { headers: { 'accept-encoding': encoding } });
      expect(packed.headers.get('content-encoding')).toBe(encoding);
      expect(Number(packed.headers.get('content-length'))).toBeLessThan(body.length / 2);
      expect(await packed.text()).toBe(body);
    }
    const etag = plain.headers.get('etag')!;
    expect((await fetch(`${server.url}/console/app.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    // The console's requests name the mode: a 401 to them carries no Basic challenge (a browser
    // would open its own password dialog, and the page would wait for it); an API client's does.
    const lapsed = await fetch(`${server.url}/v1/session`, { headers: { 'humantask-mode': 'test' } });
    expect(lapsed.status).toBe(401);
    expect(lapsed.headers.get('www-authenticate')).toBeNull();
    expect((await fetch(`${server.url}/v1/session`)).headers.get('www-authenticate')).toBe('Basic realm="humantask"');
    // The roles come from the contract's table, put into the bundle.
    expect(body).toContain('listMembers');
  });

  it('logs an owner in with the keyboard alone, switches to live mode in the URL, and logs out', async () => {
    const { page, problems, requests, close } = await openConsole(browser, `${server.url}/console/`);
    try {
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'login');
      await logInWithKeyboard(page, account, owner.email, owner.password);
      await page.getByRole('heading', { name: account }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Screens' });
      expect(await nav.getByRole('link').allTextContents()).toEqual([
        'Home',
        'Tasks',
        'Projects',
        'Batches',
        'Workforce',
        'Quality',
        'Deliveries',
        'Members',
        'API keys',
        'Activity',
        'Your sessions',
      ]);
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'home');

      // To the members' list by the keyboard: Tab to the link, Enter.
      const membersLink = nav.getByRole('link', { name: 'Members' });
      await membersLink.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Members' }).waitFor();
      expect(page.url()).toBe(`${server.url}/console/members`);
      await page.getByRole('cell', { name: members.viewer!.email }).waitFor();
      await expectNoAxeViolation(page);

      // The mode switch: the URL says live, and every request of the page names it.
      await page.getByRole('navigation', { name: 'Mode' }).getByRole('link', { name: 'Live' }).click();
      await page.getByText('Live mode: what you change here reaches workers').waitFor();
      expect(page.url()).toBe(`${server.url}/console/members?mode=live`);
      const modeOfNextRequest = page.waitForRequest((r) => r.url().endsWith('/v1/members'));
      await page.reload();
      expect((await modeOfNextRequest).headers()['humantask-mode']).toBe('live');
      await page.getByRole('heading', { name: 'Members' }).waitFor();

      // Log out: the session ends on the server, the log-in comes back.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('heading', { name: 'Log in to the console' }).waitFor();
      // (Asked as the console asks: with the mode, so that no Basic challenge opens a password dialog.)
      expect(await page.evaluate(async () => (await fetch('/v1/session', { headers: { 'humantask-mode': 'test' } })).status)).toBe(401);
      // Nothing but the page's own origin was asked for, and the browser refused nothing.
      expect(requests.filter((u) => !u.startsWith(server.url))).toEqual([]);
      expect(problems.filter((p) => !/401|Failed to load resource/.test(p))).toEqual([]);
    } finally {
      await close();
    }
  });

  it('offers each role only what it may open; the server refuses the rest', async () => {
    for (const role of ['manager', 'reviewer', 'viewer'] as const) {
      const member = members[role]!;
      // A link to the members' list, opened before logging in: the log-in leads to that address.
      const { page, close } = await openConsole(browser, `${server.url}/console/members`);
      try {
        await logInWithKeyboard(page, account, member.email, member.password);
        await page.getByRole('heading', { name: 'Not for your role' }).waitFor();
        expect(await page.getByText(`Your role (${role}) may not open Members.`).count()).toBe(1);
        const nav = page.getByRole('navigation', { name: 'Screens' });
        expect(await nav.getByRole('link').allTextContents()).toEqual([
          'Home',
          'Tasks',
          'Projects',
          'Batches',
          'Workforce',
          'Quality',
          'Deliveries',
          'Your sessions',
        ]);
        const refused = await page.evaluate(async () => {
          const res = await fetch('/v1/members', { headers: { 'humantask-mode': 'test' } });
          return { status: res.status, body: await res.json() };
        });
        expect(refused.status).toBe(403);
        expect(refused.body.code).toBe('role_missing');
        await expectNoAxeViolation(page);
      } finally {
        await close();
      }
    }
  });

  it('asks a member who has a second factor for its code, and lets them in with it', async () => {
    const member = await memberWithRole(server, account, owner, 'reviewer');
    const enrollment = await member.call('POST', '/v1/me/totp');
    expect(enrollment.status, enrollment.text).toBe(200);
    const totp = new TOTP({ secret: enrollment.body.secret });
    const confirmed = await member.call('PUT', '/v1/me/totp', { json: { code: totp.generate() } });
    expect(confirmed.status, confirmed.text).toBe(200);

    const { page, close } = await openConsole(browser, `${server.url}/console/?account=${account}`);
    try {
      await logInWithKeyboard(page, null, member.email, member.password);
      // The password was right: the form asks for the code, its field has the focus.
      const code = page.getByLabel('Code from your authenticator app');
      await code.waitFor();
      expect(await code.evaluate((e) => e === document.activeElement)).toBe(true);
      await expectNoAxeViolation(page);
      await consoleScreenshot(page, 'login-totp');
      // A code of the next period: the one confirming the enrollment may not be used twice.
      await page.keyboard.type(totp.generate({ timestamp: Date.now() + 30_000 }));
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: account }).waitFor();
    } finally {
      await close();
    }
  });

  it("sets the password of an invitation's link, which then logs in", async () => {
    const email = `invited-${db}@example.com`;
    const invited = await owner.call('POST', '/v1/members', { json: { email, role: 'viewer' } });
    expect(invited.status, invited.text).toBe(200);
    const link: string = invited.body.invitation.url;
    expect(link).toContain('/console/accept-invitation#token=');
    const { page, close } = await openConsole(browser, link);
    try {
      await page.getByRole('heading', { name: 'Join the account' }).waitFor();
      // The token does not stay in the address bar.
      expect(page.url()).toBe(`${server.url}/console/accept-invitation`);
      await expectNoAxeViolation(page);
      await page.getByLabel('New password').fill('invited-password-long-enough');
      await page.keyboard.press('Enter');
      await page.getByText(`Your password is set. Log in to ${account} with it.`).waitFor();
      await page.getByRole('link', { name: 'Log in' }).click();
      await logInWithKeyboard(page, null, email, 'invited-password-long-enough');
      await page.getByRole('heading', { name: account }).waitFor();
      // The link was used: a second time it is refused, in words.
      const again = await send(`${server.url}/v1/invitations/accept`, 'POST', {
        json: { token: new URL(link).hash.replace('#token=', ''), password: 'another-password-long-enough' },
      });
      expect(again.status).toBeGreaterThanOrEqual(400);
    } finally {
      await close();
    }
  });

  it("logs in through the account's identity provider: there and back, to the address the member started from", async () => {
    const idp = await identityProvider(`${server.url}/console/sso/callback`);
    try {
      const saved = await owner.call('PUT', '/v1/sso', {
        json: {
          issuer: idp.issuer,
          client_id: 'humantask',
          client_secret: 'provider-secret',
          allowed_domains: ['example.com'],
          default_role: 'viewer',
        },
      });
      expect(saved.status, saved.text).toBe(200);
      const { page, requests, close } = await openConsole(browser, `${server.url}/console/sessions?account=${account}`);
      try {
        await page.getByRole('heading', { name: 'Log in to the console' }).waitFor();
        await page.getByRole('button', { name: 'Log in with single sign-on' }).focus();
        await page.keyboard.press('Enter');
        await page.getByRole('heading', { name: 'Your sessions' }).waitFor();
        // Back at the address it started from, the provider's code gone from the address and the history.
        expect(page.url()).toBe(`${server.url}/console/sessions?account=${account}`);
        expect(requests.some((u) => u.startsWith(`${idp.issuer}/auth`))).toBe(true);
        expect(requests.some((u) => u.startsWith(`${server.url}/console/sso/callback?code=`))).toBe(true);
        expect(await page.getByText('ana@example.com (viewer)').count()).toBe(1);
        // The heading is drawn before the list has come: wait for its row.
        await page.getByRole('cell', { name: 'sso', exact: true }).waitFor();
        expect(await page.getByRole('cell', { name: 'sso', exact: true }).count()).toBe(1);
      } finally {
        await close();
      }
    } finally {
      await idp.close();
      await owner.call('DELETE', '/v1/sso');
    }
  });
});
