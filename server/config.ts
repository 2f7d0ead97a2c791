// Configuration: every setting comes from an environment variable with a documented default, read
// once here. README.md lists them.
import { availableParallelism, homedir, tmpdir } from 'node:os';
import path from 'node:path';

export interface Config {
  /** Port of the HTTP server (PORT, default 8080; 0 picks a free one). */
  port: number;
  /** Address to listen on (HOST, default 127.0.0.1). */
  host: string;
  /** PostgreSQL connection string (DATABASE_URL); when set it takes precedence over DATA_DIR. */
  databaseUrl: string | undefined;
  /**
   * Server processes behind the one port (WORKERS; default: the number of cores with DATABASE_URL,
   * 1 on the embedded database, which refuses more; see server/cluster.ts).
   */
  processes: number;
  /** Folder of the embedded PGlite database (DATA_DIR, default ./data); `memory://` keeps it in memory. */
  dataDir: string;
  /** Not an environment setting: an image for an in-memory DATA_DIR to start from (see store/db.ts; the tests use it). */
  memoryImage?: string | undefined;
  /**
   * The folder that keeps the image of a new, migrated embedded database between processes
   * (DATABASE_IMAGE_CACHE, default ~/.cache/humantask; `off`: none): a new DATA_DIR starts from it.
   */
  imageCache: string | null;
  /**
   * Key sealing the account secrets at rest (SECRETS_KEY: 64 hex digits or base64 of 32 bytes), or a
   * file holding it (SECRETS_KEY_FILE). Neither: the file beside DATA_DIR (`./data.key`), made on
   * first start; with an in-memory DATA_DIR and no key, a key for this process only.
   */
  secretsKey: string | undefined;
  secretsKeyFile: string | undefined;
  /** pino level (LOG_LEVEL, default info; `silent` turns logging off). */
  logLevel: string;
  /** Validate answers against the contract too (VALIDATE_RESPONSES, default true unless NODE_ENV=production). */
  validateResponses: boolean;
  /** How long an Idempotency-Key and its saved answer are kept (IDEMPOTENCY_TTL_SECONDS, default 86400: 24 h). */
  idempotencyTtlMs: number;
  /** Per-key token bucket: sustained requests per second (RATE_LIMIT_PER_SECOND, default 50) ... */
  rateLimitPerSecond: number;
  /** ... and burst size (RATE_LIMIT_BURST, default 100). 0 turns rate limiting off. */
  rateLimitBurst: number;
  /**
   * Unknown keys per client address: burst (AUTH_FAILURE_BURST, default 100; 0 = no limit) and
   * refill per second (AUTH_FAILURE_PER_SECOND, default 1).
   */
  authFailureBurst: number;
  authFailurePerSecond: number;
  /**
   * Reverse proxies whose word on the client address is taken (TRUSTED_PROXIES: comma-separated
   * CIDRs or addresses, none by default) and the header they write it in (TRUSTED_PROXY_HEADER:
   * `x-forwarded-for`, the default, or `forwarded`). Without proxies the client address is the
   * connection's, whatever the headers say.
   */
  proxies: { trusted: string[]; header: 'x-forwarded-for' | 'forwarded' };
  /**
   * Worker log-ins and password hashing: failed log-ins per e-mail address, a burst
   * (WORKER_LOGIN_FAILURE_BURST, default 10; 0 = no limit) refilled at WORKER_LOGIN_FAILURE_PER_MINUTE
   * (default 1); passwords hashed at once (WORKER_PASSWORD_CONCURRENCY, default 2), waiting at most
   * (WORKER_PASSWORD_QUEUE, default 32), in progress per client address, e-mail address or account
   * (WORKER_PASSWORD_PER_CLIENT, default 4).
   */
  logins: { failureBurst: number; failurePerSecond: number; hashConcurrency: number; hashQueue: number; hashPerClient: number };
  /**
   * HTTP server timeouts (ms): the whole request head (HEADERS_TIMEOUT_MS, default 10000), the whole
   * request (REQUEST_TIMEOUT_MS, default 30000), an idle kept-alive connection (KEEP_ALIVE_TIMEOUT_MS,
   * default 5000).
   */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  /** How often delayed test-mode completions are looked for (TEST_COMPLETION_POLL_MS, default 1000). */
  testCompletionPollMs: number;
  /**
   * SMTP server through which callbacks to e-mail addresses are mailed (SMTP_URL, e.g.
   * `smtp://user:pass@mail.example.com:587`, `smtps://` for TLS from the start; none by default:
   * such callbacks then fail and are retried on the schedule).
   */
  smtpUrl: string | undefined;
  /** From of those mails (SMTP_FROM, default `humantask <callbacks@localhost>`). */
  smtpFrom: string;
  /** Live-mode attachment checks (ATTACHMENT_CHECK_POLL_MS, 0 = off; ATTACHMENT_TIMEOUT_MS). */
  attachments: { pollMs: number; timeoutMs: number };
  /**
   * The worker API's media route, which passes a task's files on to the worker holding it: the
   * host's answer head within MEDIA_TIMEOUT_MS and no silence longer than that (default 15000);
   * files up to MEDIA_MAX_BYTES (default 2147483648: 2 GiB). It reaches the networks of
   * ALLOW_PRIVATE_NETWORKS, as delivery does.
   */
  media: { timeoutMs: number; maxBytes: number };
  /**
   * Customers' buckets (issue 37): each request to a storage service connects and answers within
   * STORAGE_TIMEOUT_MS (default 15000); a link signed for a worker's browser lives at most
   * STORAGE_LINK_SECONDS (default 300), and never past the assignment's lease. The labeling app
   * loads files from the origins of STORAGE_MEDIA_ORIGINS (comma-separated; none by default) as well
   * as its own: its Content-Security-Policy lists exactly these, and only a bucket of one of them may
   * have `media: presigned`.
   */
  storage: { timeoutMs: number; linkSeconds: number; mediaOrigins: string[] };
  /** Origins allowed to call from a browser (CORS_ORIGINS, comma-separated, `*` for any; none by default). */
  corsOrigins: string[];
  /** Prometheus metrics at /metrics (METRICS=true; off by default). */
  metrics: boolean;
  /**
   * The work loop (live mode): an assignment's lease (WORK_LEASE_SECONDS, default 600), renewed by
   * heartbeats up to a hard cap (WORK_HARD_CAP_SECONDS, default 14400: 4 h); how often lapsed leases
   * are looked for (WORK_SWEEP_POLL_MS, default 1000; 0 = off); how long a redo waits for the worker
   * whose work was rejected before any worker may take it (REDO_RESERVE_SECONDS, default 86400);
   * how many times reviewers may reject a task's work before its next review is final, accepting
   * or fixing it (REVIEW_MAX_REJECTIONS, default 2).
   */
  workforce: { leaseMs: number; hardCapMs: number; sweepPollMs: number; redoReserveMs: number; maxRejections: number };
  /**
   * Worker identity: scrypt cost as log2 N (WORKER_PASSWORD_COST, default 15: 32 MB per hash; 10
   * to 20), a session lapses after WORKER_SESSION_TTL_SECONDS without use (default 3600) and
   * WORKER_SESSION_MAX_SECONDS after log-in (default 86400).
   */
  workers: { passwordCost: number; sessionTtlMs: number; sessionMaxMs: number };
  /**
   * The server's address as its users reach it (PUBLIC_URL; without it, the address the server
   * listens on, `http://HOST:PORT`): the links
   * in invitation and password mails and the single sign-on redirect point there; an https one
   * makes the session cookies Secure.
   */
  publicUrl: string | undefined;
  /**
   * Members (issue 34): a console session lapses after MEMBER_SESSION_IDLE_SECONDS without use
   * (default 3600) and MEMBER_SESSION_MAX_SECONDS after log-in (default 43200); an invitation or
   * password link works for MEMBER_LINK_TTL_SECONDS (default 604800: 7 days); failed log-ins per
   * member, a burst (MEMBER_LOGIN_FAILURE_BURST, default 10; 0 = no limit) refilled at
   * MEMBER_LOGIN_FAILURE_PER_MINUTE (default 1). Passwords are hashed as workers' (WORKER_PASSWORD_COST).
   */
  members: { idleMs: number; maxMs: number; linkTtlMs: number; loginFailureBurst: number; loginFailurePerSecond: number };
  /** Activity log entries are deleted after ACTIVITY_RETENTION_DAYS (default 365; 0 keeps them). */
  activityRetentionDays: number;
  /**
   * Imports and exports (issue 36): the largest import file (IMPORT_MAX_BYTES, default 1 GiB); the
   * share of refused lines past which an import stops unless it says otherwise
   * (IMPORT_MAX_REFUSED_SHARE, default 0.1); lines written per transaction (IMPORT_GROUP_LINES,
   * default 250: bounded, so that a group holds the embedded database briefly and counts its tasks
   * on one counter row a bounded number of times); how long a process holds an import or export
   * without progress before another may take it over (TRANSFER_LEASE_SECONDS, default 60); how
   * often unclaimed work is looked for besides the nudge (TRANSFER_POLL_MS, default 1000; 0 = off);
   * how long an export's file is kept (EXPORT_RETENTION_SECONDS, default 604800: 7 days) and how
   * long its signed link works (EXPORT_LINK_SECONDS, default 3600).
   */
  transfer: {
    importMaxBytes: number;
    importMaxRefusedShare: number;
    importGroupLines: number;
    leaseMs: number;
    pollMs: number;
    exportRetentionMs: number;
    exportLinkMs: number;
  };
  /**
   * Responses kept as files (decision record 24): a response's `annotations` above
   * RESULT_INLINE_MAX_BYTES of JSON (default 1 MiB), and a video response's always, are files in
   * the account's newest storage connection of the task's mode, else under RESULTS_DIR (default
   * `<DATA_DIR>/results`, with PostgreSQL too); the links to them live RESULT_LINK_SECONDS
   * (default 604800: 7 days).
   */
  results: { inlineMaxBytes: number; linkMs: number; dir: string };
  /** Callback delivery: see README.md (DELIVERY_*, CALLBACK_*, ALLOW_PRIVATE_NETWORKS). */
  delivery: {
    pollMs: number;
    /** How long a claimed message is held before another dispatcher may take it over. */
    leaseMs: number;
    /** Messages in flight at once. */
    concurrency: number;
    timeoutMs: number;
    maxResponseBytes: number;
    /** Compresses the retry schedule (1 = real time). */
    scheduleScale: number;
    /** Random spread of each delay (0.1 = ±10 %). */
    jitter: number;
    allowPrivateNetworks: string[];
  };
}

/** A comma-separated list of web origins (`https://host[:port]`), each checked and written as browsers write it. */
function origins(name: string, env: NodeJS.ProcessEnv): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((raw) => {
      let u: URL | null = null;
      try {
        u = new URL(raw);
      } catch {
        u = null;
      }
      if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin !== raw.replace(/\/$/, '').toLowerCase())
        throw new Error(
          `${name} must list origins such as https://bucket.s3.eu-west-1.amazonaws.com (scheme, host and port only), got "${raw}"`,
        );
      return u.origin;
    });
}

function int(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

function proxyHeaderOf(env: NodeJS.ProcessEnv): Config['proxies']['header'] {
  const raw = (env.TRUSTED_PROXY_HEADER || 'x-forwarded-for').toLowerCase();
  if (raw !== 'x-forwarded-for' && raw !== 'forwarded')
    throw new Error(`TRUSTED_PROXY_HEADER must be x-forwarded-for or forwarded, got "${env.TRUSTED_PROXY_HEADER}"`);
  return raw;
}

const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function processesOf(env: NodeJS.ProcessEnv): number {
  const raw = env.WORKERS;
  if (raw === undefined || raw === '') return env.DATABASE_URL ? availableParallelism() : 1;
  if (!/^[1-9]\d*$/.test(raw)) throw new Error(`WORKERS must be a whole number of processes (1 or more), got "${raw}"`);
  return Number(raw);
}

function publicUrlOf(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.PUBLIC_URL;
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`PUBLIC_URL must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`PUBLIC_URL must be an http(s) URL, got "${raw}"`);
  return url.href.replace(/\/+$/, '');
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: int('PORT', 8080, env),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    processes: processesOf(env),
    dataDir: env.DATA_DIR || './data',
    imageCache:
      env.DATABASE_IMAGE_CACHE === 'off'
        ? null
        : env.DATABASE_IMAGE_CACHE || path.join(env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'humantask'),
    secretsKey: env.SECRETS_KEY || undefined,
    secretsKeyFile: env.SECRETS_KEY_FILE || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    validateResponses: env.VALIDATE_RESPONSES ? env.VALIDATE_RESPONSES === 'true' : env.NODE_ENV !== 'production',
    idempotencyTtlMs: int('IDEMPOTENCY_TTL_SECONDS', 86_400, env) * 1000,
    rateLimitPerSecond: int('RATE_LIMIT_PER_SECOND', 50, env),
    rateLimitBurst: int('RATE_LIMIT_BURST', 100, env),
    authFailureBurst: int('AUTH_FAILURE_BURST', 100, env),
    authFailurePerSecond: int('AUTH_FAILURE_PER_SECOND', 1, env),
    proxies: { trusted: list(env.TRUSTED_PROXIES), header: proxyHeaderOf(env) },
    logins: {
      failureBurst: int('WORKER_LOGIN_FAILURE_BURST', 10, env),
      failurePerSecond: int('WORKER_LOGIN_FAILURE_PER_MINUTE', 1, env) / 60,
      hashConcurrency: Math.max(1, int('WORKER_PASSWORD_CONCURRENCY', 2, env)),
      hashQueue: int('WORKER_PASSWORD_QUEUE', 32, env),
      hashPerClient: Math.max(1, int('WORKER_PASSWORD_PER_CLIENT', 4, env)),
    },
    http: {
      headersTimeoutMs: int('HEADERS_TIMEOUT_MS', 10_000, env),
      requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 30_000, env),
      keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', 5_000, env),
    },
    testCompletionPollMs: int('TEST_COMPLETION_POLL_MS', 1000, env),
    smtpUrl: env.SMTP_URL || undefined,
    smtpFrom: env.SMTP_FROM || 'humantask <callbacks@localhost>',
    media: {
      timeoutMs: Math.max(1, int('MEDIA_TIMEOUT_MS', 15_000, env)),
      maxBytes: int('MEDIA_MAX_BYTES', 2 ** 31, env),
    },
    storage: {
      timeoutMs: Math.max(1, int('STORAGE_TIMEOUT_MS', 15_000, env)),
      linkSeconds: Math.max(1, int('STORAGE_LINK_SECONDS', 300, env)),
      mediaOrigins: origins('STORAGE_MEDIA_ORIGINS', env),
    },
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    metrics: env.METRICS === 'true',
    attachments: {
      pollMs: int('ATTACHMENT_CHECK_POLL_MS', 250, env),
      timeoutMs: int('ATTACHMENT_TIMEOUT_MS', 15_000, env),
    },
    workforce: {
      leaseMs: int('WORK_LEASE_SECONDS', 600, env) * 1000,
      hardCapMs: int('WORK_HARD_CAP_SECONDS', 14_400, env) * 1000,
      sweepPollMs: int('WORK_SWEEP_POLL_MS', 1000, env),
      redoReserveMs: int('REDO_RESERVE_SECONDS', 86_400, env) * 1000,
      maxRejections: Math.floor(int('REVIEW_MAX_REJECTIONS', 2, env)),
    },
    workers: {
      passwordCost: Math.min(20, Math.max(10, int('WORKER_PASSWORD_COST', 15, env))),
      sessionTtlMs: Math.max(1, int('WORKER_SESSION_TTL_SECONDS', 3600, env)) * 1000,
      sessionMaxMs: Math.max(1, int('WORKER_SESSION_MAX_SECONDS', 86_400, env)) * 1000,
    },
    publicUrl: publicUrlOf(env),
    members: {
      idleMs: Math.max(1, int('MEMBER_SESSION_IDLE_SECONDS', 3600, env)) * 1000,
      maxMs: Math.max(1, int('MEMBER_SESSION_MAX_SECONDS', 43_200, env)) * 1000,
      linkTtlMs: Math.max(1, int('MEMBER_LINK_TTL_SECONDS', 604_800, env)) * 1000,
      loginFailureBurst: int('MEMBER_LOGIN_FAILURE_BURST', 10, env),
      loginFailurePerSecond: int('MEMBER_LOGIN_FAILURE_PER_MINUTE', 1, env) / 60,
    },
    activityRetentionDays: int('ACTIVITY_RETENTION_DAYS', 365, env),
    transfer: {
      importMaxBytes: int('IMPORT_MAX_BYTES', 1024 ** 3, env),
      importMaxRefusedShare: Math.min(1, int('IMPORT_MAX_REFUSED_SHARE', 0.1, env)),
      importGroupLines: Math.max(1, Math.floor(int('IMPORT_GROUP_LINES', 250, env))),
      leaseMs: Math.max(1, int('TRANSFER_LEASE_SECONDS', 60, env)) * 1000,
      pollMs: int('TRANSFER_POLL_MS', 1000, env),
      exportRetentionMs: int('EXPORT_RETENTION_SECONDS', 604_800, env) * 1000,
      exportLinkMs: Math.max(1, int('EXPORT_LINK_SECONDS', 3600, env)) * 1000,
    },
    results: {
      inlineMaxBytes: int('RESULT_INLINE_MAX_BYTES', 1024 ** 2, env),
      linkMs: Math.max(1, int('RESULT_LINK_SECONDS', 604_800, env)) * 1000,
      // With the database in memory (DATA_DIR=memory://) there is no data folder: the system's temporary one.
      dir: env.RESULTS_DIR || path.join((env.DATA_DIR ?? '').startsWith('memory://') ? tmpdir() : env.DATA_DIR || './data', 'results'),
    },
    delivery: {
      pollMs: int('DELIVERY_POLL_MS', 250, env),
      leaseMs: int('DELIVERY_LEASE_MS', 60_000, env),
      concurrency: Math.max(1, int('DELIVERY_CONCURRENCY', 32, env)),
      timeoutMs: int('CALLBACK_TIMEOUT_MS', 15_000, env),
      maxResponseBytes: 20 * 1024,
      scheduleScale: env.CALLBACK_SCHEDULE_SCALE ? Number(env.CALLBACK_SCHEDULE_SCALE) : 1,
      jitter: env.CALLBACK_JITTER ? Number(env.CALLBACK_JITTER) : 0.1,
      allowPrivateNetworks: (env.ALLOW_PRIVATE_NETWORKS ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    },
  };
}
