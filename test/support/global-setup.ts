// One PostgreSQL cluster for the whole test run; test files create their own databases in it.
import type { TestProject } from 'vitest/node';
import { freePort } from './net.ts';
import { postgresAvailable, startCluster } from './postgres.ts';

export default async function setup(project: TestProject) {
  if (!postgresAvailable()) {
    if (process.env.CI) throw new Error('CI needs PostgreSQL 15 binaries (PG_BIN) or TEST_DATABASE_URL');
    console.warn('PostgreSQL binaries not found: the PostgreSQL variants of the server tests are skipped');
    project.provide('postgresUrl', '');
    return;
  }
  const port = await freePort();
  const cluster = await startCluster(port);
  project.provide('postgresUrl', process.env.TEST_DATABASE_URL ?? `postgres://postgres@127.0.0.1:${port}/postgres`);
  return () => cluster.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}
