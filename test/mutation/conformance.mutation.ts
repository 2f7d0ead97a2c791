// The mutation run's only test file (`npm run mutation`, stryker.config.mjs): the reference server
// in this process (on PostgreSQL where the machine has it: it starts in a third of PGlite's time,
// and Stryker starts a server per mutant), and every conformance check as its own test, both
// generations. Its name does not end in .test.ts: `npm test` does not run it.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureText } from '../../conformance/report.ts';
import { runConformance } from '../../conformance/runner.ts';
import type { CheckResult } from '../../conformance/types.ts';
import { conformanceBucket, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { conformanceEnv, conformanceKeys, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { checkUnits } from './checks.ts';

const env = {
  ...conformanceEnv,
  // The server's own check of its answers against the contract is off: the run measures what the
  // conformance suite notices, not what the server's response validator turns into a 500.
  VALIDATE_RESPONSES: 'false',
};

/** Generated requests per operation and kind: few, so that each test stays quick. */
const runs = Number(process.env.MUTATION_RUNS ?? 1);

describe('conformance', () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof conformanceKeys>>;
  let buckets: TestBucketServer;
  beforeAll(async () => {
    // The storage checks' bucket: an S3-protocol server on loopback.
    buckets = await startBucketServer(['conformance']);
    // Stryker runs this file once per mutant, each time in a new worker: a server start per mutant.
    server = await startTestServer(hasPostgres() ? 'postgres' : 'pglite', env);
    keys = await conformanceKeys(server);
    // MUTATION_TRACE=file: one line per run of this file, to see the pace of a mutation run.
    if (process.env.MUTATION_TRACE) appendFileSync(process.env.MUTATION_TRACE, `${new Date().toISOString()} pid ${process.pid}\n`);
  });
  afterAll(async () => {
    await server?.close();
    await buckets?.close();
  });

  // `gen | id |`: no test name is part of another (Stryker selects tests by an unanchored name pattern).
  for (const unit of checkUnits()) {
    it(`${unit.generation} | ${unit.id} |`, async () => {
      const run = await runConformance(
        {
          baseUrl: server.url,
          key: server.dev.test_key,
          ...keys,
          liveKey: server.dev.live_key,
          callbackAuthKey: server.dev.callback_auth_key,
          signingSecret: server.dev.signing_secret,
          generations: [unit.generation],
          callbackHost: '127.0.0.1',
          seed: 1,
          runs,
          profile: 'full',
          bucket: conformanceBucket(buckets),
        },
        { checks: [unit.check()] },
      );
      const failures = run.results.filter((r): r is Extract<CheckResult, { outcome: 'failed' }> => r.outcome === 'failed');
      expect(failures.map(failureText).join('\n\n')).toBe('');
      expect(run.results.filter((r) => r.outcome === 'skipped').map((r) => r.check.id)).toEqual([]);
    });
  }
});
