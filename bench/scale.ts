// Scale benchmark: `npm run bench:scale [-- --tasks N --small-tasks N --samples N --deliveries N --small FILE]` (see bench/README.md).
//
// On a throwaway PostgreSQL 15 cluster: a few tasks and projects are created through the API, then
// 1,000,000 tasks are cloned from them straight into the tables (INSERT ... SELECT over
// generate_series, varied created_at/ids/status/project/tags); a second account gets the same
// made of 1,000 tasks. Then `humantask serve` (a child process) answers list pages at depth 0, 10 %
// and 90 % (reached with a next_token that the domain's own listTasks encodes for the Nth row) and
// filtered lists of both accounts, each timed several times, all interleaved: each page of the big
// account is compared with the same page of the small one in the same run; the overview (GET
// /v1/overview, the console's first screen) of both accounts too. EXPLAIN ANALYZE of the server's exact SQL (captured at the pg client) goes with each case.
// Then delivery: 10,000 test-mode tasks with a callback URL to a loopback receiver are created
// while delivery is off, and a server with delivery on sends them all at once.
// Writes bench/results/scale-<date>.json and docs/internal/performance-scale.md.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { readConfig } from '../server/config.ts';
import type { Caller, Task } from '../server/domain/model.ts';
import type { PageRequest, TaskFilters, UnitOfWork } from '../server/domain/ports.ts';
import { listTasks } from '../server/domain/task-reads.ts';
import { createAccount } from '../server/domain/accounts.ts';
import { openStore } from '../server/store/db.ts';
import { unitOfWork } from '../server/store/repositories.ts';
import { basicAuth, freePort } from '../test/support/net.ts';
import { postgresAvailable, startCluster } from '../test/support/postgres.ts';
import { keysOf, onCleanup, rssMbOf, run, serveChild, spread, startReceiver, textTable, today, type Spread } from './lib.ts';
import { writeScaleAndSoakPage } from './report.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '3' },
    deliveries: { type: 'string', default: '10000' },
    'delivery-poll-ms': { type: 'string', default: '10' },
    /** The tasks of the second, small account whose pages each page is compared with (0: none). */
    'small-tasks': { type: 'string', default: '1000' },
    /** Instead of the small account: the results of an earlier run at 10³ tasks (`--tasks 1000 --deliveries 0`). */
    small: { type: 'string' },
    /** Keep the cluster (and the loaded database) until Ctrl-C, for EXPLAIN by hand. */
    hold: { type: 'boolean', default: false },
  },
});
const TASKS = Number(args.tasks);
const SMALL_TASKS = args.small ? 0 : Number(args['small-tasks']);
const SAMPLES = Number(args.samples);
const WARMUP = Number(args.warmup);
const DELIVERIES = Number(args.deliveries);
const DELIVERY_POLL_MS = Number(args['delivery-poll-ms']);
const LIMIT = 100;
const PROJECTS = 10;
const CHUNK = 100_000;
/** The cap check: a slow receiver, so that the dispatcher's in-flight limit is what limits. */
const CAP_CHECK_DELIVERIES = Math.min(2000, DELIVERIES);
const CAP_CHECK_DELAY_MS = 100;

const serverEnv = {
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  RATE_LIMIT_BURST: '0',
  DELIVERY_POLL_MS: '0',
  ATTACHMENT_CHECK_POLL_MS: '0',
};

/**
 * The key sealing account secrets, one for every server of the run and for this process's store
 * (which makes the small account): a server must open the secrets of every account whose callbacks
 * it sends. Not written to the results.
 */
const secretsKey = randomBytes(32).toString('hex');
const databaseEnv = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, SECRETS_KEY: secretsKey });

const categorization = {
  callback_url: 'https://example.com/cb',
  instruction: 'Pick the department this message is for',
  attachment_type: 'text',
  attachment: 'My invoice is wrong: I was charged twice for the March subscription.',
  categories: ['billing', 'support', 'sales'],
};

// ---- the API, plainly --------------------------------------------------------------------------

type Api = (
  method: string,
  path: string,
  json?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: any; ms: number }>;

function apiOf(url: string, key: string): Api {
  return async (method, p, json, headers = {}) => {
    const started = performance.now();
    const res = await fetch(url + p, {
      method,
      headers: { authorization: basicAuth(key), ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body, ms };
  };
}

async function ok(api: Api, method: string, p: string, json?: unknown): Promise<any> {
  const r = await api(method, p, json);
  if (r.status !== 200) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

// ---- seeding: real tasks through the API, then clones of them in bulk -------------------------

/** Projects and one template task per status, created through the API; their ids by status. */
async function seedThroughApi(
  live: Api,
  test: Api,
): Promise<{ templates: Record<string, string>; projectVersion: number | null; apiTasks: number }> {
  for (let p = 0; p < PROJECTS; p++) {
    await ok(live, 'POST', '/v1/projects', {
      type: 'categorization',
      name: `proj-${p}`,
      params: { attachment_type: 'text', categories: ['billing', 'support', 'sales'], instruction: `Project ${p}: pick one` },
    });
  }
  // A batch of proj-3: the bulk load puts about 1 % of the tasks in it.
  await ok(live, 'POST', '/v1/batches', { project: 'proj-3', name: 'batch-3' });
  const pending = await ok(live, 'POST', '/v1/task/categorization', {
    ...categorization,
    project: 'proj-0',
    tags: ['priority', 'region-eu'],
    unique_id: 'seed-pending',
    metadata: { customer_ref: 'c-1' },
  });
  const toCancel = await ok(live, 'POST', '/v1/task/categorization', {
    ...categorization,
    tags: ['region-us'],
    metadata: { customer_ref: 'c-2' },
  });
  const cancel = await live('POST', `/v1/task/${toCancel.task_id}/cancel`);
  if (cancel.status !== 200) {
    // Not what this benchmark measures: note it, and let bulkLoad make that template canceled.
    console.warn(
      `  warning: POST /v1/task/{id}/cancel answered ${cancel.status} ${JSON.stringify(cancel.body)}; the canceled template is set by SQL`,
    );
  }
  // Test mode completes at once with a synthetic response: the shape of a completed task.
  const completed = await ok(test, 'POST', '/v1/task/categorization', {
    ...categorization,
    tags: ['region-eu'],
    metadata: { customer_ref: 'c-3' },
  });
  // A `.invalid` host: test mode's attachment that cannot be fetched, so the task is in error.
  const failed = await ok(test, 'POST', '/v1/task/categorization', {
    ...categorization,
    attachment_type: 'image',
    attachment: 'https://files.invalid/scan.png',
    metadata: { customer_ref: 'c-4' },
  });
  const states = [
    (await ok(test, 'GET', `/v1/task/${completed.task_id}`)).status,
    (await ok(test, 'GET', `/v1/task/${failed.task_id}`)).status,
  ];
  if (states[0] !== 'completed' || states[1] !== 'error') throw new Error(`unexpected template states: ${states.join(', ')}`);
  // A few hundred more live tasks through the API: the newest ones of the list.
  let n = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (n < 200) {
        const i = n++;
        await ok(live, 'POST', '/v1/task/categorization', {
          ...categorization,
          project: `proj-${i % PROJECTS}`,
          tags: i % 20 === 0 ? ['priority'] : ['region-us'],
          metadata: { customer_ref: `api-${i}` },
        });
      }
    }),
  );
  return {
    templates: { pending: pending.task_id, canceled: toCancel.task_id, completed: completed.task_id, error: failed.task_id },
    projectVersion: pending.project_param_version ?? null,
    apiTasks: 204,
  };
}

/**
 * Clones the templates into `n` live tasks of the same account: created_at spread over the
 * year before `endMs` (with jitter), a time-ordered id from it as the server makes them, status
 * 60 % completed / 28 % pending / 9 % canceled / 3 % error, 80 % in one of the projects (1 % in
 * batch-3 of proj-3), tags
 * region-eu/region-us on two thirds, `priority` on 5 %, `rare` on 0.1 %, unique_id on half.
 */
async function bulkLoad(
  db: pg.Client,
  uow: UnitOfWork,
  accountId: string,
  seeds: Awaited<ReturnType<typeof seedThroughApi>>,
  endMs: number,
  n: number,
): Promise<number> {
  const started = performance.now();
  const { templates } = seeds;
  await db.query(`drop table if exists tpl`);
  await db.query(`create temp table tpl as select * from tasks where task_id in ($1, $2, $3, $4)`, [
    templates.pending,
    templates.canceled,
    templates.completed,
    templates.error,
  ]);
  // Only if the cancel through the API failed (see seedThroughApi): as cancelTask would leave it.
  await db.query(`update tpl set status = 'canceled', updated_at = now() where task_id = $1 and status = 'pending'`, [templates.canceled]);
  const { rows } = await db.query<{ n: string }>(`select count(distinct status) as n from tpl`);
  if (Number(rows[0]?.n) !== 4) throw new Error('templates missing');
  const stepMs = Math.floor((365 * 86_400_000) / n);
  const startMs = endMs - 366 * 86_400_000;
  // The row trigger that counts a created task (migration 0016) updates the task's counter row once
  // per task: in one statement of 100,000 rows that row's versions pile up, and each update walks
  // them (quadratic). The server inserts one task a statement; a bulk load counts afterwards instead,
  // as `humantask counts --repair` does (docs/deployment.md), which writes the tag index too: its
  // trigger is off meanwhile as well, so that the tag rows are written once.
  await db.query('alter table tasks disable trigger tasks_count_insert, disable trigger tasks_tags_insert');
  for (let from = 1; from <= n; from += CHUNK) {
    const to = Math.min(n, from + CHUNK - 1);
    await db.query(
      `insert into tasks (task_id, account_id, mode, generation, type, status, instruction, params, response, callback_url,
         callback_completed, urgency, created_at, updated_at, completed_at, customer_review_status, times_redone, metadata,
         project, batch, project_param_version, audits, unique_id, tags, clear_unique_id_on_error, test_complete_at, attachment_check_at)
       select lpad(to_hex(g.ms), 12, '0') || substr(md5(g.i::text), 1, 12),
         $1, 'live', t.generation, t.type, t.status, t.instruction, t.params, t.response, t.callback_url,
         case when t.status in ('completed', 'error') then true end,
         t.urgency,
         to_timestamp(g.ms / 1000.0),
         to_timestamp(g.ms / 1000.0) + case when t.status = 'pending' then interval '0' else make_interval(secs => 60 + g.i % 3600) end,
         case when t.status in ('completed', 'error') then to_timestamp(g.ms / 1000.0) + make_interval(secs => 60 + g.i % 3600) end,
         t.customer_review_status, 0,
         jsonb_build_object('customer_ref', 'c-' || (g.i % 5000), 'seq', g.i),
         g.project, case when g.project = 'proj-3' and (g.i / 10) % 8 = 0 then 'batch-3' end, case when g.project is not null then $5::int end, t.audits,
         case when g.i % 2 = 0 then 'ext-' || g.i end,
         nullif(to_jsonb(array_remove(array[
           case when g.i % 3 = 1 then 'region-eu' when g.i % 3 = 2 then 'region-us' end,
           case when (g.i * 11) % 20 = 0 then 'priority' end,
           case when (g.i * 17) % 1000 = 0 then 'rare' end
         ], null)), '[]'::jsonb),
         false, null, null
       from (
         select i,
           ($2::bigint + i * $3::bigint + (i * 7919) % 20000) as ms,
           case when (i * 37) % 100 < 60 then 'completed' when (i * 37) % 100 < 88 then 'pending' when (i * 37) % 100 < 97 then 'canceled' else 'error' end as status,
           case when i % 5 = 0 then null else 'proj-' || ((i * 7) % ${PROJECTS}) end as project
         from generate_series($4::bigint, $6::bigint) as i
       ) g
       join tpl t on t.status = g.status`,
      [accountId, startMs, stepMs, from, seeds.projectVersion ?? 0, to],
    );
    process.stdout.write(
      `\r  inserted ${to.toLocaleString('en')} of ${n.toLocaleString('en')} tasks (${Math.round((performance.now() - started) / 1000)} s)`,
    );
  }
  process.stdout.write('\n');
  await db.query('alter table tasks enable trigger tasks_count_insert, enable trigger tasks_tags_insert');
  await uow.transaction((repos) => repos.counts.rebuild());
  return (performance.now() - started) / 1000;
}

// ---- the server's exact SQL, for EXPLAIN ANALYZE ----------------------------------------------

interface Captured {
  sql: string;
  params: unknown[];
}

/**
 * Records every statement that any pg client of this process sends while `capture.on` is set
 * (whether the store builds it with drizzle or writes it by hand), so that EXPLAIN ANALYZE sees
 * the server's exact SQL and parameters.
 */
const capture = { on: false, statements: [] as Captured[] };
{
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    if (capture.on) {
      const [first, second] = args;
      if (typeof first === 'string') capture.statements.push({ sql: first, params: Array.isArray(second) ? second : [] });
      else if (first && typeof first === 'object' && 'text' in first) {
        const q = first as { text: string; values?: unknown[] };
        capture.statements.push({ sql: q.text, params: q.values ?? (Array.isArray(second) ? second : []) });
      }
    }
    return original.apply(this, args);
  };
}

interface Explained {
  statements: { sql: string; params: unknown[]; executionMs: number; plan: string }[];
  /** Execution Time of all the statements of one list call. */
  executionMs: number;
  /** The count of all matches (the first Aggregate node's actual total time). */
  countMs: number | null;
  /** The page itself (the first Limit node's actual total time). */
  pageMs: number | null;
}

const nodeMs = (plan: string, node: string) => {
  const m = new RegExp(`${node}\\b.*?actual time=[\\d.]+\\.\\.([\\d.]+)`).exec(plan);
  return m ? Number(m[1]) : null;
};

async function explain(db: pg.Client, statements: Captured[]): Promise<Explained> {
  const out: Explained = { statements: [], executionMs: 0, countMs: null, pageMs: null };
  for (const q of statements) {
    if (/^\s*(begin|commit|rollback|set)\b/i.test(q.sql)) continue;
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${q.sql}`, q.params);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
    out.statements.push({ sql: q.sql, params: q.params, executionMs, plan });
    out.executionMs += executionMs;
    out.countMs ??= nodeMs(plan, 'Aggregate');
    out.pageMs ??= nodeMs(plan, 'Limit');
  }
  out.executionMs = round(out.executionMs);
  if (out.countMs !== null) out.countMs = round(out.countMs);
  if (out.pageMs !== null) out.pageMs = round(out.pageMs);
  return out;
}

/**
 * A next_token positioned after the `depth`-th task of the unfiltered list, made by the domain's
 * own listTasks/encodeToken: its repository is asked for the page at offset depth - 1 (limit 1),
 * so the token it encodes is that of the depth-th row. Also returns the task that must open the
 * next page (the row at offset `depth`).
 */
async function tokenAt(
  uow: UnitOfWork,
  caller: Caller,
  depth: number,
): Promise<{ token: string; after: { createdAt: Date; taskId: string }; firstOfPage: string }> {
  let rows: Task[] = [];
  const atDepth: UnitOfWork = {
    ...uow,
    tasks: {
      ...uow.tasks,
      async list(accountId, mode, filters, page: PageRequest) {
        const result = await uow.tasks.list(accountId, mode, filters, { limit: page.limit, offset: depth - 1 });
        rows = result.tasks;
        return result;
      },
    },
  };
  // filterKey as the list handler computes it for `?limit=100` (no filter parameters): "[]".
  const page = await listTasks(atDepth, { caller, filters: {}, limit: 1, filterKey: JSON.stringify([]) });
  const [last, next] = rows;
  if (!page.nextToken || !last || !next) throw new Error(`no task at depth ${depth}`);
  return { token: page.nextToken, after: { createdAt: last.createdAt, taskId: last.taskId }, firstOfPage: next.taskId };
}

// ---- list timings ------------------------------------------------------------------------------

interface ListCase {
  name: string;
  /** The account's live API and id. */
  api: Api;
  accountId: string;
  query: string;
  /** What the repository is asked, for EXPLAIN. */
  filters: TaskFilters;
  after: { createdAt: Date; taskId: string } | null;
  depth: number;
  /** The task that must open the page, when known. */
  firstOfPage?: string;
}

interface ListResult {
  case: string;
  query: string;
  depth: number;
  total: number;
  docs: number;
  ms: Spread;
  /** The server's own time per request (its access log), which the load generator's share of the CPUs leaves out. */
  serverMs: Spread | null;
  explain: Explained;
}

async function timeLists(cases: ListCase[]): Promise<Map<ListCase, { samples: number[]; total: number; docs: number }>> {
  const out = new Map(cases.map((c) => [c, { samples: [] as number[], total: 0, docs: 0 }]));
  // Rounds over all cases (interleaved), so that a noisy moment on the machine hits them alike.
  for (let round = 0; round < WARMUP + SAMPLES; round++) {
    for (const c of cases) {
      const r = await c.api('GET', c.query);
      if (r.status !== 200) throw new Error(`GET ${c.query}: ${r.status} ${JSON.stringify(r.body)}`);
      const docs = r.body.docs as { task_id: string }[];
      if (c.firstOfPage && docs[0]?.task_id !== c.firstOfPage)
        throw new Error(`${c.name}: the page opens with ${docs[0]?.task_id}, expected ${c.firstOfPage}`);
      const o = out.get(c)!;
      o.total = r.body.total;
      o.docs = docs.length;
      if (round >= WARMUP) o.samples.push(r.ms);
    }
    process.stdout.write(`\r  round ${round + 1} of ${WARMUP + SAMPLES} (${WARMUP} warm-up)`);
  }
  process.stdout.write('\n');
  return out;
}

/**
 * The list cases of one account of `n` tasks: the first page, pages at depth 10 % and 90 % (100k
 * and 900k of 10⁶), and the filtered first pages.
 */
async function casesOf(uow: UnitOfWork, caller: Caller, n: number, api: Api): Promise<ListCase[]> {
  const accountId = caller.account.accountId;
  const at = { api, accountId, after: null, depth: 0 };
  const cases: ListCase[] = [{ ...at, name: 'first page', query: `/v1/tasks?limit=${LIMIT}`, filters: {} }];
  for (const depth of [Math.round(n * 0.1), Math.round(n * 0.9)]) {
    const t = await tokenAt(uow, caller, depth);
    cases.push({
      ...at,
      name: `depth ${depth >= 1000 ? `${Math.round(depth / 1000)}k` : depth}`,
      query: `/v1/tasks?limit=${LIMIT}&next_token=${t.token}`,
      filters: {},
      after: t.after,
      depth,
      firstOfPage: t.firstOfPage,
    });
  }
  cases.push(
    { ...at, name: 'project (8 %)', query: `/v1/tasks?limit=${LIMIT}&project=proj-3`, filters: { projects: ['proj-3'] } },
    { ...at, name: 'status canceled (9 %)', query: `/v1/tasks?limit=${LIMIT}&status=canceled`, filters: { statuses: ['canceled'] } },
    { ...at, name: 'status error (3 %)', query: `/v1/tasks?limit=${LIMIT}&status=error`, filters: { statuses: ['error'] } },
    { ...at, name: 'batch (1 %)', query: `/v1/tasks?limit=${LIMIT}&batch=batch-3`, filters: { batches: ['batch-3'] } },
    {
      ...at,
      name: 'project + status pending (2 %)',
      query: `/v1/tasks?limit=${LIMIT}&project=proj-3&status=pending`,
      filters: { projects: ['proj-3'], statuses: ['pending'] },
    },
    { ...at, name: 'tag priority (5 %)', query: `/v1/tasks?limit=${LIMIT}&tags=priority`, filters: { tags: ['priority'] } },
    { ...at, name: 'tag rare (0.1 %)', query: `/v1/tasks?limit=${LIMIT}&tags=rare`, filters: { tags: ['rare'] } },
    {
      ...at,
      name: 'tag priority + status pending (2 %)',
      query: `/v1/tasks?limit=${LIMIT}&tags=priority&status=pending`,
      filters: { tags: ['priority'], statuses: ['pending'] },
    },
    {
      ...at,
      name: 'tags region-eu + rare (0.03 %)',
      query: `/v1/tasks?limit=${LIMIT}&tags=region-eu,rare`,
      filters: { tags: ['region-eu', 'rare'] },
    },
  );
  return cases;
}

// ---- delivery ----------------------------------------------------------------------------------

async function createTestTasks(api: Api, n: number, callbackUrl: string): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        next++;
        const body = await ok(api, 'POST', '/v1/task/categorization', { ...categorization, callback_url: callbackUrl });
        ids.push(body.task_id);
        if (ids.length % 500 === 0) process.stdout.write(`\r  created ${ids.length} of ${n} test-mode tasks`);
      }
    }),
  );
  process.stdout.write('\n');
  return ids;
}

/**
 * `n` test-mode tasks with a callback to a new loopback receiver, created while delivery is off
 * (each is completed at once and its callback queued); then a server with delivery on sends them
 * all. Times the arrivals and counts the POSTs open at once at the receiver.
 */
async function deliveryRun(databaseUrl: string, db: pg.Client, testKey: string, n: number, receiverDelayMs: number) {
  const receiver = await startReceiver(receiverDelayMs);
  // The receiver is on loopback: creation checks the callback URL too.
  let server = await serveChild({ ...serverEnv, ...databaseEnv(databaseUrl), ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
  console.log(`creating ${n} test-mode tasks with a callback to ${receiver.url} (delivery off) ...`);
  const createStarted = performance.now();
  const ids = await createTestTasks(apiOf(server.url, testKey), n, receiver.url);
  const createSeconds = (performance.now() - createStarted) / 1000;
  await server.stop();
  const undelivered = async () =>
    Number(
      (
        (await db.query(`select count(*) as n from outbox where delivered_at is null and url = $1`, [receiver.url])).rows[0] as {
          n: string;
        }
      ).n,
    );
  const queued = await undelivered();
  const concurrencyCap = readConfig(process.env).delivery.concurrency;
  console.log(
    `  ${queued} callbacks queued; a server with delivery on (DELIVERY_POLL_MS=${DELIVERY_POLL_MS}, DELIVERY_CONCURRENCY=${concurrencyCap}) sends them to a receiver answering after ${receiverDelayMs} ms ...`,
  );
  const spawnAt = performance.now();
  server = await serveChild({
    ...serverEnv,
    ...databaseEnv(databaseUrl),
    DELIVERY_POLL_MS: String(DELIVERY_POLL_MS),
    DELIVERY_CONCURRENCY: String(concurrencyCap),
    ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
  });
  const readyAt = performance.now();
  await receiver.waitFor(ids, 15 * 60_000);
  const lastAt = receiver.lastAt!;
  const firstAt = receiver.firstAt!;
  // The attempts are recorded after each answer: wait until the outbox shows every one delivered.
  let recordedAt = performance.now();
  for (;;) {
    const left = await undelivered();
    recordedAt = performance.now();
    if (left === 0) break;
    if (recordedAt - lastAt > 120_000) throw new Error(`${left} callbacks received but not recorded as delivered after 2 minutes`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const serverRssMb = rssMbOf(server.pid);
  await server.stop();
  await receiver.close();
  // From the moment the server could deliver (its banner, or the first arrival if that came first).
  const from = Math.min(readyAt, firstAt);
  return {
    tasks: n,
    queued,
    receiverDelayMs,
    pollMs: DELIVERY_POLL_MS,
    concurrencyCap,
    createSeconds: round(createSeconds),
    serverStartSeconds: round((readyAt - spawnAt) / 1000, 2),
    secondsToAll: round((lastAt - from) / 1000, 2),
    firstToLastSeconds: round((lastAt - firstAt) / 1000, 2),
    callbacksPerSecond: Math.round(n / ((lastAt - from) / 1000)),
    secondsToAllRecorded: round((recordedAt - from) / 1000, 2),
    peakConcurrent: receiver.peakConcurrent,
    received: receiver.total,
    distinct: receiver.posts.size,
    duplicates: receiver.total - receiver.posts.size,
    serverRssMb,
  };
}

// ---- the run -----------------------------------------------------------------------------------

async function main(): Promise<number> {
  if (!postgresAvailable()) throw new Error('PostgreSQL 15 binaries not found (PG_BIN, default /usr/lib/postgresql/15/bin)');
  const started = Date.now();
  const loadAtStart = loadavg().map((x) => round(x, 2));
  console.log(
    `humantask scale benchmark: ${TASKS.toLocaleString('en')} tasks, ${WARMUP} warm-up + ${SAMPLES} timed requests per list case, ${DELIVERIES} callbacks`,
  );

  const cluster = await startCluster(await freePort());
  onCleanup(
    () => cluster.stop(),
    () => cluster.stop(),
  );
  const databaseUrl = await cluster.createDatabase();
  // Without JIT, as the server's connections (server/store/db.ts), so that EXPLAIN ANALYZE shows its plans.
  const db = new pg.Client({ connectionString: databaseUrl, options: '-c jit=off' });
  await db.connect();
  onCleanup(() => db.end());
  const postgresVersion = ((await db.query('show server_version')).rows[0] as { server_version: string }).server_version;

  // 1. Real tasks through the API (an empty database: the server makes the dev account), and the
  // same for a second account, whose lists are those of an account of SMALL_TASKS tasks.
  console.log('seeding through the API ...');
  let server = await serveChild({ ...serverEnv, ...databaseEnv(databaseUrl) });
  const keys = keysOf(server.output());
  const store = await openStore({ databaseUrl, dataDir: 'memory://', secretsKey });
  onCleanup(() => store.close().catch(() => {}));
  const uow = unitOfWork(store);
  const seeds = await seedThroughApi(apiOf(server.url, keys.live), apiOf(server.url, keys.test));
  const smallAccount = SMALL_TASKS > 0 ? await createAccount(uow, 'small', new Date()) : null;
  const smallSeeds = smallAccount
    ? await seedThroughApi(apiOf(server.url, smallAccount.live_key), apiOf(server.url, smallAccount.test_key))
    : null;
  await server.stop();
  const accountId = ((await db.query(`select account_id from accounts where name = 'dev'`)).rows[0] as { account_id: string }).account_id;

  // 2. The clones, straight into the table.
  console.log(`loading ${TASKS.toLocaleString('en')} tasks with INSERT ... SELECT generate_series ...`);
  const insertSeconds = await bulkLoad(db, uow, accountId, seeds, Date.now() - 86_400_000, TASKS);
  if (smallAccount && smallSeeds) {
    console.log(`loading ${SMALL_TASKS.toLocaleString('en')} tasks into the account "small" ...`);
    await bulkLoad(db, uow, smallAccount.account_id, smallSeeds, Date.now() - 86_400_000, SMALL_TASKS);
  }
  const vacuumStarted = performance.now();
  await db.query('vacuum analyze tasks, task_tags, task_counts');
  const vacuumSeconds = (performance.now() - vacuumStarted) / 1000;
  const liveIn = async (id: string) =>
    Number(((await db.query(`select count(*) as n from tasks where account_id = $1 and mode = 'live'`, [id])).rows[0] as { n: string }).n);
  const sizes = (
    await db.query<{ table_mb: string; indexes_mb: string; tags_mb: string }>(
      `select round(pg_table_size('tasks') / 1048576.0) as table_mb, round(pg_indexes_size('tasks') / 1048576.0) as indexes_mb,
              round(pg_total_relation_size('task_tags') / 1048576.0) as tags_mb`,
    )
  ).rows[0]!;
  const liveTasks = await liveIn(accountId);
  const smallLiveTasks = smallAccount ? await liveIn(smallAccount.account_id) : 0;
  console.log(
    `  ${liveTasks.toLocaleString('en')} live tasks in the account (${smallLiveTasks} in "small"); table ${sizes.table_mb} MB, indexes ${sizes.indexes_mb} MB, task_tags ${sizes.tags_mb} MB; insert ${insertSeconds.toFixed(1)} s, vacuum analyze ${vacuumSeconds.toFixed(1)} s`,
  );

  // 3. Tokens at depth, and the server's SQL of every case.
  const callerOf = async (id: string): Promise<Caller> => ({ account: (await uow.accounts.findById(id))!, mode: 'live' });
  server = await serveChild({ ...serverEnv, ...databaseEnv(databaseUrl), LOG_LEVEL: 'info' });
  const bigCases = await casesOf(uow, await callerOf(accountId), TASKS, apiOf(server.url, keys.live));
  const smallCases = smallAccount
    ? await casesOf(uow, await callerOf(smallAccount.account_id), SMALL_TASKS, apiOf(server.url, smallAccount.live_key))
    : [];
  const cases = [...bigCases, ...smallCases];
  const explained = new Map<ListCase, Explained>();
  console.log("EXPLAIN ANALYZE of the server's list queries ...");
  for (const c of cases) {
    capture.statements = [];
    capture.on = true;
    await uow.tasks.list(c.accountId, 'live', c.filters, { limit: LIMIT, after: c.after });
    capture.on = false;
    if (capture.statements.length === 0) throw new Error('the list queries were not captured');
    explained.set(c, await explain(db, capture.statements));
  }
  // The overview's one statement (GET /v1/overview, the console's first screen), of the big account.
  capture.statements = [];
  capture.on = true;
  await uow.overview.figures(accountId, 'live', new Date(Date.now() - 30 * 86_400_000), 50);
  capture.on = false;
  const overviewExplained = await explain(db, capture.statements);
  await store.close();

  // 4. Timed over HTTP by `humantask serve` on the loaded database, both accounts' cases in turn.
  // With the access log on: each request's time in the server, in the order the client sent them.
  console.log('timing list pages over HTTP ...');
  const before = server.output().length;
  const timed = await timeLists(cases);
  await new Promise((r) => setTimeout(r, 200));
  const logged = server
    .output()
    .slice(before)
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"/v1/tasks"'))
    .map((line) => (JSON.parse(line) as { ms: number }).ms);
  const serverSamples = (i: number) =>
    logged.length === (WARMUP + SAMPLES) * cases.length
      ? logged.filter((_, k) => k % cases.length === i && k >= WARMUP * cases.length)
      : null;
  if (!serverSamples(0))
    console.warn(`  warning: ${logged.length} access log lines for ${(WARMUP + SAMPLES) * cases.length} requests: no server times`);
  const resultOf = (c: ListCase): ListResult => {
    const t = timed.get(c)!;
    const own = serverSamples(cases.indexOf(c));
    return {
      case: c.name,
      query: c.query.replace(/next_token=[^&]+/, 'next_token=…'),
      depth: c.depth,
      total: t.total,
      docs: t.docs,
      ms: spread(t.samples),
      serverMs: own ? spread(own) : null,
      explain: explained.get(c)!,
    };
  };
  const lists = bigCases.map(resultOf);
  const smallLists = smallCases.map(resultOf);
  // The counters (kept by triggers, recounted after the bulk load) against count(*).
  for (const [list, live] of [
    [lists, liveTasks],
    [smallLists, smallLiveTasks],
  ] as const) {
    const first = list.find((l) => l.case === 'first page');
    if (first && first.total !== live) throw new Error(`the first page's total is ${first.total}, count(*) ${live}`);
  }
  // The overview of both accounts, interleaved, with the server's own times from its access log.
  console.log('timing the overview over HTTP ...');
  const overviewApis = [apiOf(server.url, keys.live), ...(smallAccount ? [apiOf(server.url, smallAccount.live_key)] : [])];
  const overviewBefore = server.output().length;
  const overviewSamples = overviewApis.map(() => [] as number[]);
  for (let round = 0; round < WARMUP + SAMPLES; round++)
    for (const [i, api] of overviewApis.entries()) {
      const r = await api('GET', '/v1/overview?days=30');
      if (r.status !== 200) throw new Error(`GET /v1/overview: ${r.status} ${JSON.stringify(r.body)}`);
      if (round >= WARMUP) overviewSamples[i]!.push(r.ms);
    }
  await new Promise((r) => setTimeout(r, 200));
  const overviewLogged = server
    .output()
    .slice(overviewBefore)
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"/v1/overview'))
    .map((line) => (JSON.parse(line) as { ms: number }).ms);
  const overviewServer = (i: number) =>
    overviewLogged.length === (WARMUP + SAMPLES) * overviewApis.length
      ? spread(overviewLogged.filter((_, k) => k % overviewApis.length === i && k >= WARMUP * overviewApis.length))
      : null;
  const overview = {
    big: { tasks: liveTasks, ms: spread(overviewSamples[0]!), serverMs: overviewServer(0) },
    small: smallAccount ? { tasks: smallLiveTasks, ms: spread(overviewSamples[1]!), serverMs: overviewServer(1) } : null,
    explain: overviewExplained,
  };
  const readRssMb = rssMbOf(server.pid);

  // 5. Delivery: test-mode tasks completed while delivery is off, then sent at once; first to a
  // receiver answering at once (throughput), then to one answering after 100 ms (the cap).
  // `--deliveries 0`: the lists only.
  await server.stop();
  const delivery = DELIVERIES > 0 ? await deliveryRun(databaseUrl, db, keys.test, DELIVERIES, 0) : null;
  const capCheck = DELIVERIES > 0 ? await deliveryRun(databaseUrl, db, keys.test, CAP_CHECK_DELIVERIES, CAP_CHECK_DELAY_MS) : null;

  // 6. Report.
  const first = lists[0]!;
  const ratio = (name: string) => {
    const r = lists.find((l) => l.case === name);
    return r ? round(r.ms.median / first.ms.median, 2) : null;
  };
  // Issue 21: the unfiltered and single-field pages within 10 ms (median, server time), and every
  // page within 3 × the same page of an account of 10³ tasks: the small account of this run (or
  // `--small FILE`, an earlier run of that size).
  const singleField = lists.filter((l) => !l.case.includes('+') && !l.case.startsWith('tag'));
  const earlier = args.small ? JSON.parse(readFileSync(args.small, 'utf8')) : null;
  const small: { tasks: number; lists: ListResult[]; from: string } | null = earlier
    ? { tasks: Number(earlier.settings.tasks), lists: earlier.lists, from: path.relative(root, args.small!) }
    : smallLists.length > 0
      ? { tasks: SMALL_TASKS, lists: smallLists, from: 'this run' }
      : null;
  const undepth = (name: string) => name.replace(/\d+k?$/, '');
  /** The same page in the small account: the case at the same place (depths are 10 % and 90 % in both). */
  const versusSmall = (l: ListResult) => {
    const at = small?.lists[lists.indexOf(l)];
    if (!at || undepth(at.case) !== undepth(l.case)) return null;
    const serverTime = Boolean(l.serverMs && at.serverMs);
    const [now, then] = serverTime ? [l.serverMs!.median, at.serverMs!.median] : [l.ms.median, at.ms.median];
    return { case: at.case, ms: then, times: round(now / then, 2), what: serverTime ? 'server time' : 'over HTTP' };
  };
  const targets = [
    ...singleField.map((l) => {
      const ms = (l.serverMs ?? l.ms).median;
      return { target: `${l.case}: median ≤ 10 ms (${l.serverMs ? 'server time' : 'over HTTP'})`, measured: `${ms} ms`, met: ms <= 10 };
    }),
    ...lists.flatMap((l) => {
      const v = versusSmall(l);
      if (!v || !small) return [];
      return [
        {
          target: `${l.case}: ≤ 3 × the same page at ${small.tasks.toLocaleString('en')} tasks (${v.case}, ${v.ms} ms, ${v.what})`,
          measured: `${v.times} ×`,
          met: v.times <= 3,
        },
      ];
    }),
    (() => {
      const ms = (overview.big.serverMs ?? overview.big.ms).median;
      return {
        target: `overview (GET /v1/overview): median ≤ 500 ms (${overview.big.serverMs ? 'server time' : 'over HTTP'})`,
        measured: `${ms} ms`,
        met: ms <= 500,
      };
    })(),
    ...(overview.small
      ? (() => {
          const serverTime = Boolean(overview.big.serverMs && overview.small.serverMs);
          const [now, then] = serverTime
            ? [overview.big.serverMs!.median, overview.small.serverMs!.median]
            : [overview.big.ms.median, overview.small.ms.median];
          const times = round(now / then, 2);
          return [
            {
              target: `overview: ≤ 3 × the overview of ${overview.small.tasks.toLocaleString('en')} tasks (${then} ms, ${serverTime ? 'server time' : 'over HTTP'})`,
              measured: `${times} ×`,
              met: times <= 3,
            },
          ];
        })()
      : []),
    ...(delivery && capCheck
      ? [
          {
            target: `delivery ≥ 1,000 callbacks/s`,
            measured: `${delivery.callbacksPerSecond}/s`,
            met: delivery.callbacksPerSecond >= 1000,
          },
          {
            target: `peak concurrent callback POSTs ≤ DELIVERY_CONCURRENCY (${delivery.concurrencyCap})`,
            measured: `${delivery.peakConcurrent} (receiver answering at once), ${capCheck.peakConcurrent} (answering after ${CAP_CHECK_DELAY_MS} ms)`,
            met: delivery.peakConcurrent <= delivery.concurrencyCap && capCheck.peakConcurrent <= delivery.concurrencyCap,
          },
          {
            target: 'every callback delivered, once',
            measured: `${delivery.distinct} of ${delivery.tasks} (${delivery.duplicates} twice); ${capCheck.distinct} of ${capCheck.tasks} (${capCheck.duplicates} twice)`,
            met:
              delivery.distinct === delivery.tasks &&
              delivery.duplicates === 0 &&
              capCheck.distinct === capCheck.tasks &&
              capCheck.duplicates === 0,
          },
        ]
      : []),
  ];
  const report = {
    date: new Date().toISOString(),
    settings: {
      tasks: TASKS,
      smallTasks: small?.tasks ?? null,
      limit: LIMIT,
      warmup: WARMUP,
      samples: SAMPLES,
      deliveries: DELIVERIES,
      deliveryPollMs: DELIVERY_POLL_MS,
      serverEnv,
    },
    environment: {
      node: process.version,
      cpu: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}`,
      memoryGb: Math.round(totalmem() / 1024 ** 3),
      postgres: postgresVersion,
      postgresSettings: 'throwaway cluster (test/support/postgres.ts): fsync=off, defaults otherwise (shared_buffers 128 MB)',
      /** The machine's load average (1, 5, 15 min) when the run started and ended: other work shares the CPUs. */
      loadAverage: { start: loadAtStart, end: loadavg().map((x) => round(x, 2)) },
    },
    load: {
      apiTasks: seeds.apiTasks,
      liveTasks,
      insertSeconds: round(insertSeconds),
      vacuumAnalyzeSeconds: round(vacuumSeconds),
      tableMb: Number(sizes.table_mb),
      indexesMb: Number(sizes.indexes_mb),
      taskTagsMb: Number(sizes.tags_mb),
      smallLiveTasks,
    },
    lists,
    ratios: Object.fromEntries(lists.slice(1).map((l) => [l.case, ratio(l.case)])),
    /** The same pages in an account of `small.tasks` tasks, and each page's ratio to its counterpart there. */
    small: small && { tasks: small.tasks, from: small.from, lists: earlier ? null : smallLists },
    versusSmall: Object.fromEntries(lists.map((l) => [l.case, versusSmall(l)?.times ?? null])),
    readServerRssMb: readRssMb,
    overview,
    delivery,
    capCheck,
    targets,
    wallSeconds: Math.round((Date.now() - started) / 1000),
  };
  mkdirSync(path.join(here, 'results'), { recursive: true });
  // A run of another size than the default gets its own file (the report page shows the default's).
  const file = path.join(here, 'results', `scale-${today()}${TASKS === 1_000_000 ? '' : `-${TASKS}-tasks`}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  writeScaleAndSoakPage();

  console.log(
    '\n' +
      textTable([
        ['list case', 'total', 'median ms', 'min', 'p90', 'max', 'server ms', '× first', '× small', 'SQL ms', 'count ms', 'page ms'],
        ...lists.map((l) => [
          l.case,
          String(l.total),
          String(l.ms.median),
          String(l.ms.min),
          String(l.ms.p90),
          String(l.ms.max),
          String(l.serverMs?.median ?? ''),
          l === first ? '' : String(ratio(l.case)),
          String(versusSmall(l)?.times ?? ''),
          String(l.explain.executionMs),
          String(l.explain.countMs ?? ''),
          String(l.explain.pageMs ?? ''),
        ]),
      ]),
  );
  console.log(
    `\noverview: median ${overview.big.ms.median} ms over HTTP, ${overview.big.serverMs?.median ?? '?'} ms in the server, SQL ${overview.explain.executionMs} ms` +
      (overview.small
        ? ` (at ${overview.small.tasks} tasks: ${overview.small.ms.median} ms, ${overview.small.serverMs?.median ?? '?'} ms in the server)`
        : ''),
  );
  for (const d of delivery && capCheck ? [delivery, capCheck] : []) {
    console.log(
      `${d === delivery ? '\n' : ''}delivery (receiver answering after ${d.receiverDelayMs} ms): ${d.tasks} callbacks in ${d.secondsToAll} s (${d.callbacksPerSecond}/s; first to last ${d.firstToLastSeconds} s; all recorded after ${d.secondsToAllRecorded} s), peak ${d.peakConcurrent} concurrent POSTs (cap ${d.concurrencyCap}), ${d.duplicates} duplicates`,
    );
  }
  console.log('');
  for (const t of targets) console.log(`${t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.measured}`);
  console.log(`\nwrote ${path.relative(root, file)} and docs/internal/performance-scale.md (${report.wallSeconds} s)`);
  if (args.hold) {
    console.log(`\n--hold: the loaded database stays at ${databaseUrl} (account ${accountId}) until Ctrl-C`);
    await new Promise(() => {});
  }
  return 0;
}

function round(x: number, digits = 1): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

run(main);
