// What a user of `humantask conformance` sees while and after it runs: a progress count whose total
// is the number of checks that run, with the time left; a warning that the run leaves what it
// created in the account; and `--cleanup`, which cancels the tasks the run created.
import { Writable } from 'node:stream';
import { updateAccount, createAccount } from '../server/domain/accounts.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duration, progressSink, timeLeft } from '../conformance/progress.ts';
import { summaryText } from '../conformance/report.ts';
import { runConformance } from '../conformance/runner.ts';
import { client, conformanceEnv, startTestServer, type TestServer } from './support/server.ts';

it('estimates the time left from the mean time per check', () => {
  expect(timeLeft(0, 10, 5_000)).toBe('?');
  expect(timeLeft(10, 40, 20_000)).toBe('1m00s');
  expect(timeLeft(40, 40, 20_000)).toBe('0s');
  expect(duration(3_725_000)).toBe('1h02m');
});

describe('a run against our server', () => {
  let server: TestServer;
  let account = 0;
  beforeAll(async () => {
    server = await startTestServer('pglite', conformanceEnv);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A fresh account whose test tasks stay pending (a long test completion delay). */
  async function pendingAccount() {
    const name = `ux-${++account}`;
    const secrets = await createAccount(server.uow, name, new Date());
    await updateAccount(server.uow, name, { testCompletionDelayMs: 3_600_000 });
    return secrets.test_key;
  }

  async function statuses(key: string) {
    const res = await client(server, 'current', key)('GET', '/v1/tasks?limit=100');
    return (res.body as { docs: { status: string }[] }).docs.map((t) => t.status);
  }

  it('counts to the number of checks, shows the time left, and warns that the tasks stay', async () => {
    const key = await pendingAccount();
    let text = '';
    const sink = new Writable({
      write: (chunk, _enc, done) => {
        text += chunk;
        done();
      },
    });
    const stream = Object.assign(sink, { isTTY: false }) as unknown as NodeJS.WriteStream;
    const run = await runConformance(
      {
        baseUrl: server.url,
        key,
        generations: ['current', 'legacy'],
        callbackHost: '',
        seed: 1,
        profile: 'full',
        only: 'examples/createCategorizationTask',
      },
      { out: progressSink(stream) },
    );
    expect(
      run.results.filter((r) => r.outcome === 'failed').map((r) => `${r.check.id}: ${(r as { message?: string }).message?.slice(0, 900)}`),
    ).toEqual([]);
    expect(run.passed).toBe(true);
    const lines = text.split('\n').filter((l) => l.startsWith('['));
    expect(lines).toHaveLength(run.checkRuns);
    expect(lines.at(-1)).toMatch(new RegExp(`^\\[${run.checkRuns}/${run.checkRuns}\\] .* \\(left 0s\\)$`));
    expect(text).toMatch(/Warning: the run creates tasks, .* and leaves them there; --cleanup cancels its tasks/);
    // The summary accounts for every result: the checks the bar counted plus the shape results.
    const summary = summaryText(run);
    expect(summary).toContain(
      `results: ${run.results.length} = ${run.checkRuns} checks run (the progress bar's total) + ${run.results.length - run.checkRuns} shape results`,
    );
    expect(run.created.tasks).toBeGreaterThan(0);
    expect(summary).toContain(
      `the run created ${run.created.tasks} tasks in the accounts of the keys given and left them there (--cleanup cancels them)`,
    );
    expect(await statuses(key)).toEqual(Array(run.created.tasks).fill('pending'));
  });

  it('--cleanup cancels every task the run created, in both generations', async () => {
    const key = await pendingAccount();
    const logs: string[] = [];
    const run = await runConformance(
      {
        baseUrl: server.url,
        key,
        generations: ['current', 'legacy'],
        callbackHost: '',
        seed: 1,
        profile: 'full',
        only: 'examples/createCategorizationTask',
        cleanup: true,
      },
      { out: (line) => logs.push(line) },
    );
    expect(run.passed).toBe(true);
    expect(run.created).toEqual({ tasks: expect.any(Number), cancelled: run.created.tasks, alreadyDone: 0, notCancelled: [] });
    expect(run.created.tasks).toBeGreaterThan(1);
    expect(logs.join('\n')).toContain('--cleanup: the tasks this run creates are cancelled when it ends');
    expect(summaryText(run)).toContain(
      `cleanup: ${run.created.tasks} of ${run.created.tasks} tasks created by the run cancelled, 0 had already ended`,
    );
    expect(await statuses(key)).toEqual(Array(run.created.tasks).fill('canceled'));
  });
});
