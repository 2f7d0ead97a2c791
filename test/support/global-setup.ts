// One PostgreSQL cluster for the whole test run; test files create their own databases in it,
// each a copy of a template database that has the server's migrations (a copy is quicker than
// migrating every new database). One Chromium too: the browser tests' files connect to it.
import type { TestProject } from 'vitest/node';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openStore } from '../../server/store/db.ts';
import { launchBrowserServer } from './browser.ts';
import { freePort } from './net.ts';
import { postgresAvailable, startCluster } from './postgres.ts';

const execFileAsync = promisify(execFile);

export default async function setup(project: TestProject) {
  // What has started stops again, in reverse order, at the end of the run or when a later step fails.
  const started: (() => unknown)[] = [];
  const stop = async () => {
    for (const undo of started.reverse()) await undo();
  };
  try {
    // One migrated PGlite image that every in-memory test server starts from (laying out and
    // migrating a database costs about 3 s of CPU), made meanwhile in a child process.
    const imageDir = mkdtempSync(path.join(tmpdir(), 'humantask-test-image-'));
    started.push(() => rmSync(imageDir, { recursive: true, force: true }));
    const memoryImage = path.join(imageDir, 'pgdata.tar');
    const image = execFileAsync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'memory-image.ts'), memoryImage]);
    const browser = await launchBrowserServer();
    if (browser) started.push(() => browser.close());
    project.provide('browserEndpoint', browser?.wsEndpoint ?? '');
    const stopPostgres = await setupPostgres(project);
    if (stopPostgres) started.push(stopPostgres);
    await image;
    project.provide('memoryImage', memoryImage);
  } catch (err) {
    await stop();
    throw err;
  }
  return stop;
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
  try {
    const store = await openStore({ databaseUrl: await cluster.createDatabase({ name: template }), dataDir: '' });
    await store.close();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
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
