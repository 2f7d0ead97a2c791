// The reference server for tests: started in this process on loopback, on embedded PGlite (in
// memory) or on a fresh database of the test run's PostgreSQL cluster.
import { inject } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { readConfig, type Config } from '../../server/config.ts';
import { createAccount, updateAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { DISABLED_TYPES } from '../../conformance/checks/account-settings.ts';
import type { AppDeps } from '../../server/app.ts';
import { startServer, type RunningServer } from '../../server/main.ts';
import { basicAuth } from './net.ts';
import { clusterAt, dropDatabase } from './postgres.ts';
import { createWorker } from './workers.ts';

export const databases = ['pglite', 'postgres'] as const;
export type DatabaseKind = (typeof databases)[number];

/** PostgreSQL variants run where the test run has a cluster (always in CI). */
export const hasPostgres = () => inject('postgresUrl') !== '';

/**
 * The server settings under which the conformance suite runs against our server (its tests and the
 * mutation run): delivery and attachment checks on, towards loopback; the retry schedule compressed.
 * Delayed test completions are looked for at the default pace (1 s), as operators run it: a server
 * that left undelayed test tasks to that poller would show them pending for a while.
 * Leases of 10 s: workforce/lease-expiry waits one out (it skips leases over 15 s); long enough
 * for the other workforce checks to finish their work under load.
 */
export const conformanceEnv = {
  DELIVERY_POLL_MS: '50',
  ATTACHMENT_CHECK_POLL_MS: '50',
  ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
  CALLBACK_SCHEDULE_SCALE: '0.001',
  WORK_LEASE_SECONDS: '10',
} as const;

export interface TestServer extends RunningServer {
  dev: AccountSecrets;
}

export async function startTestServer(
  db: DatabaseKind,
  env: Record<string, string> = {},
  logger = pino({ level: 'silent' }),
  /** The work loop's draws; the clock of what lapses (test/support/clock.ts). */
  options: Pick<AppDeps, 'random' | 'now'> = {},
): Promise<TestServer> {
  const databaseUrl =
    db === 'postgres' ? await clusterAt(inject('postgresUrl')).createDatabase({ template: inject('postgresTemplate') }) : undefined;
  const resultsDir = mkdtempSync(path.join(tmpdir(), 'humantask-results-'));
  const config: Config = {
    // No callback leaves the machine unless a test turns delivery on (to a loopback receiver).
    // Worker passwords hashed at the lowest scrypt cost: tests log in often.
    ...readConfig({
      RATE_LIMIT_BURST: '0',
      AUTH_FAILURE_BURST: '0',
      // Log-ins come from one address, many at once: the log-in limits are off unless a test sets them.
      WORKER_LOGIN_FAILURE_BURST: '0',
      WORKER_PASSWORD_PER_CLIENT: '1000',
      WORKER_PASSWORD_QUEUE: '1000',
      DELIVERY_POLL_MS: '0',
      ATTACHMENT_CHECK_POLL_MS: '0',
      WORKER_PASSWORD_COST: '10',
      // Response files of accounts without a bucket: a folder of this server's, removed with it.
      RESULTS_DIR: resultsDir,
      ...env,
    }),
    port: 0,
    host: '127.0.0.1',
    dataDir: 'memory://',
    memoryImage: inject('memoryImage'),
    databaseUrl,
  };
  const server = await startServer(config, logger, options);
  if (!server.devAccount) throw new Error('a fresh database should get a development account');
  return {
    ...server,
    dev: server.devAccount,
    // The database goes with the server: a long run (the mutation run starts thousands) leaves none.
    async close() {
      await server.close();
      if (databaseUrl) await dropDatabase(databaseUrl);
      rmSync(resultsDir, { recursive: true, force: true });
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** A small client for one generation and one key: `call('POST', '/v1/task/annotation', {json})`. */
export function client(server: { url: string }, generation: 'current' | 'legacy', key: string | null) {
  const base = server.url + (generation === 'legacy' ? '/legacy' : '');
  return async (
    method: string,
    path: string,
    options: { json?: unknown; form?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...(key !== null ? { authorization: basicAuth(key) } : {}), ...options.headers };
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form !== undefined) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = options.form;
    }
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  };
}

/**
 * The keys that the conformance suite needs besides the dev account's: a second account's
 * (isolation) and the settings account's (--settings-key: a 2-second test-completion delay, the
 * suite's disabled types, a default callback URL on the discard port, refused at once), and the
 * token of a worker of the operator's workforce (--worker-token).
 */
export async function conformanceKeys(server: TestServer): Promise<{ otherKey: string; settingsKey: string; workerToken: string }> {
  const now = new Date();
  const otherKey = (await createAccount(server.uow, 'conformance-other', now)).test_key;
  const settingsKey = (await createAccount(server.uow, 'conformance-settings', now)).test_key;
  await updateAccount(server.uow, 'conformance-settings', {
    testCompletionDelayMs: 2000,
    disableTypes: [...DISABLED_TYPES],
    defaultCallbackUrl: 'http://127.0.0.1:9/default-callback',
  });
  const workerToken = (await createWorker(server)).token;
  return { otherKey, settingsKey, workerToken };
}
