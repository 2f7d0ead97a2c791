// The overview's figures (GET /v1/overview) for one account and mode, in one statement (one snapshot):
// tasks by type and status and pending tasks by project from the counters the triggers keep
// (task_counts, store/schema.ts), completions per day through tasks_completed_at, callbacks given up
// on through outbox_failed, paused workers through workers_account. None reads every task.
import type { Mode } from '../domain/model.ts';
import type { OverviewRepository } from '../domain/ports.ts';
import type { Execute } from './db.ts';
import { statement } from './rows.ts';

const figuresText = `SELECT
  (SELECT coalesce(json_agg(x ORDER BY x.type, x.status), '[]'::json) FROM (
     SELECT type, status, sum(count)::bigint AS count FROM task_counts
     WHERE account_id = $1 AND mode = $2 AND scope = 0 GROUP BY type, status HAVING sum(count) > 0) x) AS tasks,
  (SELECT coalesce(json_agg(d), '[]'::json) FROM (
     SELECT to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS count FROM tasks
     WHERE account_id = $1 AND mode = $2 AND completed_at >= $3::timestamptz AND status = 'completed' GROUP BY 1) d) AS completed,
  (SELECT coalesce(json_agg(p ORDER BY p.count DESC, p.project), '[]'::json) FROM (
     SELECT project, sum(count)::bigint AS count FROM task_counts
     WHERE account_id = $1 AND mode = $2 AND scope = 1 AND status = 'pending'
     GROUP BY project HAVING sum(count) > 0 ORDER BY 2 DESC, 1 LIMIT $4::int) p) AS projects,
  (SELECT coalesce(sum(count) FILTER (WHERE scope = 0), 0) - coalesce(sum(count) FILTER (WHERE scope = 1), 0) FROM task_counts
     WHERE account_id = $1 AND mode = $2 AND scope IN (0, 1) AND status = 'pending') AS unprojected,
  (SELECT count(*) FROM outbox WHERE account_id = $1 AND mode = $2 AND failed_at >= $3::timestamptz) AS failed,
  (SELECT count(*) FROM workers WHERE account_id = $1 AND mode = $2 AND status = 'paused') AS paused`;

interface FiguresRow {
  tasks: { type: string; status: string; count: number }[];
  completed: { day: string; count: number }[];
  projects: { project: string; count: number }[];
  unprojected: number | string;
  failed: number | string;
  paused: number | string;
}

export function overviewRepository(execute: Execute): OverviewRepository {
  return {
    async figures(accountId: string, mode: Mode, since: Date, projects: number) {
      const [row] = await execute<FiguresRow>(statement(figuresText, [accountId, mode, since.toISOString(), projects]));
      if (!row) throw new Error('the overview statement answered no row');
      const unprojected = Number(row.unprojected);
      const pendingByProject: { project: string | null; count: number }[] = row.projects.map((p) => ({
        project: p.project,
        count: Number(p.count),
      }));
      if (unprojected > 0) pendingByProject.push({ project: null, count: unprojected });
      pendingByProject.sort((a, b) => b.count - a.count || (a.project ?? '').localeCompare(b.project ?? ''));
      return {
        tasks: row.tasks.map((t) => ({ type: t.type, status: t.status, count: Number(t.count) })),
        completedByDay: new Map(row.completed.map((d) => [d.day, Number(d.count)])),
        pendingByProject,
        failedCallbacks: Number(row.failed),
        pausedWorkers: Number(row.paused),
      };
    },
  };
}
