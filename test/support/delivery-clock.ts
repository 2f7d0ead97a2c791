// The retry schedule run in full, at its real length (no CALLBACK_SCHEDULE_SCALE), without waiting
// for it: a dispatcher on a clock that the test moves on to each retry's due time once the attempt
// before it is recorded. The attempts' own work cannot use up the 24 h window, however loaded the
// machine: the clock moves only as far as the dispatcher's own due time.
import { pino } from 'pino';
import { expect } from 'vitest';
import { readConfig } from '../../server/config.ts';
import { startDispatcher } from '../../server/delivery/dispatcher.ts';
import type { SendMail } from '../../server/delivery/mail.ts';
import { safeRequest } from '../../server/delivery/net.ts';
import type { OutboxMessage, UnitOfWork } from '../../server/domain/ports.ts';
import { until } from './wait.ts';

/** The documented ladder (docs/decisions/0009-callbacks.md): the delays before retries 1 to 20, in seconds. */
const retryDelaysSeconds = [5, 30, 60, 120, 300, 600, 900, 1800, 2700, 3600, 3600, 3600, 5400, 5400, 7200, 7200, 7200, 9000, 9000, 10800];

/** The whole ladder was tried: 21 attempts, no retry before its delay, all within the 24 h window. */
export function expectWholeLadder(attempts: Array<{ attemptedAt: Date }>): void {
  const at = attempts.map((a) => a.attemptedAt.getTime());
  expect(at).toHaveLength(retryDelaysSeconds.length + 1);
  for (const [i, delay] of retryDelaysSeconds.entries()) expect(at[i + 1]! - at[i]!, `retry ${i + 1}`).toBeGreaterThanOrEqual(delay * 1000);
  expect(at.at(-1)! - at[0]!).toBeLessThanOrEqual(24 * 3600 * 1000);
}

/**
 * Starts a dispatcher (no jitter, loopback allowed) on a clock of its own; a server's own delivery
 * should be off (DELIVERY_POLL_MS=0, as startTestServer has it).
 */
export function startClockedDispatcher(uow: UnitOfWork, mail: SendMail) {
  let ahead = 0;
  const now = () => Date.now() + ahead;
  const options = readConfig({ DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32', CALLBACK_JITTER: '0' }).delivery;
  const dispatcher = startDispatcher(uow, safeRequest, mail, options, pino({ level: 'silent' }), undefined, now);
  return {
    stop: dispatcher.stop,
    /**
     * Waits for each attempt at the message of `subject` to be recorded and moves the clock on to
     * its retry's due time, until the message is delivered or given up (at most 21 attempts).
     */
    async runRetries(accountId: string, subject: string): Promise<OutboxMessage> {
      const message = async () => (await uow.outbox.forSubject(accountId, subject))[0]!;
      for (let attempts = 1; attempts <= retryDelaysSeconds.length + 1; attempts++) {
        await until(async () => (await message()).attempts >= attempts, `attempt ${attempts}`);
        const { deliveredAt, failedAt, nextAttemptAt } = await message();
        if (deliveredAt || failedAt) break;
        ahead += Math.max(0, nextAttemptAt.getTime() - now());
      }
      return message();
    },
  };
}
