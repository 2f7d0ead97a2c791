// The `humantask` command as a user types it: every command and subcommand answers --help with its
// usage and exit 0 and does nothing else; --version; a usage error says what was wrong and exits 2;
// a table by default and JSON with --json.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { bin } from './support/process.ts';
import { basicAuth } from './support/net.ts';
import { root } from './support/spec.ts';

const run = promisify(execFile);
const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs `humantask ...` with DATA_DIR in a fresh folder; the exit code, stdout and stderr. */
async function humantask(args: string[], env: Record<string, string> = {}) {
  const res = await run(process.execPath, [bin, ...args], {
    cwd: root,
    env: { ...process.env, DATA_DIR: path.join(dataDir, 'data'), ...env },
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  return { code: res.code, stdout: String(res.stdout), stderr: String(res.stderr) };
}

const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

describe('--help answers with the usage, exit 0, and nothing else happens', () => {
  it.each([
    [['--help'], /^usage: humantask <command>/],
    [['-h'], /^usage: humantask <command>/],
    [[], /^usage: humantask <command>/],
    [['help'], /^usage: humantask <command>/],
    [['help', 'mock'], /^usage: humantask mock/],
    [['serve', '--help'], /^usage: humantask serve/],
    [['mock', '--help'], /^usage: humantask mock/],
    [['mock', '-h'], /^usage: humantask mock/],
    [['accounts', '--help'], /^usage: humantask accounts <command>/],
    [['accounts', 'create', '--help'], /^usage: humantask accounts <command>/],
    [['accounts', 'set', '--name', 'x', '--help'], /^usage: humantask accounts <command>/],
    [['deliveries', '--help'], /^usage: humantask deliveries --failed/],
    [['counts', '--help'], /^usage: humantask counts/],
    [['workers', '--help'], /^usage: humantask workers <command>/],
    [['workers', 'create', '--help'], /^usage: humantask workers <command>/],
    [['mock', '--worker', '--help'], /^usage: humantask mock/],
    [['conformance', '--help'], /^usage: humantask conformance/],
  ])('humantask %j', async (args, usage) => {
    const res = await humantask(args as string[], { PORT: '1' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(usage);
    expect(res.stderr).toBe('');
    // Nothing was started or created: no store, no docs build, no server.
    expect(existsSync(path.join(dataDir, 'data'))).toBe(false);
  });
});

it('--version prints the package version', async () => {
  for (const flag of ['--version', '-v']) expect(await humantask([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
});

describe('a usage error says what was wrong, shows the usage and exits 2', () => {
  it.each([
    [['frobnicate'], 'unknown command: frobnicate', 'usage: humantask <command>'],
    [['--frobnicate'], 'unknown option: --frobnicate', 'usage: humantask <command>'],
    [['help', 'frobnicate'], 'unknown command: frobnicate', 'usage: humantask <command>'],
    [['serve', 'now'], 'unexpected argument: now', 'usage: humantask serve'],
    [['serve', '--port', '1'], "Unknown option '--port'", 'usage: humantask serve'],
    [['accounts'], 'which accounts command?', 'usage: humantask accounts'],
    [['accounts', 'frobnicate'], 'unknown accounts command: frobnicate', 'usage: humantask accounts'],
    [['accounts', 'create'], 'accounts create needs --name NAME', 'usage: humantask accounts'],
    [['accounts', 'rotate-key', '--name', 'a', '--mode', 'both'], 'needs --mode test or --mode live', 'usage: humantask accounts'],
    [['accounts', 'set', '--name', 'a', '--test-completion-delay-ms', 'soon'], 'whole number of milliseconds', 'usage: humantask accounts'],
    [['accounts', 'list', '--name'], "Option '--name <value>' argument missing", 'usage: humantask accounts'],
    [['deliveries'], 'deliveries needs --failed', 'usage: humantask deliveries'],
    [['workers'], 'which workers command?', 'usage: humantask workers'],
    [['workers', 'frobnicate'], 'unknown workers command: frobnicate', 'usage: humantask workers'],
    [['workers', 'create', '--role', 'labeler'], 'workers create needs --email ADDRESS', 'usage: humantask workers'],
    [['workers', 'pause'], 'workers pause needs --worker ID or --email ADDRESS', 'usage: humantask workers'],
    [['workers', 'create', '--email', 'a@example.com', '--password', 'x'], "Unknown option '--password'", 'usage: humantask workers'],
    [['deliveries', '--failed', '--limit', '0'], '--limit is a positive whole number', 'usage: humantask deliveries'],
    [['counts', '--limit', 'all'], '--limit is a positive whole number', 'usage: humantask counts'],
    [['counts', '--fix'], "Unknown option '--fix'", 'usage: humantask counts'],
    [['mock', '--port', 'x'], '--port is a port number', 'usage: humantask mock'],
    [['conformance', '--key', 'k'], '--base-url URL is required', 'usage: humantask conformance'],
  ])('humantask %j', async (args, message, usage) => {
    const res = await humantask(args as string[]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect(res.stdout + res.stderr).toContain(usage);
    expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(path.join(dataDir, 'data'))).toBe(false);
  });
});

describe('accounts and deliveries print a table, or JSON with --json', () => {
  it('accounts create, list, usage, rotate-key; deliveries --failed', async () => {
    const created = await humantask(['accounts', 'create', '--name', 'acme']);
    expect(created.code, created.stderr).toBe(0);
    const key = /^test_key\s+(test_\S+)$/m.exec(created.stdout)?.[1];
    expect(key).toBeDefined();

    const listJson = await humantask(['accounts', 'list', '--json']);
    const list = JSON.parse(listJson.stdout) as { name: string }[];
    expect(list.map((a) => a.name)).toContain('acme');
    const listTable = await humantask(['accounts', 'list']);
    const [header, ...rows] = listTable.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^account_id\s+name\s+/);
    expect(rows.some((r) => /\sacme\s/.test(r))).toBe(true);

    expect((await humantask(['accounts', 'usage', '--name', 'acme'])).stdout).toMatch(
      /^name\s+acme\nlive_requests\s+0\nlive_requests_charged\s+0\n$/,
    );
    expect(JSON.parse((await humantask(['accounts', 'usage', '--name', 'acme', '--json'])).stdout)).toEqual({
      name: 'acme',
      live_requests: 0,
      live_requests_charged: 0,
    });

    const rotated = JSON.parse((await humantask(['accounts', 'rotate-key', '--name', 'acme', '--mode', 'test', '--json'])).stdout) as {
      key?: string;
    };
    expect(rotated).toEqual({ name: 'acme', mode: 'test', key: expect.stringMatching(/^test_/) });
    expect(rotated.key).not.toBe(key);

    expect(await humantask(['deliveries', '--failed'])).toEqual({ code: 0, stdout: '(none)\n', stderr: '' });
    expect(JSON.parse((await humantask(['deliveries', '--failed', '--json'])).stdout)).toEqual([]);
    // The counters behind list totals, on the store directly (no server holds it): in order, exit 0.
    const counts = await humantask(['counts']);
    expect(counts.code, counts.stderr).toBe(0);
    expect(counts.stdout).toMatch(
      /^in_order\s+true\nrepaired\s+false\ncompared\s+\d+\ndiffering\s+0\ntag_rows_missing\s+0\ntag_rows_extra\s+0\n$/,
    );
  });

  it('a domain error names the problem and exits 2', async () => {
    const res = await humantask(['accounts', 'usage', '--name', 'nobody']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^humantask: No account named "nobody"/);
  });
});

it('mock --port serves both generations on that one port', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [bin, 'mock', '--port', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let output = '';
    const origin = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c) => {
        output += c;
        const m = /listening on (http:\/\/\S+) /.exec(output);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`mock exited with ${code}: ${output}`)));
    });
    for (const base of ['/v1', '/legacy/v1']) {
      expect((await fetch(`${origin}${base}/tasks`, { headers: { authorization: basicAuth('test_any') } })).status, base).toBe(200);
    }
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});
