// One reference server for the benchmark, as a child process (forked by bench/run.ts with IPC).
// Configuration comes from the environment as in production (DATABASE_URL or DATA_DIR, LOG_LEVEL,
// NODE_ENV, RATE_LIMIT_BURST, ...). Tells the parent its URL and the development account's keys,
// answers {rss: true} with its resident set size and {createAccount: name} with the new keys.
// STACK_CEILING=true: the "stack ceiling", the same server whose every handler answers at once with
// the validated body (auth, rate limit, parsers, Idempotency-Key check, contract validation and the
// JSON answer, and nothing of ours after them). A live creation's request is counted by its creating
// statement (http/auth.ts); the ceiling's does nothing, so it is marked counted and costs no statement.
import { pino } from 'pino';
import { handlerTable } from '../server/app.ts';
import { readConfig } from '../server/config.ts';
import { createAccount } from '../server/domain/accounts.ts';
import { startServer } from '../server/main.ts';
import type { LiveRequest } from '../server/http/typed.ts';
import { releaseStartupGarbage } from '../bin/v8-flags.js';

const nothingAfterValidation: typeof handlerTable = (contract, uow) =>
  Object.fromEntries(
    Object.keys(handlerTable(contract, uow)).map((op) => [
      op,
      async ({ body, liveRequest }: { body: unknown; liveRequest?: LiveRequest }) => {
        if (liveRequest) liveRequest.counted = true;
        return { task_id: '0123456789abcdef01234567', status: 'pending', params: body };
      },
    ]),
  ) as unknown as ReturnType<typeof handlerTable>;

const config = { ...readConfig(process.env), port: 0, host: '127.0.0.1' };
const server = await startServer(
  config,
  pino({ level: config.logLevel }),
  process.env.STACK_CEILING === 'true' ? { handlers: nothingAfterValidation } : {},
);
if (!server.devAccount) throw new Error('the benchmark needs an empty database (it uses the development account)');
// As `humantask serve` does after start (the bound on heap growth is part of what is measured).
releaseStartupGarbage();

process.on('message', (msg: { rss?: boolean; stop?: boolean; createAccount?: string }) => {
  if (msg.createAccount) void createAccount(server.uow, msg.createAccount, new Date()).then((created) => process.send?.({ created }));
  if (msg.rss) process.send?.({ rss: process.memoryUsage().rss });
  if (msg.stop) void server.close().then(() => process.exit(0));
});
process.send?.({ ready: true, url: server.url, account: server.devAccount });
