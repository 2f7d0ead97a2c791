// Several server processes on one database: separate servers on their own ports (as on several
// machines), and WORKERS=N processes behind one port. What a client sees must not depend on which
// process answers: one rate limit, one task per Idempotency-Key, one delivery per callback.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { readConfig } from '../../server/config.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { tokenBuckets } from '../../server/http/auth.ts';
import { startServer, type RunningServer } from '../../server/main.ts';
import { databaseBuckets } from '../../server/store/buckets.ts';
import { openStore } from '../../server/store/db.ts';
import { basicAuth } from '../support/net.ts';
import { clusterAt, dropDatabase } from '../support/postgres.ts';
import { serve } from '../support/process.ts';
import { client, databases, hasPostgres } from '../support/server.ts';
import { startReceiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const task = { instruction: 'Pick one', attachment_type: 'text', attachment: 'hello', categories: ['a', 'b'] };
const dirs: string[] = [];
afterAll(() =>
  dirs.forEach((d) => {
    rmSync(d, { recursive: true, force: true });
  }),
);

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('token buckets in the database on %s', (db) => {
  it('grants the burst, then refuses without taking; takes several at once; a full bucket is swept', async () => {
    const databaseUrl =
      db === 'postgres' ? await clusterAt(inject('postgresUrl')).createDatabase({ template: inject('postgresTemplate') }) : undefined;
    const store = await openStore({ databaseUrl, dataDir: 'memory://' });
    try {
      const buckets = databaseBuckets(store.execute);
      const takes = [];
      for (let i = 0; i < 4; i++) takes.push(await buckets.take('key:a', 0.001, 3));
      expect(takes.map((t) => t.taken)).toEqual([1, 1, 1, 0]);
      expect(takes.map((t) => Math.round(t.tokens))).toEqual([2, 1, 0, 0]);
      // Up to 3 at once: 3, then the 2 left, then none.
      const batches = [];
      for (let i = 0; i < 3; i++) batches.push(await buckets.take('key:c', 0.001, 5, 3));
      expect(batches.map((t) => [t.taken, Math.round(t.tokens)])).toEqual([
        [3, 2],
        [2, 0],
        [0, 0],
      ]);
      // Another key has its own bucket; one that refills at once is full again by the sweep.
      expect(await buckets.take('key:b', 1e9, 3)).toEqual({ taken: 1, tokens: 2 });
      expect(await buckets.deleteFull()).toBe(1);
      expect((await buckets.take('key:a', 0.001, 3)).taken).toBe(0);
    } finally {
      await store.close();
      if (databaseUrl) await dropDatabase(databaseUrl);
    }
  });
});

describe('shared token buckets, from one process', () => {
  it('spends tokens taken ahead without a statement, and refuses a key that ran out from memory', async () => {
    const calls: number[] = [];
    let left = 7;
    const shared = {
      async take(_key: string, _perSecond: number, _burst: number, count: number) {
        calls.push(count);
        const taken = Math.min(count, Math.floor(left));
        left -= taken;
        return { taken, tokens: left };
      },
      async giveBack() {},
    };
    const buckets = tokenBuckets(0.001, 7, shared, 5);
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      const wait = buckets.retryAfter('key:x');
      waits.push(wait > 0 ? wait : await buckets.take('key:x'));
    }
    // 5 taken by the first statement, the last 2 by the second, which saw the bucket empty: then
    // memory refuses, without a third statement.
    expect(calls).toEqual([5, 5]);
    expect(waits.map((w) => (w > 0 ? 'refused' : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'refused', 'refused']);
  });
});

describe.skipIf(!hasPostgres())('two servers on different ports, one PostgreSQL database', () => {
  it('start together on an empty database, share one rate limit, one failed-authentication limit, one task per Idempotency-Key and deliver each callback once', async () => {
    // An empty database: both migrate it at once (they take turns), and one of them makes the dev account.
    const databaseUrl = await clusterAt(inject('postgresUrl')).createDatabase();
    const hook = await startReceiver();
    const config = {
      ...readConfig({
        RATE_LIMIT_BURST: '20',
        RATE_LIMIT_PER_SECOND: '0.001',
        AUTH_FAILURE_BURST: '5',
        AUTH_FAILURE_PER_SECOND: '0.001',
        DELIVERY_POLL_MS: '20',
        ATTACHMENT_CHECK_POLL_MS: '0',
        ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
      }),
      port: 0,
      host: '127.0.0.1',
      dataDir: 'memory://',
      databaseUrl,
      // Servers on one database share the key that seals the account secrets (each would make its
      // own for an in-memory DATA_DIR, and one could not open what the other sealed).
      secretsKey: randomBytes(32).toString('hex'),
    };
    const servers: RunningServer[] = await Promise.all([
      startServer(config, pino({ level: 'silent' })),
      startServer(config, pino({ level: 'silent' })),
    ]);
    try {
      const [a, b] = servers as [RunningServer, RunningServer];
      expect(servers.filter((s) => s.devAccount !== null)).toHaveLength(1);
      const dev = (a.devAccount ?? b.devAccount)!;

      // The rate limit: 20 at once for the key, whichever server is asked (none refills meanwhile).
      const limited = [client(a, 'current', dev.test_key), client(b, 'current', dev.test_key)];
      const statuses: number[] = [];
      for (let round = 0; round < 5; round++) {
        const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => limited[i % 2]!('GET', '/v1/tasks')));
        statuses.push(...replies.map((r) => r.status));
        for (const r of replies) if (r.status === 429) expect(r.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.filter((s) => s === 429)).toHaveLength(30);

      // Idempotency-Key sent to both at once: one task, the same answer twice (another account,
      // with a bucket of its own).
      const other = await createAccount(a.uow, 'other', new Date());
      const apis = [client(a, 'current', other.test_key), client(b, 'current', other.test_key)];
      for (let k = 0; k < 5; k++) {
        const headers = { 'Idempotency-Key': `both-at-once-${k}` };
        const [first, second] = await Promise.all(
          apis.map((api) => api('POST', '/v1/task/categorization', { json: { ...task, callback_url: hook.url }, headers })),
        );
        expect([first!.status, second!.status]).toEqual([200, 200]);
        expect(second!.text).toBe(first!.text);
        expect([first!.headers.get('idempotent-replayed'), second!.headers.get('idempotent-replayed')].sort()).toEqual(
          ['true', null].sort(),
        );
      }
      const listed = await apis[0]!('GET', '/v1/tasks');
      expect(listed.body.total).toBe(5);

      // Each of those tasks' callbacks, delivered by one of the two dispatchers, once.
      const ids = (listed.body.docs as { task_id: string }[]).map((t) => t.task_id);
      // (Read from the store: the account's requests are rate limited too.)
      await until(async () => {
        for (const id of ids) if ((await b.uow.tasks.get(other.account_id, 'test', id))?.callbackCompleted !== true) return false;
        return true;
      }, 'every callback delivered');
      expect(ids.map((id) => hook.byTask.get(id)?.length)).toEqual([1, 1, 1, 1, 1]);

      // Failed authentications from this address: 5 in all, then 429 from both (last: a blocked
      // address is refused even with a good key).
      const strangers = [
        client(a, 'current', 'test_00000000000000000000000000000000'),
        client(b, 'current', 'test_00000000000000000000000000000000'),
      ];
      const failures: number[] = [];
      for (let i = 0; i < 12; i++) failures.push((await strangers[i % 2]!('GET', '/v1/tasks')).status);
      expect(failures.filter((s) => s === 401)).toHaveLength(5);
      expect(failures.slice(6)).toEqual([429, 429, 429, 429, 429, 429]);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await hook.close();
      await dropDatabase(databaseUrl);
    }
  });
});

/** One request on a new connection (the cluster hands each to the next free worker), tagged with `X-Request-Id`. */
function sendOnNewConnection(
  url: string,
  key: string,
  id: string,
  options: { method?: string; path?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${options.path ?? '/v1/tasks'}`,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: {
          authorization: basicAuth(key),
          'x-request-id': id,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Which process served each request, by its `X-Request-Id` (the access log names the pid). */
const pidsByRequest = (output: string): Map<string, number> =>
  new Map(
    output
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line) as { pid: number; request_id: string })
      .map((l) => [l.request_id, l.pid]),
  );

/** The pids that the access log shows serving requests. */
const servingPids = (output: string): Set<number> => new Set(pidsByRequest(output).values());

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!hasPostgres())('WORKERS=2 behind one port', () => {
  it('serves from both processes, replaces one killed with SIGKILL, and stops them all on SIGTERM', async () => {
    const databaseUrl = await clusterAt(inject('postgresUrl')).createDatabase({ template: inject('postgresTemplate') });
    const server = await serve({ DATABASE_URL: databaseUrl, WORKERS: '2', LOG_LEVEL: 'info', METRICS: 'true' });
    const exited = once(server.child, 'exit');
    try {
      const banner = /workers: 2 processes \((\d+), (\d+)\) behind this port/.exec(server.output());
      expect(banner, server.output()).not.toBeNull();
      const workers = [Number(banner![1]), Number(banner![2])];
      expect(workers).not.toContain(server.child.pid);
      const key = /test key: +(test_[0-9a-f]{32})/.exec(server.output())![1]!;

      // Each new connection goes to the next worker: both serve within a few requests.
      let sent = 0;
      for (; sent < 50 && servingPids(server.output()).size < 2; sent++)
        expect((await sendOnNewConnection(server.url, key, `get-${sent}`)).status).toBe(200);
      expect([...servingPids(server.output())].sort()).toEqual([...workers].sort());
      // /metrics counts the requests of both, whichever answers it.
      for (let i = 0; i < 2; i++) {
        const text = await (await fetch(`${server.url}/metrics`)).text();
        const line = text
          .split('\n')
          .find(
            (l) =>
              l.startsWith('humantask_http_request_duration_seconds_count') &&
              l.includes('operation="listTasks"') &&
              l.includes('status="200"'),
          );
        expect(Number(line?.split(' ').at(-1)), text).toBe(sent);
      }

      // kill -9 of one worker: the primary starts another, and the port keeps answering.
      process.kill(workers[0]!, 'SIGKILL');
      await until(() => /worker \d+ listening/.test(server.output()), 'a replacement worker');
      const replacement = Number(/worker (\d+) listening/.exec(server.output())![1]);
      expect(workers).not.toContain(replacement);
      for (let i = 0; i < 50 && !servingPids(server.output()).has(replacement); i++)
        expect((await sendOnNewConnection(server.url, key, `after-kill-${i}`)).status).toBe(200);
      expect(servingPids(server.output())).toContain(replacement);

      // SIGTERM to the primary: every worker stops, then the primary, with status 0.
      server.child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      for (const pid of [workers[1]!, replacement]) await until(() => !alive(pid), `worker ${pid} to exit`, 10_000);
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
      await exited;
      await dropDatabase(databaseUrl);
    }
  }, 120_000);
});

describe.skipIf(!hasPostgres())(
  'WORKERS=2 behind one port: one rate limit, one task per Idempotency-Key, one delivery per callback',
  () => {
    it('holds every client to one limit whichever process answers, replays across processes, and delivers each callback once', async () => {
      const databaseUrl = await clusterAt(inject('postgresUrl')).createDatabase({ template: inject('postgresTemplate') });
      const hook = await startReceiver();
      const server = await serve({
        DATABASE_URL: databaseUrl,
        WORKERS: '2',
        LOG_LEVEL: 'info',
        SECRETS_KEY: randomBytes(32).toString('hex'),
        // 30 requests per key, no refill during the test.
        RATE_LIMIT_BURST: '30',
        RATE_LIMIT_PER_SECOND: '0.001',
        DELIVERY_POLL_MS: '20',
        ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
      });
      const exited = once(server.child, 'exit');
      try {
        const workers = /workers: 2 processes \((\d+), (\d+)\) behind this port/.exec(server.output())!.slice(1).map(Number);
        const keys = {
          test: /test key: +(test_[0-9a-f]{32})/.exec(server.output())![1]!,
          live: /live key: +(live_[0-9a-f]{32})/.exec(server.output())![1]!,
        };
        let n = 0;
        const tag = () => `req-${n++}`;

        // The same Idempotency-Key on two connections at once (test key: each task completed at once,
        // its callback queued): one task, the same answer twice, one of them replayed. Up to 8 pairs,
        // until one pair was answered by both processes (the round robin gives a pair to both unless
        // one of them is busy).
        const created: string[] = [];
        let crossed = 0;
        for (let k = 0; k < 8 && crossed === 0; k++) {
          const ids = [tag(), tag()];
          const pair = await Promise.all(
            ids.map((id) =>
              sendOnNewConnection(server.url, keys.test, id, {
                method: 'POST',
                path: '/v1/task/categorization',
                json: { ...task, callback_url: hook.url },
                headers: { 'idempotency-key': `pair-${k}` },
              }),
            ),
          );
          expect(pair.map((r) => r.status)).toEqual([200, 200]);
          expect(pair[1]!.text).toBe(pair[0]!.text);
          expect(pair.map((r) => r.headers['idempotent-replayed']).sort()).toEqual(['true', undefined].sort());
          created.push((JSON.parse(pair[0]!.text) as { task_id: string }).task_id);
          await until(() => ids.every((id) => pidsByRequest(server.output()).has(id)), 'both requests in the access log');
          const served = pidsByRequest(server.output());
          if (served.get(ids[0]!) !== served.get(ids[1]!)) crossed++;
        }
        expect(crossed, 'a pair answered by both processes').toBe(1);
        const listed = await sendOnNewConnection(server.url, keys.test, tag());
        expect(JSON.parse(listed.text).total).toBe(created.length);

        // Each callback arrives once, though both processes run a dispatcher.
        await until(() => created.every((id) => hook.byTask.has(id)), 'every callback');
        // A second delivery would come within a few polls: wait for 10 more of them.
        await new Promise((r) => setTimeout(r, 200));
        expect(created.map((id) => hook.byTask.get(id)?.length)).toEqual(created.map(() => 1));
        expect(hook.byTask.size).toBe(created.length);

        // The rate limit of the live key: 30 in all, whichever process answers, 60 asked in rounds of 10.
        const statuses = new Map<string, number>();
        for (let round = 0; round < 6; round++) {
          const ids = Array.from({ length: 10 }, tag);
          const replies = await Promise.all(ids.map((id) => sendOnNewConnection(server.url, keys.live, id)));
          for (const [i, r] of replies.entries()) {
            statuses.set(ids[i]!, r.status);
            if (r.status === 429) expect(r.headers['retry-after']).toMatch(/^[1-9]\d*$/);
          }
        }
        expect([...statuses.values()].filter((s) => s === 200)).toHaveLength(30);
        expect([...statuses.values()].filter((s) => s === 429)).toHaveLength(30);
        // Both processes accepted some of the 30 (a limit per process would have accepted up to 60).
        await until(() => [...statuses.keys()].every((id) => pidsByRequest(server.output()).has(id)), 'every request in the access log');
        const served = pidsByRequest(server.output());
        const accepting = new Set([...statuses].filter(([, s]) => s === 200).map(([id]) => served.get(id)));
        expect([...accepting].sort()).toEqual([...workers].sort());
      } finally {
        server.child.kill('SIGTERM');
        await exited;
        await hook.close();
        await dropDatabase(databaseUrl);
      }
    }, 120_000);
  },
);

describe('WORKERS on the embedded database', () => {
  it('is refused at start with a message that says why and what to do', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-workers-'));
    dirs.push(dataDir);
    const start = serve({ DATA_DIR: dataDir, WORKERS: '2' });
    await expect(start).rejects.toThrow(
      /serve exited with 2: humantask: WORKERS=2 needs PostgreSQL \(DATABASE_URL\): the embedded database \(DATA_DIR\) is held by one process/,
    );
  });
});
