// The client's build, without the registry: client/tsconfig.build.json compiles it to JavaScript
// and declarations; a consumer with them in node_modules/@humantask/client (client/package.json's
// `exports`) type-checks strictly and runs on plain Node, no tsx. test/packaging.test.ts does the
// same from the packed tarball installed from the registry layout.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { root } from '../support/spec.ts';

const run = promisify(execFile);
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const dir = mkdtempSync(path.join(tmpdir(), 'humantask-client-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const manifest = JSON.parse(readFileSync(path.join(root, 'client', 'package.json'), 'utf8')) as { name: string; exports: object };

const consumer = `import { createClient, createLegacyClient, createWorkerClient, HumantaskError } from '@humantask/client';
import { signCallback, verifyCallback } from '@humantask/client/node';

const client = createClient({ apiKey: 'test_x', baseUrl: 'http://127.0.0.1:9', retry: false });
const legacy = createLegacyClient({ apiKey: 'test_x', baseUrl: 'http://127.0.0.1:9', throwOnError: true });
export async function typed() {
  const res = await client.tasks.create('categorization', { attachment: 'x', attachment_type: 'text', categories: ['a'] });
  if (res.ok) res.data.task_id.toUpperCase();
  // @ts-expect-error no such task type
  await client.tasks.create('categorisation', {});
  const task = await legacy.tasks.get('x');
  task.data.urgency.toUpperCase();
  const next = await worker.next({ wait: 20 });
  if (next.ok && next.status === 200) await worker.heartbeat(next.data.assignment_id, { lease_token: next.data.lease_token ?? '', active_ms: 0 });
  // @ts-expect-error 204 has no body
  if (next.ok && next.status === 204) next.data.assignment_id;
}
const worker = createWorkerClient({ baseUrl: 'http://127.0.0.1:9', token: 'wka_x', retry: false });
const secret = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
const now = Math.floor(Date.now() / 1000);
const body = JSON.stringify({ error: 'e', attachments: [] });
const verified = await verifyCallback(
  { 'service-callback-auth': 'k', 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': signCallback(secret, 'msg_1', now, body) },
  body,
  { callbackAuthKey: 'k', signingSecret: secret },
);
const failed = await client.tasks.get('x').catch((e: unknown) => (e as Error).name);
const workerFailed = await worker.me().catch((e: unknown) => (e as Error).name);
console.log(JSON.stringify({ verified: verified.type, failed, workerFailed, error: typeof HumantaskError }));
`;

it('compiles to JavaScript and declarations that a strict consumer can use on plain Node', async () => {
  const out = path.join(dir, 'build');
  await run(process.execPath, [tsc, '-p', path.join(root, 'client', 'tsconfig.build.json'), '--outDir', out], { cwd: root });

  const pkg = path.join(dir, 'app', 'node_modules', '@humantask', 'client');
  mkdirSync(pkg, { recursive: true });
  cpSync(out, path.join(pkg, 'dist'), { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: manifest.name, type: 'module', exports: manifest.exports }));
  for (const dep of ['openapi-fetch', 'openapi-typescript-helpers', '@types']) {
    symlinkSync(path.join(root, 'node_modules', dep), path.join(dir, 'app', 'node_modules', dep), 'dir');
  }
  const app = path.join(dir, 'app');
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', type: 'module' }));
  writeFileSync(path.join(app, 'main.ts'), consumer);
  writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        types: ['node'],
        outDir: 'out',
      },
      files: ['main.ts'],
    }),
  );
  const check = await run(process.execPath, [tsc, '-p', app], { cwd: app }).catch((e: { stdout: string }) => e);
  expect(check.stdout).toBe('');

  const { stdout } = await run(process.execPath, [path.join(app, 'out', 'main.js')], { cwd: app });
  expect(JSON.parse(stdout)).toEqual({ verified: 'attachmentError', failed: 'TypeError', workerFailed: 'TypeError', error: 'function' });
});
