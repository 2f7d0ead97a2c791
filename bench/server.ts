// One reference server for the benchmark, as a child process (forked by bench/run.ts with IPC).
// Configuration comes from the environment as in production (DATABASE_URL or DATA_DIR, LOG_LEVEL,
// NODE_ENV, RATE_LIMIT_BURST, ...). Tells the parent its URL and the development account's keys,
// answers {rss: true} with its resident set size and {createAccount: name} with the new keys.
import { pino } from 'pino';
import { readConfig } from '../server/config.ts';
import { createAccount } from '../server/domain/accounts.ts';
import { startServer } from '../server/main.ts';

const config = { ...readConfig(process.env), port: 0, host: '127.0.0.1' };
const server = await startServer(config, pino({ level: config.logLevel }));
if (!server.devAccount) throw new Error('the benchmark needs an empty database (it uses the development account)');

process.on('message', (msg: { rss?: boolean; stop?: boolean; createAccount?: string }) => {
  if (msg.createAccount) void createAccount(server.uow, msg.createAccount, new Date()).then((created) => process.send?.({ created }));
  if (msg.rss) process.send?.({ rss: process.memoryUsage().rss });
  if (msg.stop) void server.close().then(() => process.exit(0));
});
process.send?.({ ready: true, url: server.url, account: server.devAccount });
