// The one poll loop behind the background jobs (server/delivery/poller.ts), with fake work: rounds
// never overlap, nudges during a round make exactly one more, stop waits for the round in flight,
// and a failing round is logged and does not stop the loop.
import type { Logger } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPoller, type Poller } from '../../../server/delivery/poller.ts';
import { until } from '../../support/wait.ts';

const waitFor = (done: () => boolean) => until(done, 'the poller', 10_000);

/** Rounds still waiting for the test to finish them (released after each test). */
let finishers: ((more: boolean) => void)[] = [];

/** A round that the test finishes by hand; counts rounds and the most that ran at once. */
function fakeWork() {
  const stats = { started: 0, finished: 0, running: 0, maxRunning: 0 };
  const round = () =>
    new Promise<boolean>((resolve) => {
      stats.started++;
      stats.running++;
      stats.maxRunning = Math.max(stats.maxRunning, stats.running);
      finishers.push((more) => {
        stats.running--;
        stats.finished++;
        resolve(more);
      });
    });
  /** Finishes the oldest unfinished round (waiting until one has started). */
  const finish = async (more = false) => {
    await waitFor(() => finishers.length > 0);
    finishers.shift()!(more);
    // Let the loop see the result.
    await new Promise((r) => setImmediate(r));
  };
  return { round, stats, finish };
}

const logger = () => ({ error: vi.fn() }) as unknown as Logger & { error: ReturnType<typeof vi.fn> };
const settle = () => new Promise((r) => setTimeout(r, 20));

let poller: Poller | null = null;
afterEach(async () => {
  const stopping = poller?.stop();
  for (const finish of finishers) finish(false);
  finishers = [];
  await stopping;
  poller = null;
});

describe('poller', () => {
  it('runs a first round at start, and nothing before start or after stop', async () => {
    const work = fakeWork();
    poller = createPoller({ name: 'test', pollMs: 0, round: work.round, logger: logger() });
    poller.nudge();
    await settle();
    expect(work.stats.started).toBe(0);
    poller.start();
    await work.finish();
    expect(work.stats.started).toBe(1);
    await poller.stop();
    poller.nudge();
    await settle();
    expect(work.stats.started).toBe(1);
  });

  it('coalesces nudges during a round into one more round, never two at once', async () => {
    const work = fakeWork();
    poller = createPoller({ name: 'test', pollMs: 0, round: work.round, logger: logger() });
    poller.start();
    await waitFor(() => work.stats.started === 1);
    for (let i = 0; i < 10; i++) poller.nudge();
    await work.finish();
    await waitFor(() => work.stats.started === 2);
    await work.finish();
    await settle();
    expect(work.stats).toMatchObject({ started: 2, finished: 2, maxRunning: 1 });
  });

  it('nudges of one tick while idle make one round', async () => {
    const work = fakeWork();
    poller = createPoller({ name: 'test', pollMs: 0, round: work.round, logger: logger() });
    poller.start();
    await work.finish();
    for (let i = 0; i < 5; i++) poller.nudge();
    await work.finish();
    await settle();
    expect(work.stats.started).toBe(2);
  });

  it('runs again at once while a round answers that more is due', async () => {
    const work = fakeWork();
    poller = createPoller({ name: 'test', pollMs: 0, round: work.round, logger: logger() });
    poller.start();
    await work.finish(true);
    await work.finish(true);
    await work.finish(false);
    await settle();
    expect(work.stats).toMatchObject({ started: 3, maxRunning: 1 });
  });

  it('polls every pollMs without nudges, skipping polls while a round runs', async () => {
    const work = fakeWork();
    poller = createPoller({ name: 'test', pollMs: 5, round: work.round, logger: logger() });
    poller.start();
    await waitFor(() => work.stats.started === 1);
    // Many intervals pass during this round: none starts a second one.
    await new Promise((r) => setTimeout(r, 50));
    expect(work.stats.maxRunning).toBe(1);
    await work.finish();
    await waitFor(() => work.stats.started === 2);
    await work.finish();
    expect(work.stats.maxRunning).toBe(1);
  });

  it('runs a round when work falls due (nudge with a time)', async () => {
    const work = fakeWork();
    poller = createPoller({ name: 'test', pollMs: 0, round: work.round, logger: logger() });
    poller.start();
    await work.finish();
    poller.nudge(new Date(Date.now() + 30));
    poller.nudge(new Date(Date.now() + 60));
    await work.finish();
    await work.finish();
    expect(work.stats.started).toBe(3);
  });

  it('reads due times on the clock it is given: a time that clock has reached runs a round at once', async () => {
    const work = fakeWork();
    let ahead = 0;
    poller = createPoller({ name: 'test', pollMs: 0, round: work.round, logger: logger(), now: () => Date.now() + ahead });
    poller.start();
    await work.finish();
    const inAnHour = () => new Date(Date.now() + 3_600_000);
    poller.nudge(inAnHour());
    await settle();
    expect(work.stats.started).toBe(1);
    ahead = 2 * 3_600_000;
    poller.nudge(inAnHour());
    await work.finish();
    expect(work.stats.started).toBe(2);
  });

  it('stop waits for the round in flight and cancels due-time wake-ups', async () => {
    const work = fakeWork();
    poller = createPoller({ name: 'test', pollMs: 0, round: work.round, logger: logger() });
    poller.start();
    await waitFor(() => work.stats.started === 1);
    poller.nudge();
    poller.nudge(new Date(Date.now() + 20));
    let stopped = false;
    const stopping = poller.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    await work.finish();
    await stopping;
    await new Promise((r) => setTimeout(r, 40));
    // The nudge during the round and the wake-up made no round after stop.
    expect(work.stats).toMatchObject({ started: 1, finished: 1 });
  });

  it('logs a failing round and keeps going', async () => {
    const log = logger();
    let calls = 0;
    poller = createPoller({
      name: 'flaky job',
      pollMs: 0,
      logger: log,
      round: async () => {
        calls++;
        if (calls === 1) throw new Error('database gone');
      },
    });
    poller.start();
    await waitFor(() => log.error.mock.calls.length === 1);
    expect(log.error.mock.calls[0]![1]).toBe('flaky job failed');
    expect((log.error.mock.calls[0]![0] as { err: Error }).err.message).toBe('database gone');
    poller.nudge();
    await waitFor(() => calls === 2);
    expect(log.error).toHaveBeenCalledTimes(1);
  });
});
