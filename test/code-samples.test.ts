// The reference's code samples work: every operation's curl sample (scripts/code-samples.ts, as
// the docs build puts it in the reference) is run with a real curl against a real server, in test
// mode, with the shell variables it names set to objects that exist; every TypeScript sample is
// compiled (strict) against the client's sources and run against the same server.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../server/domain/accounts.ts';
import { clientPackage, codeSamples, shellVariable, type CodeSample } from '../scripts/code-samples.ts';
import type { Generation } from '../scripts/lib.ts';
import { basicAuth } from './support/net.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { deref, generations, loadBundle, operations, type Json } from './support/spec.ts';

const run = promisify(execFile);
const repoRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const clientSource = path.join(repoRoot, 'client', 'index.ts');
const task = {
  callback_url: 'https://example.com/cb',
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
};

async function curl(source: string, env: Record<string, string>): Promise<{ status: number; body: any }> {
  const { stdout } = await run('sh', ['-c', `${source} -sS -w '\\n%{http_code}'`], { env: { PATH: process.env.PATH, ...env } });
  const cut = stdout.lastIndexOf('\n');
  const text = stdout.slice(0, cut);
  return { status: Number(stdout.slice(cut + 1)), body: text ? JSON.parse(text) : undefined };
}

// On the embedded database only: the samples are what is checked here, and the server's answers
// on PostgreSQL are the other suites' subject.
describe('code samples', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  /** Folders to remove when the file is done. */
  const temporary: string[] = [];
  afterAll(async () => {
    await server?.close();
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  });

  /** A worker of the account's own workforce (labeler and reviewer), made over HTTP: its id. */
  async function newWorker(key: string): Promise<string> {
    const res = await fetch(`${server.url}/v1/workforce/workers`, {
      method: 'POST',
      headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `sample-${randomBytes(6).toString('hex')}@example.com`,
        display_name: 'Sample',
        roles: ['labeler', 'reviewer'],
        password: 'a-long-enough-password',
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { worker_id: string }).worker_id;
  }

  /**
   * An account for one language's run, and its stand-ins for the worker ids the samples name (a
   * staffing lists workers; a reader puts in their own, as this does).
   */
  async function prepare(gen: Generation, lang: CodeSample['lang']) {
    const account = await createAccount(server.uow, `samples-${lang}-${gen}`, new Date());
    const doc = loadBundle(gen);
    const named = new Set<string>();
    for (const { path: apiPath, method, op } of operations(gen, doc))
      for (const sample of codeSamples(gen, apiPath, method, op, (n) => deref(doc, n)))
        for (const [id] of sample.source.matchAll(/wkr_[0-9a-f]{24}/g)) named.add(id);
    const workers = new Map<string, string>();
    for (const id of named) workers.set(id, await newWorker(account.test_key));
    const samples = (apiPath: string, method: string, op: Json) =>
      codeSamples(gen, apiPath, method, op, (n) => deref(doc, n)).map((s) => ({
        ...s,
        source: s.source.replaceAll(/wkr_[0-9a-f]{24}/g, (id) => workers.get(id)!),
      }));
    return { account, samples };
  }
  type Prepared = Awaited<ReturnType<typeof prepare>>;

  /**
   * Tag Identity's operations that these runs leave out, tested where they can run: a member's
   * session or a link's token (test/server/members.test.ts), a reachable identity provider
   * (test/server/sso.test.ts).
   */
  const elsewhere = (op: Json) => {
    const access = op['x-access'] as { public?: boolean; scope?: string };
    return (
      access.public === true ||
      access.scope === undefined ||
      ['getSsoSettings', 'setSsoSettings', 'deleteSsoSettings'].includes(op.operationId)
    );
  };

  /** A member of the account, invited over HTTP (one each for the operations on a member: one removes it, ...). */
  async function newMember(key: string): Promise<string> {
    const res = await fetch(`${server.url}/v1/members`, {
      method: 'POST',
      headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ email: `member-${randomBytes(6).toString('hex')}@example.com`, role: 'viewer' }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { member: { member_id: string } }).member.member_id;
  }

  /**
   * Runs every operation's sample of one language, creations first (their answers name the objects
   * that the other samples' variables point at); the failures, as `operationId: what`.
   */
  async function runAll(
    gen: Generation,
    lang: CodeSample['lang'],
    { account, samples }: Prepared,
    runOne: (sample: CodeSample, env: Record<string, string>) => Promise<{ status: number; body: any }>,
  ) {
    const doc = loadBundle(gen);
    const env: Record<string, string> = { HUMANTASK_KEY: account.test_key, HUMANTASK_URL: server.url };
    const ops = operations(gen, doc);
    const ordered = [...ops.filter((o) => !o.path.includes('{')), ...ops.filter((o) => o.path.includes('{'))];
    const failures: string[] = [];
    for (const { path: apiPath, method, op } of ordered) {
      if (elsewhere(op)) continue;
      const sample = samples(apiPath, method, op).find((s) => s.lang === lang)!;
      // A storage connection is tested against its bucket when it is made: the examples name a bucket
      // on a real provider, which no test reaches. test/server/storage.test.ts makes them against an
      // S3 server on loopback.
      if (op.tags?.includes('Storage')) continue;
      // A result file is read through the signed link a task's response gives (expires, signature),
      // which no sample can know: test/server/storage-results.test.ts reads them as a client does.
      if (op.operationId === 'getTaskResultFile') continue;
      // Canceling needs a pending task: a live key's (test tasks complete at once).
      const key = op.operationId === 'cancelTask' ? account.live_key : account.test_key;
      // A fresh worker for each worker operation (one removes it, another pauses it, ...).
      if (apiPath.includes('{workerId}')) env[shellVariable('workerId')] = await newWorker(account.test_key);
      if (apiPath.includes('{memberId}')) env[shellVariable('memberId')] = await newMember(account.test_key);
      if (apiPath.includes('{taskId}')) {
        // A fresh task for each task operation (one cancels it, another audits it, ...).
        const res = await fetch(`${server.url}${gen === 'legacy' ? '/legacy' : ''}/v1/task/categorization`, {
          method: 'POST',
          headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
          body: JSON.stringify(task),
        });
        expect(res.status).toBe(200);
        env[shellVariable('taskId')] = ((await res.json()) as { task_id: string }).task_id;
        // Promotion takes an audited task: the customer accepts it first.
        if (op.operationId === 'promoteTask') {
          const audit = await fetch(`${server.url}/v1/task/${env[shellVariable('taskId')]}/audit`, {
            method: 'POST',
            headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
            body: JSON.stringify({ accepted: true }),
          });
          expect(audit.status).toBe(200);
        }
      }
      for (const [, name] of sample.source.matchAll(/(?:\$|process\.env\.)([A-Z_]+)/g))
        expect(env[name!], `${op.operationId}: ${name}`).toBeTruthy();
      const { status, body } = await runOne(sample, { ...env, HUMANTASK_KEY: key });
      if (status >= 300) failures.push(`${op.operationId} (${method.toUpperCase()} ${apiPath}): ${status} ${JSON.stringify(body)}`);
      if (status < 300 && method === 'post') {
        if (apiPath === '/v1/projects') env.PROJECT_NAME = body.name;
        if (apiPath === '/v1/api_keys') env.KEY_ID = body.key.key_id;
        if (apiPath === '/v1/batches') env.BATCH_NAME = body.name;
        if (apiPath === '/v1/imports') env.IMPORT_ID = body.import_id;
        if (apiPath === '/v1/exports') env.EXPORT_ID = body.export_id;
        if (apiPath.startsWith('/v1/training_tasks/')) env.TRAINING_TASK_ID = body.id ?? body.task_id;
        if (apiPath.startsWith('/v1/evaluation_tasks/')) env.EVALUATION_TASK_ID = body.id ?? body.task_id;
        // The sample's e-mail address is one worker per workforce: free it for the next run.
        if (apiPath === '/v1/workforce/workers')
          expect(
            (
              await fetch(`${server.url}/v1/workforce/workers/${body.worker_id}`, {
                method: 'DELETE',
                headers: { authorization: basicAuth(key) },
              })
            ).status,
          ).toBe(200);
      }
    }
    return failures;
  }

  // One curl process per sample, one after another: slow on a busy machine.
  it.each(generations)(
    'every %s curl sample is accepted',
    async (gen) => {
      expect(await runAll(gen, 'curl', await prepare(gen, 'curl'), (sample, env) => curl(sample.source, env))).toEqual([]);
    },
    300_000,
  );

  /**
   * Both generations' TypeScript samples as a reader copies them, the package import pointed at the
   * client's sources, compiled by one tsc program (strict): what it reports, and the files.
   */
  let typescript: Promise<{ compiled: string; files: Record<Generation, Map<string, string>>; prepared: Record<Generation, Prepared> }>;
  const compileSamples = () => {
    typescript ??= (async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'humantask-samples-'));
      temporary.push(dir);
      const files = {} as Record<Generation, Map<string, string>>;
      const prepared = {} as Record<Generation, Prepared>;
      for (const gen of generations) {
        const doc = loadBundle(gen);
        prepared[gen] = await prepare(gen, 'TypeScript');
        files[gen] = new Map();
        for (const [i, { path: apiPath, method, op }] of operations(gen, doc).entries()) {
          const sample = prepared[gen].samples(apiPath, method, op).find((s) => s.lang === 'TypeScript');
          if (!sample) continue;
          const file = path.join(dir, `${gen}-${i}.ts`);
          writeFileSync(file, sample.source.replace(`from '${clientPackage}'`, `from ${JSON.stringify(clientSource)}`) + '\nexport {};\n');
          files[gen].set(sample.source, file);
        }
      }
      const tsconfig = {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          types: ['node'],
          typeRoots: [path.join(repoRoot, 'node_modules', '@types')],
        },
        files: generations.flatMap((gen) => [...files[gen].values()]),
      };
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
      const compiled = await run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { cwd: repoRoot }).then(
        () => '',
        (err: { stdout?: string }) => err.stdout ?? String(err),
      );
      return { compiled, files, prepared };
    })();
    return typescript;
  };

  it.each(generations)('every %s TypeScript sample compiles (strict) and is accepted', async (gen) => {
    const { compiled, files, prepared: all } = await compileSamples();
    // One program for both generations: a sample of this one is named by its file (current-3.ts).
    expect(compiled.split('\n').filter((line) => line.includes(`${gen}-`))).toEqual([]);
    expect(compiled).toBe('');
    const byText = files[gen];
    const prepared = all[gen];
    // Run: each sample's variables set in process.env, what it logs is its answer, a throw its error.
    const saved = { ...process.env };
    const log = vi.spyOn(console, 'log');
    try {
      const failures = await runAll(gen, 'TypeScript', prepared, async (sample, env) => {
        Object.assign(process.env, env);
        log.mockClear();
        try {
          await import(byText.get(sample.source)!);
          return { status: 200, body: log.mock.calls[0]?.[0] };
        } catch (err) {
          // A sample throws the answer's `status_code: error`.
          const status = /^Error: (\d{3}): /.exec(String(err))?.[1];
          return { status: status ? Number(status) : 500, body: String(err) };
        }
      });
      expect(failures).toEqual([]);
    } finally {
      log.mockRestore();
      process.env = saved;
    }
  });
});
