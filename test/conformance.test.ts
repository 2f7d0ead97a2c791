// The conformance suite tests itself (issue #7): our server passes every check, both generations,
// on PGlite and PostgreSQL, each check its own test (a failure names it); the CLI exits non-zero on
// a failure and writes well-formed reports. Prism's run with --profile mock is in test/mock.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { XMLValidator } from 'fast-xml-parser';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { failureText } from '../conformance/report.ts';
import { runConformance, type ConformanceRun } from '../conformance/runner.ts';
import type { CheckResult } from '../conformance/types.ts';
import { checkUnits } from './mutation/checks.ts';
import { testBrowser } from './support/browser.ts';
import { conformanceBucket, startBucketServer, type TestBucketServer } from './support/s3.ts';
import { conformanceEnv as env, conformanceKeys, databases, hasPostgres, startTestServer, type TestServer } from './support/server.ts';
import { root } from './support/spec.ts';

/** Every (generation, check) pair of a full run: each its own test below, named by the check. */
const units = checkUnits();

describe.each(databases)('our server on %s', (db) => {
  const skip = db === 'postgres' && !hasPostgres();
  let server: TestServer;
  let buckets: TestBucketServer;
  // One full run (its checks share fixtures, as an implementer's run does); the tests read its results.
  let run: ConformanceRun;
  beforeAll(async () => {
    if (skip) return;
    // The storage checks' bucket: an S3-protocol server on loopback.
    buckets = await startBucketServer(['conformance']);
    server = await startTestServer(db, env);
    const keys = await conformanceKeys(server);
    run = await runConformance({
      baseUrl: server.url,
      key: server.dev.test_key,
      ...keys,
      liveKey: server.dev.live_key,
      callbackAuthKey: server.dev.callback_auth_key,
      signingSecret: server.dev.signing_secret,
      generations: ['current', 'legacy'],
      callbackHost: '127.0.0.1',
      seed: 1,
      profile: 'full',
      bucket: conformanceBucket(buckets),
    });
  }, 900_000);
  afterAll(async () => {
    await server?.close();
    await buckets?.close();
  });

  it.skipIf(skip).each(units.map((u) => [`${u.generation} | ${u.id}`, u] as const))('passes %s', (_name, unit) => {
    const results = run.results.filter((r) => r.generation === unit.generation && r.check.id === unit.id);
    expect(results.length, 'the check ran').toBeGreaterThan(0);
    const failed = results.filter((r): r is Extract<CheckResult, { outcome: 'failed' }> => r.outcome === 'failed');
    expect(failed.map(failureText).join('\n\n')).toBe('');
    // Nothing was skipped for a missing option.
    expect(results.map((r) => r.outcome)).not.toContain('skipped');
  });

  /** The results of the checks known before the run; the rest are its shape checks, one per answer kind seen. */
  const unitIds = new Set(units.map((u) => `${u.generation} | ${u.id}`));
  const idOf = (r: CheckResult) => `${r.generation} | ${r.check.id}`;

  it.skipIf(skip)('every answer has the shape the contract documents for its operation and status (a shape check each)', () => {
    const shapes = run.results.filter((r) => !unitIds.has(idOf(r)));
    expect(shapes.filter((r) => r.check.kind !== 'shape').map(idOf), 'only shape checks beside the planned ones').toEqual([]);
    expect(shapes.length).toBeGreaterThan(100);
    const failed = shapes.filter((r): r is Extract<CheckResult, { outcome: 'failed' }> => r.outcome === 'failed');
    expect(failed.map(failureText).join('\n\n')).toBe('');
  });

  it.skipIf(skip)('ran every planned check, and answered every operation of both generations with a documented status', () => {
    expect(new Set(run.results.map(idOf).filter((id) => unitIds.has(id)))).toEqual(unitIds);
    const key = (e: { generation: string; operationId: string }) => `${e.generation} ${e.operationId}`;
    const answered = new Set(run.coverage.entries.filter((e) => e.count > 0).map(key));
    expect(run.coverage.entries.map(key).filter((k) => !answered.has(k))).toEqual([]);
    expect(run.coverage.entries.filter((e) => !e.documented)).toEqual([]);
    expect(run.passed).toBe(true);
  });
});

describe('humantask conformance (the CLI)', () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer('pglite', env);
    dir = mkdtempSync(path.join(tmpdir(), 'humantask-conformance-'));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(root, 'bin', 'humantask.js'), 'conformance', ...args], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.once('error', reject);
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** Opens a report in the test run's Chromium. */
  async function inBrowser(file: string, look: (page: Page) => Promise<void>) {
    const browser = await testBrowser(inject('browserEndpoint'));
    const page = await browser.newPage();
    try {
      await page.goto(pathToFileURL(file).href);
      await look(page);
    } finally {
      await page.close();
      await browser.close();
    }
  }

  const wellFormed = (file: string) => {
    const text = readFileSync(file, 'utf8');
    expect(XMLValidator.validate(text.replace(/^<!doctype html>/i, '')), file).toBe(true);
    return text;
  };

  it('passes on our server: exit 0, a summary per area, JUnit XML and an HTML report', async () => {
    const report = path.join(dir, 'pass');
    const res = await cli([
      '--base-url',
      server.url,
      '--key',
      server.dev.test_key,
      '--only',
      'createCategorizationTask',
      '--report',
      report,
      '--seed',
      '7',
      '--callback-host',
      '127.0.0.1',
    ]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/area\s+passed\s+failed\s+skipped/);
    expect(res.stdout).toMatch(/^Examples\s+2\s+0\s+0$/m);
    expect(res.stdout).toMatch(/^Generated input\s+6\s+0\s+0$/m);
    expect(res.stdout).toMatch(/seed 7 \(repeat with --seed 7\)/);
    expect(res.stdout).toMatch(/PASSED/);
    expect(res.stderr).toMatch(/\[\d+\/\d+\] passed current examples\/createCategorizationTask/);
    const xml = wellFormed(path.join(report, 'report.xml'));
    expect(xml).toMatch(/<testsuites [^>]*failures="0"/);
    const html = wellFormed(path.join(report, 'report.html'));
    expect(html).toContain('PASSED');
    expect(html).not.toMatch(/<script|<link|src=|@import/i);
    expect(existsSync(path.join(report, 'report.json'))).toBe(true);
    // The page's filters (CSS alone), in a browser: by outcome, then by area.
    await inBrowser(path.join(report, 'report.html'), async (page) => {
      const visible = () => page.locator('tr.r:visible');
      const all = await page.locator('tr.r').count();
      expect(all).toBeGreaterThan(2);
      expect(await visible().count()).toBe(all);
      await page.getByLabel('failed', { exact: true }).check();
      expect(await visible().count()).toBe(0);
      await page.getByLabel('passed', { exact: true }).check();
      expect(await visible().count()).toBe(all);
      await page.getByLabel('Examples', { exact: true }).check();
      const rows = await visible().allInnerTexts();
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(row).toContain('Examples');
    });
  }, 300_000);

  it('fails against a server that breaks the contract: exit 1, the failure named with its seed section and rule', async () => {
    // Answers everything with 200 and an empty object.
    const liar = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', r));
    try {
      const report = path.join(dir, 'fail');
      const url = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
      const res = await cli([
        '--base-url',
        url,
        '--key',
        'k',
        '--generation',
        'current',
        '--only',
        'auth/no-key/getTask',
        '--report',
        report,
      ]);
      expect(res.code, res.stdout + res.stderr).toBe(1);
      expect(res.stdout).toMatch(/auth\/no-key\/getTask \(current generation\)\n\s+seed: 5 Authentication.*\n\s+rule: .*401/);
      expect(res.stdout).toContain('shape/getTask/200/body-schema');
      expect(res.stdout).toMatch(/FAILED/);
      // The request that was sent, with its answer, is in the failure (the key never is).
      expect(res.stdout).toMatch(
        /auth\/no-key\/getTask[\s\S]*?last request:\n\s+GET http:\/\/127\.0\.0\.1:\d+\/v1\/task\/\S+ \(current generation\)\n[\s\S]*?answer: 200/,
      );
      expect(res.stdout).not.toContain('Basic k');
      const xml = wellFormed(path.join(report, 'report.xml'));
      expect(xml).toMatch(/<failure /);
      const html = wellFormed(path.join(report, 'report.html'));
      expect(html).toContain('auth/no-key/getTask');
      expect(html).toMatch(/the last request sent, with the answers<\/summary><pre>GET http:/);

      // A failed run's page shows its failed rows first.
      await inBrowser(path.join(report, 'report.html'), async (page) => {
        expect(await page.locator('tr.r:visible').count()).toBe(await page.locator('tr.r.failed-row').count());
        expect(await page.locator('#show-failed').isChecked()).toBe(true);
      });
    } finally {
      liar.close();
    }
  }, 120_000);

  it('prints its usage and exits 2 without --base-url', async () => {
    const res = await cli(['--key', 'k']);
    expect(res.code).toBe(2);
    expect(res.stdout).toContain('usage: humantask conformance');
  });
});
