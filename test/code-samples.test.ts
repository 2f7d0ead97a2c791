// The reference's code samples work: every operation's curl sample (scripts/code-samples.ts, as
// the docs build puts it in the reference) is run with a real curl against a real server, in test
// mode, with the shell variables it names set to objects that exist.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../server/domain/accounts.ts';
import { codeSamples, shellVariable } from '../scripts/code-samples.ts';
import { basicAuth } from './support/net.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { deref, generations, loadBundle, operations } from './support/spec.ts';

const run = promisify(execFile);
const task = { callback_url: 'https://example.com/cb', instruction: 'Pick one', attachment_type: 'text', attachment: 'My invoice is wrong.', categories: ['billing', 'support'] };

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
  afterAll(async () => {
    await server?.close();
  });

  it.each(generations)('every %s curl sample is accepted', async (gen) => {
    const doc = loadBundle(gen);
    const account = await createAccount(server.uow, `samples-${gen}`, new Date());
    const env: Record<string, string> = { HUMANTASK_KEY: account.test_key, HUMANTASK_URL: server.url };
    const ops = operations(gen, doc);
    // Creations first: their answers name the objects that the other samples' variables point at.
    const ordered = [...ops.filter((o) => !o.path.includes('{')), ...ops.filter((o) => o.path.includes('{'))];
    const failures: string[] = [];
    for (const { path, method, op } of ordered) {
      const sample = codeSamples(gen, path, method, op, (n) => deref(doc, n)).find((s) => s.label === 'curl')!;
      // Canceling needs a pending task: a live key's (test tasks complete at once).
      const key = op.operationId === 'cancelTask' ? account.live_key : account.test_key;
      if (path.includes('{taskId}')) {
        // A fresh task for each task operation (one cancels it, another audits it, ...).
        const res = await fetch(`${server.url}${gen === 'legacy' ? '/legacy' : ''}/v1/task/categorization`, {
          method: 'POST',
          headers: { authorization: basicAuth(key), 'content-type': 'application/json' },
          body: JSON.stringify(task),
        });
        expect(res.status).toBe(200);
        env[shellVariable('taskId')] = ((await res.json()) as { task_id: string }).task_id;
      }
      for (const [, name] of sample.source.matchAll(/\$([A-Z_]+)/g)) expect(env[name!], `${op.operationId}: $${name}`).toBeTruthy();
      const { status, body } = await curl(sample.source, { ...env, HUMANTASK_KEY: key });
      if (status >= 300) failures.push(`${op.operationId} (${method.toUpperCase()} ${path}): ${status} ${JSON.stringify(body)}`);
      if (status < 300 && method === 'post') {
        if (path === '/v1/projects') env.PROJECT_NAME = body.name;
        if (path === '/v1/batches') env.BATCH_NAME = body.name;
        if (path.startsWith('/v1/training_tasks/')) env.TRAINING_TASK_ID = body.id ?? body.task_id;
        if (path.startsWith('/v1/evaluation_tasks/')) env.EVALUATION_TASK_ID = body.id ?? body.task_id;
      }
    }
    expect(failures).toEqual([]);
  });
});
