// `humantask <command>`: the operator's and developer's entry point. Every command answers
// `--help` without doing anything else; a usage error says what was wrong and exits 2. The server,
// the store, Prism and the conformance suite are loaded only by the command that needs them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs, type ParseArgsConfig } from 'node:util';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
  peerDependencies: Record<string, string>;
};

class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

const usage = `usage: humantask <command> [options]

commands:
  serve                 run the service (both generations; docs at /docs)
  accounts <command>    create, add-owner, list, rotate-key, set, usage (humantask accounts --help)
  workers <command>     the operator's workforce: create, list, set-roles, pause, unpause, remove,
                        reset-password (humantask workers --help)
  deliveries --failed   callbacks that failed for good, newest first, with their last error
  counts [--repair]     check the list counters and tag index against the tasks; rebuild them
  mock                  the Prism mock of both generations on one port (/v1 and /legacy/v1)
  conformance           test any server of this API against the contract (docs/conformance.md)
  import FILE           make tasks from a JSON Lines or CSV file, through the API (docs/imports.md)
  export -o FILE        write the tasks matching list filters in a format, through the API (docs/exports.md)

options:
  -h, --help            this text; \`humantask <command> --help\` shows a command's options
  -v, --version         the version

configuration (environment): PORT, HOST, DATA_DIR, DATABASE_URL, LOG_LEVEL (see README.md)
`;

const serveUsage = `usage: humantask serve

Runs the service: the current generation at /v1, the older at /legacy/v1, the docs site at /docs, the labeling app at /label/.
Prints the address and, on a new embedded store, the keys of a development account.

configuration (environment): PORT (8080), HOST (127.0.0.1), DATA_DIR (./data), DATABASE_URL (PostgreSQL
instead of the embedded store), WORKERS (processes behind the port; the number of cores on PostgreSQL,
1 on the embedded store), LOG_LEVEL (info); see README.md for the rest.
`;

const accountsUsage = `usage: humantask accounts <command> [options]

commands:
  create --name NAME [--owner EMAIL]
                                  a new account; prints its keys and secrets (shown only now) and,
                                  with --owner, its first owner's one-time set-password link
  add-owner --name NAME --email EMAIL
                                  one more owner (an account made before members existed gets its
                                  first); prints the owner's one-time set-password link
  list                            every account with its settings and usage
  rotate-key --name NAME --mode test|live
                                  a new API key of that mode; the old one stops working
  set --name NAME [--default-callback-url URL|none] [--enable-type T]... [--disable-type T]...
      [--test-completion-delay-ms N] [--password-login on]
                                  change an account's settings (--password-login on: members may log
                                  in with a password again, when single sign-on fails)
  usage --name NAME               live requests counted (the first 5 are free)

options:
  --json                          print JSON instead of a table
  -h, --help                      this text

Runs on the store of DATA_DIR / DATABASE_URL, or through the running server that holds it.
`;

const workersUsage = `usage: humantask workers <command> [options]

The operator's workforce: the people who work on every account's live tasks (unless a project is
staffed otherwise), logging in at /worker/v1/session. Accounts manage their own workers with their
API key (POST /v1/workforce/workers).

commands:
  create --email ADDRESS --role R [--role R]... [--name NAME] [--calibrator]
         [--password-stdin]       a new worker; prints the password (chosen by the server unless
                                  read from stdin) only now
  list [--status active|paused|removed]
                                  every worker of the operator's workforce, newest first
  set-roles (--worker ID | --email ADDRESS) --role R [--role R]... [--calibrator | --no-calibrator]
                                  replace the roles (labeler, reviewer, lead)
  pause (--worker ID | --email ADDRESS)     no new work until unpaused
  unpause (--worker ID | --email ADDRESS)
  remove (--worker ID | --email ADDRESS)    every token stops working; the record stays
  reset-password (--worker ID | --email ADDRESS) [--password-stdin]
                                  a new password (printed only now), every token revoked

options:
  --json                          print JSON instead of a table
  -h, --help                      this text

A password is read from stdin (its first line), never from the command line, where it would stay in
the shell's history and be visible to other users' process lists. Runs on the store of DATA_DIR /
DATABASE_URL, or through the running server that holds it.
`;

const importUsage = `usage: humantask import FILE [--type T] [--project P] [--batch B] [--format jsonl|csv]
                        [--attachment-column C] [--params JSON] [--url URL] [--key KEY] [--quiet]

Sends FILE (JSON Lines: one creation body a line; CSV: a header row, then a task a row; by its
extension unless --format says) to POST /v1/imports, shows a progress bar while it is read, and
prints the import at its end (created, duplicates, refused lines with their errors). Exit 1 when
the import stopped or failed. Importing a file again creates no task twice.

options:
  --url URL             the server (HUMANTASK_URL, default http://127.0.0.1:8080)
  --key KEY             the API key (HUMANTASK_KEY)
  --quiet               no progress bar
`;

const exportUsage = `usage: humantask export --format F -o FILE [filters] [--view current|legacy] [--image-width N]
                        [--image-height N] [--url URL] [--key KEY] [--quiet]

Asks POST /v1/exports for the tasks matching the filters in format F (jsonl, csv, coco, yolo, voc,
conll2003, spacy, webvtt, srt, mot), shows a progress bar while it is written, downloads the gzip
file to FILE and prints the export.

filters (as GET /v1/tasks takes them): --status S, --type T, --project P, --batch B, --tag T
(repeatable), --unique-id U, --start-time, --end-time, --completed-after, --completed-before,
--updated-after, --updated-before, --customer-review-status S

options:
  --url URL             the server (HUMANTASK_URL, default http://127.0.0.1:8080)
  --key KEY             the API key (HUMANTASK_KEY)
  --quiet               no progress bar
`;

const deliveriesUsage = `usage: humantask deliveries --failed [--limit N] [--json]

Callbacks that failed for good (every retry used), newest first, with their last error.

options:
  --failed          (required) list the failed deliveries
  --limit N         at most N of them (default 100)
  --json            print JSON instead of a table
  -h, --help        this text
`;

const countsUsage = `usage: humantask counts [--repair] [--limit N] [--json]

Checks the counters that answer a task list's \`total\` (task_counts) and the index of tags that
tag-filtered lists read (task_tags) against the tasks themselves. Triggers keep both in the same
transaction as every change of a task; only a change made with the triggers off (a data-only
restore with triggers disabled, an edit by hand) can make them differ. Reads every task: run it
when the database is quiet. Exits 1 when they differ (and were not repaired).

options:
  --repair          when they differ, rebuild both from the tasks in one transaction (writers of
                    tasks wait until it commits), then check again
  --limit N         list at most N differing counters (default 100)
  --json            print JSON instead of a table
  -h, --help        this text
`;

const mockUsage = `usage: humantask mock [--worker] [--port N] [--host HOST]

Serves the Prism mock of the contract on one port, at the paths the server serves: the current
generation at /v1, the older at /legacy/v1. With --worker, the worker API instead (at /worker/v1,
any Bearer token accepted), on its own port. Point any client at it by changing only the origin.
Ask for a documented example or status with the Prefer header (docs/mock.md):
  Prefer: code=404            Prefer: example=<name>            Prefer: code=400, example=<name>

options:
  --worker          the worker API's mock (/worker/v1) instead of the customer API's
  --port N          port (default MOCK_PORT or 4010; with --worker, WORKER_MOCK_PORT or 4011)
  --host HOST       address to listen on (default MOCK_HOST or 127.0.0.1)
  -h, --help        this text
`;

const helpOption = { help: { type: 'boolean', short: 'h', default: false } } as const;

/** parseArgs with the command's usage on any error; null when --help was asked for (printed). */
function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, text: string, positionals = 0) {
  const parsed = (() => {
    try {
      return parseArgs({ args, options: { ...helpOption, ...options }, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message, text);
    }
  })();
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(text);
    return null;
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument: ${parsed.positionals[positionals]}`, text);
  return parsed;
}

/** Prints a value as a table: an object as name/value lines, a list of objects as columns. */
export function table(value: unknown): string {
  const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)\n';
    const columns = [...new Set(value.flatMap((row) => Object.keys(row as object)))];
    const rows = [columns, ...value.map((row) => columns.map((c) => cell((row as Record<string, unknown>)[c])))];
    const widths = columns.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    return (
      rows
        .map((r) =>
          r
            .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
            .join('  ')
            .trimEnd(),
        )
        .join('\n') + '\n'
    );
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const width = Math.max(0, ...entries.map(([k]) => k.length));
    return entries.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`.trimEnd()).join('\n') + '\n';
  }
  return `${cell(value)}\n`;
}

const print = (value: unknown, json: boolean) => process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : table(value));

async function serve(args: string[]) {
  if (!parse(args, {}, serveUsage)) return;
  const { spawnSync } = await import('node:child_process');
  const { existsSync } = await import('node:fs');
  const path = await import('node:path');
  const { readConfig } = await import('./config.ts');
  const cluster = await import('./cluster.ts');
  const config = readConfig();
  const refusal = cluster.workersRefusal(config);
  if (refusal) throw new UsageError(refusal, serveUsage);
  // Where main.ts serves it from (not imported here: a primary of WORKERS loads no server).
  const docsSite = (await import('node:url')).fileURLToPath(new URL('../docs/site', import.meta.url));
  if (!cluster.isWorker() && !existsSync(path.join(docsSite, 'index.html'))) {
    console.log('building the docs site (first start only) ...');
    const script = path.join(docsSite, '..', '..', 'scripts', 'build-docs.ts');
    const built = spawnSync(process.execPath, ['--import', 'tsx', script], { stdio: 'inherit' });
    if (built.status !== 0) console.error('the docs site could not be built; /docs is not served');
  }
  const store = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  if (config.processes > 1 && !cluster.isWorker()) {
    cluster.supervise(config.processes, ({ url, secrets, devAccount, pids }) =>
      process.stdout.write(banner(url, store, secrets, devAccount, pids)),
    );
    return;
  }
  const { startServer } = await import('./main.ts');
  const server = await startServer(config);
  (await import('../bin/v8-flags.js')).releaseStartupGarbage();
  const secrets = server.store.secrets.source;
  if (cluster.isWorker()) cluster.reportReady(server.url, secrets, server.devAccount);
  else process.stdout.write(banner(server.url, store, secrets, server.devAccount, []));
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      server.close(signal).then(
        () => process.exit(0),
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
    });
  }
}

/** The start banner, one write: whoever reads the output sees the address and the keys together. */
function banner(
  url: string,
  store: string,
  secrets: string,
  devAccount: import('./domain/accounts.ts').AccountSecrets | null,
  workerPids: number[],
): string {
  const lines = [
    `humantask listening on ${url} (current generation /v1, older /legacy/v1, docs /docs, worker API /worker/v1, labeling app /label/, console /console/)`,
    `store: ${store}`,
    // Which key seals the accounts' secrets: a PostgreSQL database started from the folder of an
    // embedded one uses that folder's key file unless told otherwise (README: SECRETS_KEY_FILE).
    `secrets key: ${secrets}`,
  ];
  if (workerPids.length > 0) lines.push(`workers: ${workerPids.length} processes (${workerPids.join(', ')}) behind this port`);
  if (devAccount) {
    lines.push(
      '',
      'A development account was created (its keys are shown only now):',
      `  test key:          ${devAccount.test_key}`,
      `  live key:          ${devAccount.live_key}`,
      `  callback auth key: ${devAccount.callback_auth_key}`,
      `  signing secret:    ${devAccount.signing_secret}`,
      ...(devAccount.owner?.password
        ? [
            '',
            `Its development owner logs in to the console at ${url}/console/ (the password is shown only now; change it at PUT /v1/me/password):`,
            `  account:           ${devAccount.name}`,
            `  e-mail:            ${devAccount.owner.email}`,
            `  password:          ${devAccount.owner.password}`,
          ]
        : []),
      '',
      `try: curl -u ${devAccount.test_key}: ${url}/v1/tasks`,
      '',
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * Runs a store command: through a running server that holds the embedded database (PGlite is
 * single-process) when there is one, else on the store directly.
 */
async function onStore<T>(
  route: '/accounts' | '/counts' | '/deliveries' | '/workers',
  command: unknown,
  direct: (uow: import('./domain/ports.ts').UnitOfWork) => Promise<T>,
): Promise<unknown> {
  const { readConfig } = await import('./config.ts');
  const config = readConfig();
  const answer = config.databaseUrl ? null : await viaRunningServer(config.dataDir, command, route);
  if (answer) return answer.result;
  const { openStore } = await import('./store/db.ts');
  const { resultsUnitOfWork } = await import('./results/unit-of-work.ts');
  const store = await openStore(config);
  // The server's unit of work: a callback queued here links a response's files as the server's would.
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const baseUrl = config.publicUrl ?? `http://${host}:${config.port}`;
  const { uow } = resultsUnitOfWork(
    store,
    config,
    () => baseUrl,
    () => new Date(),
    (m) => console.error(`humantask: ${m}`),
  );
  try {
    return await direct(uow);
  } finally {
    await store.close();
  }
}

/** Sends the command to a running server that holds the embedded database, if there is one. */
async function viaRunningServer(dataDir: string, command: unknown, route: string): Promise<{ result: unknown } | null> {
  const { adminFile } = await import('./admin.ts');
  const { DomainError } = await import('./domain/errors.ts');
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

const accountCommands = ['create', 'list', 'rotate-key', 'set', 'usage', 'add-owner'] as const;

async function accounts(args: string[]) {
  const parsed = parse(
    args,
    {
      name: { type: 'string' },
      json: { type: 'boolean', default: false },
      mode: { type: 'string' },
      'default-callback-url': { type: 'string' },
      'enable-type': { type: 'string', multiple: true },
      'disable-type': { type: 'string', multiple: true },
      'test-completion-delay-ms': { type: 'string' },
      owner: { type: 'string' },
      email: { type: 'string' },
      'password-login': { type: 'string' },
    },
    accountsUsage,
    1,
  );
  if (!parsed) return;
  const { values, positionals } = parsed;
  const sub = positionals[0];
  if (sub === undefined) throw new UsageError('which accounts command? (create, add-owner, list, rotate-key, set, usage)', accountsUsage);
  if (!(accountCommands as readonly string[]).includes(sub)) throw new UsageError(`unknown accounts command: ${sub}`, accountsUsage);
  if (sub !== 'list' && !values.name) throw new UsageError(`accounts ${sub} needs --name NAME`, accountsUsage);
  if (sub === 'rotate-key' && values.mode !== 'test' && values.mode !== 'live')
    throw new UsageError('accounts rotate-key needs --mode test or --mode live', accountsUsage);
  if (sub === 'add-owner' && !values.email) throw new UsageError('accounts add-owner needs --email EMAIL', accountsUsage);
  const passwordLogin = values['password-login'];
  if (passwordLogin !== undefined && passwordLogin !== 'on')
    throw new UsageError('--password-login takes only "on" (turn it off in the console, with single sign-on set up)', accountsUsage);
  const url = values['default-callback-url'];
  const delay = values['test-completion-delay-ms'];
  if (delay !== undefined && !/^\d+$/.test(delay))
    throw new UsageError('--test-completion-delay-ms is a whole number of milliseconds', accountsUsage);
  const command = {
    command: sub as (typeof accountCommands)[number],
    name: values.name,
    mode: values.mode,
    ...(url !== undefined ? { defaultCallbackUrl: url === 'none' ? null : url } : {}),
    enableTypes: values['enable-type'] ?? [],
    disableTypes: values['disable-type'] ?? [],
    ...(delay !== undefined ? { testCompletionDelayMs: Number(delay) } : {}),
    ...(sub === 'create' && values.owner !== undefined ? { owner: values.owner } : {}),
    ...(sub === 'add-owner' ? { owner: values.email } : {}),
    ...(passwordLogin === 'on' ? { passwordLogin: true } : {}),
  };
  const { runAccountCommand } = await import('./admin.ts');
  const { readConfig } = await import('./config.ts');
  const config = readConfig();
  const settings = {
    passwordCost: config.workers.passwordCost,
    linkTtlMs: config.members.linkTtlMs,
    publicUrl: config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
  };
  print(await onStore('/accounts', command, (uow) => runAccountCommand(uow, command, settings)), values.json);
}

const workerCommands = ['create', 'list', 'set-roles', 'pause', 'unpause', 'remove', 'reset-password'] as const;

/** The first line of stdin (a password piped in or typed). */
async function firstLineOfStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0]!;
}

async function workers(args: string[]) {
  const parsed = parse(
    args,
    {
      worker: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string', multiple: true },
      calibrator: { type: 'boolean' },
      'no-calibrator': { type: 'boolean' },
      'password-stdin': { type: 'boolean', default: false },
      status: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    workersUsage,
    1,
  );
  if (!parsed) return;
  const { values, positionals } = parsed;
  const sub = positionals[0];
  if (sub === undefined) throw new UsageError(`which workers command? (${workerCommands.join(', ')})`, workersUsage);
  if (!(workerCommands as readonly string[]).includes(sub)) throw new UsageError(`unknown workers command: ${sub}`, workersUsage);
  if (sub === 'create' && !values.email) throw new UsageError('workers create needs --email ADDRESS', workersUsage);
  if ((sub === 'create' || sub === 'set-roles') && !values.role?.length)
    throw new UsageError(`workers ${sub} needs --role (labeler, reviewer, lead)`, workersUsage);
  if (!['create', 'list'].includes(sub) && !values.worker && !values.email)
    throw new UsageError(`workers ${sub} needs --worker ID or --email ADDRESS`, workersUsage);
  const password = values['password-stdin'] ? await firstLineOfStdin() : undefined;
  const calibrator = values.calibrator ? true : values['no-calibrator'] ? false : undefined;
  const command = {
    command: sub as (typeof workerCommands)[number],
    ...(values.worker !== undefined ? { worker: values.worker } : {}),
    ...(values.email !== undefined ? { email: values.email } : {}),
    ...(values.name !== undefined ? { displayName: values.name } : {}),
    ...(values.role !== undefined ? { roles: values.role } : {}),
    ...(calibrator !== undefined ? { calibrator } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(values.status !== undefined ? { status: values.status } : {}),
  };
  const { runWorkerCommand } = await import('./admin.ts');
  const { readConfig } = await import('./config.ts');
  const settings = readConfig().workers;
  print(await onStore('/workers', command, (uow) => runWorkerCommand(uow, command, settings)), values.json);
}

async function deliveries(args: string[]) {
  const parsed = parse(
    args,
    { failed: { type: 'boolean', default: false }, limit: { type: 'string', default: '100' }, json: { type: 'boolean', default: false } },
    deliveriesUsage,
  );
  if (!parsed) return;
  const { values } = parsed;
  if (!values.failed) throw new UsageError('deliveries needs --failed (the only listing there is)', deliveriesUsage);
  if (!/^[1-9]\d*$/.test(values.limit)) throw new UsageError('--limit is a positive whole number', deliveriesUsage);
  const limit = Number(values.limit);
  const { failedDeliveries } = await import('./admin.ts');
  print(await onStore('/deliveries', { limit }, (uow) => failedDeliveries(uow, limit)), values.json);
}

async function mock(args: string[]) {
  const parsed = parse(args, { worker: { type: 'boolean' }, port: { type: 'string' }, host: { type: 'string' } }, mockUsage);
  if (!parsed) return;
  const worker = parsed.values.worker === true;
  const port = parsed.values.port ?? (worker ? (process.env.WORKER_MOCK_PORT ?? '4011') : (process.env.MOCK_PORT ?? '4010'));
  if (!/^\d+$/.test(port) || Number(port) > 65535) throw new UsageError(`--port is a port number (0-65535), not ${port}`, mockUsage);
  // Prism is loaded only here, and installed only by those who mock: an optional peer dependency
  // (docs/decisions/0022-a-package-that-carries-what-it-needs.md).
  const prism = '@stoplight/prism-cli';
  try {
    createRequire(import.meta.url).resolve(`${prism}/package.json`);
  } catch {
    process.stderr.write(
      `humantask: the mock runs Prism (${prism}), which is not installed: it is an optional peer dependency of humantask, ` +
        `left out of a plain install so that serving does not carry it. Install it next to humantask, then run the mock again:\n` +
        `  npm install ${prism}@${pkg.peerDependencies[prism]}\n`,
    );
    process.exitCode = 1;
    return;
  }
  const { startMock, startWorkerMock } = await import('./mock.ts');
  const running = await (worker ? startWorkerMock : startMock)({
    port: Number(port),
    host: parsed.values.host ?? process.env.MOCK_HOST ?? '127.0.0.1',
  });
  console.log(
    worker
      ? `humantask worker mock listening on ${running.url} (worker API ${running.url}/worker/v1)`
      : `humantask mock listening on ${running.url} (current generation ${running.url}/v1, older ${running.url}/legacy/v1)`,
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void running.stop().then(() => process.exit(0)));
  }
}

async function conformance(args: string[]) {
  // Loaded only here: the suite (fast-check, reports) is not needed to serve.
  const { main } = await import('../conformance/cli.ts');
  process.exitCode = await main(args);
}

async function counts(args: string[]) {
  const parsed = parse(
    args,
    { repair: { type: 'boolean', default: false }, limit: { type: 'string', default: '100' }, json: { type: 'boolean', default: false } },
    countsUsage,
  );
  if (!parsed) return;
  const { values } = parsed;
  if (!/^[1-9]\d*$/.test(values.limit)) throw new UsageError('--limit is a positive whole number', countsUsage);
  const command = { repair: values.repair, limit: Number(values.limit) };
  const { checkCounts } = await import('./admin.ts');
  const result = (await onStore('/counts', command, (uow) => checkCounts(uow, command))) as Awaited<ReturnType<typeof checkCounts>>;
  if (values.json) print(result, true);
  else {
    // The summary (what was found before a repair is in the JSON), then the counters that differ.
    const { differences, before: _before, ...summary } = result;
    print(summary, false);
    if (differences.length > 0) print(differences, false);
  }
  if (!result.in_order) process.exitCode = 1;
}

/** The server and key that `import` and `export` call (options, else HUMANTASK_URL and HUMANTASK_KEY). */
function apiTarget(values: { url?: string | undefined; key?: string | undefined }, text: string) {
  const key = values.key ?? process.env.HUMANTASK_KEY;
  if (!key) throw new UsageError('needs an API key: --key KEY or HUMANTASK_KEY', text);
  return { url: (values.url ?? process.env.HUMANTASK_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''), key };
}

const apiOptions = { url: { type: 'string' }, key: { type: 'string' }, quiet: { type: 'boolean', default: false } } as const;

async function importCommand(args: string[]) {
  const parsed = parse(
    args,
    {
      ...apiOptions,
      type: { type: 'string' },
      project: { type: 'string' },
      batch: { type: 'string' },
      format: { type: 'string' },
      'attachment-column': { type: 'string' },
      params: { type: 'string' },
    },
    importUsage,
    1,
  );
  if (!parsed) return;
  const { values, positionals } = parsed;
  const [file] = positionals;
  if (!file) throw new UsageError('which file? (humantask import FILE)', importUsage);
  if (values.format !== undefined && !['jsonl', 'csv'].includes(values.format))
    throw new UsageError('--format is jsonl or csv', importUsage);
  const { runImport } = await import('./transfer/cli.ts');
  const done = await runImport(apiTarget(values, importUsage), {
    file,
    quiet: values.quiet,
    ...(values.type !== undefined ? { type: values.type } : {}),
    ...(values.project !== undefined ? { project: values.project } : {}),
    ...(values.batch !== undefined ? { batch: values.batch } : {}),
    ...(values.format !== undefined ? { format: values.format } : {}),
    ...(values['attachment-column'] !== undefined ? { attachmentColumn: values['attachment-column'] } : {}),
    ...(values.params !== undefined ? { params: values.params } : {}),
  });
  print(done, true);
  if (done.state !== 'completed') process.exitCode = 1;
}

const filterOptions = {
  status: 'status',
  type: 'type',
  project: 'project',
  batch: 'batch',
  tag: 'tags',
  'unique-id': 'unique_id',
  'start-time': 'start_time',
  'end-time': 'end_time',
  'completed-after': 'completed_after',
  'completed-before': 'completed_before',
  'updated-after': 'updated_after',
  'updated-before': 'updated_before',
  'customer-review-status': 'customer_review_status',
} as const;

async function exportCommand(args: string[]) {
  const filterArgs = Object.fromEntries(Object.keys(filterOptions).map((o) => [o, { type: 'string', multiple: true }])) as Record<
    keyof typeof filterOptions,
    { type: 'string'; multiple: true }
  >;
  const parsed = parse(
    args,
    {
      ...apiOptions,
      ...filterArgs,
      format: { type: 'string' },
      output: { type: 'string', short: 'o' },
      view: { type: 'string' },
      'image-width': { type: 'string' },
      'image-height': { type: 'string' },
    },
    exportUsage,
  );
  if (!parsed) return;
  const { values } = parsed;
  if (!values.format) throw new UsageError('which format? (--format coco, yolo, jsonl, ...)', exportUsage);
  if (!values.output) throw new UsageError('where to? (-o FILE)', exportUsage);
  const filters: Record<string, string[]> = {};
  for (const [option, name] of Object.entries(filterOptions)) {
    const given = values[option as keyof typeof filterOptions];
    if (given?.length) filters[name] = given;
  }
  const { runExport } = await import('./transfer/cli.ts');
  const done = await runExport(apiTarget(values, exportUsage), {
    format: values.format,
    filters,
    output: values.output,
    quiet: values.quiet,
    ...(values.view !== undefined ? { view: values.view } : {}),
    ...(values['image-width'] !== undefined ? { imageWidth: values['image-width'] } : {}),
    ...(values['image-height'] !== undefined ? { imageHeight: values['image-height'] } : {}),
  });
  print(done, true);
}

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve,
  accounts,
  workers,
  counts,
  deliveries,
  mock,
  conformance,
  import: importCommand,
  export: exportCommand,
};

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help') {
    process.stdout.write(usage);
    return;
  }
  if (command === '-v' || command === '--version') {
    process.stdout.write(`${pkg.version}\n`);
    return;
  }
  if (command === 'help') {
    const [topic] = rest;
    if (topic === undefined) process.stdout.write(usage);
    else if (commands[topic]) await commands[topic](['--help']);
    else throw new UsageError(`unknown command: ${topic}`, usage);
    return;
  }
  const run = commands[command];
  if (!run) throw new UsageError(command.startsWith('-') ? `unknown option: ${command}` : `unknown command: ${command}`, usage);
  await run(rest);
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`humantask: ${err.message}\n\n${err.usage}`);
    process.exitCode = 2;
  } else {
    const [{ DomainError }, { DataDirInUse }, { SecretsKeyError }, { ApiError }] = await Promise.all([
      import('./domain/errors.ts'),
      import('./store/lock.ts'),
      import('./store/secrets.ts'),
      import('./transfer/cli.ts'),
    ]);
    // A held data folder, a missing secrets key, an answer of the API: the message says it all, no stack.
    const plain = err instanceof DomainError || err instanceof DataDirInUse || err instanceof SecretsKeyError || err instanceof ApiError;
    console.error(plain ? `humantask: ${err.message}` : err);
    process.exitCode = err instanceof DomainError ? 2 : 1;
  }
}
