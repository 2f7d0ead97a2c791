// One PostgreSQL cluster for the whole test run; test files create their own databases in it,
// each a copy of a template database that has the server's migrations (a copy is quicker than
// migrating every new database). One Chromium too: the browser tests' files connect to it.
import type { TestProject } from 'vitest/node';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore } from '../../server/store/db.ts';
import { launchBrowserServer } from './browser.ts';
import { freePort } from './net.ts';
import { postgresAvailable, startCluster } from './postgres.ts';

export default async function setup(project: TestProject) {
  const browser = await launchBrowserServer();
  project.provide('browserEndpoint', browser?.wsEndpoint ?? '');
  const stopPostgres = await setupPostgres(project);
  // One migrated PGlite image for every in-memory test server (each test file is a process of its
  // own, and laying out and migrating a database costs each about 3 s of CPU).
  const imageDir = mkdtempSync(path.join(tmpdir(), 'humantask-test-image-'));
  const memoryImage = path.join(imageDir, 'pgdata.tar');
  execFileSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'memory-image.ts'), memoryImage], { stdio: 'inherit' });
  project.provide('memoryImage', memoryImage);
  return async () => {
    await browser?.close();
    await stopPostgres?.();
    rmSync(imageDir, { recursive: true, force: true });
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
    /** A migrated PGlite image file for in-memory servers (StoreOptions.memoryImage). */
    memoryImage: string;
  }
}
