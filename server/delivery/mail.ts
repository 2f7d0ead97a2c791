// Callbacks to an e-mail address (docs/decisions/0009-callbacks.md): nothing is POSTed, the JSON is mailed through
// the operator's SMTP server (SMTP_URL). The mail carries the same headers as a POST
// (service-callback-auth and the Standard Webhooks ones), the JSON pretty-printed as its text and
// the exact signed bytes as an `application/json` attachment, so that a receiving system can
// verify the signature. The SMTP server's acceptance is a successful delivery; a refusal or a
// connection problem is a failed attempt, retried on the callback schedule. Like `safeRequest`,
// sending never throws: problems come back as values.
//
// The SMTP server is the operator's, not the customer's, so the SSRF guard of net.ts does not
// apply to it; the customer only picks the recipient, and exactly one plain address is accepted.
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import type { OutboxMessage } from '../domain/ports.ts';
import type { SafeResponse } from './net.ts';

export interface MailMessage {
  subject: string;
  /** The exact JSON body of the callback (the bytes `webhook-signature` signs). */
  json: string;
  /** The callback's event, which names the attachment (`<event>.json`). */
  event: string;
  /** The callback's headers; `content-type` belongs to an HTTP body and is left out of the mail. */
  headers: Record<string, string>;
}

/**
 * Mails one callback. Acceptance gives `ok: true` with the SMTP server's reply code as status (250:
 * a 2xx, as a successful POST) and its reply as body; anything else gives `ok: false`.
 */
export type SendMail = (to: string, message: MailMessage) => Promise<SafeResponse>;

export interface MailerOptions {
  /** The From of every mail (default `humantask <callbacks@localhost>`). */
  from?: string;
  /** Bounds connecting, the greeting and each later wait for the server (default 15 s). */
  timeoutMs?: number;
}

const defaultFrom = 'humantask <callbacks@localhost>';

// Which addresses are e-mail addresses, and their recipient: one rule for creation and delivery.
export { isEmailTarget, mailRecipient } from '../domain/callback-address.ts';
import { mailRecipient } from '../domain/callback-address.ts';

/** The subject line of a callback mail: `humantask: task 65f1... completed`. */
export function mailSubject(event: OutboxMessage['event'], subject: string): string {
  // A batch name is the customer's text: no line breaks or other control characters in a header.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
  const id = subject.replace(/[\x00-\x1f\x7f]+/g, ' ');
  switch (event) {
    case 'task_completed':
      return `humantask: task ${id} completed`;
    case 'attachment_error':
      return `humantask: task ${id} attachment error`;
    case 'batch_completed':
      return `humantask: batch ${id} completed`;
  }
}

type Failure = Extract<SafeResponse, { ok: false }>;

interface SmtpError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
  cause?: { code?: string };
}

/** A nodemailer error as a failed attempt: the SMTP server's reply when it gave one, else the cause. */
function failure(err: unknown, durationMs: number): Failure {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as SmtpError;
  const text = (e.message ?? 'unknown error').replace(/\s+/g, ' ').trim();
  const code = e.code ? ` (${e.code})` : '';
  if (e.responseCode) return { ok: false, error: 'other', message: `the SMTP server replied: ${text}${code}`, durationMs };
  const socketCode = e.cause?.code ?? /\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN)\b/.exec(text)?.[1];
  const error: Failure['error'] =
    e.code === 'ETIMEDOUT'
      ? 'timeout'
      : e.code === 'EDNS' || socketCode === 'ENOTFOUND' || socketCode === 'EAI_AGAIN'
        ? 'dns'
        : socketCode === 'ECONNREFUSED'
          ? 'connection_refused'
          : socketCode === 'ECONNRESET'
            ? 'connection_reset'
            : 'other';
  return { ok: false, error, message: `SMTP: ${text}${code}`, durationMs };
}

/**
 * The sender of e-mail callbacks through the SMTP server at `smtpUrl` (`smtp://user:pass@host:587`,
 * `smtps://...` for TLS from the start; nodemailer's URL parameters apply). Without one, every
 * attempt fails with `no SMTP server configured (SMTP_URL)` (and is retried on the schedule, so
 * configuring a server in time still delivers). A URL of another scheme throws, so that a wrong
 * setting stops the start instead of failing every delivery.
 */
export function createMailer(smtpUrl: string | undefined, options: MailerOptions = {}): SendMail {
  if (!smtpUrl) return async () => ({ ok: false, error: 'other', message: 'no SMTP server configured (SMTP_URL)', durationMs: 0 });
  if (!/^smtps?:\/\/[^/?#]/i.test(smtpUrl))
    throw new Error('SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587');
  const timeoutMs = options.timeoutMs ?? 15_000;
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    // The content is ours; never let a message read files or URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const from = options.from || defaultFrom;

  return async (to, message) => {
    const started = performance.now();
    const recipient = mailRecipient(to);
    if (recipient === null)
      return { ok: false, error: 'invalid_url', message: `not one e-mail address: ${JSON.stringify(to)}`, durationMs: 0 };
    const headers = Object.fromEntries(Object.entries(message.headers).filter(([name]) => name.toLowerCase() !== 'content-type'));
    let pretty = message.json;
    try {
      pretty = JSON.stringify(JSON.parse(message.json), null, 2);
    } catch {
      // not JSON after all: sent as it is
    }
    const webhookId = headers['webhook-id'];
    try {
      const info = await transport.sendMail({
        from,
        to: recipient,
        subject: message.subject,
        headers,
        // Retries of one callback keep their webhook-id, and so their Message-ID: mail clients and
        // receiving systems can deduplicate on either.
        ...(webhookId ? { messageId: `<${webhookId}@humantask>` } : {}),
        text: `${pretty}\n`,
        attachments: [
          // base64: the receiver gets the signed bytes exactly, whatever the line lengths.
          { filename: `${message.event}.json`, content: message.json, contentType: 'application/json', contentTransferEncoding: 'base64' },
        ],
      });
      const reply = String(info.response ?? '');
      const code = Number(/^(2\d\d)\b/.exec(reply)?.[1] ?? 250);
      return { ok: true, status: code, headers: {}, body: reply, truncated: false, durationMs: performance.now() - started };
    } catch (err) {
      return failure(err, performance.now() - started);
    }
  };
}
