// `humantask import` and `humantask export` as a user types them, against a server on both
// databases: the file sent through the API, the import printed at its end (exit 1 when it did not
// complete), a second import of the same file creating nothing; the export's file written where -o
// says, with the tasks the filters match; usage errors exit 2.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin } from '../support/process.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { root } from '../support/spec.ts';

const run = promisify(execFile);

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('humantask import and export on %s', (db) => {
  let server: TestServer;
  const dir = mkdtempSync(path.join(tmpdir(), 'humantask-transfer-cli-'));
  beforeAll(async () => {
    server = await startTestServer(db);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function humantask(args: string[]) {
    const res = await run(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, HUMANTASK_URL: server.url, HUMANTASK_KEY: server.dev.test_key },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    return { code: res.code, stdout: String(res.stdout), stderr: String(res.stderr) };
  }

  it('imports a CSV file, and creates nothing twice when it is imported again', async () => {
    const file = path.join(dir, 'tickets.csv');
    writeFileSync(file, 'attachment,unique_id\nMy invoice is wrong.,cli-1\nThe app crashes.,cli-2\n');
    const params = JSON.stringify({
      callback_url: 'https://example.com/cb',
      instruction: 'Which?',
      attachment_type: 'text',
      categories: ['billing', 'support'],
    });
    const first = await humantask(['import', file, '--type', 'categorization', '--params', params, '--quiet']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ state: 'completed', format: 'csv', created: 2, duplicates: 0 });
    const again = await humantask(['import', file, '--type', 'categorization', '--params', params, '--quiet']);
    expect(JSON.parse(again.stdout)).toMatchObject({ state: 'completed', created: 0, duplicates: 2 });
    const tasks = await client(server, 'current', server.dev.test_key)('GET', '/v1/tasks?unique_id=cli-2');
    expect(tasks.body.docs[0].params.attachment).toBe('The app crashes.');
  });

  it('exports the tasks the filters match to the file -o names', async () => {
    const out = path.join(dir, 'tasks.jsonl.gz');
    const res = await humantask(['export', '--format', 'jsonl', '--unique-id', 'cli-1', '-o', out, '--quiet']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ state: 'completed', tasks_written: 1, filters: { unique_id: 'cli-1' } });
    const lines = gunzipSync(readFileSync(out)).toString().trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).unique_id)).toEqual(['cli-1']);
  });

  it('says what is wrong: an import that failed or was refused (exit 1), a usage error (exit 2)', async () => {
    const file = path.join(dir, 'bad.csv');
    writeFileSync(file, 'attachment\nhello\n');
    const untyped = await humantask(['import', file, '--quiet']);
    expect(untyped.code).toBe(1);
    expect(JSON.parse(untyped.stdout)).toMatchObject({ state: 'failed', error: expect.stringContaining('A CSV import needs type') });
    const refused = await humantask(['import', file, '--quiet', '--project', 'no-such-project']);
    expect(refused).toMatchObject({ code: 1, stderr: 'humantask: 404: Project "no-such-project" not found.\n' });
    expect((await humantask(['export', '-o', path.join(dir, 'x')])).code).toBe(2);
    expect((await humantask(['import'])).stderr).toMatch(/^humantask: which file\?/);
  });
});
