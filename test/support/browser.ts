// Headless Chromium from Debian's package, driven by playwright-core (never a browser download).
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const args = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args });
}

/** A browser server for the whole test run (global setup); each test file connects to it. */
export async function launchBrowserServer(): Promise<{ wsEndpoint: string; close(): Promise<void> } | null> {
  if (!existsSync(chromiumPath)) return null;
  const server = await chromium.launchServer({ executablePath: chromiumPath, args });
  return { wsEndpoint: server.wsEndpoint(), close: () => server.close() };
}

/**
 * The test run's browser (`endpoint` from global setup), or one of this file's own where there is
 * none. Closing a connected browser closes this file's pages and contexts, not the browser.
 */
export function testBrowser(endpoint: string): Promise<Browser> {
  return endpoint ? chromium.connect(endpoint) : launchBrowser();
}
