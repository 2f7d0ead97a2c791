// Delivery survives what operators meet: the server killed with SIGKILL while callbacks are
// pending, and two server processes sharing one PostgreSQL database.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { clusterAt } from '../support/postgres.ts';
import { serve } from '../support/process.ts';
import { client, databases, hasPostgres } from '../support/server.ts';
import { until } from '../support/wait.ts';

const task = { instruction: 'Pick one', attachment_type: 'text', attachment: 'hello', categories: ['a', 'b'] };

/** A callback receiver counting POSTs per task; answers 503 until `up`. */
async function receiver() {
  const posts = new Map<string, { ok: number; failed: number }>();
  const state = { up: false };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const id = (JSON.parse(body) as { task_id: string }).task_id;
      const seen = posts.get(id) ?? { ok: 0, failed: 0 };
      if (state.up) seen.ok++;
      else seen.failed++;
      posts.set(id, seen);
      res.writeHead(state.up ? 200 : 503).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/cb`,
    posts,
    state,
    close: () => new Promise((r) => server.close(r)),
  };
}

const testKeyOf = (output: string) => /test key: +(test_[0-9a-f]{32})/.exec(output)![1]!;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('kill -9 on %s', (db) => {
  it('delivers every pending callback after a restart, without resetting attempt counts', async () => {
    const hook = await receiver();
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
      await until(() => ids.every((id) => (hook.posts.get(id)?.failed ?? 0) >= 2), 'two failed attempts per task');
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
      const failedBefore = new Map(ids.map((id) => [id, hook.posts.get(id)!.failed]));
      hook.state.up = true;
      const second = await serve(env);
      try {
        const again = client(second, 'current', key);
        await until(async () => {
          for (const id of ids) if ((await again('GET', `/v1/task/${id}`)).body.callback_completed !== true) return false;
          return true;
        }, 'every callback delivered');
        for (const id of ids) {
          expect(hook.posts.get(id)!.ok, id).toBeGreaterThanOrEqual(1);
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
    const hook = await receiver();
    hook.state.up = true;
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
      await until(() => ids.every((id) => hook.posts.has(id)), 'every callback', 120_000);
      // Let both dispatchers run a while longer: a second delivery would show now.
      await new Promise((r) => setTimeout(r, 500));
      expect(hook.posts.size).toBe(1000);
      expect([...hook.posts.values()].filter((p) => p.ok !== 1)).toEqual([]);
      expect(a.output()).toContain('listening');
      expect(b.output()).not.toMatch(/test key/); // one development account, made by the first
    } finally {
      for (const p of [a, b]) p.child.kill('SIGTERM');
      await Promise.all([once(a.child, 'exit'), once(b.child, 'exit')]);
      await hook.close();
    }
  });
});
