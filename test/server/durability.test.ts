// Delivery survives what operators meet: the server killed with SIGKILL while callbacks are
// pending, and two server processes sharing one PostgreSQL database.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { clusterAt } from '../support/postgres.ts';
import { serve } from '../support/process.ts';
import { client, databases, hasPostgres } from '../support/server.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const task = { instruction: 'Pick one', attachment_type: 'text', attachment: 'hello', categories: ['a', 'b'] };

/** How many of the task's callbacks the receiver answered with `status`. */
const answered = (hook: Receiver, taskId: string, status: number) =>
  hook.byTask.get(taskId)?.filter((r) => r.status === status).length ?? 0;

const testKeyOf = (output: string) => /test key: +(test_[0-9a-f]{32})/.exec(output)![1]!;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('kill -9 on %s', (db) => {
  it('delivers every pending callback after a restart, without resetting attempt counts', async () => {
    const hook = await startReceiver(503);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-kill-'));
    dirs.push(dataDir);
    const store: Record<string, string> =
      db === 'postgres' ? { DATABASE_URL: await clusterAt(inject('postgresUrl')).createDatabase() } : { DATA_DIR: dataDir };
    // A message the killed process held stays leased for DELIVERY_LEASE_MS: compressed here.
    const env = {
      ...store,
      DELIVERY_POLL_MS: '5',
      DELIVERY_LEASE_MS: '1000',
      CALLBACK_SCHEDULE_SCALE: '0.002',
      ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
    };
    try {
      const first = await serve(env);
      const key = testKeyOf(first.output());
      const api = client(first, 'current', key);
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push((await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } })).body.task_id);
      await until(() => ids.every((id) => answered(hook, id, 503) >= 2), 'two failed attempts per task');
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
      const failedBefore = new Map(ids.map((id) => [id, answered(hook, id, 503)]));
      hook.answer = 200;
      const second = await serve(env);
      try {
        const again = client(second, 'current', key);
        await until(async () => {
          for (const id of ids) if ((await again('GET', `/v1/task/${id}`)).body.callback_completed !== true) return false;
          return true;
        }, 'every callback delivered');
        for (const id of ids) {
          expect(answered(hook, id, 200), id).toBeGreaterThanOrEqual(1);
          const attempts = (await again('GET', `/v1/task/${id}/callbacks`)).body.docs as { status_code?: number }[];
          // Recorded attempts carry on from before the kill (an attempt under way at the kill may be
          // sent without being recorded: delivery is at least once).
          expect(attempts.length, id).toBeGreaterThanOrEqual(failedBefore.get(id)!);
          expect(attempts.at(-1)!.status_code).toBe(200);
        }
      } finally {
        second.child.kill('SIGTERM');
        await once(second.child, 'exit');
      }
    } finally {
      await hook.close();
    }
  });
});

describe.skipIf(!hasPostgres())('two server processes on one PostgreSQL', () => {
  it('deliver 1,000 callbacks between them, each exactly once', async () => {
    const hook = await startReceiver();
    const env = {
      DATABASE_URL: await clusterAt(inject('postgresUrl')).createDatabase(),
      DELIVERY_POLL_MS: '5',
      ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
      VALIDATE_RESPONSES: 'false',
    };
    const a = await serve(env);
    const b = await serve(env);
    try {
      const key = testKeyOf(a.output());
      const apis = [client(a, 'current', key), client(b, 'current', key)];
      const ids: string[] = [];
      for (let batch = 0; batch < 50; batch++) {
        const created = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            apis[i % 2]!('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url } }),
          ),
        );
        for (const r of created) {
          expect(r.status).toBe(200);
          ids.push(r.body.task_id);
        }
      }
      await until(() => ids.every((id) => hook.byTask.has(id)), 'every callback', 120_000);
      // Let both dispatchers run a while longer: a second delivery would show now.
      await new Promise((r) => setTimeout(r, 500));
      expect(hook.byTask.size).toBe(1000);
      expect(ids.filter((id) => answered(hook, id, 200) !== 1)).toEqual([]);
      expect(a.output()).toContain('listening');
      expect(b.output()).not.toMatch(/test key/); // one development account, made by the first
    } finally {
      for (const p of [a, b]) p.child.kill('SIGTERM');
      await Promise.all([once(a.child, 'exit'), once(b.child, 'exit')]);
      await hook.close();
    }
  });
});
