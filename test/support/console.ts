// What a member does in the console (/console/), shared by its Chromium tests: open a page that
// records what the browser refused or logged, log in through the form with the keyboard alone, check
// a screen with axe-core, and take the screenshots docs/console.md shows.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import axe from 'axe-core';
import type { Browser, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { root } from './spec.ts';

export interface ConsolePage {
  page: Page;
  /** The browser console's errors and warnings (a CSP violation is one). */
  problems: string[];
  /** Every URL the page asked for. */
  requests: string[];
  close(): Promise<void>;
}

/** A page of its own (its own cookies) at 1280 × 800. */
export async function openConsole(browser: Browser, url: string): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url);
  return { page, problems, requests, close: () => context.close() };
}

/**
 * Logs in through the form as a person at the keyboard would: Tab between the fields, Enter to
 * send. Starts from the page's first field (the account name, unless given in the URL).
 */
export async function logInWithKeyboard(page: Page, account: string | null, email: string, password: string) {
  await page.getByRole('heading', { name: 'Log in to the console' }).waitFor();
  await page.getByLabel('Account').focus();
  if (account !== null) await page.keyboard.type(account);
  await page.keyboard.press('Tab');
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
}

/** axe-core's violations on the page as it is now (none expected), as short readable lines. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, not as a <script>: the page's CSP stays as it is.
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const runner = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; nodes: { target: unknown }[] }[] }> } }).axe;
    const result = await runner.run();
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  });
  return violations;
}

export async function expectNoAxeViolation(page: Page) {
  expect(await axeViolations(page)).toEqual([]);
}

/**
 * The screenshot `docs/console-<name>.png` shows: written to test-results/ on every run, copied over
 * the one in docs/ when the run has UPDATE_SCREENSHOTS=1 (then look at them and commit them).
 */
export async function consoleScreenshot(page: Page, name: string): Promise<void> {
  const file = path.join(root, 'test-results', `console-${name}.png`);
  mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file });
  if (process.env.UPDATE_SCREENSHOTS === '1') copyFileSync(file, path.join(root, 'docs', `console-${name}.png`));
}

/** How many pixels of a chart's canvas are painted (not transparent): 0 while nothing is drawn. */
export const paintedPixels = (canvas: Locator) =>
  canvas.evaluate((c: HTMLCanvasElement) => {
    const { data } = c.getContext('2d')!.getImageData(0, 0, c.width, c.height);
    let painted = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) painted++;
    return painted;
  });
