// Prometheus metrics (METRICS=true): requests by operation and status, callback attempts by
// outcome, password hashes and their refusals, outbox depth, database pool usage, and prom-client's
// process metrics. One registry per
// server, so that several servers in one process (the tests) do not share counters.
import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AttemptResult } from './delivery/dispatcher.ts';

export interface PoolUsage {
  total: number;
  idle: number;
  waiting: number;
}

export interface MetricsSources {
  outboxDepth(): Promise<number>;
  /** PostgreSQL's connection pool; none on the embedded database (one connection). */
  pool?: () => PoolUsage;
}

export interface Metrics {
  registry: Registry;
  /** Times every request; the label is the contract's operationId, never the raw path. */
  observeRequests: RequestHandler;
  /** Counts a callback delivery attempt (HTTP, mail, or one that sent nothing) by its outcome. */
  countAttempt(result: AttemptResult): void;
  /** Counts a password hash let through the hash gate (a log-in, a worker creation, a password reset). */
  countPasswordHash(): void;
  /** Counts a request the hash gate turned away: its client had as many in progress as allowed, or the queue was full. */
  countPasswordHashRefusal(reason: 'subject' | 'full'): void;
}

/** The operation a request reached: its operationId, an ops route's name, or `unknown` (404s). */
function operationOf(req: unknown, locals: Record<string, unknown>): string {
  const op = (req as { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
  return op ?? (typeof locals.operation === 'string' ? locals.operation : 'unknown');
}

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'humantask_' });
  const duration = new Histogram({
    name: 'humantask_http_request_duration_seconds',
    help: 'HTTP requests by operation (operationId), method and status; _count gives the request rate.',
    labelNames: ['operation', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'humantask_callback_attempts_total',
    help: 'Callback delivery attempts by outcome: the answer class (2xx, 4xx, ...) or the failure (timeout, refused_address, dns, ...).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const hashes = new Counter({
    name: 'humantask_password_hashes_total',
    help: 'Password hashes started for requests (worker log-ins, worker creations, password resets).',
    registers: [registry],
  });
  const hashRefusals = new Counter({
    name: 'humantask_password_hash_refusals_total',
    help: 'Requests refused before hashing a password: reason subject (429: that client had as many in progress as allowed) or full (503: the queue was full).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'humantask_outbox_pending',
    help: 'Callbacks neither delivered nor failed for good (counted up to 100000).',
    registers: [registry],
    async collect() {
      this.set(await sources.outboxDepth());
    },
  });
  if (sources.pool) {
    const pool = sources.pool;
    new Gauge({
      name: 'humantask_db_pool_connections',
      help: 'PostgreSQL pool: connections open (total), idle, and requests waiting for one (waiting).',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const usage = pool();
        for (const state of ['total', 'idle', 'waiting'] as const) this.set({ state }, usage[state]);
      },
    });
  }
  return {
    registry,
    observeRequests(req, res, next) {
      const end = duration.startTimer();
      res.on('finish', () => end({ operation: operationOf(req, res.locals), method: req.method, status: String(res.statusCode) }));
      next();
    },
    countAttempt(result) {
      attempts.inc({ outcome: result.ok ? `${Math.floor(result.status / 100)}xx` : result.error });
    },
    countPasswordHash: () => hashes.inc(),
    countPasswordHashRefusal: (reason) => hashRefusals.inc({ reason }),
  };
}
