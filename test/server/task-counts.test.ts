// Issue 21: a task list's `total` (and a batch's task counts) come from counters that triggers on
// `tasks` keep (task_counts), not from counting the tasks (for status, type, project, batch, one tag). After random creations, cancels,
// completions, tag and metadata changes, deletions and bulk updates, and after `kill -9` during a
// burst of creations, every total the counters answer equals the count of the matching tasks.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkCounts } from '../../server/admin.ts';
import { createAccount, updateAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { clusterAt } from '../support/postgres.ts';
import { serve } from '../support/process.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const types = ['categorization', 'textcollection'] as const;
const statuses = ['pending', 'completed', 'canceled', 'error'] as const;
const bodies = {
  categorization: {
    callback_url: 'https://example.com/cb',
    instruction: 'Pick',
    attachment_type: 'text',
    attachment: 'hello',
    categories: ['a', 'b'],
  },
  textcollection: {
    callback_url: 'https://example.com/cb',
    attachments: [{ type: 'text', content: 'x' }],
    fields: [{ type: 'text', field_id: 't', title: 'T' }],
  },
};
/** A test-mode task whose attachment cannot be fetched: it ends in error. */
const failing = { ...bodies.categorization, attachment_type: 'image', attachment: 'https://files.invalid/scan.png' };

/** Deterministic pseudo-random numbers (mulberry32), so that a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Call = ReturnType<typeof client>;

/** The filter combinations task_counts answers: none, status, type, project, batch, one tag and their mixes. */
function countedQueries(projects: string[], batches: string[], tags: string[]): string[] {
  const scopes = [
    [],
    ...projects.map((p) => [`project=${p}`]),
    ...batches.map((b) => [`batch=${b}`]),
    ...batches.flatMap((b) => projects.map((p) => [`batch=${b}`, `project=${p}`])),
    ...tags.map((t) => [`tags=${t}`]),
  ];
  const out: string[] = [];
  for (const status of [undefined, ...statuses]) {
    for (const type of [undefined, ...types]) {
      for (const scope of scopes) {
        out.push([...(status ? [`status=${status}`] : []), ...(type ? [`type=${type}`] : []), ...scope].join('&'));
      }
    }
  }
  return out;
}

/**
 * Each counted query's total next to the total of the same query plus a filter the counters do not
 * keep and every task passes (`start_time` long ago), which counts the matching tasks.
 */
async function totalsAgainstCounts(call: Call, queries: string[]) {
  const kept: Record<string, number> = {};
  const counted: Record<string, number> = {};
  for (const q of queries) {
    const [a, b] = await Promise.all([call('GET', `/v1/tasks?limit=1&${q}`), call('GET', `/v1/tasks?limit=1&start_time=2000-01-01&${q}`)]);
    expect(a.status, a.text).toBe(200);
    expect(b.status, b.text).toBe(200);
    kept[q] = a.body.total;
    counted[q] = b.body.total;
  }
  return { kept, counted };
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('list totals kept by counters on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, 'counted', new Date());
    // Test-mode tasks wait a moment before they complete: some are canceled first, the others are
    // completed by a later read (an update of their status).
    await updateAccount(server.uow, 'counted', { testCompletionDelayMs: 20 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('every counted total equals the count of the matching tasks after random changes of every kind', async () => {
    const next = random(21);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const calls = { test: client(server, 'current', account.test_key), live: client(server, 'current', account.live_key) };
    for (const call of Object.values(calls)) {
      for (const p of ['p1', 'p2'])
        expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: p } })).status).toBe(200);
      for (const [b, p] of [
        ['b1', 'p1'],
        ['b2', 'p2'],
      ])
        expect((await call('POST', '/v1/batches', { json: { project: p, name: b } })).status).toBe(200);
    }
    const ids: { id: string; mode: 'test' | 'live' }[] = [];
    const sql = (text: string, values: unknown[]) => server.store.execute({ name: '', text, values });
    for (let i = 0; i < 160; i++) {
      const mode = pick(['test', 'live'] as const);
      const call = calls[mode];
      const r = next();
      const task = ids.length > 0 ? pick(ids) : undefined;
      if (r < 0.45 || !task) {
        const type = pick(types);
        const scope = pick([{}, { project: 'p1' }, { project: 'p2' }, { batch: 'b1' }, { batch: 'b2' }, { project: 'p1', batch: 'b1' }]);
        const body = mode === 'test' && type === 'categorization' && next() < 0.2 ? failing : bodies[type];
        const res = await call('POST', `/v1/task/${type}`, {
          json: { ...body, ...(type === 'categorization' ? scope : {}), ...(next() < 0.5 ? { tags: [pick(['x', 'y'])] } : {}) },
        });
        expect(res.status, res.text).toBe(200);
        ids.push({ id: res.body.task_id, mode });
      } else if (r < 0.6) {
        await calls[task.mode]('POST', `/v1/task/${task.id}/cancel`); // 400 once it completed: fine
      } else if (r < 0.7) {
        expect((await calls[task.mode]('GET', `/v1/task/${task.id}`)).status).toBe(200); // completes a due test task
      } else if (r < 0.8) {
        // Tags added or taken off.
        expect(
          (await calls[task.mode](pick(['POST', 'DELETE']), `/v1/task/${task.id}/tags`, { json: [pick(['x', 'y', 'z'])] })).status,
        ).toBe(200);
      } else if (r < 0.9) {
        expect((await calls[task.mode]('POST', `/v1/task/${task.id}/setMetadata`, { json: { n: i } })).status).toBe(200);
      } else if (r < 0.95) {
        // No API deletes a task; an operator's SQL may, and the counters follow.
        await sql('DELETE FROM tasks WHERE task_id = $1', [task.id]);
        ids.splice(ids.indexOf(task), 1);
      } else {
        // A statement changing many tasks' counted columns at once (status, project, batch).
        await sql(
          `UPDATE tasks SET status = 'canceled', project = 'p2', batch = NULL WHERE account_id = $1 AND mode = $2 AND status = 'pending' AND project = 'p1'`,
          [account.account_id, mode],
        );
      }
    }
    // Let the delayed test tasks fall due, and complete some by reading them.
    await new Promise((r) => setTimeout(r, 50));
    for (const t of ids.filter((_, i) => i % 3 === 0)) await calls[t.mode]('GET', `/v1/task/${t.id}`);

    const queries = countedQueries(['p1', 'p2'], ['b1', 'b2'], ['x', 'y', 'z']);
    const seen = new Set<string>();
    for (const [mode, call] of Object.entries(calls)) {
      const { kept, counted } = await totalsAgainstCounts(call, queries);
      expect(kept, mode).toEqual(counted);
      expect(kept[''], mode).toBeGreaterThan(20);
      for (const s of statuses) if (kept[`status=${s}`]! > 0) seen.add(s);
      // A batch's counts by status.
      for (const b of ['b1', 'b2']) {
        const res = await call('GET', `/v1/batches/${b}/status`);
        expect(res.status, res.text).toBe(200);
        expect(Object.fromEntries(statuses.map((s) => [s, res.body[s]])), `${mode} ${b}`).toEqual(
          Object.fromEntries(statuses.map((s) => [s, counted[`status=${s}&batch=${b}`]])),
        );
      }
    }
    // Not all zeros: the run left tasks of every status.
    expect([...seen].sort()).toEqual([...statuses].sort());
    // And the counter rows of the whole database, against the tasks grouped the same way.
    const byKey = async (text: string) => (await sql(text, [])).map((r) => JSON.stringify(Object.values(r).map(String)));
    const keys = 'account_id, mode, scope, batch, project, tag, status, type';
    const kept = await byKey(`SELECT ${keys}, sum(count) AS n FROM task_counts GROUP BY ${keys} HAVING sum(count) <> 0 ORDER BY ${keys}`);
    const counted = await byKey(`SELECT ${keys}, count(*) AS n FROM (
        SELECT account_id, mode, 0 AS scope, '' AS batch, '' AS project, '' AS tag, status, type FROM tasks
        UNION ALL SELECT account_id, mode, 1, '', project, '', status, type FROM tasks WHERE project IS NOT NULL
        UNION ALL SELECT account_id, mode, 2, batch, coalesce(project, ''), '', status, type FROM tasks WHERE batch IS NOT NULL
        UNION ALL SELECT account_id, mode, 3, '', '', t.tag, status, type FROM tasks, jsonb_array_elements_text(tags) AS t(tag) WHERE tags IS NOT NULL) t
      GROUP BY ${keys} ORDER BY ${keys}`);
    expect(kept).toEqual(counted);
    // The operator's check (`humantask counts`) finds them in order too.
    expect(await checkCounts(server.uow, { repair: false, limit: 10 })).toMatchObject({
      in_order: true,
      differing: 0,
      tag_rows_missing: 0,
      tag_rows_extra: 0,
      differences: [],
    });
  });

  it('`humantask counts` names a counter and tag rows changed behind the triggers, and --repair rebuilds both', async () => {
    const call = client(server, 'current', account.live_key);
    const tagged = await call('POST', '/v1/task/categorization', { json: { ...bodies.categorization, tags: ['tamper'] } });
    expect(tagged.status, tagged.text).toBe(200);
    const sql = (text: string, values: unknown[] = []) => server.store.execute({ name: '', text, values });
    const total = async (q: string) => (await call('GET', `/v1/tasks?limit=1&${q}`)).body.total as number;
    const [all, withTag] = [await total(''), await total('tags=tamper')];
    // As a data-only restore with the triggers off, or an edit by hand, would leave them.
    await sql(
      `UPDATE task_counts SET count = count + 3
       WHERE (account_id, mode, scope, status, type, shard) IN (
         SELECT account_id, mode, scope, status, type, shard FROM task_counts
         WHERE account_id = $1 AND mode = 'live' AND scope = 0 AND status = 'pending' AND type = 'categorization' LIMIT 1)`,
      [account.account_id],
    );
    await sql(`DELETE FROM task_tags WHERE account_id = $1 AND tag = 'tamper'`, [account.account_id]);
    await sql(`INSERT INTO task_tags (account_id, mode, tag, created_at, task_id) VALUES ($1, 'live', 'ghost', now(), 'nosuchtask')`, [
      account.account_id,
    ]);
    expect(await total('')).toBe(all + 3);

    const found = await checkCounts(server.uow, { repair: false, limit: 10 });
    expect(found).toMatchObject({ in_order: false, repaired: false, differing: 1, tag_rows_missing: 1, tag_rows_extra: 1 });
    expect(found.differences).toEqual([
      {
        account_id: account.account_id,
        mode: 'live',
        scope: 'all',
        project: '',
        batch: '',
        tag: '',
        status: 'pending',
        type: 'categorization',
        kept: expect.any(Number),
        actual: expect.any(Number),
      },
    ]);
    expect(found.differences[0]!.kept - found.differences[0]!.actual).toBe(3);

    const repaired = await checkCounts(server.uow, { repair: true, limit: 10 });
    expect(repaired).toMatchObject({ in_order: true, repaired: true, differing: 0, tag_rows_missing: 0, tag_rows_extra: 0 });
    expect(repaired.before).toMatchObject({ differing: 1, tag_rows_missing: 1, tag_rows_extra: 1 });
    // What clients see is right again, and the counters still follow new tasks.
    expect(await total('')).toBe(all);
    expect(await total('tags=tamper')).toBe(withTag);
    expect((await call('POST', '/v1/task/categorization', { json: { ...bodies.categorization, tags: ['tamper'] } })).status).toBe(200);
    expect([await total(''), await total('tags=tamper')]).toEqual([all + 1, withTag + 1]);
    expect((await checkCounts(server.uow, { repair: false, limit: 10 })).in_order).toBe(true);
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('a next_token without a running count on %s', (db) => {
  it('gets its offset counted: the tasks before its position (a token of an older server)', async () => {
    const server = await startTestServer(db);
    try {
      const call = client(server, 'current', server.dev.live_key);
      for (let i = 0; i < 7; i++) expect((await call('POST', '/v1/task/categorization', { json: bodies.categorization })).status).toBe(200);
      const first = await call('GET', '/v1/tasks?limit=3&status=pending');
      const token = JSON.parse(Buffer.from(first.body.next_token, 'base64url').toString('utf8'));
      delete token.o;
      const second = await call(
        'GET',
        `/v1/tasks?limit=3&status=pending&next_token=${Buffer.from(JSON.stringify(token)).toString('base64url')}`,
      );
      expect(second.status, second.text).toBe(200);
      expect({ total: second.body.total, offset: second.body.offset, docs: second.body.docs.length }).toEqual({
        total: 7,
        offset: 3,
        docs: 3,
      });
    } finally {
      await server.close();
    }
  });
});

const dirs: string[] = [];
afterAll(() =>
  dirs.forEach((d) => {
    rmSync(d, { recursive: true, force: true });
  }),
);

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('list totals after kill -9 on %s', (db) => {
  it('equal the count of the matching tasks after a kill during a burst of creations and a restart', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-counts-kill-'));
    dirs.push(dataDir);
    const env: Record<string, string> =
      db === 'postgres' ? { DATABASE_URL: await clusterAt(inject('postgresUrl')).createDatabase() } : { DATA_DIR: dataDir };
    const first = await serve(env);
    const key = /live key: +(live_[0-9a-f]{32})/.exec(first.output())![1]!;
    const call = client(first, 'current', key);
    expect((await call('POST', '/v1/projects', { json: { type: 'categorization', name: 'p1' } })).status).toBe(200);
    expect((await call('POST', '/v1/batches', { json: { project: 'p1', name: 'b1' } })).status).toBe(200);
    // Eight clients creating (and canceling every third) until the kill; it comes after 100 answers.
    let answered = 0;
    const acknowledged = new Set<string>();
    const exited = once(first.child, 'exit');
    const burst = Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; ; i++) {
        try {
          const scope = [{}, { project: 'p1', tags: ['x'] }, { batch: 'b1' }][(c + i) % 3];
          const res = await call('POST', '/v1/task/categorization', { json: { ...bodies.categorization, ...scope } });
          if (res.status === 200) acknowledged.add(res.body.task_id);
          if (res.status === 200 && i % 3 === 0) await call('POST', `/v1/task/${res.body.task_id}/cancel`);
          if (++answered === 100) first.child.kill('SIGKILL');
        } catch {
          return; // the server is gone
        }
      }
    });
    await Promise.all([...burst, exited]);
    const second = await serve(env);
    try {
      const again = client(second, 'current', key);
      const { kept, counted } = await totalsAgainstCounts(
        again,
        countedQueries(['p1'], ['b1'], ['x']).filter((q) => !q.includes('type=textcollection')),
      );
      expect(kept).toEqual(counted);
      expect(kept['']).toBeGreaterThanOrEqual(acknowledged.size);
      expect(acknowledged.size).toBeGreaterThan(50);
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    }
  });
});
