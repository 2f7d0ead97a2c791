// The storage side of the quality loop (domain/quality/): policy versions, and the figures counted
// from the work event log (work_events, append-only; its (worker_id, at) and (task_id, at) indexes
// serve every statement here).
import { and, desc, eq } from 'drizzle-orm';
import {
  noWork,
  type ProjectWorkFigures,
  type QualityPolicy,
  type QualityPolicyRepository,
  type WorkCounts,
  type WorkerStatsRepository,
} from '../domain/quality/model.ts';
import type { Database, Execute } from './db.ts';
import { statement } from './rows.ts';
import { qualityPolicies } from './schema.ts';

/** The worker's events in the period, with the project of their task ($1 worker, $2 since, $3 until). */
const inPeriod = (alias: string) => `${alias}.worker_id = $1::text AND ${alias}.at >= $2::timestamptz AND ${alias}.at <= $3::timestamptz`;

/**
 * The project of an event's task: the live task's, or for a training or hidden evaluation
 * assignment the project it serves (their task ids are no live task's), so that an evaluation
 * counts as the live work it looks like.
 */
const withProject = (alias: string) =>
  `LEFT JOIN tasks t ON t.task_id = ${alias}.task_id
  LEFT JOIN assignments qa ON qa.assignment_id = ${alias}.assignment_id AND qa.purpose <> 'live'`;
const projectOf = `coalesce(t.project, qa.quality_project, '')`;

/** Events counted as they are: issued, submitted, ...; a `reviewed` of the worker's is a review they decided, a `redo_created` on them a rejection. */
const countsText = `SELECT ${projectOf} AS project, e.kind AS kind, count(*)::int AS n
  FROM work_events e ${withProject('e')}
  WHERE ${inPeriod('e')} AND e.kind IN ('issued', 'submitted', 'skipped', 'released', 'expired', 'reviewed', 'redo_created')
  GROUP BY 1, 2`;

/** The worker's answers a review accepted or fixed: their `completed` events joined to the review that decided them. */
const outcomesText = `SELECT coalesce(t.project, '') AS project, r.data->>'result' AS result, count(*)::int AS n
  FROM work_events c
  JOIN work_events r ON r.task_id = c.task_id AND r.kind = 'reviewed' AND r.data->>'reviewed_assignment_id' = c.assignment_id
  LEFT JOIN tasks t ON t.task_id = c.task_id
  WHERE ${inPeriod('c')} AND c.kind = 'completed'
  GROUP BY 1, 2`;

/** Per assignment, the latest active time an event recorded (heartbeats sample it, a submit records the total). */
const activeText = `SELECT project, sum(ms)::float8 AS ms FROM (
    SELECT DISTINCT ON (e.assignment_id) ${projectOf} AS project, (e.data->>'active_ms')::float8 AS ms
    FROM work_events e ${withProject('e')}
    WHERE ${inPeriod('e')} AND e.assignment_id IS NOT NULL AND e.data->>'active_ms' IS NOT NULL
    ORDER BY e.assignment_id, e.at DESC, e.id DESC) x
  GROUP BY project`;

const medianText = `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY (e.data->>'active_ms')::float8) AS median
  FROM work_events e WHERE ${inPeriod('e')} AND e.kind = 'submitted' AND e.data->>'active_ms' IS NOT NULL`;

const countOf: Record<string, keyof WorkCounts> = {
  issued: 'issued',
  submitted: 'submitted',
  skipped: 'skipped',
  released: 'released',
  expired: 'expired',
  reviewed: 'reviews',
  redo_created: 'rejected',
  accepted: 'accepted',
  fixed: 'fixed',
};

export function qualityRepository(db: Database, execute: Execute): QualityPolicyRepository & WorkerStatsRepository {
  return {
    async policyVersion(projectId, version) {
      const where =
        version === undefined
          ? eq(qualityPolicies.projectId, projectId)
          : and(eq(qualityPolicies.projectId, projectId), eq(qualityPolicies.version, version));
      const [row] = await db.select().from(qualityPolicies).where(where).orderBy(desc(qualityPolicies.version)).limit(1);
      return row ? { ...row, policy: row.policy as unknown as QualityPolicy } : null;
    },
    async addPolicyVersion(v) {
      await db.insert(qualityPolicies).values({ ...v, policy: v.policy as unknown as Record<string, unknown> });
    },
    async workerFigures(workerId, since, until) {
      const values = [workerId, since.toISOString(), until.toISOString()];
      const [counts, outcomes, active, median] = await Promise.all([
        execute<{ project: string; kind: string; n: number }>(statement(countsText, values)),
        execute<{ project: string; result: string; n: number }>(statement(outcomesText, values)),
        execute<{ project: string; ms: number }>(statement(activeText, values)),
        execute<{ median: number | string | null }>(statement(medianText, values)),
      ]);
      const byProject = new Map<string, ProjectWorkFigures>();
      const of = (project: string) => {
        const p = byProject.get(project) ?? { project, counts: noWork(), activeMs: 0 };
        byProject.set(project, p);
        return p;
      };
      for (const row of [...counts.map((r) => ({ ...r, key: r.kind })), ...outcomes.map((r) => ({ ...r, key: r.result }))]) {
        const key = countOf[row.key];
        if (key) of(row.project).counts[key] += Number(row.n);
      }
      for (const row of active) of(row.project).activeMs += Math.round(Number(row.ms));
      const m = median[0]?.median;
      return { projects: [...byProject.values()], medianActiveMs: m === null || m === undefined ? null : Math.round(Number(m)) };
    },
  };
}
