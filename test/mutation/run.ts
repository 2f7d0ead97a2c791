// `npm run mutation` (and `npm run mutation:sample`): Stryker (stryker.config.mjs) with one
// PostgreSQL cluster for all its test runner processes, started here and stopped at the end (a
// cluster per process would outlive every process Stryker kills after a timeout). Arguments go to
// Stryker: npm run mutation -- --mutate server/domain/task-creation.ts
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePort } from '../support/net.ts';
import { postgresAvailable, startCluster, type Cluster } from '../support/postgres.ts';

let cluster: Cluster | undefined;
const env = { ...process.env };
if (!env.TEST_DATABASE_URL && postgresAvailable()) {
  const port = await freePort();
  cluster = await startCluster(port);
  env.TEST_DATABASE_URL = `postgres://postgres@127.0.0.1:${port}/postgres`;
}
const core = path.dirname(createRequire(import.meta.url).resolve('@stryker-mutator/core/package.json'));
const stryker = path.join(core, 'bin', 'stryker.js');
const child = spawn(process.execPath, [stryker, 'run', 'stryker.config.mjs', ...process.argv.slice(2)], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
cluster?.stop();
process.exit(code);
