// The outbox dispatcher: claims due callbacks (FOR UPDATE SKIP LOCKED, with a lease, so that
// several server processes share the work and none sends a message another one holds), POSTs
// each outside any transaction, and records the attempt and its outcome. Its rounds run on the
// shared poller (poller.ts): nudged when a callback is queued, and when a retry falls due.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { newTaskId } from '../domain/ids.ts';
import type { ClaimedMessage, OutboxMessage, UnitOfWork } from '../domain/ports.ts';
import { isEmailTarget, mailSubject, type SendMail } from './mail.ts';
import type { SafeResponse } from './net.ts';
import { createPoller } from './poller.ts';
import { nextAttemptAt, parseRetryAfter } from './schedule.ts';
import { signatureHeaders } from './sign.ts';

export type DispatcherOptions = Config['delivery'];

export type Send = (
  url: string,
  options: {
    method: 'POST';
    headers: Record<string, string>;
    body: string;
    timeoutMs: number;
    maxResponseBytes: number;
    allowPrivateNetworks: string[];
  },
) => Promise<SafeResponse>;

export interface Dispatcher {
  /** Looks for due messages now, or at `at` (see Poller.nudge). */
  nudge(at?: Date): void;
  /** Stops claiming; resolves when the deliveries in flight are recorded. */
  stop(): Promise<void>;
}

/** What an attempt came to: the receiver's answer, or why nothing was delivered (`secrets_unreadable`: nothing sent). */
export type AttemptResult = { ok: true; status: number } | { ok: false; error: string };

/**
 * `send` POSTs to http(s) addresses; `mail` mails to e-mail addresses (`ops@example.com`,
 * `mailto:...`); `attempted` hears of every attempt's result (the metrics count them); `now` is
 * the clock that attempts are timed and retries planned by (tests move it on to a retry's due time).
 */
export function startDispatcher(
  uow: UnitOfWork,
  send: Send,
  mail: SendMail,
  options: DispatcherOptions,
  logger: Logger,
  attempted: (result: AttemptResult) => void = () => {},
  now: () => number = Date.now,
): Dispatcher {
  /** POSTs or mails the message, signed with the account's secrets. */
  async function sendSigned(message: OutboxMessage, callbackAuthKey: string, signingSecret: string, started: Date): Promise<SafeResponse> {
    const body = JSON.stringify(message.payload);
    const headers = {
      'content-type': 'application/json',
      'service-callback-auth': callbackAuthKey,
      ...signatureHeaders(signingSecret, `msg_${message.id}`, Math.floor(started.getTime() / 1000), body),
    };
    return /^https?:\/\//i.test(message.url)
      ? await send(message.url, {
          method: 'POST',
          headers,
          body,
          timeoutMs: options.timeoutMs,
          maxResponseBytes: options.maxResponseBytes,
          allowPrivateNetworks: options.allowPrivateNetworks,
        })
      : isEmailTarget(message.url)
        ? await mail(message.url, { subject: mailSubject(message.event, message.subject), json: body, event: message.event, headers })
        : ({ ok: false, error: 'invalid_url', message: 'not an http(s) URL or an e-mail address', durationMs: 0 } as const);
  }

  /**
   * Secrets that cannot be opened send nothing: the attempt fails (and is retried, then given up,
   * as any other), the customer sees why in the task's callbacks, the operator the details here.
   */
  function unreadable(message: OutboxMessage, detail: string) {
    logger.error(
      { account: message.accountId, message: message.id, subject: message.subject },
      `callback not sent: the callback secrets of account ${message.accountId} could not be opened. ${detail}`,
    );
    return {
      ok: false,
      error: 'secrets_unreadable',
      message:
        "this account's callback secrets (signing secret, callback auth key) could not be opened on the server " +
        '(sealed with another SECRETS_KEY, or damaged); ' +
        'nothing was sent, the server operator sees the details in its log',
      durationMs: 0,
    } as const;
  }

  async function deliver(claimed: ClaimedMessage): Promise<void> {
    const { message } = claimed;
    const started = new Date(now());
    const result =
      'unreadableSecrets' in claimed
        ? unreadable(message, claimed.unreadableSecrets)
        : await sendSigned(message, claimed.callbackAuthKey, claimed.signingSecret, started);
    attempted(result);
    const ended = new Date(now());
    const success = result.ok && result.status >= 200 && result.status < 300;
    const firstAttemptAt = message.firstAttemptAt ?? started;
    const attempts = message.attempts + 1;
    const next = success
      ? null
      : nextAttemptAt(
          {
            attempts,
            firstAttemptAt,
            now: ended,
            slowDown: result.ok ? result.status === 429 : result.error === 'timeout',
            ...(result.ok ? { retryAfterSeconds: parseRetryAfter(result.headers['retry-after'], ended) } : {}),
          },
          options.scheduleScale,
          options.jitter,
        );
    const updated: OutboxMessage = {
      ...message,
      attempts,
      firstAttemptAt,
      leaseUntil: null,
      nextAttemptAt: next ?? message.nextAttemptAt,
      deliveredAt: success ? ended : null,
      failedAt: !success && next === null ? ended : null,
    };
    // The task's callback flag: true on success, false once every retry has failed.
    const callbackCompleted = message.event !== 'batch_completed' && (success || updated.failedAt) ? success : null;
    await uow.outbox.recordAttempt(
      updated,
      {
        id: newTaskId(ended),
        messageId: message.id,
        accountId: message.accountId,
        subject: message.subject,
        url: message.url,
        attemptedAt: started,
        statusCode: result.ok ? result.status : null,
        error: result.ok ? null : `${result.error}: ${result.message}`,
        durationMs: Math.round(result.durationMs),
      },
      callbackCompleted,
    );
    // This process retries it on time; the poll is there for a retry whose wake-up is lost.
    if (next) poller.nudge(next);
  }

  // A pool of at most `concurrency` deliveries: each round claims only as many messages as there
  // are free places, so that one slow receiver does not hold up the others.
  const inFlight = new Set<Promise<void>>();
  let backlog = false;

  async function claimAndStart(): Promise<void> {
    const free = options.concurrency - inFlight.size;
    if (free <= 0) return;
    const at = now();
    const claimed = await uow.outbox.claimDue(new Date(at), new Date(at + options.leaseMs), free);
    // All free places filled: more may be due, so deliveries that end claim again at once
    // (once half the places are free: one claim for many messages) instead of at the next poll.
    backlog = claimed.length === free;
    for (const m of claimed) {
      const work = deliver(m)
        .catch((err) => logger.error({ err, message: m.message.id }, 'callback delivery failed to record'))
        .finally(() => {
          inFlight.delete(work);
          if (backlog && inFlight.size <= options.concurrency / 2) poller.nudge();
        });
      inFlight.add(work);
    }
  }

  const poller = createPoller({ name: 'callback dispatch', pollMs: options.pollMs, round: claimAndStart, logger, now });
  poller.start();
  return {
    nudge: poller.nudge,
    async stop() {
      await poller.stop();
      await Promise.all(inFlight);
    },
  };
}
