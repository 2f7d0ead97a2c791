// Issue 21: a task list filtered by tags is read from task_tags (one row per tag of a task, in the
// list's order, kept by triggers on `tasks`). After random creations, cancels, tag changes through
// the API and by SQL, and deletions, every tag-filtered page and total (alone, with status, type,
// project and time filters, several tags) equals the same filter on the tasks table itself, through
// both generations' paging; task_tags holds exactly the tasks' tags. On PostgreSQL, the plan of a tag
// page reads task_tags_list in order and sorts nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, updateAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import type { TaskFilters } from '../../server/domain/ports.ts';
import type { Statement } from '../../server/store/db.ts';
import { unitOfWork } from '../../server/store/repositories.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const body = {
  callback_url: 'https://example.com/cb',
  instruction: 'Pick',
  attachment_type: 'text',
  attachment: 'hello',
  categories: ['a', 'b'],
};
const tagNames = ['x', 'y', 'z'] as const;

/** Deterministic pseudo-random numbers (mulberry32), so that a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A list query: its tags and other filters, as the API takes them and as plain SQL on `tasks`. */
interface Query {
  tags: string[];
  status?: string;
  type?: string;
  project?: string;
  startTime?: string;
}

const queryString = (q: Query) =>
  [
    `tags=${q.tags.join(',')}`,
    ...(q.status ? [`status=${q.status}`] : []),
    ...(q.type ? [`type=${q.type}`] : []),
    ...(q.project ? [`project=${q.project}`] : []),
    ...(q.startTime ? [`start_time=${encodeURIComponent(q.startTime)}`] : []),
  ].join('&');

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('tag filters on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'tagged', new Date());
    // Test-mode tasks complete a moment after creation: some are canceled first.
    await updateAccount(server.uow, 'tagged', { testCompletionDelayMs: 20 });
  });
  afterAll(async () => {
    await server?.close();
  });
  const sql = (text: string, values: unknown[] = []) => server.store.execute<Record<string, unknown>>({ name: '', text, values });

  /** The ids of the matching tasks in list order, straight from `tasks`. */
  async function expected(mode: string, q: Query): Promise<string[]> {
    const values: unknown[] = [account.account_id, mode, JSON.stringify(q.tags)];
    const c = ['account_id = $1', 'mode = $2', 'tags @> $3::jsonb'];
    if (q.status) c.push(`status = $${values.push(q.status)}`);
    if (q.type) c.push(`type = $${values.push(q.type)}`);
    if (q.project) c.push(`project = $${values.push(q.project)}`);
    if (q.startTime) c.push(`created_at >= $${values.push(q.startTime)}::timestamptz`);
    const rows = await sql(`SELECT task_id FROM tasks WHERE ${c.join(' AND ')} ORDER BY created_at DESC, task_id DESC`, values);
    return rows.map((r) => r.task_id as string);
  }

  it('pages and totals equal the same filter on the tasks table after random changes, in both generations', async () => {
    const next = random(2121);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const someTags = () => tagNames.filter(() => next() < 0.45);
    const keys = { test: account.test_key, live: account.live_key };
    const calls = { test: client(server, 'current', keys.test), live: client(server, 'current', keys.live) };
    for (const call of Object.values(calls))
      for (const p of ['p1', 'p2'])
        expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: p } })).status).toBe(200);
    const ids: { id: string; mode: 'test' | 'live' }[] = [];
    let middle = '';
    for (let i = 0; i < 140; i++) {
      const mode = pick(['test', 'live'] as const);
      const r = next();
      const task = ids.length > 0 ? pick(ids) : undefined;
      if (r < 0.45 || !task) {
        const tags = someTags();
        const res = await calls[mode]('POST', '/v1/task/categorization', {
          json: { ...body, ...pick([{}, { project: 'p1' }, { project: 'p2' }]), ...(tags.length > 0 || next() < 0.3 ? { tags } : {}) },
        });
        expect(res.status, res.text).toBe(200);
        ids.push({ id: res.body.task_id, mode });
        if (ids.length === 30) middle = res.body.created_at;
      } else if (r < 0.55) {
        await calls[task.mode]('POST', `/v1/task/${task.id}/cancel`); // 400 once it completed: fine
      } else if (r < 0.75) {
        // Tags added or taken off through the API.
        const method = pick(['POST', 'DELETE']);
        const res = await calls[task.mode](method, `/v1/task/${task.id}/tags`, { json: someTags().concat(pick(tagNames)) });
        expect(res.status, res.text).toBe(200);
      } else if (r < 0.82) {
        expect((await calls[task.mode]('POST', `/v1/task/${task.id}/setMetadata`, { json: { n: i } })).status).toBe(200);
      } else if (r < 0.88) {
        // An operator's SQL changing many tasks' tags at once: z added to every task tagged y.
        await sql(
          `UPDATE tasks SET tags = CASE WHEN tags @> '["z"]' THEN tags ELSE tags || '["z"]'::jsonb END WHERE account_id = $1 AND mode = $2 AND tags @> '["y"]'`,
          [account.account_id, task.mode],
        );
      } else if (r < 0.92) {
        // ... or taking every tag off a task, or deleting it.
        await sql('UPDATE tasks SET tags = NULL WHERE task_id = $1', [task.id]);
      } else if (r < 0.96) {
        await sql('DELETE FROM tasks WHERE task_id = $1', [task.id]);
        ids.splice(ids.indexOf(task), 1);
      } else {
        expect((await calls[task.mode]('GET', `/v1/task/${task.id}`)).status).toBe(200); // completes a due test task
      }
    }
    await new Promise((r) => setTimeout(r, 50));
    for (const t of ids.filter((_, i) => i % 4 === 0)) await calls[t.mode]('GET', `/v1/task/${t.id}`);
    expect(middle).not.toBe('');

    const queries: Query[] = [
      ...tagNames.map((t) => ({ tags: [t] })),
      { tags: ['x', 'y'] },
      { tags: ['z', 'x', 'y'] },
      { tags: ['x'], status: 'pending' },
      { tags: ['z'], status: 'canceled' },
      { tags: ['y'], status: 'completed' },
      { tags: ['x'], project: 'p1' },
      { tags: ['z'], project: 'p2', status: 'pending' },
      { tags: ['x', 'z'], project: 'p2' },
      { tags: ['y'], startTime: middle },
      { tags: ['z'], startTime: middle, status: 'pending' },
      { tags: ['x'], type: 'categorization' },
      { tags: ['x'], type: 'textcollection' },
      { tags: ['nobody'] },
    ];
    let nonEmpty = 0;
    for (const mode of ['test', 'live'] as const) {
      for (const q of queries) {
        const want = await expected(mode, q);
        if (want.length > 2) nonEmpty++;
        const label = `${mode} ${queryString(q)}`;
        // Newer generation: next_token pages of 3, each with the total and its offset.
        const seen: string[] = [];
        let token: string | undefined;
        do {
          const res = await calls[mode](
            'GET',
            `/v1/tasks?limit=3&${queryString(q)}${token ? `&next_token=${encodeURIComponent(token)}` : ''}`,
          );
          expect(res.status, res.text).toBe(200);
          expect({ total: res.body.total, offset: res.body.offset }, label).toEqual({ total: want.length, offset: seen.length });
          seen.push(...res.body.docs.map((d: { task_id: string }) => d.task_id));
          token = res.body.next_token ?? undefined;
        } while (token);
        expect(seen, label).toEqual(want);
        // Older generation: offset pages.
        const legacy = client(server, 'legacy', keys[mode]);
        for (const offset of [0, 3]) {
          const res = await legacy('GET', `/v1/tasks?limit=3&offset=${offset}&${queryString(q)}`);
          expect(res.status, res.text).toBe(200);
          expect(res.body.total, label).toBe(want.length);
          expect(
            res.body.docs.map((d: { task_id: string }) => d.task_id),
            `${label} offset ${offset}`,
          ).toEqual(want.slice(offset, offset + 3));
        }
      }
    }
    // Not a test of empty lists.
    expect(nonEmpty).toBeGreaterThan(15);
    // task_tags: exactly one row per distinct tag of every task, with its account, mode and created_at.
    const rowsOf = async (text: string) => (await sql(text)).map((r) => JSON.stringify(Object.values(r).map(String)));
    const kept = await rowsOf(`SELECT account_id, mode, tag, created_at, task_id FROM task_tags ORDER BY task_id, tag`);
    const fromTasks = await rowsOf(`SELECT DISTINCT account_id, mode, t.tag, created_at, task_id
      FROM tasks, jsonb_array_elements_text(tags) AS t(tag) WHERE tags IS NOT NULL ORDER BY task_id, t.tag`);
    expect(kept).toEqual(fromTasks);
    expect(kept.length).toBeGreaterThan(40);
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe.skipIf(!hasPostgres())('the plan of a tag page on PostgreSQL', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('postgres');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('reads task_tags_list in list order and each task by its key: no sort, no scan of the tasks', async () => {
    const call = client(server, 'current', server.dev.live_key);
    const first = await call('POST', '/v1/task/categorization', { json: { ...body, tags: ['common'] } });
    expect(first.status, first.text).toBe(200);
    const sql = (text: string, values: unknown[] = []) => server.store.execute<Record<string, unknown>>({ name: '', text, values });
    // 20,000 clones of it: `common` on all, `rare` on 1 %, project p1 on a tenth.
    await sql(
      `INSERT INTO tasks SELECT (r).* FROM (SELECT jsonb_populate_record(t, jsonb_build_object(
          'task_id', t.task_id || '-' || i, 'created_at', t.created_at - make_interval(secs => i), 'project', CASE WHEN i % 10 = 0 THEN 'p1' END,
          'tags', CASE WHEN i % 100 = 0 THEN '["common", "rare"]'::jsonb ELSE '["common"]'::jsonb END)) AS r
        FROM tasks t, generate_series(1, 20000) i WHERE t.task_id = $1) clones`,
      [first.body.task_id],
    );
    await sql('ANALYZE tasks');
    await sql('ANALYZE task_tags');
    const captured: Statement[] = [];
    const uow = unitOfWork({
      ...server.store,
      execute: <R>(st: Statement) => {
        captured.push(st);
        return server.store.execute<R>(st);
      },
    });
    const plans: Record<string, PlanNode[]> = {};
    const filters: Record<string, TaskFilters> = {
      rare: { tags: ['rare'] },
      common: { tags: ['common'] },
      'rare + project (total counted through the tag)': { tags: ['rare'], projects: ['p1'] },
      'common + rare (the rarer drives)': { tags: ['common', 'rare'] },
    };
    for (const [name, f] of Object.entries(filters)) {
      captured.length = 0;
      const page = await uow.tasks.list(server.dev.account_id, 'live', f, { limit: 100, after: null });
      expect(page.tasks.length, name).toBeGreaterThan(0);
      const [st] = captured;
      const [row] = await sql(`EXPLAIN (ANALYZE, FORMAT JSON) ${st!.text}`, st!.values);
      plans[name] = nodesOf((row!['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
    }
    /** The rows read from task_tags_list (all loops). */
    const tagRowsRead = (nodes: PlanNode[]) =>
      nodes.filter((n) => n['Index Name'] === 'task_tags_list').reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
    for (const [name, nodes] of Object.entries(plans)) {
      const types = nodes.map((n) => n['Node Type']);
      expect(tagRowsRead(nodes), name).toBeGreaterThan(0);
      // Nothing sorts tasks (of several tags, their names are sorted by their counts).
      const sorted = nodes.filter((n) => n['Node Type'] === 'Sort').flatMap(nodesOf);
      expect(
        sorted.map((n) => n['Relation Name']).filter((r) => r === 'tasks' || r === 'task_tags'),
        name,
      ).toEqual([]);
      expect(types, name).not.toContain('Hash Join');
      expect(
        nodes.filter((n) => n['Relation Name'] === 'tasks').map((n) => n['Node Type']),
        name,
      ).not.toContain('Seq Scan');
    }
    // The page of a tag on 20,001 tasks reads its first 101 rows (the page and one to know there is more);
    // its total comes from the counters.
    expect(tagRowsRead(plans.common!)).toBe(101);
    // A total the counters do not keep counts the tag's rows only (200), the page reads them too.
    expect(tagRowsRead(plans['rare + project (total counted through the tag)']!)).toBeLessThanOrEqual(2 * 200);
    // Of two tags, the rarer is read (common's 20,001 rows are not).
    expect(tagRowsRead(plans['common + rare (the rarer drives)']!)).toBeLessThanOrEqual(2 * 200);
  });
});
