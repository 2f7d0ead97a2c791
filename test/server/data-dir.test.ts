// The embedded data folder as local users and neighbour processes meet it (issue 15, findings 2 and
// 3): held by one server process at a time, a stale holder (kill -9) taken over, the folder and its
// files private to their owner, the secrets key beside it.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { lockFile } from '../../server/store/lock.ts';
import { defaultKeyFile } from '../../server/store/secrets.ts';
import { bin, serve } from '../support/process.ts';
import { root } from '../support/spec.ts';
import { client } from '../support/server.ts';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A command that ends by itself: its exit code and everything it wrote. */
async function finished(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, RATE_LIMIT_BURST: '0', DELIVERY_POLL_MS: '0', ATTACHMENT_CHECK_POLL_MS: '0', PORT: '0', ...env },
      cwd: root,
      timeout: 60_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

const testKeyOf = (output: string) => /test key: +(test_[0-9a-f]{32})/.exec(output)![1]!;
const task = { callback_url: 'https://example.com/cb', instruction: 'x', attachment_type: 'text', attachment: 'y', categories: ['a'] };

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else yield p;
  }
}

// Each test starts the server two or three times as a process of its own (about 12 s each on an
// idle machine, over a minute each when it is loaded): more than the default 120 s.
describe('one server per embedded data folder', { timeout: 400_000 }, () => {
  it('refuses a second server and a direct CLI naming the holder; takes over after kill -9 without losing a task', async () => {
    const parent = mkdtempSync(path.join(tmpdir(), 'humantask-lock-'));
    dirs.push(parent);
    const dataDir = path.join(parent, 'data');
    const env = { DATA_DIR: dataDir };
    const first = await serve(env);
    const api = client(first, 'current', testKeyOf(first.output()));
    const created = await api('POST', '/v1/task/categorization', { json: task });
    expect(created.status).toBe(200);

    const second = await finished(['serve'], env);
    expect(second.code).not.toBe(0);
    expect(second.output).toContain(`in use by process ${first.child.pid}`);
    expect(second.output).not.toMatch(/listening on/);
    // The running server's admin file is its own still (the second start did not overwrite it).
    expect(JSON.parse(readFileSync(path.join(dataDir, 'admin.json'), 'utf8')).pid).toBe(first.child.pid);
    // A CLI command that would open the folder itself (no admin interface to go through) refuses too.
    renameSync(path.join(dataDir, 'admin.json'), path.join(parent, 'admin.json'));
    const direct = await finished(['accounts', 'list'], env);
    expect(direct.code).not.toBe(0);
    expect(direct.output).toContain(`humantask: ${path.resolve(dataDir)} is in use by process ${first.child.pid}`);
    renameSync(path.join(parent, 'admin.json'), path.join(dataDir, 'admin.json'));

    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    expect(readFileSync(lockFile(dataDir), 'utf8').trim()).toBe(String(first.child.pid));
    const again = await serve(env);
    try {
      expect(readFileSync(lockFile(dataDir), 'utf8').trim()).toBe(String(again.child.pid));
      const read = await client(again, 'current', testKeyOf(first.output()))('GET', `/v1/task/${created.body.task_id}`);
      expect(read.status).toBe(200);
    } finally {
      again.child.kill('SIGTERM');
      await once(again.child, 'exit');
    }
    // A clean stop leaves no lock behind; the CLI opens the folder directly.
    expect(existsSync(lockFile(dataDir))).toBe(false);
    const listed = await finished(['accounts', 'list'], env);
    expect(listed.code, listed.output).toBe(0);
    expect(existsSync(lockFile(dataDir))).toBe(false);
  });

  it('creates the folder 0700 with files 0600 and a 0600 key file beside it; warns about a folder others may read', async () => {
    const parent = mkdtempSync(path.join(tmpdir(), 'humantask-modes-'));
    dirs.push(parent);
    const dataDir = path.join(parent, 'data');
    const first = await serve({ DATA_DIR: dataDir });
    first.child.kill('SIGTERM');
    await once(first.child, 'exit');
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const all = [...files(dataDir)];
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((f) => (statSync(f).mode & 0o077) !== 0)).toEqual([]);
    expect(statSync(defaultKeyFile(dataDir)).mode & 0o777).toBe(0o600);
    // No file of the folder (tables, WAL) holds the development account's signing secret.
    const secret = /signing secret: +whsec_(\S+)/.exec(first.output())![1]!;
    expect(all.filter((f) => readFileSync(f).includes(secret))).toEqual([]);

    const open = path.join(parent, 'open');
    mkdirSync(open);
    chmodSync(open, 0o755);
    const second = await serve({ DATA_DIR: open });
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
    expect(second.output()).toMatch(/has mode 755: other local users may read the database/);
  });
});
