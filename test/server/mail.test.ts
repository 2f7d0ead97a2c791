// Callbacks to an e-mail address as the SMTP server sees them: a real SMTP server (smtp-server) on
// loopback; the retry schedule run in full on a clock the test moves on (test/support/delivery-clock.ts).
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer, isEmailTarget, mailRecipient, mailSubject } from '../../server/delivery/mail.ts';
import { expectWholeLadder, startClockedDispatcher } from '../support/delivery-clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';

interface Mail {
  from: string | undefined;
  to: string[];
  raw: string;
}

/** An SMTP server on 127.0.0.1 (no TLS) for the user `hooks` / `secret`; `refuse` rejects every recipient with 550. */
async function smtpServer(options: { refuse?: boolean } = {}) {
  const mails: Mail[] = [];
  let refused = 0;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    disableReverseLookup: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'hooks' && auth.password === 'secret') callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(_address, _session, callback) {
      if (!options.refuse) return callback();
      refused++;
      callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        mails.push({
          from: from ? from.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://hooks:secret@127.0.0.1:${port}`,
    mails,
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------
// Just enough MIME to read the mails nodemailer writes: unfolded headers, multipart parts,
// base64 and quoted-printable bodies.

interface Part {
  headers: Map<string, string>;
  body: Buffer;
}

function parsePart(raw: string): Part {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const text = split < 0 ? '' : raw.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  const body =
    encoding === 'base64'
      ? Buffer.from(text.replace(/\s+/g, ''), 'base64')
      : encoding === 'quoted-printable'
        ? Buffer.from(
            text.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          )
        : Buffer.from(text, 'utf8');
  return { headers, body };
}

function parseMail(raw: string): { headers: Map<string, string>; parts: Part[] } {
  const top = parsePart(raw);
  const boundary = /boundary="?([^";]+)"?/.exec(top.headers.get('content-type') ?? '')?.[1];
  if (!boundary) return { headers: top.headers, parts: [top] };
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  const parts = body
    .split(`--${boundary}`)
    .slice(1, -1) // before the first boundary: the preamble; after the last (`--`): the epilogue
    .map((p) => parsePart(p.replace(/^\r\n/, '').replace(/\r\n$/, '')));
  return { headers: top.headers, parts };
}

const task = {
  instruction: 'Pick one',
  attachment_type: 'text',
  attachment: 'My invoice is wrong.',
  categories: ['billing', 'support'],
};

const env = { DELIVERY_POLL_MS: '5' };

describe('e-mail callback addresses', () => {
  it('tells e-mail addresses from URLs and accepts exactly one plain recipient', () => {
    expect(isEmailTarget('ops@example.com')).toBe(true);
    expect(isEmailTarget('mailto:ops@example.com')).toBe(true);
    expect(isEmailTarget('MAILTO:ops@example.com')).toBe(true);
    expect(isEmailTarget('https://user@example.com/hook')).toBe(false);
    expect(isEmailTarget('ftp://ops@example.com')).toBe(false);
    expect(isEmailTarget('example.com/hook')).toBe(false);
    expect(mailRecipient('ops@example.com')).toBe('ops@example.com');
    expect(mailRecipient(' mailto:ops%2Bhooks@example.com?subject=x&cc=other@example.com ')).toBe('ops+hooks@example.com');
    expect(mailRecipient('ops@example.com, other@example.com')).toBeNull();
    expect(mailRecipient('mailto:ops@example.com,other@example.com')).toBeNull();
    expect(mailRecipient('Ops <ops@example.com>')).toBeNull();
    expect(mailRecipient('ops@example.com\r\nBcc: other@example.com')).toBeNull();
    expect(mailRecipient('mailto:%E0%A4%A')).toBeNull();
    expect(mailSubject('task_completed', '65f1')).toBe('humantask: task 65f1 completed');
    expect(mailSubject('batch_completed', 'b\r\nBcc: x@y')).toBe('humantask: batch b Bcc: x@y completed');
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('e-mail callbacks on %s', (db) => {
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  let server: TestServer;
  beforeAll(async () => {
    smtp = await smtpServer();
    server = await startTestServer(db, { ...env, SMTP_URL: smtp.url, SMTP_FROM: 'Labeling <hooks@humantask.test>' });
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('mails the completed task once, with the signed JSON attached and the callback headers; the flag becomes true', async () => {
    const api = client(server, 'current', server.dev.test_key);
    const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: 'ops@example.com' } });
    expect(created.status).toBe(200);
    const id: string = created.body.task_id;
    await until(async () => (await api('GET', `/v1/task/${id}`)).body.callback_completed === true, 'the flag');
    const mails = smtp.mails.filter((m) => m.raw.includes(id));
    expect(mails).toHaveLength(1);
    const [mail] = mails as [Mail];
    expect(mail.from).toBe('hooks@humantask.test');
    expect(mail.to).toEqual(['ops@example.com']);

    const { headers, parts } = parseMail(mail.raw);
    expect(headers.get('from')).toBe('Labeling <hooks@humantask.test>');
    expect(headers.get('to')).toBe('ops@example.com');
    expect(headers.get('subject')).toBe(`humantask: task ${id} completed`);
    expect(headers.get('message-id')).toBe(`<${headers.get('webhook-id')}@humantask>`);

    const read = (await api('GET', `/v1/task/${id}`)).body;
    const { callback_completed: _flag, ...taskAtCompletion } = read;
    const expected = { task_id: id, response: read.response, task: taskAtCompletion };
    const attachment = parts.find((p) => p.headers.get('content-type')?.startsWith('application/json'));
    expect(attachment?.headers.get('content-disposition')).toMatch(/^attachment; filename="?task_completed\.json"?$/);
    const json = attachment!.body.toString('utf8');
    expect(JSON.parse(json)).toEqual(expected);
    const text = parts.find((p) => p.headers.get('content-type')?.startsWith('text/plain'));
    expect(JSON.parse(text!.body.toString('utf8'))).toEqual(expected);

    // The same headers as a POST, and the signature verifies over the attachment's bytes.
    expect(headers.get('service-callback-auth')).toBe(server.dev.callback_auth_key);
    const key = Buffer.from(server.dev.signing_secret.replace(/^whsec_/, ''), 'base64');
    const signed = createHmac('sha256', key)
      .update(`${headers.get('webhook-id')}.${headers.get('webhook-timestamp')}.${json}`)
      .digest('base64');
    expect(headers.get('webhook-signature')).toBe(`v1,${signed}`);
    expect(Math.abs(Number(headers.get('webhook-timestamp')) - Date.now() / 1000)).toBeLessThan(300);

    const attempts = await server.uow.outbox.attemptsFor(server.dev.account_id, id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ url: 'ops@example.com', statusCode: 250, error: null });
  });

  it('mails to a mailto: address too, in the generation that created the task', async () => {
    const api = client(server, 'legacy', server.dev.test_key);
    const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: 'mailto:team@example.com' } });
    const id: string = created.body.task_id;
    await until(async () => (await api('GET', `/v1/task/${id}`)).body.callback_succeeded === true, 'the legacy flag');
    const mails = smtp.mails.filter((m) => m.raw.includes(id));
    expect(mails.map((m) => m.to)).toEqual([['team@example.com']]);
    const attachment = parseMail(mails[0]!.raw).parts.find((p) => p.headers.get('content-type')?.startsWith('application/json'));
    expect(JSON.parse(attachment!.body.toString('utf8')).task).toMatchObject({ task_id: id, urgency: 'day', status: 'completed' });
  });
});

describe('e-mail callbacks that fail', () => {
  // The whole schedule, on a clock moved on to each retry's due time (test/support/delivery-clock.ts):
  // 21 attempts, exactly, however long each takes (smtp-server alone waits 100 ms before its greeting).
  it('retries a refused mail on the schedule, then sets the flag to false', async () => {
    const smtp = await smtpServer({ refuse: true });
    const server = await startTestServer('pglite');
    const dispatcher = startClockedDispatcher(server.uow, createMailer(smtp.url));
    try {
      const api = client(server, 'current', server.dev.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: 'ops@example.com' } });
      const id: string = created.body.task_id;
      const message = await dispatcher.runRetries(server.dev.account_id, id);
      await until(async () => (await api('GET', `/v1/task/${id}`)).body.callback_completed === false, 'the final failure');
      const attempts = await server.uow.outbox.attemptsFor(server.dev.account_id, id);
      expectWholeLadder(attempts);
      expect(smtp.refused()).toBe(attempts.length);
      expect(smtp.mails).toHaveLength(0);
      for (const a of attempts) {
        expect(a.statusCode).toBeNull();
        expect(a.error).toMatch(/^other: the SMTP server replied: .*550 mailbox unavailable/);
      }
      expect(message).toMatchObject({ attempts: attempts.length, deliveredAt: null, failedAt: expect.any(Date) });
    } finally {
      await dispatcher.stop();
      await server.close();
      await smtp.close();
    }
  });

  it('without SMTP_URL, records failed attempts that say so, on the schedule', async () => {
    const server = await startTestServer('pglite');
    const dispatcher = startClockedDispatcher(server.uow, createMailer(undefined));
    try {
      const api = client(server, 'current', server.dev.test_key);
      const created = await api('POST', '/v1/task/categorization', { json: { ...task, callback_url: 'ops@example.com' } });
      const id: string = created.body.task_id;
      await dispatcher.runRetries(server.dev.account_id, id);
      await until(async () => (await api('GET', `/v1/task/${id}`)).body.callback_completed === false, 'the final failure');
      const attempts = await server.uow.outbox.attemptsFor(server.dev.account_id, id);
      expectWholeLadder(attempts);
      for (const a of attempts) expect(a).toMatchObject({ statusCode: null, error: 'other: no SMTP server configured (SMTP_URL)' });
    } finally {
      await dispatcher.stop();
      await server.close();
    }
  });

  it('a wrong SMTP_URL stops the start', async () => {
    await expect(startTestServer('pglite', { SMTP_URL: 'mail.example.com:25' })).rejects.toThrow(/SMTP_URL/);
  });
});
