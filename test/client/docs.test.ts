// docs/client.md's examples are the files in test/client/examples/ (type-checked with the rest of
// the project), shown verbatim except for the import specifiers, and each one runs against the
// reference server. Every ```ts block of the guide must be one of them.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startTestServer, type TestServer } from '../support/server.ts';
import { root } from '../support/spec.ts';
import { createWorker, type TestWorker } from '../support/workers.ts';

const examplesDir = path.join(root, 'test', 'client', 'examples');
const examples = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.ts'))
  .sort();

/** The example as the guide shows it: imported from the package, not from the source tree. */
const asShown = (source: string) =>
  source
    .replaceAll(`'../../../client/index.ts'`, `'@humantask/client'`)
    .replaceAll(`'../../../client/node.ts'`, `'@humantask/client/node'`)
    .trim();

const guide = readFileSync(path.join(root, 'docs', 'client.md'), 'utf8');
const blocks = [...guide.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.trim());

/** What each example must print when it works. */
const expected: Record<string, RegExp[]> = {
  'quickstart.ts': [/response: \{ category: '(billing|technical|other)' \}/],
  'errors.ts': [/no such task: Task 65f1c0a2b3c4d5e6f7a8b9c0 not found/, /404 POST \/v1\/task\/\{taskId\}\/cancel/],
  'pagination.ts': [/completed categorization tasks: [1-9]/, /total: [1-9]/],
  'callbacks.ts': [/attachment failed: \[ 'https:\/\/example.com\/a.jpg' \]/, /answer: 200/],
  'worker.ts': [/task [0-9a-f]{24}: submitted \(billing\)/, /no more work for now/],
  'result-files.ts': [/linked: true/, /^(car|truck) \d+$/m, /events: \d+/],
};

describe('docs/client.md', () => {
  it('shows every example file verbatim, and nothing else as TypeScript', () => {
    expect(examples.length).toBeGreaterThan(0);
    for (const file of examples) expect(blocks, file).toContain(asShown(readFileSync(path.join(examplesDir, file), 'utf8')));
    expect(blocks).toHaveLength(examples.length);
    expect(Object.keys(expected).sort()).toEqual(examples);
  });

  describe('examples run against the reference server', () => {
    let server: TestServer;
    let worker: TestWorker;
    beforeAll(async () => {
      server = await startTestServer('pglite');
      // For worker.ts: one of the operator's workers, and a live task for it to do.
      worker = await createWorker(server);
      const live = await client(server, 'current', server.dev.live_key)('POST', '/v1/task/categorization', {
        json: {
          callback_url: 'https://example.com/cb',
          instruction: 'Pick one',
          attachment_type: 'text',
          attachment: 'Charged twice',
          categories: ['billing', 'other'],
        },
      });
      expect(live.status, live.text).toBe(200);
    });
    afterAll(async () => {
      await server?.close();
    });

    // In this order: quickstart creates the tasks that pagination walks.
    it.each(['quickstart.ts', 'errors.ts', 'pagination.ts', 'callbacks.ts', 'worker.ts', 'result-files.ts'])('%s', async (file) => {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(examplesDir, file)], {
        cwd: root,
        env: {
          ...process.env,
          HUMANTASK_URL: server.url,
          HUMANTASK_API_KEY: server.dev.test_key,
          HUMANTASK_CALLBACK_AUTH_KEY: server.dev.callback_auth_key,
          HUMANTASK_SIGNING_SECRET: server.dev.signing_secret,
          HUMANTASK_WORKER_EMAIL: worker.email,
          HUMANTASK_WORKER_PASSWORD: worker.password,
        },
      });
      expect(stderr).toBe('');
      for (const pattern of expected[file]!) expect(stdout).toMatch(pattern);
    });
  });
});
