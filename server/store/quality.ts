// The storage side of the quality loop (domain/quality/): policy versions, and the figures counted
// from the work event log (work_events, append-only; its (worker_id, at) and (task_id, at) indexes
// serve every statement here).
import { and, desc, eq } from 'drizzle-orm';
import {
  noReviews,
  noWork,
  type CalibrationFigures,
  type ProjectQualityRepository,
  type ProjectWorkFigures,
  type QualificationState,
  type ReviewCounts,
  type WorkerProjectFigures,
  type QualityPolicy,
  type QualityPolicyRepository,
  type WorkCounts,
  type WorkerStatsRepository,
} from '../domain/quality/model.ts';
import type { Database, Execute } from './db.ts';
import { statement } from './rows.ts';
import { batches, qualityPolicies } from './schema.ts';

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
const countsText = `SELECT e.account_id AS account_id, ${projectOf} AS project, e.kind AS kind, count(*)::int AS n
  FROM work_events e ${withProject('e')}
  WHERE ${inPeriod('e')} AND e.kind IN ('issued', 'submitted', 'skipped', 'released', 'expired', 'reviewed', 'redo_created')
  GROUP BY 1, 2, 3`;

/** The worker's answers a review accepted or fixed: their `completed` events joined to the review that decided them. */
const outcomesText = `SELECT c.account_id AS account_id, coalesce(t.project, '') AS project, r.data->>'result' AS result, count(*)::int AS n
  FROM work_events c
  JOIN work_events r ON r.task_id = c.task_id AND r.kind = 'reviewed' AND r.data->>'reviewed_assignment_id' = c.assignment_id
  LEFT JOIN tasks t ON t.task_id = c.task_id
  WHERE ${inPeriod('c')} AND c.kind = 'completed'
  GROUP BY 1, 2, 3`;

/** Per assignment, the latest active time an event recorded (heartbeats sample it, a submit records the total). */
const activeText = `SELECT account_id, project, sum(ms)::float8 AS ms FROM (
    SELECT DISTINCT ON (e.assignment_id) e.account_id AS account_id, ${projectOf} AS project, (e.data->>'active_ms')::float8 AS ms
    FROM work_events e ${withProject('e')}
    WHERE ${inPeriod('e')} AND e.assignment_id IS NOT NULL AND e.data->>'active_ms' IS NOT NULL
    ORDER BY e.assignment_id, e.at DESC, e.id DESC) x
  GROUP BY account_id, project`;

const medianText = `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY (e.data->>'active_ms')::float8) AS median
  FROM work_events e WHERE ${inPeriod('e')} AND e.kind = 'submitted' AND e.data->>'active_ms' IS NOT NULL`;

// ---- The calibration gate and a project's quality figures (domain/quality/calibration.ts, metrics.ts) ----

/**
 * The calibration gate of the project of task_work row `tw`: open when the project has no
 * calibration batch, or one of them has completed with a score at or above its policy's
 * `calibration.gate_score` (the latest version; \`defaultGate\` without one). Read by the claim.
 */
export const calibrationGateOpen = (tw: string, defaultGate: number) => `(NOT EXISTS (SELECT 1 FROM batches b
      WHERE b.account_id = ${tw}.account_id AND b.mode = 'live' AND b.project = ${tw}.project AND b.calibration_batch)
    OR EXISTS (SELECT 1 FROM batches b
      WHERE b.account_id = ${tw}.account_id AND b.mode = 'live' AND b.project = ${tw}.project AND b.calibration_batch AND b.status = 'completed'
        AND coalesce(b.calibration_score, 0) >= coalesce((SELECT (q.policy->'calibration'->>'gate_score')::float8
          FROM projects p JOIN quality_policies q ON q.project_id = p.project_id
          WHERE p.account_id = ${tw}.account_id AND p.mode = 'live' AND p.name = ${tw}.project ORDER BY q.version DESC LIMIT 1), ${Number(defaultGate)})))`;

/** The attempt a decision is about: a review names it, a customer's audit is written on it. */
const decidedAttempt = `coalesce(e.data->>'reviewed_assignment_id', e.assignment_id, e.task_id)`;

/** A decision's score: as written (accepted 1, fixed: against the fix, rejected 0), or by its result for events written without one. */
const decisionScore = `coalesce((e.data->>'score')::float8, CASE e.data->>'result' WHEN 'accepted' THEN 1 WHEN 'rejected' THEN 0 END)`;

/** $1 account, $2 batch: the latest decision on each attempt of the batch's tasks, averaged, stored on the batch. */
const recountText = `WITH decided AS (
    SELECT DISTINCT ON (${decidedAttempt}) ${decisionScore} AS score
    FROM tasks t JOIN work_events e ON e.task_id = t.task_id
    WHERE t.account_id = $1::text AND t.mode = 'live' AND t.batch = $2::text AND e.kind IN ('reviewed', 'audited')
    ORDER BY ${decidedAttempt}, e.at DESC, e.id DESC),
  agg AS (SELECT count(score)::int AS reviewed, round(avg(score)::numeric, 6)::float8 AS score FROM decided)
  UPDATE batches b SET calibration_reviewed = agg.reviewed, calibration_score = agg.score FROM agg
  WHERE b.account_id = $1::text AND b.mode = 'live' AND b.name = $2::text AND b.calibration_batch
  RETURNING b.name AS batch, b.status AS status, b.calibration_reviewed AS reviewed, b.calibration_score AS score`;

/** The project's tasks' events in the period ($1 account, $2 project, $3 since, $4 until). */
const projectEvents = `tasks t JOIN work_events e ON e.task_id = t.task_id
    WHERE t.account_id = $1::text AND t.mode = 'live' AND t.project = $2::text AND e.at >= $3::timestamptz AND e.at <= $4::timestamptz`;

/** The latest 'combined' event of each task: overall agreement, and per field (q-consensus writes them). */
const agreementText = `WITH latest AS (
    SELECT DISTINCT ON (e.task_id) e.data AS data FROM ${projectEvents} AND e.kind = 'combined'
    ORDER BY e.task_id, e.at DESC, e.id DESC)
  SELECT NULL AS field, count(*)::int AS tasks, avg((data->>'agreement')::float8) AS mean FROM latest
  UNION ALL
  SELECT f.key, count(*)::int, avg((f.value #>> '{}')::float8) FROM latest, jsonb_each(CASE WHEN jsonb_typeof(latest.data->'fields') = 'object' THEN latest.data->'fields' ELSE '{}'::jsonb END) f
    WHERE jsonb_typeof(f.value) = 'number' GROUP BY f.key`;

/** Per worker who submitted an answer to the project's tasks: submits, the latest issue, active time (latest per assignment). */
const workersText = `WITH ev AS (SELECT e.* FROM ${projectEvents} AND e.worker_id IS NOT NULL),
  active AS (SELECT worker_id, sum(ms)::float8 AS ms FROM (
      SELECT DISTINCT ON (ev.assignment_id) ev.worker_id, (ev.data->>'active_ms')::float8 AS ms FROM ev
      WHERE ev.assignment_id IS NOT NULL AND ev.data->>'active_ms' IS NOT NULL
      ORDER BY ev.assignment_id, ev.at DESC, ev.id DESC) x GROUP BY worker_id)
  SELECT ev.worker_id, (w.account_id IS NOT DISTINCT FROM $1::text) AS own,
    count(*) FILTER (WHERE ev.kind = 'submitted')::int AS submitted, coalesce(max(active.ms), 0)::float8 AS active_ms,
    (SELECT q.state FROM worker_qualifications q WHERE q.worker_id = ev.worker_id AND q.account_id = $1::text AND q.project = $2::text) AS state
  FROM ev LEFT JOIN workers w ON w.worker_id = ev.worker_id LEFT JOIN active ON active.worker_id = ev.worker_id
  GROUP BY ev.worker_id, w.account_id
  HAVING count(*) FILTER (WHERE ev.kind = 'submitted') > 0`;

/**
 * Decisions on the project's answers in the period, by the worker whose answer was decided: a
 * review names the attempt, a customer's audit is written on the author ($1..$4 as above).
 */
const decisionsText = `SELECT CASE WHEN d.kind = 'reviewed' THEN a.worker_id ELSE d.worker_id END AS worker_id, d.data->>'result' AS result, count(*)::int AS n
  FROM (SELECT e.* FROM ${projectEvents} AND e.kind IN ('reviewed', 'audited')) d
  LEFT JOIN assignments a ON a.assignment_id = d.data->>'reviewed_assignment_id'
  GROUP BY 1, 2`;

/**
 * The time of the worker's latest reset by a lead in the project ('unpaused' event) up to $4, or
 * -infinity: the rolling accuracy counts the evaluation scores given from then on. (Worker `w.id`,
 * $1 account, $2 project.)
 */
const resetAt = `coalesce((SELECT max(u.at) FROM work_events u
      WHERE u.worker_id = w.id AND u.at <= $4::timestamptz AND u.kind = 'unpaused' AND u.account_id = $1::text AND u.data->>'project' = $2::text),
    '-infinity'::timestamptz)`;

/**
 * The quality loop's own events of the workers ($5), for the project ($2, in data.project): the
 * latest $6 evaluation scores up to $4 (since the latest reset), and evaluation scores in the period.
 */
const scoredText = `SELECT w.id AS worker_id,
    (SELECT coalesce(json_agg(s.score), '[]') FROM (SELECT (e.data->>'score')::float8 AS score FROM work_events e
      WHERE e.worker_id = w.id AND e.at <= $4::timestamptz AND e.at >= ${resetAt} AND e.kind = 'scored' AND e.account_id = $1::text
        AND e.data->>'project' = $2::text AND e.data->>'purpose' = 'evaluation'
      ORDER BY e.at DESC, e.id DESC LIMIT $6::int) s) AS evaluation,
    (SELECT count(*) FILTER (WHERE e.data->>'purpose' = 'evaluation')::int FROM work_events e
      WHERE e.worker_id = w.id AND e.at >= $3::timestamptz AND e.at <= $4::timestamptz AND e.kind = 'scored' AND e.account_id = $1::text AND e.data->>'project' = $2::text) AS evaluated
  FROM unnest($5::text[]) AS w(id)`;

/**
 * Per worker ($5), their answers in the latest 'combined' event of each of the project's tasks in
 * the period: how many, how many reached the event's threshold against the combined answer, the
 * mean score against it, and the mean of their mean scores against the other answers.
 */
const consensusText = `WITH latest AS (
    SELECT DISTINCT ON (e.task_id) e.data AS data FROM ${projectEvents} AND e.kind = 'combined'
    ORDER BY e.task_id, e.at DESC, e.id DESC)
  SELECT m->>'worker_id' AS worker_id, count(*)::int AS tasks,
    count(*) FILTER (WHERE (m->>'score')::float8 >= (latest.data->>'threshold')::float8)::int AS agreed,
    avg((m->>'score')::float8) AS score, avg((m->>'agreement')::float8) AS agreement
  FROM latest, jsonb_array_elements(CASE WHEN jsonb_typeof(latest.data->'answers') = 'array' THEN latest.data->'answers' ELSE '[]'::jsonb END) m
  WHERE m->>'worker_id' = ANY($5::text[])
  GROUP BY 1`;

const reviewKey: Record<string, keyof ReviewCounts> = { accepted: 'accepted', fixed: 'fixed', rejected: 'rejected' };

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

export function qualityRepository(
  db: Database,
  execute: Execute,
): QualityPolicyRepository & WorkerStatsRepository & ProjectQualityRepository {
  return {
    async recountCalibration(accountId, batch) {
      const [row] = await execute<CalibrationFigures>(statement(recountText, [accountId, batch]));
      return row ? { ...row, reviewed: Number(row.reviewed), score: row.score === null ? null : Number(row.score) } : null;
    },
    async calibrationBatches(accountId, mode, project, limit) {
      const rows = await db
        .select({ batch: batches.name, status: batches.status, reviewed: batches.calibrationReviewed, score: batches.calibrationScore })
        .from(batches)
        .where(
          and(eq(batches.accountId, accountId), eq(batches.mode, mode), eq(batches.project, project), eq(batches.calibrationBatch, true)),
        )
        .orderBy(desc(batches.createdAt), desc(batches.name))
        .limit(limit);
      return rows;
    },
    async agreement(accountId, project, since, until, maxFields) {
      const rows = await execute<{ field: string | null; tasks: number; mean: number | null }>(
        statement(agreementText, [accountId, project, since.toISOString(), until.toISOString()]),
      );
      const overall = rows.find((r) => r.field === null);
      const byField = rows
        .filter((r): r is { field: string; tasks: number; mean: number } => r.field !== null && r.mean !== null)
        .map((r) => ({ field: r.field, tasks: Number(r.tasks), mean: Number(r.mean) }))
        .sort((a, b) => b.tasks - a.tasks || (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))
        .slice(0, maxFields);
      const tasks = Number(overall?.tasks ?? 0);
      return { tasks, mean: tasks > 0 && overall?.mean !== null && overall?.mean !== undefined ? Number(overall.mean) : null, byField };
    },
    async projectWorkers(accountId, project, since, until, window) {
      const values = [accountId, project, since.toISOString(), until.toISOString()];
      const [workers, decisions] = await Promise.all([
        execute<{ worker_id: string; own: boolean; submitted: number; active_ms: number; state: QualificationState | null }>(
          statement(workersText, values),
        ),
        execute<{ worker_id: string | null; result: string; n: number }>(statement(decisionsText, values)),
      ]);
      const ids = workers.map((w) => w.worker_id);
      const [scored, consensus] =
        ids.length === 0
          ? [[], []]
          : await Promise.all([
              execute<{ worker_id: string; evaluation: unknown; evaluated: number }>(statement(scoredText, [...values, ids, window])),
              execute<{ worker_id: string; tasks: number; agreed: number; score: number | null; agreement: number | null }>(
                statement(consensusText, [...values, ids]),
              ),
            ]);
      const scoredOf = new Map(scored.map((r) => [r.worker_id, r]));
      const consensusOf = new Map(consensus.map((r) => [r.worker_id, r]));
      const orNull = (x: number | string | null | undefined) => (x === null || x === undefined ? null : Number(x));
      const reviewsOf = new Map<string, ReviewCounts>();
      const review = noReviews();
      for (const d of decisions) {
        const key = reviewKey[d.result];
        if (!key) continue;
        review[key] += Number(d.n);
        if (d.worker_id === null) continue;
        const counts = reviewsOf.get(d.worker_id) ?? noReviews();
        counts[key] += Number(d.n);
        reviewsOf.set(d.worker_id, counts);
      }
      const figures = workers.map((w): WorkerProjectFigures => {
        const s = scoredOf.get(w.worker_id);
        const evaluation = typeof s?.evaluation === 'string' ? (JSON.parse(s.evaluation) as unknown) : s?.evaluation;
        const c = consensusOf.get(w.worker_id);
        return {
          workerId: w.worker_id,
          own: w.own,
          submitted: Number(w.submitted) + Number(s?.evaluated ?? 0),
          activeMs: Math.round(Number(w.active_ms)),
          state: w.state ?? null,
          evaluationScores: Array.isArray(evaluation) ? evaluation.map(Number) : [],
          review: reviewsOf.get(w.worker_id) ?? noReviews(),
          consensus: {
            tasks: Number(c?.tasks ?? 0),
            agreed: Number(c?.agreed ?? 0),
            score: orNull(c?.score),
            agreement: orNull(c?.agreement),
          },
        };
      });
      return { workers: figures, review };
    },
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
    async evaluationScores(workerId, accountId, project, until, window) {
      const at = until.toISOString();
      const [row] = await execute<{ evaluation: unknown }>(statement(scoredText, [accountId, project, at, at, [workerId], window]));
      const evaluation = typeof row?.evaluation === 'string' ? (JSON.parse(row.evaluation) as unknown) : row?.evaluation;
      return Array.isArray(evaluation) ? evaluation.map(Number) : [];
    },
    async workerFigures(workerId, since, until) {
      const values = [workerId, since.toISOString(), until.toISOString()];
      type Row = { account_id: string; project: string };
      const [counts, outcomes, active, median] = await Promise.all([
        execute<Row & { kind: string; n: number }>(statement(countsText, values)),
        execute<Row & { result: string; n: number }>(statement(outcomesText, values)),
        execute<Row & { ms: number }>(statement(activeText, values)),
        execute<{ median: number | string | null }>(statement(medianText, values)),
      ]);
      // One entry per (account, project): the operator's workforce works for several accounts.
      const byProject = new Map<string, ProjectWorkFigures>();
      const of = ({ account_id: accountId, project }: Row) => {
        const key = `${accountId}\n${project}`;
        const p = byProject.get(key) ?? { accountId, project, counts: noWork(), activeMs: 0 };
        byProject.set(key, p);
        return p;
      };
      for (const row of [...counts.map((r) => ({ ...r, key: r.kind })), ...outcomes.map((r) => ({ ...r, key: r.result }))]) {
        const key = countOf[row.key];
        if (key) of(row).counts[key] += Number(row.n);
      }
      for (const row of active) of(row).activeMs += Math.round(Number(row.ms));
      const m = median[0]?.median;
      return { projects: [...byProject.values()], medianActiveMs: m === null || m === undefined ? null : Math.round(Number(m)) };
    },
  };
}
