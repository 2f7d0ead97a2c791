// `humantask` as an operator runs it: a server process, and the accounts CLI beside it, on the
// same embedded database (through the server's loopback admin interface) and on PostgreSQL.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { inject, afterAll, describe, expect, it } from 'vitest';
import { clusterAt } from '../support/postgres.ts';
import { client, hasPostgres } from '../support/server.ts';
import { bin, serve } from '../support/process.ts';
import { root } from '../support/spec.ts';

const run = promisify(execFile);

async function cli(env: Record<string, string>, ...args: string[]) {
  const { stdout } = await run(process.execPath, [bin, 'accounts', ...args, ...(args.includes('--json') ? [] : ['--json'])], {
    env: { ...process.env, ...env },
    cwd: root,
  });
  return JSON.parse(stdout);
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('accounts CLI', () => {
  it('works beside a running server on the embedded database, and on it once the server stopped', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-cli-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir };
    const server = await serve(env);
    try {
      expect(server.output()).toMatch(/test key: +test_[0-9a-f]{32}/);
      expect(statSync(path.join(dataDir, 'admin.json')).mode & 0o777).toBe(0o600);
      const alice = await cli(env, 'create', '--name', 'alice', '--json');
      expect(alice).toMatchObject({ name: 'alice', test_key: expect.stringMatching(/^test_/), live_key: expect.stringMatching(/^live_/) });
      const api = client({ url: server.url }, 'current', alice.live_key);
      const task = {
        callback_url: 'https://example.com/cb',
        instruction: 'x',
        attachment_type: 'text',
        attachment: 'y',
        categories: ['a'],
      };
      expect((await api('POST', '/v1/task/categorization', { json: task })).status).toBe(200);
      await cli(env, 'set', '--name', 'alice', '--disable-type', 'categorization');
      expect((await api('POST', '/v1/task/categorization', { json: task })).status).toBe(402);
      expect(await cli(env, 'usage', '--name', 'alice')).toEqual({ name: 'alice', live_requests: 2, live_requests_charged: 0 });
      const rotated = await cli(env, 'rotate-key', '--name', 'alice', '--mode', 'live');
      expect((await api('GET', '/v1/tasks')).status).toBe(401);
      expect((await client({ url: server.url }, 'current', rotated.key)('GET', '/v1/tasks')).body.total).toBe(1);
      // The operator's list of failed callbacks, through the same admin interface.
      const { stdout } = await run(process.execPath, [bin, 'deliveries', '--failed', '--json'], {
        env: { ...process.env, ...env },
        cwd: root,
      });
      expect(JSON.parse(stdout)).toEqual([]);
      // The list counters against the tasks, through the same admin interface.
      const counts = await run(process.execPath, [bin, 'counts', '--json'], { env: { ...process.env, ...env }, cwd: root });
      expect(JSON.parse(counts.stdout)).toMatchObject({ in_order: true, repaired: false, differing: 0, differences: [] });
      expect(JSON.parse(counts.stdout).compared).toBeGreaterThan(0);
      // Structured request logs, and no secret in them.
      expect(server.output()).toMatch(/"status":402.*"msg":"request"/);
      for (const secret of [alice.test_key, alice.live_key, rotated.key, alice.signing_secret])
        expect(server.output()).not.toContain(secret);
    } finally {
      server.child.kill('SIGTERM');
      const [code] = await once(server.child, 'exit');
      expect(code).toBe(0);
    }
    expect(existsSync(path.join(dataDir, 'admin.json'))).toBe(false);
    const names = (await cli(env, 'list')).map((a: { name: string }) => a.name);
    expect(names).toEqual(['dev', 'alice']);
    // Restarted on the same data: nothing lost, no second development account.
    const again = await serve(env);
    try {
      expect(again.output()).not.toMatch(/test key/);
    } finally {
      again.child.kill('SIGTERM');
      await once(again.child, 'exit');
    }
  });

  it.skipIf(!hasPostgres())('works on PostgreSQL at any time', async () => {
    const env = { DATABASE_URL: await clusterAt(inject('postgresUrl')).createDatabase() };
    const server = await serve(env);
    try {
      const bob = await cli(env, 'create', '--name', 'bob', '--json');
      expect((await client({ url: server.url }, 'current', bob.test_key)('GET', '/v1/tasks')).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await once(server.child, 'exit');
    }
  });

  it("prints the development owner's first log-in in the banner, and makes owners with a one-time set-password link (issue 34)", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-cli-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, WORKER_PASSWORD_COST: '10' };
    const server = await serve(env);
    try {
      const banner = /e-mail: +(\S+)\n +password: +(\S+)/.exec(server.output());
      expect(banner, server.output()).not.toBeNull();
      const [, email, password] = banner!;
      const dev = await fetch(`${server.url}/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ account: 'dev', email, password }),
      });
      expect(dev.status).toBe(200);
      const created = await cli(env, 'create', '--name', 'bravo', '--owner', 'boss@example.com');
      expect(created.owner).toMatchObject({
        email: 'boss@example.com',
        set_password_url: expect.stringContaining(`${server.url}/console/reset-password#token=htl_`),
      });
      const token = new URL(created.owner.set_password_url).hash.replace('#token=', '');
      const set = await fetch(`${server.url}/v1/password_resets/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, password: 'boss-password-long' }),
      });
      expect(set.status).toBe(200);
      const login = await fetch(`${server.url}/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ account: 'bravo', email: 'boss@example.com', password: 'boss-password-long' }),
      });
      expect(login.status).toBe(200);
      // The operator's work is in the account's activity log.
      const log = await fetch(`${server.url}/v1/activity`, {
        headers: { authorization: `Basic ${Buffer.from(`${created.test_key}:`).toString('base64')}` },
      });
      const actions = ((await log.json()) as { docs: { action: string; actor: { type: string } }[] }).docs;
      expect(actions.find((e) => e.action === 'member.joined')?.actor.type).toBe('operator');
    } finally {
      server.child.kill('SIGTERM');
      await once(server.child, 'exit');
    }
  }, 120_000);
});
