// The packages as users get them: `npm pack` of both workspaces (`humantask`, `@humantask/client`),
// one `npm install <tarball>...` into a fresh folder outside the repository (the registry supplies
// every dependency), and then what a user runs there: `npx humantask --version`, `--help`, `serve`
// (answers over HTTP from the server bundle the package ships, and serves the labeling app and the
// console as the package ships them, built at pack time: neither label/'s nor console/'s sources nor
// the browser libraries are installed; the development owner logs in to that console in Chromium),
// `conformance` against that server (passes), `mock` (says how to get Prism, an optional
// peer dependency, and once it is installed answers at both generations' paths), and a strict
// TypeScript program using `@humantask/client` (the customer clients and the worker client) compiled
// with `"types": []` by TypeScript 5.9 and by the current major, then run on plain Node.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testBrowser } from './support/browser.ts';
import { logInWithKeyboard, openConsole } from './support/console.ts';
import { basicAuth } from './support/net.ts';
import { conformanceEnv } from './support/server.ts';
import { root } from './support/spec.ts';

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'humantask-packaging-'));
const app = path.join(dir, 'app');
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
const children: ChildProcess[] = [];

/** `npx humantask ...` in the consumer's folder. */
const npx = (args: string[], env: Record<string, string> = {}) =>
  run('npx', ['--no-install', 'humantask', ...args], { cwd: app, env: { ...process.env, ...env }, maxBuffer: 64 << 20 }).catch(
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

/** A long-running `npx humantask ...`; resolves with the first match of `ready` in its output. */
async function start(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ match: RegExpExecArray; output: () => string }> {
  // Its own process group: npx, npm's shell and node stop together.
  const child = spawn('npx', ['--no-install', 'humantask', ...args], {
    cwd: app,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = ready.exec(output);
      if (m) resolve(m);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`humantask ${args.join(' ')} exited with ${code}:\n${output}`)));
  });
  return { match, output: () => output };
}

beforeAll(async () => {
  const tarballs = path.join(dir, 'tarballs');
  mkdirSync(tarballs);
  mkdirSync(app);
  for (const workspace of [[], ['-w', '@humantask/client']]) {
    await run('npm', ['pack', ...workspace, '--pack-destination', tarballs], { cwd: root, maxBuffer: 64 << 20 });
  }
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // One install: both tarballs, and the TypeScript versions the consumer program is compiled with.
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      path.join(tarballs, `humantask-${version}.tgz`),
      path.join(tarballs, `humantask-client-${version}.tgz`),
      'typescript@5.9',
      'typescript-current@npm:typescript@latest',
      '@types/node@20',
    ],
    { cwd: app, maxBuffer: 64 << 20 },
  );
}, 600_000);

afterAll(async () => {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }),
  );
  rmSync(dir, { recursive: true, force: true });
});

it('installs the client alone with openapi-fetch as its only dependency', () => {
  const clientDir = path.join(app, 'node_modules', '@humantask', 'client');
  const client = JSON.parse(readFileSync(path.join(clientDir, 'package.json'), 'utf8'));
  expect(Object.keys(client.dependencies)).toEqual(['openapi-fetch']);
  // What a user reads on the registry's page and what they may do with it.
  expect(readFileSync(path.join(clientDir, 'README.md'), 'utf8')).toMatch(/^# @humantask\/client/);
  expect(readFileSync(path.join(clientDir, 'LICENSE'), 'utf8')).toMatch(/MIT License/);
  const installed = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
  expect(installed.dependencies).toMatchObject({
    humantask: expect.stringMatching(/^file:/),
    '@humantask/client': expect.stringMatching(/^file:/),
  });
});

it('ships the server, the mock and the conformance suite, but not the tests or the build scripts', () => {
  const installed = path.join(app, 'node_modules', 'humantask');
  for (const file of ['server/cli.ts', 'server/mock.ts', 'conformance/cli.ts', 'conformance/checks/index.ts'])
    expect(existsSync(path.join(installed, file)), file).toBe(true);
  for (const folder of ['test', 'scripts']) expect(existsSync(path.join(installed, folder)), folder).toBe(false);
});

it('ships the labeling app and the console built, without their sources, and installs no browser library or Prism', () => {
  const installed = path.join(app, 'node_modules', 'humantask');
  for (const file of [
    'label/public/index.html',
    'dist/label/app.js',
    'dist/label/vendor/pdf.min.mjs',
    'dist/label/THIRD-PARTY-LICENSES.txt',
    'console/public/index.html',
    'console/public/style.css',
    'dist/console/app.js',
    'dist/console/THIRD-PARTY-LICENSES.txt',
  ])
    expect(existsSync(path.join(installed, file)), file).toBe(true);
  for (const file of ['label/main.ts', 'label/players', 'console/main.tsx', 'console/screens'])
    expect(existsSync(path.join(installed, file)), file).toBe(false);
  expect(readFileSync(path.join(installed, 'dist', 'console', 'THIRD-PARTY-LICENSES.txt'), 'utf8')).toMatch(
    /^preact \d+\.\d+\.\d+, license MIT$/m,
  );
  const { dependencies } = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { dependencies: object };
  for (const name of ['three', 'konva', 'pdfjs-dist', 'dompurify', 'preact', '@stoplight/prism-cli']) {
    expect(Object.keys(dependencies), name).not.toContain(name);
    expect(existsSync(path.join(app, 'node_modules', name)), name).toBe(false);
  }
});

it('npx humantask --version and --help', async () => {
  const v = await npx(['--version']);
  expect(v.stdout).toBe(`${version}\n`);
  const help = await npx(['--help']);
  expect(help.stdout).toMatch(/^usage: humantask <command>/);
  for (const command of ['serve', 'accounts', 'deliveries', 'mock', 'conformance']) expect(help.stdout).toContain(`  ${command}`);
});

describe('npx humantask serve, and conformance against it', () => {
  let url: string;
  let keys: Record<string, string>;
  let serverOutput: () => string;
  beforeAll(async () => {
    const server = await start(
      ['serve'],
      { ...conformanceEnv, PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn', RATE_LIMIT_BURST: '0' },
      /try: curl/,
    );
    serverOutput = server.output;
    url = /listening on (http:\/\/\S+)/.exec(server.output())![1]!;
    const key = (label: string) => new RegExp(`${label}:\\s+(\\S+)`).exec(server.output())![1]!;
    keys = { test: key('test key'), live: key('live key'), callbackAuth: key('callback auth key'), signing: key('signing secret') };
  }, 180_000);

  it('answers over HTTP, both generations', async () => {
    for (const base of ['/v1', '/legacy/v1']) {
      const res = await fetch(`${url}${base}/tasks`, { headers: { authorization: basicAuth(keys.test!) } });
      expect(res.status, base).toBe(200);
    }
    expect((await fetch(`${url}/v1/tasks`)).status).toBe(401);
  });

  it('runs the server bundle the package ships (nothing to build, nothing through tsx)', () => {
    expect(serverOutput()).not.toMatch(/running the TypeScript through tsx/);
  });

  it('serves the labeling app as the package ships it: app.js, three.js in a chunk of its own, pdf.js', async () => {
    const shipped = (file: string) => readFileSync(path.join(app, 'node_modules', 'humantask', 'dist', 'label', file), 'utf8');
    const get = async (file: string) => {
      const res = await fetch(`${url}/label/${file}`);
      return { status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), text: await res.text() };
    };
    const page = await get('');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<script type="module" src="app.js"></script>');
    // The file built by `npm pack`, byte for byte: nothing is bundled at a request (the sources and
    // the libraries they import are not installed, see above).
    const main = await get('app.js');
    expect(main).toMatchObject({ status: 200, type: expect.stringMatching(/javascript/), cache: 'no-cache' });
    expect(main.text).toBe(shipped('app.js'));
    expect(main.text).toContain('humantask.label.token');
    const chunk = /import\("\.\/(chunks\/view-[\w-]+\.js)"\)/.exec(main.text)?.[1];
    expect(chunk, 'the lidar view is imported lazily').toBeDefined();
    const view = await get(chunk!);
    expect(view).toMatchObject({ status: 200, type: expect.stringMatching(/javascript/), cache: expect.stringMatching(/immutable/) });
    expect(view.text).toBe(shipped(chunk!));
    expect(view.text).toContain('WebGLRenderer');
    for (const file of ['pdf.min.mjs', 'pdf.worker.min.mjs']) {
      const pdfjs = await get(`vendor/${file}`);
      expect(pdfjs, file).toMatchObject({ status: 200, type: expect.stringMatching(/javascript/) });
      expect(pdfjs.text, file).toBe(shipped(`vendor/${file}`));
    }
    for (const missing of ['chunks/none.js', 'vendor/pdf.sandbox.min.mjs', 'THIRD-PARTY-LICENSES.txt', 'app.js.map'])
      expect((await get(missing)).status, missing).toBe(404);
  });

  it('serves the console as the package ships it: the page for every screen, app.js byte for byte', async () => {
    const shipped = (file: string) => readFileSync(path.join(app, 'node_modules', 'humantask', 'dist', 'console', file), 'utf8');
    const page = await fetch(`${url}/console/tasks?status=pending`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/console/app.js"></script>');
    const main = await fetch(`${url}/console/app.js`);
    expect(main.status).toBe(200);
    expect(main.headers.get('content-type')).toMatch(/javascript/);
    expect(main.headers.get('cache-control')).toBe('no-cache');
    const text = await main.text();
    expect(text).toBe(shipped('app.js'));
    // The roles of the contract's access table, put into the bundle when it was packed.
    expect(text).toContain('listMembers');
    for (const missing of ['chunks/none.js', 'THIRD-PARTY-LICENSES.txt', 'app.js.map', 'main.tsx'])
      expect((await fetch(`${url}/console/${missing}`)).status, missing).toBe(404);
  });

  it('lets the development owner log in to the installed console and open the data manager (Chromium)', async () => {
    const line = (label: string) => new RegExp(`^  ${label}:\\s+(\\S+)$`, 'm').exec(serverOutput())![1]!;
    const browser = await testBrowser(inject('browserEndpoint'));
    try {
      const { page, problems, requests, close } = await openConsole(browser, `${url}/console/tasks`);
      await logInWithKeyboard(page, line('account'), line('e-mail'), line('password'));
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
      await page.getByRole('link', { name: 'Members' }).waitFor();
      // Before the log-in the page asks GET /v1/session, whose 401 the browser logs: nothing else.
      expect(problems.filter((p) => !/401|Failed to load resource/.test(p))).toEqual([]);
      expect(requests.filter((r) => !r.startsWith(url))).toEqual([]);
      await close();
    } finally {
      await browser.close();
    }
  });

  it("passes the conformance suite run from the installed package (every operation's examples, both generations)", async () => {
    const res = await npx([
      'conformance',
      '--base-url',
      url,
      '--key',
      keys.test!,
      '--live-key',
      keys.live!,
      '--callback-auth-key',
      keys.callbackAuth!,
      '--signing-secret',
      keys.signing!,
      '--callback-host',
      '127.0.0.1',
      '--only',
      'examples/',
      '--cleanup',
    ]);
    expect(res.stdout).toMatch(/PASSED/);
    expect(res.stdout).not.toMatch(/FAILED/);
    expect(res.stdout).toMatch(/^Examples\s+[1-9]\d*\s+0\s+0$/m);
    // Tasks that completed before the cleanup count as ended (the older generation answers their cancel with 500).
    expect(res.stdout).toMatch(/^cleanup: \d+ of \d+ tasks created by the run cancelled, \d+ had already ended$/m);
  }, 600_000);
});

describe('npx humantask mock', () => {
  it('says how to get Prism, which a plain install leaves out', async () => {
    const res = await npx(['mock', '--port', '0']);
    expect((res as { code?: number }).code).toBe(1);
    expect(res.stderr).toMatch(/^humantask: the mock runs Prism \(@stoplight\/prism-cli\), which is not installed/);
    expect(res.stderr).toContain('npm install @stoplight/prism-cli@5.14.2');
  });

  it('answers both generations on one port once Prism is installed as it says', async () => {
    await run('npm', ['install', '--no-audit', '--no-fund', '@stoplight/prism-cli@5.14.2'], { cwd: app, maxBuffer: 64 << 20 });
    const mock = await start(['mock', '--port', '0'], {}, /listening on (http:\/\/\S+) /);
    const origin = mock.match[1]!;
    for (const base of ['/v1', '/legacy/v1']) {
      const res = await fetch(`${origin}${base}/tasks`, { headers: { authorization: basicAuth('test_any') } });
      expect(res.status, base).toBe(200);
      expect(Array.isArray(((await res.json()) as { docs: unknown[] }).docs), base).toBe(true);
    }
  }, 300_000);
});

describe('a strict TypeScript program using @humantask/client', () => {
  const program = `import { createClient, createLegacyClient, createWorkerClient, HumantaskError, VERSION } from '@humantask/client';
import { signCallback, verifyCallback } from '@humantask/client/node';

const client = createClient({ apiKey: 'test_x', baseUrl: 'http://127.0.0.1:9', retry: false });
const legacy = createLegacyClient({ apiKey: 'test_x', baseUrl: 'http://127.0.0.1:9', throwOnError: true });
const worker = createWorkerClient({ baseUrl: 'http://127.0.0.1:9', retry: false });
export async function typed(): Promise<void> {
  const res = await client.tasks.create('categorization', { attachment: 'x', attachment_type: 'text', categories: ['a'] });
  if (res.ok) res.data.task_id.toUpperCase();
  // @ts-expect-error no such task type
  await client.tasks.create('categorisation', {});
  const task = await legacy.tasks.get('x');
  task.data.urgency.toUpperCase();
  // A scripted worker: log in, take work (long poll), submit.
  await worker.login('ana@example.com', 'password');
  const next = await worker.next({ role: 'attempt', wait: 20 });
  if (!next.ok) {
    if (next.status === 403) next.error.code?.toUpperCase();
    return;
  }
  if (next.status === 204) return;
  const { assignment_id, lease_token = '' } = next.data;
  const done = await worker.submit(assignment_id, { lease_token, active_ms: 1000, response: { category: 'a' } });
  if (done.ok) done.data.status.toUpperCase();
  // @ts-expect-error a submit needs its lease token
  await worker.submit(assignment_id, { active_ms: 1000, response: { category: 'a' } });
}
const secret = 'whsec_' + btoa(String.fromCharCode(...new Uint8Array(32).fill(1)));
const now = Math.floor(Date.now() / 1000);
const body = JSON.stringify({ error: 'e', attachments: [] });
const verified = await verifyCallback(
  { 'service-callback-auth': 'k', 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': signCallback(secret, 'msg_1', now, body) },
  body,
  { callbackAuthKey: 'k', signingSecret: secret },
);
const failed = await client.tasks.get('x').catch((e: unknown) => (e as Error).name);
const workerFailed = await worker.next().catch((e: unknown) => (e as Error).name);
console.log(JSON.stringify({ verified: verified.type, failed, workerFailed, error: typeof HumantaskError, version: VERSION }));
`;

  it.each([
    ['TypeScript 5.9', 'typescript'],
    ['the current TypeScript', 'typescript-current'],
  ])(
    'compiles with %s ("types": [], strict, no skipLibCheck) and runs on plain Node',
    async (_name, compiler) => {
      const project = path.join(app, compiler);
      mkdirSync(project, { recursive: true });
      writeFileSync(path.join(project, 'main.ts'), program);
      const compilerOptions = {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        types: [],
        rootDir: '.',
        outDir: 'out',
      };
      writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }));
      const tsc = path.join(app, 'node_modules', compiler, 'bin', 'tsc');
      const check = await run(process.execPath, [tsc, '-p', project], { cwd: project }).catch((e: { stdout: string }) => e);
      expect(check.stdout).toBe('');
      const { stdout } = await run(process.execPath, [path.join(project, 'out', 'main.js')], { cwd: project });
      expect(JSON.parse(stdout)).toEqual({
        verified: 'attachmentError',
        failed: 'TypeError',
        workerFailed: 'TypeError',
        error: 'function',
        version,
      });
    },
    300_000,
  );
});
