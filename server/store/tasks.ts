// The tasks' storage: creation statements (one task, or an import's group of them, with their
// Idempotency-Key claim, callbacks and live work), reads, the list with its filters, pages and
// counted totals, and updates. A completed task's response files are written by `writeFiles`
// (repositories.ts: after the statement, or once the transaction has committed).
import { and, asc, eq, inArray, isNotNull, lte, sql } from 'drizzle-orm';
import type { OutboxMessage, PageRequest, Repositories, SavedAnswer, TaskFilters } from '../domain/ports.ts';
import { UniqueIdTaken } from '../domain/ports.ts';
import type { Mode, Task } from '../domain/model.ts';
import type { Database, Execute } from './db.ts';
import { isUniqueViolation } from './errors.ts';
import { recordsetCodec, rowCodec, statement } from './rows.ts';
import { taskPriority, taskWorkInsert, tasksWorkInsert } from './work.ts';
import { workChannel, workPayload } from './notify.ts';
import { outbox, tasks } from './schema.ts';
import { answerRow } from './idempotency.ts';
import { outboxRow } from './outbox.ts';

const taskRow = rowCodec<Task>(tasks);

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
export const countLiveRequestSql = (row: string) =>
  `INSERT INTO live_request_counts (account_id, shard, count) ${row}
    ON CONFLICT (account_id, shard) DO UPDATE SET count = live_request_counts.count + 1`;
export const liveShard = () => Math.floor(Math.random() * 16);

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

/** The tasks' repository; \`writeFiles\` writes the response files of the tasks a statement wrote. */
export function taskRepository(db: Database, execute: Execute, writeFiles: (list: Task[]) => Promise<void>): Repositories['tasks'] {
  return {
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
  };
}
