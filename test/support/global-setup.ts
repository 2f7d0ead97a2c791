// One PostgreSQL cluster for the whole test run; test files create their own databases in it,
// each a copy of a template database that has the server's migrations (a copy is quicker than
// migrating every new database). One Chromium too: the browser tests' files connect to it.
import type { TestProject } from 'vitest/node';
import { openStore } from '../../server/store/db.ts';
import { launchBrowserServer } from './browser.ts';
import { freePort } from './net.ts';
import { postgresAvailable, startCluster } from './postgres.ts';

export default async function setup(project: TestProject) {
  const browser = await launchBrowserServer();
  project.provide('browserEndpoint', browser?.wsEndpoint ?? '');
  const stopPostgres = await setupPostgres(project);
  return async () => {
    await browser?.close();
    await stopPostgres?.();
  };
}

async function setupPostgres(project: TestProject) {
  if (!postgresAvailable()) {
    if (process.env.CI) throw new Error('CI needs PostgreSQL 15 binaries (PG_BIN) or TEST_DATABASE_URL');
    console.warn('PostgreSQL binaries not found: the PostgreSQL variants of the server tests are skipped');
    project.provide('postgresUrl', '');
    project.provide('postgresTemplate', '');
    return;
  }
  const port = await freePort();
  const cluster = await startCluster(port);
  const url = process.env.TEST_DATABASE_URL ?? `postgres://postgres@127.0.0.1:${port}/postgres`;
  // Named after this process: runs sharing one server (TEST_DATABASE_URL) each make their own.
  const template = `humantask_template_${process.pid}`;
  const store = await openStore({ databaseUrl: await cluster.createDatabase({ name: template }), dataDir: '' });
  await store.close();
  project.provide('postgresUrl', url);
  project.provide('postgresTemplate', template);
  return () => cluster.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's Chromium (playwright's browser server); '' where there is none. */
    browserEndpoint: string;
    postgresUrl: string;
    /** A migrated database to copy (CREATE DATABASE … TEMPLATE). */
    postgresTemplate: string;
  }
}
