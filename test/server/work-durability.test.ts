// Issue 18: `kill -9` of the server during a burst of claims and submits at /worker/v1, on PGlite
// (DATA_DIR) and PostgreSQL. After a restart on the same database: every submit answered 200 is
// stored (its assignment submitted, the task completed with that response), no task is completed
// twice or has two submitted attempts, no task is stuck (once the dead server's leases lapse, fresh
// workers take and finish every task left), and the customer's receiver gets each completed task's
// callback exactly once. The leases are the default 10 minutes, so that none lapses between a claim
// and its submit however loaded the machine; the restarted server (in this process) is on a clock
// the test moves on past the dead server's leases (test/support/clock.ts).
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { readConfig } from '../../server/config.ts';
import { startServer, type RunningServer } from '../../server/main.ts';
import { testClock } from '../support/clock.ts';
import { clusterAt } from '../support/postgres.ts';
import { serve } from '../support/process.ts';
import { client, databases, hasPostgres } from '../support/server.ts';
import { startReceiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';
import { logIn, workerClient } from '../support/workers.ts';

const tasks = 30;
const categories = ['cat', 'dog', 'bird'];

/** An account's own worker, created with its API key and logged in. */
async function hire(server: { url: string }, key: string, name: string) {
  const email = `${name}@example.com`;
  const password = `pw-${name}-${Math.random().toString(16).slice(2)}`;
  const made = await client(server, 'current', key)('POST', '/v1/workforce/workers', {
    json: { email, display_name: name, roles: ['labeler'], password },
  });
  expect(made.status, made.text).toBe(200);
  return logIn(server, email, password);
}

const dirs: string[] = [];
afterAll(() =>
  dirs.forEach((d) => {
    rmSync(d, { recursive: true, force: true });
  }),
);

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the work loop after kill -9 on %s', (db) => {
  it('loses no acknowledged submit, completes no task twice, leaves none stuck, queues each callback once', async () => {
    const hook = await startReceiver();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-work-kill-'));
    dirs.push(dataDir);
    const env: Record<string, string> = {
      ...(db === 'postgres' ? { DATABASE_URL: await clusterAt(inject('postgresUrl')).createDatabase() } : { DATA_DIR: dataDir }),
      WORKER_PASSWORD_COST: '10',
      // No lease lapses between a claim and its submit (the assignments list of each acknowledged
      // task must hold that one attempt only).
      WORK_LEASE_SECONDS: '600',
      WORK_SWEEP_POLL_MS: '50',
      ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
    };
    // Delivery is off in the first server: a callback sent just before the kill could be sent again
    // (delivery is at least once); this test is about what is queued.
    const first = await serve({ ...env, DELIVERY_POLL_MS: '0' });
    let second: RunningServer | undefined;
    try {
      const key = /live key: +(live_[0-9a-f]{32})/.exec(first.output())![1]!;
      const customer = client(first, 'current', key);
      const ids: string[] = [];
      for (let i = 0; i < tasks; i++) {
        const res = await customer('POST', '/v1/task/categorization', {
          json: { callback_url: hook.url, instruction: 'Pick', attachment_type: 'text', attachment: `item ${i}`, categories },
        });
        expect(res.status, res.text).toBe(200);
        ids.push(res.body.task_id);
      }
      const tokens = await Promise.all(Array.from({ length: 6 }, (_, w) => hire(first, key, `burst-${db}-${w}`)));

      // Six workers claiming and submitting until the kill, which comes after the 12th acknowledged submit.
      const acknowledged = new Map<string, { assignmentId: string; response: unknown }>();
      const exited = once(first.child, 'exit');
      const burst = tokens.map(async (token, w) => {
        const call = workerClient(first, token);
        for (let i = 0; ; i++) {
          try {
            const next = await call('POST', '/v1/assignments/next', {});
            if (next.status !== 200) return; // nothing left for this worker
            const { assignment_id: id, lease_token, task } = next.body;
            const response = { category: categories[(w + i) % categories.length] };
            const done = await call('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 1000, response });
            if (done.status === 200) {
              expect(done.body).toMatchObject({ assignment_id: id, status: 'submitted', response });
              expect(acknowledged.has(task.task_id), `${task.task_id} acknowledged twice`).toBe(false);
              acknowledged.set(task.task_id, { assignmentId: id, response });
              if (acknowledged.size === 12) first.child.kill('SIGKILL');
            }
          } catch {
            return; // the server is gone
          }
        }
      });
      await Promise.all([...burst, exited]);
      expect(acknowledged.size).toBeGreaterThanOrEqual(12);
      expect(acknowledged.size).toBeLessThan(tasks);

      const clock = testClock();
      second = await startServer(
        readConfig({
          ...env,
          PORT: '0',
          RATE_LIMIT_BURST: '0',
          AUTH_FAILURE_BURST: '0',
          ATTACHMENT_CHECK_POLL_MS: '0',
          DELIVERY_POLL_MS: '20',
        }),
        pino({ level: 'silent' }),
        { now: clock.now },
      );
      const again = client(second, 'current', key);
      // Every acknowledged submit is stored.
      for (const [taskId, { assignmentId, response }] of acknowledged) {
        const task = await again('GET', `/v1/task/${taskId}`);
        expect(task.body, taskId).toMatchObject({ status: 'completed', response });
        const worked = await again('GET', `/v1/task/${taskId}/assignments`);
        expect(worked.status, worked.text).toBe(200);
        expect(worked.body.docs, taskId).toEqual([expect.objectContaining({ assignment_id: assignmentId, status: 'submitted' })]);
      }

      // Nothing is stuck: once the dead server's leases lapse, fresh workers take and finish the rest.
      clock.advance(600_000 + 1000);
      const drainers = await Promise.all([0, 1].map(async (w) => workerClient(second!, await hire(second!, key, `drain-${db}-${w}`))));
      const finished = new Map<string, unknown>();
      await until(
        async () => {
          for (const call of drainers) {
            const next = await call('POST', '/v1/assignments/next', {});
            if (next.status !== 200) continue;
            const { assignment_id: id, lease_token, task } = next.body;
            expect(acknowledged.has(task.task_id), `${task.task_id} was handed out again after its acknowledged submit`).toBe(false);
            const response = { category: 'bird' };
            const done = await call('POST', `/v1/assignments/${id}/submit`, { lease_token, active_ms: 1000, response });
            expect(done.status, done.text).toBe(200);
            finished.set(task.task_id, response);
          }
          // A submit may have committed without its answer reaching the worker before the kill.
          for (const taskId of ids)
            if (
              !acknowledged.has(taskId) &&
              !finished.has(taskId) &&
              (await again('GET', `/v1/task/${taskId}`)).body.status !== 'completed'
            )
              return false;
          return true;
        },
        'every task completed',
        30_000,
      );

      // Every task completed once, with one submitted attempt; and its callback arrives exactly once.
      const responses = new Map<string, unknown>();
      for (const taskId of ids) {
        const task = await again('GET', `/v1/task/${taskId}`);
        expect(task.body.status, taskId).toBe('completed');
        expect(categories, taskId).toContain(task.body.response.category);
        const expected = acknowledged.get(taskId)?.response ?? finished.get(taskId);
        if (expected) expect(task.body.response, taskId).toEqual(expected);
        responses.set(taskId, task.body.response);
        const submitted = (await again('GET', `/v1/task/${taskId}/assignments`)).body.docs.filter(
          (a: { status: string }) => a.status === 'submitted',
        );
        expect(submitted, taskId).toHaveLength(1);
      }
      await hook.waitFor(() => hook.byTask.size >= tasks, 'every callback', 30_000);
      const legacy = client(second, 'legacy', key);
      await until(async () => {
        for (const taskId of ids) if ((await legacy('GET', `/v1/task/${taskId}`)).body.callback_succeeded !== true) return false;
        return true;
      }, 'every delivery recorded');
      expect(hook.received.map((c) => c.json.task_id).sort()).toEqual([...ids].sort());
      for (const { json: c } of hook.received) expect(c.response, c.task_id).toEqual(responses.get(c.task_id));
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      await second?.close();
      await hook.close();
    }
  });
});
