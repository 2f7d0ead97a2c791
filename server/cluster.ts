// WORKERS=N: N server processes behind one port, with node:cluster. (Node 20 has no `reusePort`
// listen option: it came with Node 22.12/23.1, and only where the kernel balances SO_REUSEPORT;
// cluster works on every Node we support and lets the primary replace a worker that dies.)
// The primary only supervises: it loads neither Express nor the store. Each worker is a whole
// server (startServer); what the workers must agree on lives in PostgreSQL (docs/deployment.md).
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.ts';
import type { AccountSecrets } from './domain/accounts.ts';

interface ReadyMessage {
  type: 'humantask:ready';
  url: string;
  secrets: string;
  devAccount: AccountSecrets | null;
}

const isReady = (m: unknown): m is ReadyMessage => (m as ReadyMessage | null)?.type === 'humantask:ready';

/** /metrics of every worker: a worker asks the primary, which asks every listening worker. */
type MetricsMessage =
  | { type: 'humantask:cluster-metrics?'; id: number }
  | { type: 'humantask:cluster-metrics'; id: number; text: string; error?: string }
  | { type: 'humantask:metrics?'; id: number }
  | { type: 'humantask:metrics'; id: number; metrics: unknown[] };

type MetricsRegistry = { contentType: string; metrics(): Promise<string>; getMetricsAsJSON(): Promise<unknown> };

/**
 * The metrics that `/metrics` answers with: in a worker of WORKERS, those of every worker summed by
 * prom-client's aggregation (counters and histograms add up; so do the process gauges), so that a
 * scrape does not depend on which worker takes the connection. Otherwise the registry itself.
 */
export function clusterWide(registry: MetricsRegistry): Pick<MetricsRegistry, 'contentType' | 'metrics'> {
  if (!cluster.isWorker) return registry;
  let next = 0;
  const waiting = new Map<number, { resolve(text: string): void; reject(err: Error): void }>();
  process.on('message', (m: MetricsMessage) => {
    if (m?.type === 'humantask:metrics?') {
      void registry
        .getMetricsAsJSON()
        .then((metrics) => process.send?.({ type: 'humantask:metrics', id: m.id, metrics: [metrics] } satisfies MetricsMessage));
    } else if (m?.type === 'humantask:cluster-metrics') {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error) w?.reject(new Error(m.error));
      else w?.resolve(m.text);
    }
  });
  return {
    contentType: registry.contentType,
    metrics: () =>
      new Promise<string>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        process.send?.({ type: 'humantask:cluster-metrics?', id } satisfies MetricsMessage);
      }),
  };
}

/** In the primary: asks every listening worker for its metrics (2 s at most each) and sums them. */
async function aggregateMetrics(workers: Iterable<Worker>, id: number): Promise<string> {
  const { AggregatorRegistry } = await import('prom-client');
  const answers = await Promise.all(
    [...workers].map(
      (w) =>
        new Promise<unknown[]>((resolve) => {
          const timer = setTimeout(() => done([]), 2000);
          const on = (m: MetricsMessage) => {
            if (m?.type === 'humantask:metrics' && m.id === id) done(m.metrics);
          };
          const done = (metrics: unknown[]) => {
            clearTimeout(timer);
            w.off('message', on);
            resolve(metrics);
          };
          w.on('message', on);
          w.send({ type: 'humantask:metrics?', id } satisfies MetricsMessage);
        }),
    ),
  );
  return AggregatorRegistry.aggregate(answers.flat() as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
}

/** Why these settings cannot run several processes (null: they can). */
export function workersRefusal(config: Pick<Config, 'processes' | 'databaseUrl'>): string | null {
  if (config.processes <= 1 || config.databaseUrl) return null;
  return (
    `WORKERS=${config.processes} needs PostgreSQL (DATABASE_URL): the embedded database (DATA_DIR) is ` +
    'held by one process, so it is served by one. Leave WORKERS unset (or 1), or set DATABASE_URL.'
  );
}

/** This process is a worker that the primary started. */
export const isWorker = () => cluster.isWorker;

/** In a worker: tells the primary that this server listens (and the keys it made, if any). */
export function reportReady(url: string, secrets: string, devAccount: AccountSecrets | null) {
  process.send?.({ type: 'humantask:ready', url, secrets, devAccount } satisfies ReadyMessage);
}

export interface ClusterReady {
  url: string;
  /** Where the secrets key came from (SECRETS_KEY, a key file). */
  secrets: string;
  devAccount: AccountSecrets | null;
  pids: number[];
}

/**
 * In the primary: starts `count` workers (this same command, see cluster.fork) and announces once
 * all of them listen. A worker that dies afterwards is replaced (after a growing pause when the
 * replacements keep dying young); one that dies before the start is complete fails the start.
 * SIGTERM or SIGINT stops every worker gracefully (each finishes its requests), then the primary.
 */
export function supervise(count: number, announce: (ready: ClusterReady) => void, log: (line: string) => void = (l) => console.error(l)) {
  const live = new Set<Worker>();
  const listening = new Set<Worker>();
  let started = false;
  let stopping = false;
  let exitCode = 0;
  let devAccount: AccountSecrets | null = null;
  let youngDeaths = 0;
  let metricsRequests = 0;

  const stopAll = (code: number) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) return;
    stopping = true;
    if (live.size === 0) process.exit(exitCode);
    for (const w of live) w.process.kill('SIGTERM');
  };

  const fork = () => {
    if (stopping) return;
    const worker = cluster.fork();
    const bornAt = Date.now();
    live.add(worker);
    worker.on('message', (message: unknown) => {
      const m = message as MetricsMessage;
      if (m?.type === 'humantask:cluster-metrics?') {
        aggregateMetrics(listening, metricsRequests++).then(
          (text) => worker.send({ type: 'humantask:cluster-metrics', id: m.id, text } satisfies MetricsMessage),
          (err: Error) =>
            worker.send({ type: 'humantask:cluster-metrics', id: m.id, text: '', error: err.message } satisfies MetricsMessage),
        );
        return;
      }
      if (!isReady(message)) return;
      devAccount ??= message.devAccount;
      listening.add(worker);
      if (started) log(`humantask: worker ${worker.process.pid} listening`);
      else if (listening.size === count) {
        started = true;
        announce({ url: message.url, secrets: message.secrets, devAccount, pids: [...listening].map((w) => w.process.pid!) });
      }
    });
    worker.on('exit', (code, signal) => {
      live.delete(worker);
      listening.delete(worker);
      if (stopping) {
        if (live.size === 0) process.exit(exitCode);
        return;
      }
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (!started) {
        log(`humantask: worker ${worker.process.pid} exited (${how}) before the server was up; stopping`);
        stopAll(1);
        return;
      }
      youngDeaths = Date.now() - bornAt < 10_000 ? youngDeaths + 1 : 0;
      const pause = youngDeaths <= 1 ? 0 : Math.min(30_000, 1000 * 2 ** (youngDeaths - 2));
      log(`humantask: worker ${worker.process.pid} exited (${how}); starting another${pause ? ` in ${pause / 1000} s` : ''}`);
      setTimeout(fork, pause);
    });
  };

  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stopAll(0));
  for (let i = 0; i < count; i++) fork();
}
