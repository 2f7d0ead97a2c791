// `humantask workers ...` as an operator runs it: beside a running server on the embedded database
// (through its loopback admin interface), and on PostgreSQL. A worker made so logs in over HTTP.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { clusterAt } from '../support/postgres.ts';
import { bin, serve } from '../support/process.ts';
import { hasPostgres } from '../support/server.ts';
import { root } from '../support/spec.ts';
import { basicAuth } from '../support/net.ts';
import { bearer, logIn } from '../support/workers.ts';

const run = promisify(execFile);

async function workers(env: Record<string, string>, ...args: string[]) {
  const { stdout } = await run(process.execPath, [bin, 'workers', ...args, '--json'], {
    env: { ...process.env, WORKER_PASSWORD_COST: '10', ...env },
    cwd: root,
  });
  return JSON.parse(stdout);
}

/** Runs the CLI with a password on stdin, as `echo "$PW" | humantask workers ... --password-stdin`. */
async function workersWithStdin(env: Record<string, string>, input: string, ...args: string[]) {
  const child = spawn(process.execPath, [bin, 'workers', ...args, '--password-stdin', '--json'], {
    env: { ...process.env, WORKER_PASSWORD_COST: '10', ...env },
    cwd: root,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  child.stdin.end(input);
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`exit ${code}: ${err}`);
  return JSON.parse(out);
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function operatorFlow(env: Record<string, string>) {
  const server = await serve({ WORKER_PASSWORD_COST: '10', ...env });
  try {
    // An account registers the operator's address first (issue 31): that blocks nothing, and the
    // operator's commands by address act on the operator's worker only.
    const liveKey = /live key: +(\S+)/.exec(server.output())?.[1];
    expect(liveKey).toBeDefined();
    const squatting = await fetch(`${server.url}/v1/workforce/workers`, {
      method: 'POST',
      headers: { authorization: basicAuth(liveKey!), 'content-type': 'application/json' },
      body: JSON.stringify({
        email: 'OPS.ana@example.com',
        display_name: 'Squatter',
        roles: ['labeler'],
        password: 'the-squatters-password',
      }),
    });
    expect(squatting.status).toBe(200);
    const squatter = (await squatting.json()) as { worker_id: string };
    const made = await workers(env, 'create', '--email', 'ops.ana@example.com', '--name', 'Ana', '--role', 'labeler', '--role', 'reviewer');
    expect(made).toMatchObject({
      worker_id: expect.stringMatching(/^wkr_/),
      email: 'ops.ana@example.com',
      roles: 'labeler,reviewer',
      status: 'active',
      password: expect.any(String),
    });
    const token = await logIn(server, 'ops.ana@example.com', made.password);
    const me = await fetch(`${server.url}/worker/v1/me`, { headers: bearer(token) });
    expect(await me.json()).toMatchObject({ worker_id: made.worker_id, workforce: 'operator', roles: ['labeler', 'reviewer'] });

    const chosen = await workersWithStdin(
      env,
      'a-chosen-long-password\n',
      'create',
      '--email',
      'ops.bo@example.com',
      '--role',
      'lead',
      '--calibrator',
    );
    expect(chosen).toMatchObject({ email: 'ops.bo@example.com', roles: 'lead', calibrator: true });
    expect(chosen.password).toBeUndefined();
    await logIn(server, 'ops.bo@example.com', 'a-chosen-long-password');

    expect((await workers(env, 'list')).map((w: { email: string }) => w.email)).toEqual(['ops.bo@example.com', 'ops.ana@example.com']);
    expect(await workers(env, 'set-roles', '--email', 'ops.ana@example.com', '--role', 'labeler')).toMatchObject({ roles: 'labeler' });
    expect(await workers(env, 'pause', '--worker', made.worker_id)).toMatchObject({ status: 'paused' });
    expect((await workers(env, 'list', '--status', 'paused')).map((w: { email: string }) => w.email)).toEqual(['ops.ana@example.com']);
    expect(await workers(env, 'unpause', '--email', 'ops.ana@example.com')).toMatchObject({ status: 'active' });

    const reset = await workers(env, 'reset-password', '--email', 'ops.ana@example.com');
    expect(reset).toMatchObject({ worker_id: made.worker_id, revoked_tokens: 1, password: expect.any(String) });
    expect((await fetch(`${server.url}/worker/v1/me`, { headers: bearer(token) })).status).toBe(401);
    const fresh = await logIn(server, 'ops.ana@example.com', reset.password);

    expect(await workers(env, 'remove', '--email', 'ops.ana@example.com')).toMatchObject({ worker_id: made.worker_id, status: 'removed' });
    expect((await fetch(`${server.url}/worker/v1/me`, { headers: bearer(fresh) })).status).toBe(401);
    const theirs = await fetch(`${server.url}/v1/workforce/workers/${squatter.worker_id}`, {
      headers: { authorization: basicAuth(liveKey!) },
    });
    expect(((await theirs.json()) as { status: string }).status).toBe('active');
    await logIn(server, 'ops.ana@example.com', 'the-squatters-password');
    // A usage error or a refused command exits non-zero with the reason.
    await expect(
      run(process.execPath, [bin, 'workers', 'create', '--email', 'x@example.com'], { env: { ...process.env, ...env }, cwd: root }),
    ).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/--role/) });
    await expect(
      run(process.execPath, [bin, 'workers', 'create', '--email', 'ops.bo@example.com', '--role', 'labeler'], {
        env: { ...process.env, ...env },
        cwd: root,
      }),
    ).rejects.toMatchObject({ stderr: expect.stringMatching(/already used/) });
    expect(server.output()).not.toContain(reset.password);
  } finally {
    server.child.kill('SIGTERM');
    await once(server.child, 'exit');
  }
}

describe('workers CLI', () => {
  it("manages the operator's workforce beside a running server on the embedded database", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-workers-cli-'));
    dirs.push(dataDir);
    await operatorFlow({ DATA_DIR: dataDir });
    // With no server running, on the store directly.
    expect((await workers({ DATA_DIR: dataDir }, 'list')).map((w: { status: string }) => w.status)).toEqual(['active', 'removed']);
    // A dozen CLI processes, each starting Node and tsx: generous for a loaded machine.
  }, 400_000);

  it.skipIf(!hasPostgres())(
    'works on PostgreSQL',
    async () => {
      await operatorFlow({ DATABASE_URL: await clusterAt(inject('postgresUrl')).createDatabase() });
    },
    400_000,
  );
});
