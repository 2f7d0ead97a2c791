// `npm start` as an operator runs it, stopped as a process manager stops it: SIGTERM to npm's own
// process id. npm forwards the signal to the script's shell; the script `exec`s the server, so the
// server itself receives it, finishes in-flight requests, closes the store and exits.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../support/spec.ts';
import { until } from '../support/wait.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-signal-'));
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.key`, { force: true });
});

const answers = (url: string) =>
  fetch(url + '/healthz').then(
    (r) => r.ok,
    () => false,
  );

describe('npm start', () => {
  it('stops the server when npm gets SIGTERM', async () => {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', DELIVERY_POLL_MS: '0', ATTACHMENT_CHECK_POLL_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout!.on('data', (c) => (output += c));
    npm.stderr!.on('data', (c) => (output += c));
    const exited = once(npm, 'exit');
    try {
      await until(() => /listening on http:\/\/\S+/.test(output) || npm.exitCode !== null, 'the server to listen', 120_000);
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      expect(url, output).toBeDefined();
      expect(await answers(url!)).toBe(true);
      // Which key seals the accounts' secrets is said at start: the file beside DATA_DIR here.
      expect(output).toContain(`secrets key: the key file ${dataDir}.key`);
      npm.kill('SIGTERM');
      await exited;
      expect(output).toMatch(/"reason":"SIGTERM".*shutting down/);
      expect(output).toMatch(/"msg":"stopped"/);
      // Not only npm: the server is gone too (before the fix it kept the port, orphaned).
      await until(async () => !(await answers(url!)), 'the server to stop answering', 30_000);
      expect(await answers(url!)).toBe(false);
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    }
  }, 180_000);
});
