// The storage side of domain/ports.ts, in drizzle-orm: the same queries on PGlite and PostgreSQL.
import { and, asc, count, desc, eq, getTableColumns, gte, inArray, isNotNull, lt, lte, sql, type SQL } from 'drizzle-orm';
import type {
  AccountRecord,
  CallbackPayloads,
  ResultWriter,
  ClaimedMessage,
  DeliveryAttempt,
  OutboxMessage,
  PageRequest,
  Repositories,
  SavedAnswer,
  TaskFilters,
  UnitOfWork,
} from '../domain/ports.ts';
import { UniqueIdTaken } from '../domain/ports.ts';
import type { Account, Mode, Task } from '../domain/model.ts';
import type { Scope } from '../domain/identity/roles.ts';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Database, Execute, Store } from './db.ts';
import type { SecretBox } from './secrets.ts';
import { isUniqueViolation } from './errors.ts';
import { executeIn, recordsetCodec, rowCodec, statement } from './rows.ts';
import { taskPriority, taskWorkInsert, tasksWorkInsert, workRepository } from './work.ts';
import { storageRepository } from './storage.ts';
import { transferRepository } from './transfer.ts';
import { workerRepository } from './workers.ts';
import { qualityRepository } from './quality.ts';
import { qualificationRepository } from './qualification.ts';
import { countsRepository } from './counts.ts';
import { identityRepositories } from './identity.ts';
import { workChannel, workPayload } from './notify.ts';
import {
  accounts,
  batches,
  deliveryAttempts,
  idempotencyKeys,
  outbox,
  projectOntologyVersions,
  projectParamVersions,
  projects,
  tasks,
  trainingTasks,
} from './schema.ts';

/** Descending as the list indexes are made (drizzle's `.desc()` is DESC NULLS LAST). */
const descNullsLast = (column: AnyPgColumn) => sql`${column} desc nulls last`;

/** An account row with its live requests counted (the sum of its counter rows). */
const accountWithCount = {
  ...getTableColumns(accounts),
  // Spelled out with an alias: drizzle writes a column of a one-table select without its table, so
  // `${liveRequestCounts.accountId} = ${accounts.accountId}` came out as `account_id = account_id`
  // (true for every row: every account showed the sum of all accounts).
  liveRequestCount:
    sql<number>`(SELECT coalesce(sum(c.count), 0) FROM live_request_counts c WHERE c.account_id = "accounts"."account_id")`.mapWith(Number),
};

const taskRow = rowCodec<Task>(tasks);
const outboxRow = rowCodec<OutboxMessage>(outbox);
const answerRow = rowCodec<SavedAnswer>(idempotencyKeys);
const attemptRow = rowCodec<DeliveryAttempt>(deliveryAttempts);
const accountRow = rowCodec<Account & { testKeyHash: string; liveKeyHash: string }>(accounts);

/**
 * `column` equal to one of `list`: one value is compared with `=`, as the single-value filters always
 * were (a page of one project or batch keeps reading its index in order); several with `= ANY`.
 */
function oneOf(column: string, list: readonly string[], add: (value: unknown) => string): string {
  return list.length === 1 ? `${column} = ${add(list[0])}` : `${column} = ANY(${add(list)}::text[])`;
}

/**
 * The filters of a task list as SQL over `tasks`; their values are appended to `values`.
 * The text depends only on which filters are present, so each shape is one prepared statement.
 */
function taskFilterSql(accountId: string, mode: Mode, f: TaskFilters, values: unknown[]): string {
  const add = (value: unknown) => `$${values.push(value)}`;
  const c = [`account_id = ${add(accountId)}`, `mode = ${add(mode)}`];
  const time = (column: string, op: string, d: Date | undefined) => d && c.push(`${column} ${op} ${add(d.toISOString())}::timestamptz`);
  const any = (column: string, list: readonly string[] | undefined) => list?.length && c.push(oneOf(column, list, add));
  time('created_at', '>=', f.startTime);
  time('created_at', '<=', f.endTime);
  if (f.statuses) c.push(`status = ANY(${add(f.statuses)}::text[])`);
  any('type', f.types);
  any('project', f.projects);
  any('batch', f.batches);
  any('unique_id', f.uniqueIds);
  if (f.tags?.length) c.push(`tags @> ${add(JSON.stringify(f.tags))}::jsonb`);
  any('customer_review_status', f.customerReviewStatuses);
  time('completed_at', '>=', f.completedAfter);
  time('completed_at', '<=', f.completedBefore);
  time('updated_at', '>=', f.updatedAfter);
  time('updated_at', '<=', f.updatedBefore);
  return c.join(' AND ');
}

/**
 * Where the matches of a task list are read, in the list's order: `tasks` (by tasks_list, or the
 * index of a project or batch), or with a tag filter the rows of its tag (the rarest of several)
 * in task_tags (by task_tags_list), each joined to its task, which the other filters check. Either way a page reads
 * about as many rows as it shows (unless the other filters pass few of them), and a count reads
 * only the tag's rows, however many tasks the account holds. `key` is the list's order,
 * (created_at, task_id), as columns of that source.
 */
function matchesSql(accountId: string, mode: Mode, f: TaskFilters, values: unknown[]) {
  if (!f.tags?.length)
    return { from: `tasks WHERE ${taskFilterSql(accountId, mode, f, values)}`, row: '*', key: ['created_at', 'task_id'] };
  // The task of each tag row by its key, one at a time (OFFSET 0 keeps the planner from joining
  // all the account's tasks instead, which it may guess cheaper when it misjudges how many match);
  // a single tag is the one read, so the task is not checked for it again.
  const where = taskFilterSql(accountId, mode, f.tags.length > 1 ? f : { ...f, tags: undefined }, values);
  const add = (value: unknown) => `$${values.push(value)}`;
  const [account, m] = [add(accountId), add(mode)];
  // Of several tags, the one fewest tasks carry (by task_counts), read once before the scan.
  const tag =
    f.tags.length === 1
      ? add(f.tags[0])
      : `(SELECT x FROM unnest(${add(f.tags)}::text[]) x ORDER BY (SELECT coalesce(sum(count), 0) FROM task_counts
          WHERE account_id = ${account} AND mode = ${m} AND scope = 3 AND tag = x), x LIMIT 1)`;
  const c = [`g.account_id = ${account}`, `g.mode = ${m}`, `g.tag = ${tag}`];
  if (f.startTime) c.push(`g.created_at >= ${add(f.startTime.toISOString())}::timestamptz`);
  if (f.endTime) c.push(`g.created_at <= ${add(f.endTime.toISOString())}::timestamptz`);
  return {
    from: `task_tags g CROSS JOIN LATERAL (SELECT * FROM tasks WHERE task_id = g.task_id AND ${where} OFFSET 0) t WHERE ${c.join(' AND ')}`,
    row: 't.*',
    key: ['g.created_at', 'g.task_id'],
  };
}

/**
 * The total of a task list from task_counts (schema.ts) when the filters are ones it keeps (status
 * and type, with a project, a batch, both, or one tag): a sum over a few rows per status and type,
 * whatever the number of tasks. Null for other filters, whose total counts the matching tasks
 * (through an index of that filter).
 */
function countedTotalSql(accountId: string, mode: Mode, f: TaskFilters, values: unknown[]): string | null {
  const kept = new Set(['statuses', 'types', 'projects', 'batches', 'tags']);
  if (Object.entries(f).some(([name, value]) => value !== undefined && !kept.has(name))) return null;
  const tag = f.tags?.length ? f.tags : undefined;
  const projects = f.projects?.length ? f.projects : undefined;
  const batches = f.batches?.length ? f.batches : undefined;
  if (tag && (tag.length > 1 || projects || batches)) return null;
  const add = (value: unknown) => `$${values.push(value)}`;
  const c = [`account_id = ${add(accountId)}`, `mode = ${add(mode)}`];
  // A task is counted once per scope, so several projects (or batches) sum without overlap.
  if (tag) c.push(`scope = 3`, `batch = ''`, `project = ''`, `tag = ${add(tag[0])}`);
  else if (batches) c.push(`scope = 2`, oneOf('batch', batches, add), ...(projects ? [oneOf('project', projects, add)] : []), `tag = ''`);
  else if (projects) c.push(`scope = 1`, `batch = ''`, oneOf('project', projects, add), `tag = ''`);
  else c.push(`scope = 0`, `batch = ''`, `project = ''`, `tag = ''`);
  if (f.statuses) c.push(`status = ANY(${add(f.statuses)}::text[])`);
  if (f.types?.length) c.push(oneOf('type', f.types, add));
  return `SELECT coalesce(sum(count), 0) FROM task_counts WHERE ${c.join(' AND ')}`;
}

/**
 * Counts a live request (`row`: a VALUES or SELECT of account_id, shard, 1) on one of the account's
 * 16 counter rows, chosen at random: concurrent requests seldom wait for each other's row lock.
 */
const countLiveRequestSql = (row: string) =>
  `INSERT INTO live_request_counts (account_id, shard, count) ${row}
    ON CONFLICT (account_id, shard) DO UPDATE SET count = live_request_counts.count + 1`;
const liveShard = () => Math.floor(Math.random() * 16);

/**
 * The creation statement: claims the Idempotency-Key with the answer (an expired claim is taken
 * over), inserts the task only if the claim succeeded, queues its callback, and counts the live
 * request (whether or not the key was claimed: a replay is a request too): all or nothing, in one
 * round trip. Answers whether the key was claimed (always true without a key).
 */
function createTaskStatement(task: Task, extras: { answer?: SavedAnswer; callback?: OutboxMessage; countLiveRequestOf?: string }) {
  const values: unknown[] = [];
  const parts: string[] = [];
  if (extras.countLiveRequestOf !== undefined) {
    const row = `VALUES ($${values.push(extras.countLiveRequestOf)}::text, $${values.push(liveShard())}::int, 1)`;
    parts.push(`counted AS (${countLiveRequestSql(row)})`);
  }
  const insert = (codec: { placeholders(first: number): string; values(row: never): unknown[] }, row: unknown) => {
    const placeholders = codec.placeholders(values.length + 1);
    values.push(...codec.values(row as never));
    return placeholders;
  };
  if (extras.answer) {
    parts.push(`claim AS (
      INSERT INTO idempotency_keys (${answerRow.columnList}) VALUES (${insert(answerRow, extras.answer)})
      ON CONFLICT (account_id, mode, key) DO UPDATE SET ${['fingerprint', 'status_code', 'body', 'created_at', 'expires_at'].map((c) => `${c} = excluded.${c}`).join(', ')}
      WHERE idempotency_keys.expires_at <= excluded.created_at
      RETURNING 1)`);
  }
  const onlyIfClaimed = extras.answer ? ' WHERE EXISTS (SELECT 1 FROM claim)' : '';
  parts.push(`task AS (INSERT INTO tasks (${taskRow.columnList}) SELECT ${insert(taskRow, task)}${onlyIfClaimed} RETURNING 1)`);
  if (task.mode === 'live' && task.status === 'pending') {
    // A live task waits for a person: its work row is written with it (see store/work.ts).
    parts.push(`work AS (${taskWorkInsert(task, 'task', (v) => `$${values.push(v)}`)})`);
  }
  if (extras.callback) {
    parts.push(
      `callback AS (INSERT INTO outbox (${outboxRow.columnList}) SELECT ${insert(outboxRow, extras.callback)} WHERE EXISTS (SELECT 1 FROM task))`,
    );
  }
  // The background work the new task brings nudges its poller (after the commit, see notify.ts).
  const work = [
    ...(extras.callback ? [workPayload('outbox')] : []),
    ...(task.attachmentCheckAt ? [workPayload('attachment_check')] : []),
    ...(task.testCompleteAt ? [workPayload('test_completion', task.testCompleteAt)] : []),
    ...(task.mode === 'live' && task.status === 'pending' ? [workPayload('assignments')] : []),
  ];
  let woken = '';
  if (work.length > 0) {
    // A SELECT in WITH runs only when referenced: the final SELECT counts it.
    const payloads = work.map((w) => `($${values.push(w)}::text)`).join(', ');
    parts.push(`wake AS (SELECT pg_notify('${workChannel}', w.payload) FROM task, (VALUES ${payloads}) AS w(payload))`);
    woken = ', (SELECT count(*) FROM wake) AS woken';
  }
  return statement(`WITH ${parts.join(', ')} SELECT EXISTS (SELECT 1 FROM task) AS created${woken}`, values);
}

const taskRecord = recordsetCodec<Task>(tasks);
const outboxRecord = recordsetCodec<OutboxMessage>(outbox);

/**
 * Many new tasks in one statement (an import's group): the tasks, the work rows of the live ones,
 * their callbacks, the live requests they count, and the nudges of what they queue (after the
 * commit). The count and tag triggers count each task as a single creation's does.
 */
function createManyStatement(list: Task[], callbacks: OutboxMessage[], countLiveRequests: number) {
  const values: unknown[] = [JSON.stringify(list.map((t) => taskRecord.toJson(t)))];
  const parts = [
    `r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(${taskRecord.definition}))`,
    `task AS (INSERT INTO tasks (${taskRecord.columnList}) SELECT ${taskRecord.columnList} FROM r RETURNING 1)`,
  ];
  const live = list.filter((t) => t.mode === 'live' && t.status === 'pending');
  if (live.length > 0) {
    const rows = live.map((t) => ({
      task_id: t.taskId,
      account_id: t.accountId,
      project: t.project,
      batch: t.batch,
      priority: taskPriority(t),
      created_at: t.createdAt.toISOString(),
    }));
    values.push(JSON.stringify(rows));
    parts.push(
      `w AS (SELECT * FROM jsonb_to_recordset($${values.length}::jsonb) AS w(task_id text, account_id text, project text, batch text, priority int, created_at timestamptz))`,
      `work AS (${tasksWorkInsert('w')})`,
    );
  }
  if (callbacks.length > 0) {
    values.push(JSON.stringify(callbacks.map((m) => outboxRecord.toJson(m))));
    parts.push(
      `callback AS (INSERT INTO outbox (${outboxRecord.columnList}) SELECT ${outboxRecord.columnList} FROM jsonb_to_recordset($${values.length}::jsonb) AS o(${outboxRecord.definition}))`,
    );
  }
  if (countLiveRequests > 0) {
    const row = `VALUES ($${values.push(list[0]!.accountId)}::text, $${values.push(liveShard())}::int, $${values.push(countLiveRequests)}::bigint)`;
    parts.push(`counted AS (INSERT INTO live_request_counts (account_id, shard, count) ${row}
      ON CONFLICT (account_id, shard) DO UPDATE SET count = live_request_counts.count + excluded.count)`);
  }
  const work = [
    ...(callbacks.length > 0 ? [workPayload('outbox')] : []),
    ...(list.some((t) => t.attachmentCheckAt) ? [workPayload('attachment_check')] : []),
    ...[...new Set(list.filter((t) => t.testCompleteAt).map((t) => t.testCompleteAt!.getTime()))]
      .slice(0, 1)
      .map((at) => workPayload('test_completion', new Date(at))),
    ...(live.length > 0 ? [workPayload('assignments')] : []),
  ];
  let woken = '';
  if (work.length > 0) {
    const payloads = work.map((w) => `($${values.push(w)}::text)`).join(', ');
    parts.push(
      `wake AS (SELECT pg_notify('${workChannel}', w.payload) FROM (VALUES ${payloads}) AS w(payload) WHERE EXISTS (SELECT 1 FROM task))`,
    );
    woken = ', (SELECT count(*) FROM wake) AS woken';
  }
  return statement(`WITH ${parts.join(', ')} SELECT (SELECT count(*) FROM task) AS created${woken}`, values);
}

function repositories(
  db: Database,
  execute: Execute,
  secrets: SecretBox,
  payloads: CallbackPayloads,
  results: ResultWriter | undefined,
  afterCommit: Map<string, Task> | null,
): Repositories {
  // Account rows carry their secrets sealed; only the dispatcher, which sends them, opens them.
  const sealed = <A extends { callbackAuthKey: string; signingSecret: string }>(a: A): A => ({
    ...a,
    callbackAuthKey: secrets.seal(a.callbackAuthKey),
    signingSecret: secrets.seal(a.signingSecret),
  });
  // A completed task's response files (decision record 24) are written outside any transaction:
  // after the statement that wrote the task, or, in a transaction, once it has committed (the last
  // state of each task; unitOfWork below). A transaction that rolls back writes none.
  const writeFiles = async (list: Task[]) => {
    if (!results) return;
    for (const task of list) {
      if (!results.wanted(task)) afterCommit?.delete(task.taskId);
      else if (afterCommit) afterCommit.set(task.taskId, structuredClone(task));
      else await results.writeAndRecord(task, repos).catch((err: unknown) => results.failed(task, err));
    }
  };
  const repos: Repositories = {
    payloads,
    work: workRepository(db, execute),
    workers: workerRepository(db),
    quality: qualityRepository(db, execute),
    qualification: qualificationRepository(db, execute),
    counts: countsRepository(execute),
    ...identityRepositories(db, secrets),
    transfer: transferRepository(db, execute),
    storage: storageRepository(db, secrets),
    tasks: {
      async create(task, extras) {
        try {
          const [row] = await execute<{ created: boolean }>(createTaskStatement(task, extras));
          if (row?.created === true) await writeFiles([task]);
          return row?.created === true;
        } catch (err) {
          if (isUniqueViolation(err, 'tasks_unique_id')) throw new UniqueIdTaken();
          throw err;
        }
      },
      async update(task: Task) {
        try {
          await db.update(tasks).set(task).where(eq(tasks.taskId, task.taskId));
          await writeFiles([task]);
        } catch (err) {
          if (isUniqueViolation(err, 'tasks_unique_id')) throw new UniqueIdTaken();
          throw err;
        }
      },
      async setResultFiles(taskId, response, record) {
        // Only while the task still holds the response the files were made from (jsonb compares by value).
        const recorded = await db
          .update(tasks)
          .set({ resultFiles: record })
          .where(and(eq(tasks.taskId, taskId), eq(tasks.status, 'completed'), sql`${tasks.response} = ${JSON.stringify(response)}::jsonb`))
          .returning({ taskId: tasks.taskId });
        return recorded.length > 0;
      },
      async get(accountId, mode, taskId, options) {
        const lock = options?.forUpdate ? ' FOR UPDATE' : '';
        const text = `SELECT ${taskRow.columnList} FROM tasks WHERE task_id = $1 AND account_id = $2 AND mode = $3${lock}`;
        const [row] = await execute(statement(text, [taskId, accountId, mode]));
        return row ? taskRow.fromRow(row) : null;
      },
      async findByUniqueId(accountId, mode, uniqueId) {
        const rows = await db
          .select()
          .from(tasks)
          .where(and(eq(tasks.accountId, accountId), eq(tasks.mode, mode), eq(tasks.uniqueId, uniqueId)));
        return (rows[0] as Task | undefined) ?? null;
      },
      async list(accountId, mode, filters, page: PageRequest) {
        // One round trip: the total (kept by task_counts, or counted), joined with the page (a row
        // of nulls if empty). NULLS LAST as in the list indexes (the columns are never null, but
        // the planner only uses an index whose order is spelled the same).
        const values: unknown[] = [];
        const matches = matchesSql(accountId, mode, filters, values);
        const [createdAt, taskId] = matches.key;
        const total = countedTotalSql(accountId, mode, filters, values) ?? `SELECT count(*) FROM ${matches.from}`;
        let pageFrom = matches.from;
        let before = '';
        if ('after' in page && page.after) {
          // Keyset position: the list's index serves it at any depth.
          const position = `($${values.push(page.after.createdAt.toISOString())}::timestamptz, $${values.push(page.after.taskId)})`;
          pageFrom += ` AND (${createdAt}, ${taskId}) < ${position}`;
          // The matches before the position, only for a token of an older server (it carries no count).
          if (page.countBefore)
            before = `, (SELECT count(*) FROM ${matches.from} AND (${createdAt}, ${taskId}) >= ${position}) AS before_page`;
        }
        let tail = ` LIMIT $${values.push(page.limit + 1)}`;
        if ('offset' in page) tail += ` OFFSET $${values.push(page.offset)}`;
        const text = `SELECT n.*, ${taskRow.qualified('p')} FROM (SELECT (${total}) AS total${before}) n
          LEFT JOIN LATERAL (SELECT ${matches.row} FROM ${pageFrom} ORDER BY ${createdAt} DESC NULLS LAST, ${taskId} DESC NULLS LAST${tail}) p ON true`;
        const rows = await execute<Record<string, unknown> & { total: number | string; before_page?: number | string }>(
          statement(text, values),
        );
        return {
          tasks: rows.filter((r) => r.task_id !== null).map((r) => taskRow.fromRow(r)),
          total: Number(rows[0]?.total ?? 0),
          before: Number(rows[0]?.before_page ?? 0),
        };
      },
      async claimAttachmentChecks(now, leaseUntil, limit) {
        const due = db
          .select({ id: tasks.taskId })
          .from(tasks)
          .where(and(isNotNull(tasks.attachmentCheckAt), lte(tasks.attachmentCheckAt, now)))
          .orderBy(asc(tasks.attachmentCheckAt))
          .limit(limit)
          .for('update', { skipLocked: true });
        return (await db.update(tasks).set({ attachmentCheckAt: leaseUntil }).where(inArray(tasks.taskId, due)).returning()) as Task[];
      },
      async dueTestTaskIds(now: Date, limit: number) {
        return db
          .select({ taskId: tasks.taskId, accountId: tasks.accountId, mode: tasks.mode, createdAt: tasks.createdAt })
          .from(tasks)
          .where(and(isNotNull(tasks.testCompleteAt), lte(tasks.testCompleteAt, now)))
          .orderBy(asc(tasks.testCompleteAt))
          .limit(limit);
      },
      async postponeTestCompletion(taskId, at) {
        await db
          .update(tasks)
          .set({ testCompleteAt: at })
          .where(and(eq(tasks.taskId, taskId), isNotNull(tasks.testCompleteAt)));
      },
      async createMany(list, callbacks, countLiveRequests) {
        if (list.length === 0) return;
        try {
          await execute(createManyStatement(list, callbacks, countLiveRequests));
          await writeFiles(list);
        } catch (err) {
          if (isUniqueViolation(err, 'tasks_unique_id')) throw new UniqueIdTaken();
          throw err;
        }
      },
      async heldUniqueIds(accountId, mode, uniqueIds) {
        const rows = await execute<{ unique_id: string }>(
          statement(
            // One index probe per id (LIMIT keeps the lookup a nested loop): a semi-join planned on
            // stale statistics scans every task of the account once per id (issue 36's bench).
            `SELECT u.id AS unique_id FROM jsonb_array_elements_text($3::jsonb) AS u(id)
             CROSS JOIN LATERAL (SELECT 1 FROM tasks WHERE account_id = $1 AND mode = $2 AND unique_id = u.id LIMIT 1) AS held`,
            [accountId, mode, JSON.stringify(uniqueIds)],
          ),
        );
        return new Set(rows.map((r) => r.unique_id));
      },
      async typesOf(accountId, mode, filters) {
        const values: unknown[] = [];
        // The counters' total by type (one row per status and type of the scope), else the matches grouped.
        const counted = countedTotalSql(accountId, mode, filters, values);
        const text = counted
          ? counted.replace('SELECT coalesce(sum(count), 0) FROM task_counts', 'SELECT type, sum(count) AS n FROM task_counts') +
            ' GROUP BY type'
          : (() => {
              const matches = matchesSql(accountId, mode, filters, values);
              return `SELECT ${matches.row === '*' ? 'type' : 't.type'} AS type, count(*) AS n FROM ${matches.from} GROUP BY 1`;
            })();
        const rows = await execute<{ type: string; n: number | string }>(statement(text, values));
        return new Map(rows.filter((r) => Number(r.n) > 0).map((r) => [r.type, Number(r.n)]));
      },
      async listAfter(accountId, mode, filters, after, limit) {
        const values: unknown[] = [];
        const matches = matchesSql(accountId, mode, filters, values);
        const [createdAt, taskId] = matches.key;
        let from = matches.from;
        if (after)
          from += ` AND (${createdAt}, ${taskId}) < ($${values.push(after.createdAt.toISOString())}::timestamptz, $${values.push(after.taskId)})`;
        const text = `SELECT ${matches.row} FROM ${from} ORDER BY ${createdAt} DESC NULLS LAST, ${taskId} DESC NULLS LAST LIMIT $${values.push(limit)}`;
        const rows = await execute(statement(text, values));
        return rows.map((r) => taskRow.fromRow(r));
      },
    },
    idempotency: {
      async find(accountId, mode, key) {
        const text = `SELECT ${answerRow.columnList} FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3`;
        const [row] = await execute(statement(text, [accountId, mode, key]));
        return row ? answerRow.fromRow(row) : null;
      },
      async claim(answer: SavedAnswer) {
        // An expired claim is taken over.
        const rows = await db
          .insert(idempotencyKeys)
          .values(answer)
          .onConflictDoUpdate({
            target: [idempotencyKeys.accountId, idempotencyKeys.mode, idempotencyKeys.key],
            set: {
              fingerprint: answer.fingerprint,
              statusCode: answer.statusCode,
              body: answer.body,
              createdAt: answer.createdAt,
              expiresAt: answer.expiresAt,
            },
            setWhere: lte(idempotencyKeys.expiresAt, answer.createdAt),
          })
          .returning({ key: idempotencyKeys.key });
        return rows.length === 1;
      },
      async update(answer: SavedAnswer) {
        await db
          .update(idempotencyKeys)
          .set({ statusCode: answer.statusCode, body: answer.body, fingerprint: answer.fingerprint, expiresAt: answer.expiresAt })
          .where(
            and(
              eq(idempotencyKeys.accountId, answer.accountId),
              eq(idempotencyKeys.mode, answer.mode),
              eq(idempotencyKeys.key, answer.key),
            ),
          );
      },
      async release(accountId, mode, key) {
        await db
          .delete(idempotencyKeys)
          .where(
            and(
              eq(idempotencyKeys.accountId, accountId),
              eq(idempotencyKeys.mode, mode),
              eq(idempotencyKeys.key, key),
              eq(idempotencyKeys.statusCode, 0),
            ),
          );
      },
      async deleteExpired(now: Date) {
        const rows = await db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).returning({ key: idempotencyKeys.key });
        return rows.length;
      },
    },
    projects: {
      async insert(project) {
        const rows = await db.insert(projects).values(project).onConflictDoNothing().returning({ id: projects.projectId });
        return rows.length === 1;
      },
      async get(accountId, mode, name, options) {
        const q = db
          .select()
          .from(projects)
          .where(and(eq(projects.accountId, accountId), eq(projects.mode, mode), eq(projects.name, name)));
        const rows = options?.forUpdate ? await q.for('update') : await q;
        return rows[0] ?? null;
      },
      async list(accountId, mode, filters) {
        const where: SQL[] = [eq(projects.accountId, accountId), eq(projects.mode, mode)];
        if (filters?.archived !== undefined) where.push(eq(projects.archived, filters.archived));
        return db
          .select()
          .from(projects)
          .where(and(...where))
          .orderBy(asc(projects.createdAt), asc(projects.name));
      },
      async update(project) {
        await db.update(projects).set(project).where(eq(projects.projectId, project.projectId));
      },
      async paramVersions(projectIds) {
        if (projectIds.length === 0) return [];
        return db
          .select()
          .from(projectParamVersions)
          .where(inArray(projectParamVersions.projectId, projectIds))
          .orderBy(asc(projectParamVersions.version));
      },
      async ontologyVersions(projectIds) {
        if (projectIds.length === 0) return [];
        return db
          .select()
          .from(projectOntologyVersions)
          .where(inArray(projectOntologyVersions.projectId, projectIds))
          .orderBy(asc(projectOntologyVersions.version));
      },
      async addParamVersion(version) {
        await db.insert(projectParamVersions).values(version);
      },
      async addOntologyVersion(version) {
        await db.insert(projectOntologyVersions).values(version);
      },
    },
    batches: {
      async insert(batch) {
        const rows = await db.insert(batches).values(batch).onConflictDoNothing().returning({ id: batches.batchId });
        return rows.length === 1;
      },
      async update(batch) {
        // The calibration score is the quality loop's (store/quality.ts recounts it): never written back from a batch read earlier.
        // audited_at likewise is kept by a trigger on tasks (migration 0024).
        const {
          calibrationScore: _score,
          calibrationReviewed: _reviewed,
          auditedAt: _audited,
          ...columns
        } = batch as typeof batch & {
          calibrationScore?: unknown;
          calibrationReviewed?: unknown;
        };
        await db.update(batches).set(columns).where(eq(batches.batchId, batch.batchId));
      },
      async get(accountId, mode, name, options) {
        const q = db
          .select()
          .from(batches)
          .where(and(eq(batches.accountId, accountId), eq(batches.mode, mode), eq(batches.name, name)));
        const rows = options?.forUpdate ? await q.for('update') : await q;
        return rows[0] ?? null;
      },
      async list(accountId, mode, f, page) {
        const where: SQL[] = [eq(batches.accountId, accountId), eq(batches.mode, mode)];
        if (f.projects?.length) where.push(inArray(batches.project, f.projects));
        if (f.statuses?.length) where.push(inArray(batches.status, f.statuses));
        if (f.startTime) where.push(gte(batches.createdAt, f.startTime));
        if (f.endTime) where.push(lte(batches.createdAt, f.endTime));
        if (f.completedAfter) where.push(gte(batches.completedAt, f.completedAfter));
        if (f.completedBefore) where.push(lte(batches.completedAt, f.completedBefore));
        if (f.auditedAfter) where.push(gte(batches.auditedAt, f.auditedAfter));
        if (f.auditedBefore) where.push(lte(batches.auditedAt, f.auditedBefore));
        if (f.excludeArchived) where.push(eq(batches.archived, false));
        const [rows, totals] = await Promise.all([
          db
            .select()
            .from(batches)
            .where(and(...where))
            .orderBy(descNullsLast(batches.createdAt), asc(batches.name))
            .limit(page.limit + 1)
            .offset(page.offset),
          db
            .select({ n: count() })
            .from(batches)
            .where(and(...where)),
        ]);
        return { batches: rows, total: Number(totals[0]?.n ?? 0) };
      },
      async taskCounts(accountId, mode, name) {
        // Kept by task_counts (scope 2: the batch's tasks), not counted.
        const counts = { pending: 0, completed: 0, canceled: 0, error: 0 };
        const rows = await execute<{ status: keyof typeof counts; n: number | string }>(
          statement(
            `SELECT status, sum(count) AS n FROM task_counts WHERE account_id = $1 AND mode = $2 AND scope = 2 AND batch = $3 GROUP BY status`,
            [accountId, mode, name],
          ),
        );
        for (const r of rows) counts[r.status] = Number(r.n);
        return counts;
      },
      async hasCompletedCalibration(accountId, mode, project) {
        const rows = await db
          .select({ id: batches.batchId })
          .from(batches)
          .where(
            and(
              eq(batches.accountId, accountId),
              eq(batches.mode, mode),
              eq(batches.project, project),
              eq(batches.calibrationBatch, true),
              eq(batches.status, 'completed'),
            ),
          )
          .limit(1);
        return rows.length > 0;
      },
    },
    training: {
      async insert(task) {
        await db.insert(trainingTasks).values(task);
      },
      async insertPromoted(task) {
        // The partial unique index (source_task_id, kind) makes a second promotion a no-op, even when two race.
        const [inserted] = await db.insert(trainingTasks).values(task).onConflictDoNothing().returning();
        if (inserted) return inserted;
        const [earlier] = await db
          .select()
          .from(trainingTasks)
          .where(and(eq(trainingTasks.sourceTaskId, task.sourceTaskId), eq(trainingTasks.kind, task.kind)));
        if (!earlier) throw new Error(`training task promoted from ${task.sourceTaskId} neither inserted nor found`);
        return earlier;
      },
      async get(accountId, mode, kind, id) {
        const rows = await db
          .select()
          .from(trainingTasks)
          .where(
            and(
              eq(trainingTasks.id, id),
              eq(trainingTasks.accountId, accountId),
              eq(trainingTasks.mode, mode),
              eq(trainingTasks.kind, kind),
            ),
          );
        return rows[0] ?? null;
      },
      async list(accountId, mode, kind, f, page) {
        const where: SQL[] = [eq(trainingTasks.accountId, accountId), eq(trainingTasks.mode, mode), eq(trainingTasks.kind, kind)];
        if (f.types?.length) where.push(inArray(trainingTasks.type, f.types));
        if (f.startTime) where.push(gte(trainingTasks.createdAt, f.startTime));
        if (f.endTime) where.push(lte(trainingTasks.createdAt, f.endTime));
        const [rows, totals] = await Promise.all([
          db
            .select()
            .from(trainingTasks)
            .where(and(...where))
            .orderBy(descNullsLast(trainingTasks.createdAt), descNullsLast(trainingTasks.id))
            .limit(page.limit + 1)
            .offset(page.offset),
          db
            .select({ n: count() })
            .from(trainingTasks)
            .where(and(...where)),
        ]);
        return { tasks: rows, total: Number(totals[0]?.n ?? 0) };
      },
    },
    outbox: {
      async add(message) {
        // With a nudge to the dispatchers, sent when the transaction commits.
        const values = outboxRow.values(message);
        const text = `WITH m AS (INSERT INTO outbox (${outboxRow.columnList}) VALUES (${outboxRow.placeholders(1)}))
          SELECT pg_notify('${workChannel}', $${values.push(workPayload('outbox'))})`;
        await execute(statement(text, values));
      },
      async forSubject(accountId, subject) {
        return db
          .select()
          .from(outbox)
          .where(and(eq(outbox.accountId, accountId), eq(outbox.subject, subject)))
          .orderBy(asc(outbox.createdAt));
      },
      async failed(limit) {
        return db.select().from(outbox).where(isNotNull(outbox.failedAt)).orderBy(desc(outbox.failedAt)).limit(limit);
      },
      async claimDue(now, leaseUntil, limit) {
        // One statement: lease the due messages (skipping those another dispatcher is claiming)
        // and return them with their account's sending secrets.
        const text = `WITH due AS (
            SELECT id FROM outbox
            WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $1::timestamptz AND (lease_until IS NULL OR lease_until < $1::timestamptz)
            ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
          UPDATE outbox o SET lease_until = $2::timestamptz FROM due, accounts a
          WHERE o.id = due.id AND a.account_id = o.account_id
          RETURNING ${outboxRow.qualified('o')}, a.callback_auth_key, a.signing_secret`;
        const rows = await execute<Record<string, unknown> & { callback_auth_key: string; signing_secret: string }>(
          statement(text, [now.toISOString(), leaseUntil.toISOString(), limit]),
        );
        // Opened message by message: secrets that cannot be opened fail their own message, not the claim.
        return rows.map((r): ClaimedMessage => {
          const message = outboxRow.fromRow(r);
          try {
            return { message, callbackAuthKey: secrets.open(r.callback_auth_key), signingSecret: secrets.open(r.signing_secret) };
          } catch (err) {
            return { message, unreadableSecrets: err instanceof Error ? err.message : String(err) };
          }
        });
      },
      async recordAttempt(message, attempt, callbackCompleted) {
        // One statement, only the changed columns: no read, no lost update of the task's other fields.
        const values: unknown[] = attemptRow.values(attempt);
        const add = (v: unknown) => `$${values.push(v)}`;
        const iso = (d: Date | null) => d?.toISOString() ?? null;
        const text = `WITH attempt AS (INSERT INTO delivery_attempts (${attemptRow.columnList}) VALUES (${attemptRow.placeholders(1)})),
          message AS (
            UPDATE outbox SET attempts = ${add(message.attempts)}, first_attempt_at = ${add(iso(message.firstAttemptAt))}::timestamptz,
              lease_until = NULL, next_attempt_at = ${add(iso(message.nextAttemptAt))}::timestamptz, delivered_at = ${add(iso(message.deliveredAt))}::timestamptz,
              failed_at = ${add(iso(message.failedAt))}::timestamptz
            WHERE id = ${add(message.id)})
          UPDATE tasks SET callback_completed = ${add(callbackCompleted)}::boolean
          WHERE ${add(callbackCompleted)}::boolean IS NOT NULL AND task_id = ${add(message.subject)} AND account_id = ${add(message.accountId)} AND mode = ${add(message.mode)}`;
        await execute(statement(text, values));
      },
      async attemptsFor(accountId, subject) {
        return db
          .select()
          .from(deliveryAttempts)
          .where(and(eq(deliveryAttempts.accountId, accountId), eq(deliveryAttempts.subject, subject)))
          .orderBy(asc(deliveryAttempts.attemptedAt), asc(deliveryAttempts.id));
      },
    },
    accounts: {
      async findById(accountId: string) {
        const rows = await db.select(accountWithCount).from(accounts).where(eq(accounts.accountId, accountId));
        return rows[0] ?? null;
      },
      async authenticate(keyHash: string, options) {
        // One round trip: the account of the key (one of its two keys of old, or a scoped key that
        // is not revoked or expired) and, for a live key, the request counted (unless it is counted
        // later: then a read only).
        const find = `SELECT ${accountRow.qualified('a')}, NULL::text AS key_id, NULL::text AS key_name, NULL::text[] AS key_scopes,
            CASE WHEN a.test_key_hash = $1 THEN 'test' ELSE 'live' END AS key_mode
          FROM accounts a WHERE a.test_key_hash = $1 OR a.live_key_hash = $1
          UNION ALL
          SELECT ${accountRow.qualified('a')}, k.key_id, k.name, k.scopes, k.mode
          FROM api_keys k JOIN accounts a ON a.account_id = k.account_id
          WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2::timestamptz)`;
        const now = (options?.now ?? new Date()).toISOString();
        const [row] = await execute<
          Record<string, unknown> & { key_id: string | null; key_name: string | null; key_scopes: string[] | null; key_mode: Mode }
        >(
          options?.countLater
            ? statement(find, [keyHash, now])
            : statement(
                `WITH found AS (${find}),
                  counted AS (${countLiveRequestSql("SELECT account_id, $3, 1 FROM found WHERE key_mode = 'live'")})
                SELECT * FROM found`,
                [keyHash, now, liveShard()],
              ),
        );
        if (!row) return null;
        const { testKeyHash: _test, liveKeyHash: _live, ...account } = accountRow.fromRow(row);
        const mode = row.key_mode;
        return {
          account,
          mode,
          key: row.key_id
            ? { keyId: row.key_id, name: row.key_name ?? '', scopes: (row.key_scopes ?? []) as Scope[] }
            : { keyId: mode === 'test' ? 'legacy_test' : 'legacy_live', name: `${mode} key`, scopes: 'all' },
        };
      },
      async countLiveRequest(accountId: string) {
        await execute(statement(countLiveRequestSql('VALUES ($1, $2, 1)'), [accountId, liveShard()]));
      },
      async findByName(name: string) {
        const rows = await db.select(accountWithCount).from(accounts).where(eq(accounts.name, name));
        return rows[0] ?? null;
      },
      async insert({ liveRequestCount: _count, ...account }: AccountRecord) {
        await db.insert(accounts).values(sealed(account));
      },
      async update({ liveRequestCount: _count, ...account }: AccountRecord) {
        await db.update(accounts).set(sealed(account)).where(eq(accounts.accountId, account.accountId));
      },
      async list() {
        return db.select(accountWithCount).from(accounts).orderBy(asc(accounts.createdAt));
      },
      async count() {
        const rows = await db.select({ n: count() }).from(accounts);
        return Number(rows[0]?.n ?? 0);
      },
    },
  };
  return repos;
}

/** For a unit of work that queues no callback (a tool that only reads or seeds): asking for a payload is a bug. */
const noCallbackPayloads: CallbackPayloads = {
  task: () => {
    throw new Error('This unit of work was opened without callback payloads (unitOfWork(store, payloads)).');
  },
  batch: () => {
    throw new Error('This unit of work was opened without callback payloads (unitOfWork(store, payloads)).');
  },
};

/**
 * The repositories on a store. `payloads` renders queued callbacks (the HTTP layer's views, which
 * the store does not know: the composition root passes them in).
 */
export function unitOfWork(store: Store, payloads: CallbackPayloads = noCallbackPayloads, results?: ResultWriter): UnitOfWork {
  const outside = repositories(store.db, store.execute, store.secrets, payloads, results, null);
  return {
    ...outside,
    async transaction(work) {
      // The response files of the tasks the transaction completed, written once it has committed
      // (decision record 24): a slow bucket holds no connection (PGlite has only one).
      const afterCommit = new Map<string, Task>();
      const answer = await store.db.transaction((tx) => {
        const db = tx as unknown as Database;
        return work(repositories(db, executeIn(db), store.secrets, payloads, results, afterCommit));
      });
      for (const task of afterCommit.values())
        await results?.writeAndRecord(task, outside).catch((err: unknown) => results.failed(task, err));
      return answer;
    },
  };
}
