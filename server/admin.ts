// Account commands of the `humantask accounts` CLI. They run on the store directly, or, while a
// server holds the embedded database (PGlite is single-process), through that server's admin
// interface: HTTP on 127.0.0.1 only, with a token in DATA_DIR/admin.json readable by its owner only.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { accountSummary, createAccount, rotateKey, updateAccount } from './domain/accounts.ts';
import { DomainError, invalid, notFound } from './domain/errors.ts';
import type { UnitOfWork } from './domain/ports.ts';
import { safeError } from './store/errors.ts';

export interface AccountCommand {
  command: 'create' | 'list' | 'rotate-key' | 'set' | 'usage';
  name?: string;
  mode?: string;
  defaultCallbackUrl?: string | null;
  enableTypes?: string[];
  disableTypes?: string[];
  testCompletionDelayMs?: number;
}

const need = (v: string | undefined, flag: string) => {
  if (!v) throw invalid(`--${flag} is required`);
  return v;
};

export async function runAccountCommand(uow: UnitOfWork, c: AccountCommand): Promise<unknown> {
  switch (c.command) {
    case 'create':
      return createAccount(uow, need(c.name, 'name'), new Date());
    case 'list':
      return (await uow.accounts.list()).map(accountSummary);
    case 'rotate-key': {
      if (c.mode !== 'test' && c.mode !== 'live') throw invalid('--mode is test or live');
      return rotateKey(uow, need(c.name, 'name'), c.mode);
    }
    case 'set': {
      if (c.testCompletionDelayMs !== undefined && !(Number.isInteger(c.testCompletionDelayMs) && c.testCompletionDelayMs >= 0)) {
        throw invalid('--test-completion-delay-ms is a whole number of milliseconds');
      }
      const { command: _c, name, mode: _m, ...settings } = c;
      return updateAccount(uow, need(name, 'name'), settings);
    }
    case 'usage': {
      const account = await uow.accounts.findByName(need(c.name, 'name'));
      if (!account) throw notFound(`No account named "${c.name}".`);
      const { name, live_requests, live_requests_charged } = accountSummary(account);
      return { name, live_requests, live_requests_charged };
    }
    default:
      throw invalid(`unknown accounts command "${String(c.command)}"`);
  }
}

/** The operator's view of callbacks that failed for good: newest first, with the last error. */
export async function failedDeliveries(uow: UnitOfWork, limit: number) {
  const failed = await uow.outbox.failed(limit);
  return Promise.all(
    failed.map(async (m) => {
      const last = (await uow.outbox.attemptsFor(m.accountId, m.subject)).filter((a) => a.messageId === m.id).at(-1);
      return {
        account_id: m.accountId,
        mode: m.mode,
        event: m.event,
        subject: m.subject,
        url: m.url,
        attempts: m.attempts,
        first_attempt_at: m.firstAttemptAt?.toISOString(),
        failed_at: m.failedAt?.toISOString(),
        last_result: last ? (last.statusCode !== null ? `HTTP ${last.statusCode}` : last.error) : null,
      };
    }),
  );
}

export const adminFile = (dataDir: string) => path.join(dataDir, 'admin.json');

/** Starts the admin interface of a server that holds an embedded database. */
export async function startAdmin(
  uow: UnitOfWork,
  dataDir: string,
  log: (err: Record<string, unknown>) => void = (err) => console.error('admin command failed', err),
): Promise<{ close(): Promise<void> }> {
  const token = randomBytes(24).toString('hex');
  const server: Server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const given = Buffer.from(req.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${token}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return answer(401, { error: 'bad admin token' });
    if (req.method !== 'POST' || (req.url !== '/accounts' && req.url !== '/deliveries')) return answer(404, { error: 'not found' });
    const run = (input: unknown) =>
      req.url === '/deliveries'
        ? failedDeliveries(uow, Number((input as { limit?: number }).limit ?? 100))
        : runAccountCommand(uow, input as AccountCommand);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Promise.resolve()
        .then(() => run(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
        .then(
          (result) => answer(200, { result }),
          (err) => {
            if (err instanceof DomainError) return answer(400, { error: err.message });
            // No SQL text or parameters in the answer: the operator reads the server's log.
            log(safeError(err));
            answer(500, { error: 'the command failed on the server (see its log)' });
          },
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  writeFileSync(adminFile(dataDir), JSON.stringify({ url: `http://127.0.0.1:${port}`, token, pid: process.pid }), { mode: 0o600 });
  return {
    close: async () => {
      rmSync(adminFile(dataDir), { force: true });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
