// The process: config -> store -> apps -> listen -> graceful shutdown.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { pino, type Logger } from 'pino';
import { startAdmin } from './admin.ts';
import { basePath, createApp, type AppDeps } from './app.ts';
import { clusterWide } from './cluster.ts';
import { createWorkerApp, workerBasePath } from './worker-app.ts';
import { consoleApp } from './console.ts';
import { labelApp } from './label.ts';
import type { Config } from './config.ts';
import { createAccount, type AccountSecrets } from './domain/accounts.ts';
import { operatorActor, recordActivity } from './domain/identity/activity.ts';
import { addOwner, type MemberSettings } from './domain/identity/members.ts';
import { generatePassword } from './domain/workforce/passwords.ts';
import { createNoticeMailer } from './delivery/notices.ts';
import { oidcRelyingParty } from './delivery/oidc.ts';
import type { IdentityDeps } from './http/identity-deps.ts';
import { wallClock } from './domain/clock.ts';
import type { UnitOfWork } from './domain/ports.ts';
import { completeDueTestTasks } from './domain/test-completion.ts';
import { expireLapsedLeases } from './domain/workforce/work.ts';
import { startAttachmentChecker } from './delivery/attachment-checker.ts';
import { startDispatcher } from './delivery/dispatcher.ts';
import { createMailer } from './delivery/mail.ts';
import { parseCidr, safeRequest } from './delivery/net.ts';
import { createPoller, type Poller } from './delivery/poller.ts';
import { createWakeup, type Wakeup } from './delivery/wakeup.ts';
import { authFailureLimit, failureLimit, limitLog, rateLimit } from './http/auth.ts';
import { clientAddressOf } from './http/client-address.ts';
import { hashGate } from './domain/workforce/passwords.ts';
import { cors, opsRouter, requestId } from './http/ops.ts';
import { resultsUnitOfWork } from './results/unit-of-work.ts';
import { databaseBuckets } from './store/buckets.ts';
import { outboxDepth, readiness } from './store/health.ts';
import { openStore, type Store } from './store/db.ts';
import { parseWorkPayload, workChannel, type WorkQueue } from './store/notify.ts';
import { safeError } from './store/errors.ts';
import type { TransferDeps } from './transfer/settings.ts';
import { exportWorker } from './transfer/exports.ts';
import { importWorker } from './transfer/imports.ts';
import { downloadRouter } from './transfer/links.ts';

const docsSite = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'site');

export interface RunningServer {
  url: string;
  store: Store;
  uow: UnitOfWork;
  /** Wakes long polls for work (assignments/next) when live work becomes claimable. */
  workAvailable: Wakeup;
  /** The development account's keys when this start created it (an empty database). */
  devAccount: AccountSecrets | null;
  /** Stops gracefully: in-flight requests finish, then the store closes. `reason` (e.g. the signal) is logged. */
  close(reason?: string): Promise<void>;
}

/**
 * The development account, made on an empty database. Several processes starting at once on one
 * database may all find it empty: the account name is unique, so one makes it and the others
 * answer null.
 */
async function firstAccount(uow: UnitOfWork, settings: MemberSettings): Promise<AccountSecrets | null> {
  if ((await uow.accounts.count()) > 0) return null;
  try {
    return await uow.transaction(async (repos) => {
      const now = new Date();
      const secrets = await createAccount(repos, 'dev', now);
      // A development owner whose first log-in the banner prints (the console's, POST /v1/session).
      const password = generatePassword();
      const { member } = await addOwner(repos, secrets.account_id, devOwnerEmail, settings, now, password);
      await recordActivity(repos, {
        accountId: secrets.account_id,
        action: 'member.joined',
        actor: operatorActor,
        target: { type: 'member', id: member.memberId },
        at: now,
        details: { role: 'owner', email: devOwnerEmail },
      });
      return { ...secrets, owner: { member_id: member.memberId, email: devOwnerEmail, password } };
    });
  } catch (err) {
    if (await uow.accounts.findByName('dev')) return null;
    throw err;
  }
}

/** The development account's owner (a name of the reserved `.localhost` domain: it never reaches anyone). */
const devOwnerEmail = 'owner@dev.localhost';

export async function startServer(
  config: Config,
  logger: Logger = pino({ level: config.logLevel }),
  options: Pick<AppDeps, 'handlers' | 'random' | 'now'> = {},
): Promise<RunningServer> {
  // A wrong ALLOW_PRIVATE_NETWORKS entry stops the start instead of failing every delivery.
  for (const cidr of config.delivery.allowPrivateNetworks) parseCidr(cidr);
  // Likewise an SMTP_URL that is no smtp(s) URL.
  const mail = createMailer(config.smtpUrl, { from: config.smtpFrom, timeoutMs: config.delivery.timeoutMs });
  const store = await openStore({ ...config, warn: (m) => logger.warn(m) });
  // Responses kept as files (decision record 24): written once their task is, shown as links
  // signed with the server's key to PUBLIC_URL (else where the server listens, set once it does).
  const resultsBase = { url: config.publicUrl ?? '' };
  const { uow, links: results } = resultsUnitOfWork(
    store,
    config,
    () => resultsBase.url,
    () => (options.now ?? wallClock)(),
    (m) => logger.warn(m),
  );
  const storageNet = { ...config.storage, allowPrivateNetworks: config.delivery.allowPrivateNetworks };
  const memberSettings = {
    passwordCost: config.workers.passwordCost,
    linkTtlMs: config.members.linkTtlMs,
    idleMs: config.members.idleMs,
    maxMs: config.members.maxMs,
  };
  const devAccount = await firstAccount(uow, memberSettings);
  // PostgreSQL: the limits' buckets are shared by every server process on the database.
  const shared = store.kind === 'postgres' ? databaseBuckets(store.execute) : undefined;

  // prom-client is loaded only when metrics are on.
  const metrics = config.metrics
    ? (await import('./metrics.ts')).createMetrics({ outboxDepth: () => outboxDepth(store), ...(store.pool ? { pool: store.pool } : {}) })
    : null;

  // Workers waiting in a long poll for an assignment are woken when work becomes claimable.
  const workAvailable = createWakeup();
  // What lapses (sessions, Idempotency-Keys, leases) lapses on this clock; tests move one on.
  const now = options.now ?? wallClock;
  // A limit that trips says so, once a minute per limit and subject.
  const tripped = limitLog(logger);
  // Password hashes take libuv's threads (4 unless UV_THREADPOOL_SIZE, which must be set in the
  // environment the process starts in): leave some to DNS lookups and file access.
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  if (config.logins.hashConcurrency >= threads)
    logger.warn(
      `WORKER_PASSWORD_CONCURRENCY (${config.logins.hashConcurrency}) leaves none of libuv's ${threads} threads to DNS lookups; raise UV_THREADPOOL_SIZE where the process starts`,
    );
  const authFailures = authFailureLimit(config.authFailurePerSecond, config.authFailureBurst, shared, tripped);
  // Members (issue 34): without PUBLIC_URL the links point where the server listens (set once it does).
  const identityDeps: IdentityDeps = {
    settings: memberSettings,
    now,
    publicUrl: config.publicUrl ?? '',
    notices: createNoticeMailer(config.smtpUrl, { from: config.smtpFrom, timeoutMs: config.delivery.timeoutMs }),
    oidc: oidcRelyingParty({ allowPrivateNetworks: config.delivery.allowPrivateNetworks, timeoutMs: config.delivery.timeoutMs, now }),
    addressFailures: authFailures,
    memberFailures: failureLimit(
      'failed member log-ins',
      'member',
      config.members.loginFailurePerSecond,
      config.members.loginFailureBurst,
      shared,
      tripped,
    ),
  };
  // Imports and exports: their settings, and the key that signs export download links.
  const transfer: TransferDeps = {
    ...config.transfer,
    allowPrivateNetworks: config.delivery.allowPrivateNetworks,
    sign: (purpose, message) => store.secrets.sign(purpose, message),
    now,
  };
  const deps = {
    uow,
    logger,
    rateLimit: rateLimit(config.rateLimitPerSecond, config.rateLimitBurst, shared, tripped),
    authFailures,
    identityDeps,
    loginFailures: failureLimit('failed log-ins', 'email', config.logins.failurePerSecond, config.logins.failureBurst, shared, tripped),
    hashGate: hashGate(
      { concurrency: config.logins.hashConcurrency, queue: config.logins.hashQueue, perSubject: config.logins.hashPerClient },
      {
        hashed: metrics?.countPasswordHash,
        refused: (why, subjects) => {
          metrics?.countPasswordHashRefusal(why);
          if (why === 'full') tripped('password hashing queue', {}, 1);
          else tripped('password hashing per client', { subjects: subjects.join(' ') }, 1);
        },
      },
    ),
    clientAddress: clientAddressOf(config.proxies.trusted, config.proxies.header),
    limitLog: tripped,
    allowPrivateNetworks: config.delivery.allowPrivateNetworks,
    validateResponses: config.validateResponses,
    idempotencyTtlMs: config.idempotencyTtlMs,
    identity: config.workers,
    work: config.workforce,
    media: { ...config.media, linkSeconds: config.storage.linkSeconds, allowPrivateNetworks: config.delivery.allowPrivateNetworks },
    storage: storageNet,
    results,
    workAvailable,
    transfer,
    ...options,
  };
  const root = express();
  root.disable('x-powered-by');
  root.use(requestId());
  root.use(cors(config.corsOrigins));
  if (metrics) root.use(metrics.observeRequests);
  // The access log (none at all when the level leaves it out: it is on every request's path).
  if (logger.isLevelEnabled('info')) {
    root.use((req, res, next) => {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        // No secrets: neither the Authorization header nor bodies are logged.
        logger.info(
          {
            method: req.method,
            // The path the client asked for: req.path lost the prefix of the app that answered
            // (/legacy, /worker) by the time the answer is sent.
            path: req.originalUrl.split('?', 1)[0],
            status: res.statusCode,
            ms: Math.round(ms * 10) / 10,
            account: res.locals.caller?.account.accountId,
            request_id: res.locals.requestId,
          },
          'request',
        );
      });
      next();
    });
  }
  const docs = existsSync(path.join(docsSite, 'index.html'));
  if (docs) root.use('/docs', express.static(docsSite));
  root.use('/label', labelApp(config.storage.mediaOrigins));
  root.use('/console', consoleApp());
  // An export's signed download link works without a key: served before the API's authentication.
  root.use(downloadRouter(uow, transfer, now));
  // /, /healthz, /readyz, /openapi/*, /metrics and a 404 for what is not the API: all without a key.
  root.use(opsRouter({ readiness: () => readiness(store), metrics: metrics ? clusterWide(metrics.registry) : null, docs }));
  root.use(basePath.legacy, createApp('legacy', deps));
  root.use(workerBasePath, createWorkerApp(deps));
  root.use(createApp('current', deps));

  const sweeper = setInterval(() => {
    uow.idempotency.deleteExpired(now()).catch((err) => logger.error({ err: safeError(err) }, 'idempotency sweep failed'));
    // Single sign-on attempts lapse after 10 minutes; the activity log keeps ACTIVITY_RETENTION_DAYS.
    uow.ssoLogins.deleteBefore(now()).catch((err) => logger.error({ err: safeError(err) }, 'sso log-in sweep failed'));
    if (config.activityRetentionDays > 0)
      uow.activity
        .deleteBefore(new Date(now().getTime() - config.activityRetentionDays * 86_400_000))
        .catch((err) => logger.error({ err: safeError(err) }, 'activity retention sweep failed'));
    shared?.deleteFull().catch((err) => logger.error({ err: safeError(err) }, 'rate limit sweep failed'));
  }, 60_000);
  sweeper.unref();
  // The background jobs, each one poller: nudged by the NOTIFY that the transaction queuing their
  // work sends (listening starts first, so that work queued before it is found by the first round).
  const pollers: Partial<Record<WorkQueue, Pick<Poller, 'nudge'>>> = {};
  const unlisten = await store.listen(workChannel, {
    onPayload(payload) {
      const work = parseWorkPayload(payload);
      if (work?.queue === 'assignments') workAvailable.notify();
      else if (work) pollers[work.queue]?.nudge(work.dueAt);
    },
    onRelisten: () => {
      for (const p of Object.values(pollers)) p.nudge();
      workAvailable.notify();
    },
    onError: (err) => logger.warn({ err }, 'work notifications interrupted; polling meanwhile'),
  });
  // Test mode with a completion delay: the due time is stored with the task, so a restart loses none.
  const completionBatch = 100;
  const testCompleter = createPoller({
    name: 'test-mode completion',
    pollMs: config.testCompletionPollMs,
    round: async () => (await completeDueTestTasks(uow, now(), completionBatch)) === completionBatch,
    logger,
  });
  testCompleter.start();
  pollers.test_completion = testCompleter;

  // The work loop: lapsed leases are expired and their tasks go back to the queue (WORK_SWEEP_POLL_MS=0: off).
  const sweepBatch = 100;
  const leaseSweeper =
    config.workforce.sweepPollMs > 0
      ? createPoller({
          name: 'lease sweep',
          pollMs: config.workforce.sweepPollMs,
          round: async () => (await expireLapsedLeases(uow, now(), sweepBatch)) === sweepBatch,
          logger,
        })
      : null;
  leaseSweeper?.start();

  // DELIVERY_POLL_MS=0 turns delivery off (callbacks stay queued). On the leases' clock: a submit
  // queues its task's callback due at the submit's time.
  const dispatcher =
    config.delivery.pollMs > 0
      ? startDispatcher(uow, safeRequest, mail, config.delivery, logger, metrics?.countAttempt, () => now().getTime())
      : null;
  if (dispatcher) pollers.outbox = dispatcher;

  const attachmentChecker =
    config.attachments.pollMs > 0
      ? startAttachmentChecker(
          uow,
          safeRequest,
          {
            ...config.attachments,
            leaseMs: config.delivery.leaseMs,
            concurrency: config.delivery.concurrency,
            allowPrivateNetworks: config.delivery.allowPrivateNetworks,
          },
          logger,
        )
      : null;
  if (attachmentChecker) pollers.attachment_check = attachmentChecker;

  // Imports and exports (TRANSFER_POLL_MS=0: only nudges): one import or export at a time in this
  // process; a stop gives the import in hand back after its current group of lines.
  const imports = importWorker(uow, transfer, logger, now);
  const exports = exportWorker(uow, transfer, logger, now);
  const transfers = createPoller({
    name: 'imports and exports',
    pollMs: config.transfer.pollMs,
    round: async () => (await imports.round()) || (await exports.round()),
    logger,
  });
  transfers.start();
  pollers.transfer = transfers;

  // The CLI reaches a server that holds the embedded database through a loopback admin interface.
  const admin =
    store.kind === 'pglite' && config.dataDir !== 'memory://'
      ? await startAdmin(uow, config.dataDir, (err) => logger.error({ err }, 'admin command failed'), config.workers, {
          ...memberSettings,
          get publicUrl() {
            return identityDeps.publicUrl;
          },
        })
      : null;

  // Timeouts are checked every connectionsCheckingInterval (30 s by default): often enough for them.
  const server: Server = createServer(
    { connectionsCheckingInterval: Math.min(1000, Math.max(50, config.http.headersTimeoutMs / 4)) },
    root,
  );
  // A client that sends its request slowly, or never, holds a connection no longer than these.
  server.headersTimeout = config.http.headersTimeoutMs;
  server.requestTimeout = config.http.requestTimeoutMs;
  server.keepAliveTimeout = config.http.keepAliveTimeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as { port: number };
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  identityDeps.publicUrl ||= `http://${host}:${port}`;
  resultsBase.url ||= `http://${host}:${port}`;
  return {
    url: `http://${host}:${port}`,
    store,
    uow,
    workAvailable,
    devAccount,
    async close(reason?: string) {
      const started = process.hrtime.bigint();
      logger.info({ reason }, 'shutting down: in-flight requests finish, then the store closes');
      clearInterval(sweeper);
      await unlisten();
      imports.stop();
      await Promise.all([testCompleter.stop(), leaseSweeper?.stop(), dispatcher?.stop(), attachmentChecker?.stop(), transfers.stop()]);
      // Stop accepting, let in-flight requests finish, then close the store.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await admin?.close();
      await store.close();
      logger.info({ ms: Math.round(Number(process.hrtime.bigint() - started) / 1e6) }, 'stopped');
    },
  };
}
