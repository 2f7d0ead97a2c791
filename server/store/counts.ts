// The list counters (task_counts) and the tag index (task_tags) that triggers on `tasks` keep
// (migrations 0008, 0015, 0016), checked against the tasks and rebuilt from them: the operator's
// `humantask counts`. Every change a server makes keeps them; a change made with the triggers off (a
// data-only restore with triggers disabled, a hand edit) is what this finds and mends.
import type { Mode } from '../domain/model.ts';
import type { CountCheck, CountDifference, CountsRepository } from '../domain/ports.ts';
import type { Execute } from './db.ts';
import { statement } from './rows.ts';

const key = 'account_id, mode, scope, batch, project, tag, status, type';

/** Every counter the tasks call for, next to what task_counts keeps: one statement, one snapshot. */
const checkCountersText = `WITH actual AS (
    SELECT t.account_id, t.mode, k.scope, k.batch, k.project, k.tag, t.status, t.type, count(*)::bigint AS n
    FROM tasks t CROSS JOIN LATERAL task_count_keys(t.project, t.batch, t.tags) k
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8),
  kept AS (SELECT ${key}, sum(count)::bigint AS n FROM task_counts GROUP BY ${key}),
  joined AS (
    SELECT ${key}, coalesce(kept.n, 0) AS kept, coalesce(actual.n, 0) AS actual
    FROM actual FULL JOIN kept USING (account_id, mode, scope, batch, project, tag, status, type))
  SELECT (SELECT count(*) FROM joined) AS compared,
    (SELECT count(*) FROM joined WHERE kept <> actual) AS differing,
    (SELECT coalesce(json_agg(d), '[]'::json) FROM (
       SELECT * FROM joined WHERE kept <> actual ORDER BY ${key} LIMIT $1::int) d) AS differences`;

const expectedTagRows = `SELECT DISTINCT t.account_id, t.mode, g.tag, t.created_at, t.task_id
    FROM tasks t CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(t.tags) = 'array' THEN t.tags END) AS g(tag)
    WHERE t.tags IS NOT NULL`;

const checkTagsText = `WITH expected AS (${expectedTagRows}),
  kept AS (SELECT account_id, mode, tag, created_at, task_id FROM task_tags)
  SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM kept) m) AS missing,
    (SELECT count(*) FROM (SELECT * FROM kept EXCEPT SELECT * FROM expected) x) AS extra`;

/** As migrations 0008 and 0015 filled them for the tasks stored before their triggers. */
const rebuildTexts = [
  // Writers of tasks (and so of the counters, by their triggers) wait until the rebuild commits;
  // readers go on.
  'LOCK TABLE tasks IN SHARE MODE',
  'DELETE FROM task_counts',
  `INSERT INTO task_counts (${key}, shard, count)
    SELECT t.account_id, t.mode, k.scope, k.batch, k.project, k.tag, t.status, t.type, 0, count(*)
    FROM tasks t CROSS JOIN LATERAL task_count_keys(t.project, t.batch, t.tags) k
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
  'DELETE FROM task_tags',
  `INSERT INTO task_tags (account_id, mode, tag, created_at, task_id) ${expectedTagRows}`,
];

interface DifferenceRow {
  account_id: string;
  mode: Mode;
  scope: number;
  batch: string;
  project: string;
  tag: string;
  status: string;
  type: string;
  kept: number | string;
  actual: number | string;
}

export function countsRepository(execute: Execute): CountsRepository {
  return {
    async check(limit) {
      // Both drivers hand json back parsed; a bigint comes as a number or a string (read with Number).
      const [counters] = await execute<{ compared: number | string; differing: number | string; differences: DifferenceRow[] }>(
        statement(checkCountersText, [limit]),
      );
      const [tags] = await execute<{ missing: number | string; extra: number | string }>(statement(checkTagsText, []));
      const differences: CountDifference[] = (counters?.differences ?? []).map((r) => ({
        accountId: r.account_id,
        mode: r.mode,
        scope: Number(r.scope),
        project: r.project,
        batch: r.batch,
        tag: r.tag,
        status: r.status,
        type: r.type,
        kept: Number(r.kept),
        actual: Number(r.actual),
      }));
      return {
        compared: Number(counters?.compared ?? 0),
        differing: Number(counters?.differing ?? 0),
        differences,
        tagRowsMissing: Number(tags?.missing ?? 0),
        tagRowsExtra: Number(tags?.extra ?? 0),
      } satisfies CountCheck;
    },
    async rebuild() {
      for (const text of rebuildTexts) await execute(statement(text, []));
    },
  };
}
