// The storage side of training, hidden evaluation and pausing (domain/quality/qualification.ts):
// a worker's standing per project (worker_qualifications), the account's training and evaluation
// tasks of a type (training_tasks), and the scores kept on the assignments (assignments_scores).
import { and, asc, eq, inArray, or } from 'drizzle-orm';
import type { Qualification, QualificationRepository, QualityTask } from '../domain/quality/model.ts';
import type { Assignment } from '../domain/workforce/model.ts';
import type { Database, Execute } from './db.ts';
import { isUniqueViolation } from './errors.ts';
import { workChannel, workPayload } from './notify.ts';
import { rowCodec, statement } from './rows.ts';
import { assignments, trainingTasks, workerQualifications } from './schema.ts';

const assignmentRow = rowCodec<Assignment>(assignments);

const issueText = `WITH ins AS (
    INSERT INTO assignments (${assignmentRow.columnList}) VALUES (${assignmentRow.placeholders(1)}) RETURNING *)
  INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind)
  SELECT ins.issued_at, ins.account_id, ins.worker_id, ins.assignment_id, ins.task_id, 'issued' FROM ins`;

/**
 * $1 worker, $2 account, $3 project, $4 since, $5 now, $6 the returned answer's feedback (JSON).
 * The answers taken back: the one under review (its review canceled, the task back to one open
 * slot), and an attempt of an overlapping task still waiting for the other answers (one more open
 * slot: another worker answers in its place).
 */
const requeueText = `WITH mine AS (
    SELECT a.assignment_id, a.task_id, a.account_id, a.worker_id, tw.stage FROM assignments a
    JOIN task_work tw ON tw.task_id = a.task_id AND (
      (tw.stage = 'review' AND tw.parent_assignment_id = a.assignment_id)
      OR (tw.stage = 'attempt' AND tw.needed > 1 AND a.role = 'attempt'))
    WHERE a.worker_id = $1::text AND a.account_id = $2::text AND tw.project = $3::text AND a.purpose = 'live'
      AND a.status = 'submitted' AND a.submitted_at > $4::timestamptz
    FOR UPDATE OF tw),
  rev AS (
    UPDATE assignments r SET status = 'canceled', ended_at = $5::timestamptz FROM mine
    WHERE r.task_id = mine.task_id AND r.role = 'review' AND r.status = 'active' AND r.parent_assignment_id = mine.assignment_id
    RETURNING r.assignment_id, r.task_id, r.account_id, r.worker_id),
  own AS (UPDATE assignments o SET status = 'rejected', feedback = $6::jsonb FROM mine WHERE o.assignment_id = mine.assignment_id),
  back AS (
    UPDATE task_work w SET stage = 'attempt', open_slots = CASE WHEN mine.stage = 'review' THEN 1 ELSE w.open_slots + 1 END,
      parent_assignment_id = CASE WHEN mine.stage = 'review' THEN NULL ELSE w.parent_assignment_id END,
      reserved_for = CASE WHEN mine.stage = 'review' THEN NULL ELSE w.reserved_for END,
      reserved_until = CASE WHEN mine.stage = 'review' THEN NULL ELSE w.reserved_until END
    FROM mine WHERE w.task_id = mine.task_id),
  free AS (
    UPDATE task_work w SET reserved_for = NULL, reserved_until = NULL
    WHERE w.account_id = $2::text AND w.project = $3::text AND w.reserved_for = $1::text AND w.stage = 'attempt'
    RETURNING w.task_id),
  ev AS (
    INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind, data)
    SELECT $5::timestamptz, rev.account_id, rev.worker_id, rev.assignment_id, rev.task_id, 'canceled', '{"reason":"author_paused"}'::jsonb FROM rev),
  wake AS (SELECT pg_notify('${workChannel}', '${workPayload('assignments')}')
    WHERE EXISTS (SELECT 1 FROM mine) OR EXISTS (SELECT 1 FROM free))
  SELECT mine.task_id, (SELECT count(*) FROM wake) AS woken FROM mine`;

/**
 * For an evaluation in the place of live task $4 (worker $1, account $2, type $3): whether the
 * worker handed that task back, whether one of theirs and how many evaluations stand in for it, the oldest of the
 * account's live evaluation tasks of the type the worker never had, and the ids just before and
 * after $4 among the tasks of its millisecond ($5 to $6).
 */
const evaluationForText = `SELECT
    EXISTS (SELECT 1 FROM assignments WHERE task_id = $4::text AND worker_id = $1::text AND status IN ('released', 'expired')) AS handed_back,
    EXISTS (SELECT 1 FROM assignments WHERE stands_for = $4::text AND worker_id = $1::text) AS stood_in_mine,
    (SELECT count(*)::int FROM assignments WHERE stands_for = $4::text) AS stood_in,
    (SELECT max(task_id) FROM tasks WHERE task_id >= $5::text AND task_id < $4::text) AS before,
    (SELECT min(task_id) FROM tasks WHERE task_id > $4::text AND task_id <= $6::text) AS after,
    e.id, e.type, e.params, e.expected_response, e.initial_response
  FROM (SELECT 1) one LEFT JOIN LATERAL (
    SELECT t.id, t.type, t.params, t.expected_response, t.initial_response FROM training_tasks t
    WHERE t.account_id = $2::text AND t.mode = 'live' AND t.kind = 'evaluation' AND t.type = $3::text
      AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.worker_id = $1::text AND a.quality_task_id = t.id)
    ORDER BY t.created_at, t.id LIMIT 1) e ON true`;

/** Whether a live task that one of the worker's ($1) evaluations issued since $2 stands in for is still open for attempts. */
const openStandInText = `SELECT EXISTS (SELECT 1 FROM assignments s JOIN task_work tw ON tw.task_id = s.stands_for
    WHERE s.worker_id = $1::text AND s.stands_for IS NOT NULL AND s.issued_at > $2::timestamptz
      AND tw.stage = 'attempt' AND tw.open_slots > 0) AS open`;

/**
 * The worker's ($1) evaluations issued since $3 and handed back (released, or the lease lapsed),
 * not given again, whose live task is still open for attempts in a project where they are
 * qualified (as that task would come back to them), only project $2's when given; the first in
 * that task's queue order.
 */
const returnedText = `SELECT ${assignmentRow.qualified('a')}, tw.priority AS stand_priority, (extract(epoch from tw.created_at) * 1000)::float8 AS stand_created_ms
  FROM assignments a JOIN task_work tw ON tw.task_id = a.stands_for
  WHERE a.worker_id = $1::text AND a.stands_for IS NOT NULL AND a.issued_at > $3::timestamptz AND a.status IN ('released', 'expired')
    AND ($2::text IS NULL OR a.quality_project = $2::text)
    AND tw.stage = 'attempt' AND tw.open_slots > 0
    AND NOT EXISTS (SELECT 1 FROM assignments n WHERE n.task_id = a.task_id AND n.worker_id = a.worker_id AND n.issued_at > a.issued_at)
    AND NOT EXISTS (SELECT 1 FROM worker_qualifications q WHERE q.worker_id = a.worker_id AND q.account_id = a.account_id
      AND q.project = a.quality_project AND q.state <> 'qualified')
  ORDER BY tw.priority DESC, tw.created_at, a.task_id
  LIMIT 1`;

const qualityTask = (row: typeof trainingTasks.$inferSelect): QualityTask => ({
  id: row.id,
  type: row.type,
  params: row.params,
  expectedResponse: row.expectedResponse,
  initialResponse: row.initialResponse ?? null,
});

/**
 * The worker of the operator's workforce with a standing in the project ($1 account, $2 project)
 * whose handle is $3 (the 24 hex after `opw_`: server/http/views/assignments.ts workerHandle),
 * read through the index worker_qualifications_handle (the same expression).
 */
const operatorWorkerText = `SELECT q.worker_id FROM worker_qualifications q JOIN workers w ON w.worker_id = q.worker_id AND w.account_id IS NULL
  WHERE q.account_id = $1::text AND q.project = $2::text
    AND substr(encode(sha256(decode(q.account_id || chr(10) || q.worker_id, 'escape')), 'hex'), 1, 24) = $3::text`;

export function qualificationRepository(db: Database, execute: Execute): QualificationRepository {
  const training = (accountId: string, type: string) =>
    and(
      eq(trainingTasks.accountId, accountId),
      eq(trainingTasks.mode, 'live'),
      eq(trainingTasks.kind, 'training'),
      eq(trainingTasks.type, type),
    );
  const byId = async (accountId: string, id: string) => {
    const rows = await db
      .select()
      .from(trainingTasks)
      .where(and(eq(trainingTasks.accountId, accountId), eq(trainingTasks.mode, 'live'), eq(trainingTasks.id, id)));
    return rows[0] ? qualityTask(rows[0]) : null;
  };
  return {
    async get(workerId, accountId, project, options) {
      const q = db
        .select()
        .from(workerQualifications)
        .where(
          and(
            eq(workerQualifications.workerId, workerId),
            eq(workerQualifications.accountId, accountId),
            eq(workerQualifications.project, project),
          ),
        );
      const rows = options?.forUpdate ? await q.for('update') : await q;
      return (rows[0] as Qualification | undefined) ?? null;
    },
    async put(q) {
      const { workerId: _w, accountId: _a, project: _p, ...rest } = q;
      await db
        .insert(workerQualifications)
        .values(q)
        .onConflictDoUpdate({
          target: [workerQualifications.workerId, workerQualifications.accountId, workerQualifications.project],
          set: rest,
        });
    },
    async inTraining(workerId) {
      return (await db
        .select()
        .from(workerQualifications)
        .where(and(eq(workerQualifications.workerId, workerId), inArray(workerQualifications.state, ['training', 'waiting'])))
        .orderBy(asc(workerQualifications.updatedAt))
        .limit(100)) as Qualification[];
    },
    async operatorWorkerOf(accountId, project, handle) {
      const [row] = await execute<{ worker_id: string }>(statement(operatorWorkerText, [accountId, project, handle]));
      return row?.worker_id ?? null;
    },
    async forWorker(workerId, projects) {
      if (projects.length === 0) return [];
      return (await db
        .select()
        .from(workerQualifications)
        .where(
          and(
            eq(workerQualifications.workerId, workerId),
            or(...projects.map((p) => and(eq(workerQualifications.accountId, p.accountId), eq(workerQualifications.project, p.project)))),
          ),
        )) as Qualification[];
    },
    async trainingTasks(accountId, type, limit) {
      const rows = await db
        .select()
        .from(trainingTasks)
        .where(training(accountId, type))
        .orderBy(asc(trainingTasks.createdAt), asc(trainingTasks.id))
        .limit(limit);
      return rows.map(qualityTask);
    },
    async hasTrainingTasks(accountId, type) {
      const rows = await db.select({ id: trainingTasks.id }).from(trainingTasks).where(training(accountId, type)).limit(1);
      return rows.length > 0;
    },
    async evaluationFor(workerId, accountId, type, taskId) {
      const ms = taskId.slice(0, 12);
      const [row] = await execute<Record<string, unknown>>(
        statement(evaluationForText, [workerId, accountId, type, taskId, `${ms}000000000000`, `${ms}ffffffffffff`]),
      );
      return {
        handedBack: row?.handed_back === true,
        stoodInMine: row?.stood_in_mine === true,
        stoodIn: Number(row?.stood_in ?? 0),
        task: row?.id
          ? {
              id: String(row.id),
              type: String(row.type),
              params: row.params as QualityTask['params'],
              expectedResponse: row.expected_response as QualityTask['expectedResponse'],
              initialResponse: (row.initial_response ?? null) as QualityTask['initialResponse'],
            }
          : null,
        before: (row?.before as string | null | undefined) ?? null,
        after: (row?.after as string | null | undefined) ?? null,
      };
    },
    async hasOpenStandIn(workerId, since) {
      const [row] = await execute<{ open: boolean }>(statement(openStandInText, [workerId, since.toISOString()]));
      return row?.open === true;
    },
    async returnedEvaluation(workerId, project, since) {
      const [row] = await execute<Record<string, unknown>>(statement(returnedText, [workerId, project ?? null, since.toISOString()]));
      if (!row) return null;
      return {
        assignment: assignmentRow.fromRow(row),
        priority: Number(row.stand_priority),
        createdAt: new Date(Number(row.stand_created_ms)),
      };
    },
    qualityTask: byId,
    async issue(a) {
      try {
        await execute(statement(issueText, assignmentRow.values(a)));
        return true;
      } catch (err) {
        // The same worker claiming twice at once: the other claim won.
        if (isUniqueViolation(err, 'assignments_one_active')) return false;
        throw err;
      }
    },
    async scores(workerId, accountId, project, purpose, limit, since) {
      const rows = await execute<{ score: number }>(
        statement(
          `SELECT score FROM assignments
           WHERE worker_id = $1::text AND account_id = $2::text AND quality_project = $3::text AND purpose = $4::text
             AND purpose <> 'live' AND score IS NOT NULL AND ($6::timestamptz IS NULL OR issued_at >= $6::timestamptz)
           ORDER BY submitted_at DESC LIMIT $5::int`,
          [workerId, accountId, project, purpose, limit, since?.toISOString() ?? null],
        ),
      );
      return rows.map((r) => Number(r.score));
    },
    async liveSubmitted(workerId, accountId, project, atMost) {
      const [row] = await execute<{ n: number }>(
        statement(
          `SELECT count(*)::int AS n FROM (
             SELECT 1 FROM assignments a JOIN task_work tw ON tw.task_id = a.task_id
             WHERE a.worker_id = $1::text AND a.account_id = $2::text AND tw.project = $3::text
               AND a.purpose = 'live' AND a.role IN ('attempt', 'redo') AND a.submitted_at IS NOT NULL
             LIMIT $4::int) x`,
          [workerId, accountId, project, atMost],
        ),
      );
      return Number(row?.n ?? 0);
    },
    async submittedTraining(workerId, accountId, project, since) {
      const rows = await execute<{ id: string }>(
        statement(
          `SELECT quality_task_id AS id FROM assignments
           WHERE worker_id = $1::text AND account_id = $2::text AND quality_project = $3::text AND purpose = 'training'
             AND score IS NOT NULL AND issued_at >= $4::timestamptz`,
          [workerId, accountId, project, since.toISOString()],
        ),
      );
      return rows.map((r) => r.id);
    },
    async requeueSince(workerId, accountId, project, since, now) {
      const feedback = [
        {
          category: 'other',
          text: 'Returned to the queue: your accuracy on this project fell below its pause mark, so this answer was not used.',
        },
      ];
      const rows = await execute<{ task_id: string }>(
        statement(requeueText, [workerId, accountId, project, since.toISOString(), now.toISOString(), JSON.stringify(feedback)]),
      );
      return rows.map((r) => r.task_id);
    },
  };
}
