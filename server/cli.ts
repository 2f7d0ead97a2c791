// `humantask <command>`: the operator's and developer's entry point.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startMock } from '../scripts/mock.ts';
import { adminFile, failedDeliveries, runAccountCommand, type AccountCommand } from './admin.ts';
import { readConfig } from './config.ts';
import { DomainError } from './domain/errors.ts';
import { docsSite, startServer } from './main.ts';
import { openStore } from './store/db.ts';
import { DataDirInUse } from './store/lock.ts';
import { SecretsKeyError } from './store/secrets.ts';
import { unitOfWork } from './store/repositories.ts';

const projectRoot = path.join(docsSite, '..', '..');

const usage = `usage: humantask <command>

commands:
  serve                       run the service (both generations; docs at /docs)
  accounts create --name NAME [--json]
  accounts list
  accounts rotate-key --name NAME --mode test|live
  accounts set --name NAME [--default-callback-url URL|none] [--enable-type T]... [--disable-type T]...
               [--test-completion-delay-ms N]
  accounts usage --name NAME  live requests counted (the first 5 are free)
  deliveries --failed [--limit N]   callbacks that failed for good, newest first, with their last error
  mock                        Prism mocks of both generations (MOCK_PORT_CURRENT=4010, MOCK_PORT_LEGACY=4011)
  conformance --base-url URL --key KEY [--generation current|legacy|both] [--other-key KEY2]
              [--live-key KEY3] [--callback-host 127.0.0.1] [--only PATTERN] [--report DIR]
              [--seed N] [--runs N] [--profile full|mock]
                              test any server of this API against the contract (docs/conformance.md;
                              humantask conformance --help)

configuration (environment): PORT, HOST, DATA_DIR, DATABASE_URL, LOG_LEVEL (see README.md)
`;

async function serve() {
  const config = readConfig();
  if (!existsSync(path.join(docsSite, 'index.html'))) {
    console.log('building the docs site (first start only) ...');
    const built = spawnSync(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'scripts', 'build-docs.ts')], { stdio: 'inherit' });
    if (built.status !== 0) console.error('the docs site could not be built; /docs is not served');
  }
  const server = await startServer(config);
  // One write: whoever reads the output sees the address and the keys together.
  const lines = [
    `humantask listening on ${server.url} (current generation /v1, older /legacy/v1, docs /docs)`,
    `store: ${server.store.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`}`,
  ];
  if (server.devAccount) {
    const a = server.devAccount;
    lines.push(
      '',
      'A development account was created (its keys are shown only now):',
      `  test key:          ${a.test_key}`,
      `  live key:          ${a.live_key}`,
      `  callback auth key: ${a.callback_auth_key}`,
      `  signing secret:    ${a.signing_secret}`,
      '',
      `try: curl -u ${a.test_key}: ${server.url}/v1/tasks`,
      '',
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      server.close().then(() => process.exit(0), (err) => {
        console.error(err);
        process.exit(1);
      });
    });
  }
}

/** Sends the command to a running server that holds the embedded database, if there is one. */
async function viaRunningServer(dataDir: string, command: unknown, route = '/accounts'): Promise<{ result: unknown } | null> {
  let admin: { url: string; token: string };
  try {
    admin = JSON.parse(readFileSync(adminFile(dataDir), 'utf8'));
  } catch {
    return null;
  }
  let res: Response;
  try {
    res = await fetch(`${admin.url}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(command),
    });
  } catch {
    return null; // a stale file: no server is running, the store is free
  }
  const body = (await res.json()) as { result?: unknown; error?: string };
  if (!res.ok) throw new DomainError('invalid', body.error ?? `admin interface answered ${res.status}`);
  return { result: body.result };
}

async function accounts(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      json: { type: 'boolean', default: false },
      mode: { type: 'string' },
      'default-callback-url': { type: 'string' },
      'enable-type': { type: 'string', multiple: true },
      'disable-type': { type: 'string', multiple: true },
      'test-completion-delay-ms': { type: 'string' },
    },
  });
  const url = values['default-callback-url'];
  const delay = values['test-completion-delay-ms'];
  const command = {
    command: positionals[0],
    name: values.name,
    mode: values.mode,
    ...(url !== undefined ? { defaultCallbackUrl: url === 'none' ? null : url } : {}),
    enableTypes: values['enable-type'] ?? [],
    disableTypes: values['disable-type'] ?? [],
    ...(delay !== undefined ? { testCompletionDelayMs: Number(delay) } : {}),
  } as AccountCommand;
  if (!['create', 'list', 'rotate-key', 'set', 'usage'].includes(String(command.command))) {
    process.stdout.write(usage);
    process.exitCode = 2;
    return;
  }
  const config = readConfig();
  let answer = config.databaseUrl ? null : await viaRunningServer(config.dataDir, command);
  if (!answer) {
    const store = await openStore(config);
    try {
      answer = { result: await runAccountCommand(unitOfWork(store), command) };
    } finally {
      await store.close();
    }
  }
  if (command.command === 'create' && !values.json) {
    for (const [k, v] of Object.entries(answer.result as Record<string, string>)) console.log(`${k.padEnd(18)} ${v}`);
  } else {
    console.log(JSON.stringify(answer.result, null, 2));
  }
}

async function deliveries(args: string[]) {
  const { values } = parseArgs({ args, options: { failed: { type: 'boolean', default: false }, limit: { type: 'string', default: '100' } } });
  if (!values.failed) {
    process.stdout.write(usage);
    process.exitCode = 2;
    return;
  }
  const config = readConfig();
  const limit = Number(values.limit);
  let answer = config.databaseUrl ? null : await viaRunningServer(config.dataDir, { limit }, '/deliveries');
  if (!answer) {
    const store = await openStore(config);
    try {
      answer = { result: await failedDeliveries(unitOfWork(store), limit) };
    } finally {
      await store.close();
    }
  }
  console.log(JSON.stringify(answer.result, null, 2));
}

const [command, ...rest] = process.argv.slice(2);
try {
  switch (command) {
    case 'serve':
      await serve();
      break;
    case 'accounts':
      await accounts(rest);
      break;
    case 'deliveries':
      await deliveries(rest);
      break;
    case 'conformance': {
      // Loaded only here: the suite (fast-check, reports) is not needed to serve.
      const { main } = await import('../test/conformance/cli.ts');
      process.exitCode = await main(rest);
      break;
    }
    case 'mock': {
      const mock = await startMock(
        { current: Number(process.env.MOCK_PORT_CURRENT ?? 4010), legacy: Number(process.env.MOCK_PORT_LEGACY ?? 4011) },
        process.env.MOCK_HOST ?? '127.0.0.1',
      );
      console.log(`current generation mock: ${mock.urls.current}/v1/...`);
      console.log(`legacy generation mock:  ${mock.urls.legacy}/v1/...`);
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        process.once(signal, () => void mock.stop().then(() => process.exit(0)));
      }
      break;
    }
    default:
      process.stdout.write(usage);
      process.exitCode = command === undefined || command === 'help' ? 0 : 2;
  }
} catch (err) {
  // A held data folder or a missing secrets key: the message says it all, no stack.
  const plain = err instanceof DomainError || err instanceof DataDirInUse || err instanceof SecretsKeyError;
  console.error(plain ? `humantask: ${err.message}` : err);
  process.exitCode = err instanceof DomainError ? 2 : 1;
}
