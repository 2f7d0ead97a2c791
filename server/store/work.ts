// The storage side of the work loop (domain/workforce/model.ts): the claim, lease renewal, giving
// work back and the lease sweep are single statements, so that a slot is taken or returned in the
// same statement that writes the assignment. PGlite has one connection (SKIP LOCKED never skips
// there): correctness rests on the row lock and the re-checked `open_slots > 0`, not on skipping.
import { and, asc, desc, eq, getTableColumns, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { Task } from '../domain/model.ts';
import { defaultQualityPolicy } from '../domain/quality/policy.ts';
import type { Assignment, Staffing, TaskWork, WorkRepository } from '../domain/workforce/model.ts';
import type { Database, Execute } from './db.ts';
import { isUniqueViolation } from './errors.ts';
import { calibrationGateOpen } from './quality.ts';
import { workChannel, workPayload } from './notify.ts';
import { rowCodec, statement } from './rows.ts';
import { assignments, staffing, taskWork, workEvents } from './schema.ts';

const assignmentRow = rowCodec<Assignment>(assignments);

/** Queue order: older-generation urgency immediate > day > week; a newer-generation task counts as day. */
export function taskPriority(task: Pick<Task, 'generation' | 'urgency'>): number {
  if (task.generation !== 'legacy') return 2;
  return task.urgency === 'immediate' ? 3 : task.urgency === 'week' ? 1 : 2;
}

/**
 * The work row of a new live task, as an INSERT … SELECT … FROM `gate` (a CTE that returns a row
 * only when the task was inserted); `add` appends a value and answers its placeholder.
 */
export function taskWorkInsert(task: Task, gate: string, add: (value: unknown) => string): string {
  const account = add(task.accountId);
  const batch = add(task.batch);
  const project = add(task.project);
  // The overlap of the project's quality policy in force (1 without one): that many distinct workers.
  const overlap = `coalesce((SELECT (qp.policy->>'overlap')::int FROM quality_policies qp JOIN projects p ON p.project_id = qp.project_id
      WHERE p.account_id = ${account}::text AND p.mode = 'live' AND p.name = ${project}::text ORDER BY qp.version DESC LIMIT 1), 1)`;
  return `INSERT INTO task_work (task_id, account_id, project, batch, stage, needed, open_slots, priority, available_at, calibration, created_at)
    SELECT ${add(task.taskId)}::text, ${account}::text, ${project}::text, ${batch}::text, 'attempt', ${overlap}, ${overlap}, ${add(taskPriority(task))}::int,
      ${add(task.createdAt.toISOString())}::timestamptz,
      coalesce((SELECT b.calibration_batch FROM batches b WHERE b.account_id = ${account}::text AND b.mode = 'live' AND b.name = ${batch}::text), false),
      ${add(task.createdAt.toISOString())}::timestamptz
    FROM ${gate}`;
}

/**
 * The work rows of many new live tasks (an import's group), as taskWorkInsert makes one: from
 * `source`, rows of (task_id, account_id, project, batch, priority, created_at).
 */
export const tasksWorkInsert = (source: string) =>
  `INSERT INTO task_work (task_id, account_id, project, batch, stage, needed, open_slots, priority, available_at, calibration, created_at)
    SELECT s.task_id, s.account_id, s.project, s.batch, 'attempt', o.overlap, o.overlap, s.priority, s.created_at,
      coalesce((SELECT b.calibration_batch FROM batches b WHERE b.account_id = s.account_id AND b.mode = 'live' AND b.name = s.batch), false),
      s.created_at
    FROM ${source} s CROSS JOIN LATERAL (SELECT coalesce((SELECT (qp.policy->>'overlap')::int FROM quality_policies qp JOIN projects p ON p.project_id = qp.project_id
      WHERE p.account_id = s.account_id AND p.mode = 'live' AND p.name = s.project ORDER BY qp.version DESC LIMIT 1), 1) AS overlap) o`;

/** Wakes waiting claimers (after the commit) when `cte` returned rows: slots came back. */
const wakeAfter = (cte: string) =>
  `wake AS (SELECT pg_notify('${workChannel}', '${workPayload('assignments')}') WHERE EXISTS (SELECT 1 FROM ${cte}))`;

const ms = (placeholder: string) => `(${placeholder}::double precision * interval '1 millisecond')`;

/** The subjects of a staffing row for the role being claimed ($5). */
const subjectsFor = (alias: string) => `CASE WHEN $5::text = 'review' THEN ${alias}.review_subjects ELSE ${alias}.attempt_subjects END`;

/**
 * One text for an account's own workers, one for the operator's workforce (each uses its partial
 * index: the literal stage list and `DESC NULLS LAST` are spelled as the indexes are).
 * $1 worker, $2 its account (null: operator workforce), $3 its group (`operator` or `account`),
 * $4 calibrator, $5 role (attempt or review), $6 now, $7 lease ms, $8 hard cap ms, $9 assignment id,
 * $10 lease token, $11 project (null: any), $12 pass over the tasks the caller's evaluations issued since then stand in for (null: none).
 */
const claimSql = (ownAccount: boolean, reservedOnly: boolean) => `WITH cand AS (
    SELECT tw.task_id FROM task_work tw JOIN tasks t ON t.task_id = tw.task_id
    WHERE tw.stage IN ('attempt', 'review') AND tw.open_slots > 0 AND tw.stage = $5::text AND tw.available_at <= $6::timestamptz
      AND ${ownAccount ? 'tw.account_id = $2::text' : '$2::text IS NULL'}${reservedOnly ? ' AND tw.reserved_for = $1::text AND tw.reserved_until > $6::timestamptz' : ''}
      AND ($11::text IS NULL OR tw.project = $11::text)
      AND (t.status = 'pending' OR (t.status = 'completed' AND t.customer_review_status = 'rejected'))
      AND (tw.reserved_for IS NULL OR tw.reserved_for = $1::text OR tw.reserved_until <= $6::timestamptz
        -- A redo's author who is no longer active (paused, removed) leaves it to the others.
        OR EXISTS (SELECT 1 FROM workers wk WHERE wk.worker_id = tw.reserved_for AND wk.status <> 'active'))
      AND (NOT tw.calibration OR $4::boolean)
      AND coalesce((SELECT ${subjectsFor('s')} && ARRAY[$1::text, $3::text] FROM staffing s
          WHERE s.account_id = tw.account_id AND s.mode = 'live' AND s.project = tw.project AND s.batch IN ('', coalesce(tw.batch, '')) AND ${subjectsFor('s')} IS NOT NULL
          ORDER BY s.batch DESC LIMIT 1), true)
      AND (tw.batch IS NULL OR NOT EXISTS (SELECT 1 FROM batches b WHERE b.account_id = tw.account_id AND b.mode = 'live' AND b.name = tw.batch AND b.status = 'staging'))
      -- Not a project the caller is training for, failed or paused in (domain/quality/qualification.ts).
      AND NOT EXISTS (SELECT 1 FROM worker_qualifications q WHERE q.worker_id = $1::text AND q.account_id = tw.account_id
          AND q.project = tw.project AND q.state <> 'qualified')
      -- The calibration gate: a production batch waits until a calibration batch of its project passed.
      AND (tw.calibration OR tw.batch IS NULL OR ${calibrationGateOpen('tw', defaultQualityPolicy.calibration.gate_score)})
      AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.task_id = tw.task_id AND a.worker_id = $1::text AND a.status NOT IN ('expired', 'released')
          -- Not a task the caller attempted or skipped; a redo goes back to the author of the rejected work; a reviewer
          -- may review a task again (a redo of what they rejected, say), never their own work.
          AND NOT ($5::text = 'attempt' AND tw.parent_assignment_id IS NOT NULL AND a.role IN ('attempt', 'redo') AND a.status <> 'active')
          AND NOT ($5::text = 'review' AND a.role = 'review' AND a.status NOT IN ('active', 'skipped')))
      -- Passed over while the caller has other work: a live task one of their hidden evaluations took the place of.
      AND ($12::timestamptz IS NULL OR NOT EXISTS (SELECT 1 FROM assignments s
          WHERE s.stands_for = tw.task_id AND s.stands_for IS NOT NULL AND s.worker_id = $1::text AND s.issued_at > $12::timestamptz))
    ORDER BY tw.priority DESC NULLS LAST, tw.created_at, tw.task_id
    LIMIT 1
    FOR UPDATE OF tw SKIP LOCKED),
  take AS (
    UPDATE task_work tw SET open_slots = tw.open_slots - 1 FROM cand WHERE tw.task_id = cand.task_id
    RETURNING tw.task_id, tw.account_id, tw.parent_assignment_id),
  ins AS (
    INSERT INTO assignments (assignment_id, task_id, account_id, worker_id, role, status, lease_token, issued_at, lease_expires_at, hard_deadline, active_ms, draft, parent_assignment_id)
    SELECT $9::text, take.task_id, take.account_id, $1::text,
      CASE WHEN $5::text = 'review' THEN 'review' WHEN take.parent_assignment_id IS NOT NULL THEN 'redo' ELSE 'attempt' END,
      'active', $10::text, $6::timestamptz, $6::timestamptz + ${ms('least($7::bigint, $8::bigint)')}, $6::timestamptz + ${ms('$8')}, 0,
      (SELECT e.draft FROM assignments e WHERE e.task_id = take.task_id AND e.worker_id = $1::text AND e.status IN ('expired', 'released') AND e.draft IS NOT NULL ORDER BY e.issued_at DESC LIMIT 1),
      -- A redo starts without feedback of its own: the remarks that caused it stay on its parent.
      take.parent_assignment_id
    FROM take
    RETURNING *),
  ev AS (INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind)
    SELECT $6::timestamptz, ins.account_id, ins.worker_id, ins.assignment_id, ins.task_id, 'issued' FROM ins)
  SELECT ${assignmentRow.qualified('ins')} FROM ins`;

const claimText = {
  own: claimSql(true, false),
  operator: claimSql(false, false),
  ownReserved: claimSql(true, true),
  operatorReserved: claimSql(false, true),
};

/** Heartbeats are logged at most once a minute per assignment (the log is for metrics, not a trace). */
const heartbeatSampleMs = 60_000;

const heartbeatText = `WITH prev AS (SELECT heartbeat_at FROM assignments WHERE assignment_id = $1::text),
  upd AS (
    UPDATE assignments SET lease_expires_at = least($5::timestamptz + ${ms('$6')}, hard_deadline), heartbeat_at = $5::timestamptz,
      draft = coalesce($4::text, draft),
      active_ms = active_ms + greatest(0, least(coalesce($7::bigint, 0), (extract(epoch from ($5::timestamptz - coalesce(heartbeat_at, issued_at))) * 1000)::bigint))
    WHERE assignment_id = $1::text AND worker_id = $2::text AND lease_token = $3::text AND status = 'active' AND lease_expires_at > $5::timestamptz
    RETURNING *),
  ev AS (INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind, data)
    SELECT $5::timestamptz, upd.account_id, upd.worker_id, upd.assignment_id, upd.task_id, 'heartbeat', jsonb_build_object('active_ms', upd.active_ms)
    FROM upd, prev WHERE prev.heartbeat_at IS NULL OR prev.heartbeat_at <= $5::timestamptz - ${ms(String(heartbeatSampleMs))})
  SELECT ${assignmentRow.qualified('upd')} FROM upd`;

/** The stage whose slot an assignment of this role holds. */
const stageOf = (alias: string) => `CASE ${alias}.role WHEN 'review' THEN 'review' ELSE 'attempt' END`;

/**
 * Drafts are kept only while they can be used (the contract's AssignmentDraft): of the assignments
 * a worker released or let lapse, only the last one's. This CTE drops the drafts of the other
 * ended assignments of the workers in `cte` (its rows just ended; the partial index
 * assignments_ended_drafts finds them).
 */
const dropOlderDrafts = (cte: string) => `older AS (
    UPDATE assignments o SET draft = NULL FROM ${cte}
    WHERE o.worker_id = ${cte}.worker_id AND o.assignment_id <> ${cte}.assignment_id AND o.status <> 'active' AND o.draft IS NOT NULL)`;

const giveBackText = `WITH upd AS (
    UPDATE assignments SET status = $4::text, skip_reason = $5::text, ended_at = $6::timestamptz,
      -- A skipped task is not offered to its worker again: its draft has no use.
      draft = CASE WHEN $4::text = 'skipped' THEN NULL ELSE draft END,
      active_ms = active_ms + greatest(0, least(coalesce($7::bigint, 0), (extract(epoch from ($6::timestamptz - coalesce(heartbeat_at, issued_at))) * 1000)::bigint))
    WHERE assignment_id = $1::text AND worker_id = $2::text AND lease_token = $3::text AND status = 'active' AND lease_expires_at > $6::timestamptz
    RETURNING *),
  ${dropOlderDrafts('upd')},
  slot AS (UPDATE task_work tw SET open_slots = tw.open_slots + 1 FROM upd WHERE tw.task_id = upd.task_id AND tw.stage = ${stageOf('upd')}),
  ev AS (INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind, data)
    SELECT $6::timestamptz, upd.account_id, upd.worker_id, upd.assignment_id, upd.task_id, $4::text,
      CASE WHEN $5::text IS NULL THEN NULL ELSE jsonb_build_object('reason', $5::text) END FROM upd),
  ${wakeAfter('upd')}
  SELECT ${assignmentRow.qualified('upd')}, (SELECT count(*) FROM wake) AS woken FROM upd`;

const expireText = `WITH lapsed AS (
    SELECT assignment_id FROM assignments WHERE status = 'active' AND lease_expires_at <= $1::timestamptz
    ORDER BY lease_expires_at LIMIT $2::int FOR UPDATE SKIP LOCKED),
  exp AS (
    UPDATE assignments a SET status = 'expired', ended_at = $1::timestamptz FROM lapsed WHERE a.assignment_id = lapsed.assignment_id
    RETURNING a.assignment_id, a.task_id, a.account_id, a.worker_id, a.role),
  ${dropOlderDrafts('exp')},
  slot AS (
    UPDATE task_work tw SET open_slots = tw.open_slots + c.n
    FROM (SELECT task_id, ${stageOf('exp')} AS stage, count(*) AS n FROM exp GROUP BY 1, 2) c
    WHERE tw.task_id = c.task_id AND tw.stage = c.stage),
  ev AS (INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind)
    SELECT $1::timestamptz, exp.account_id, exp.worker_id, exp.assignment_id, exp.task_id, 'expired' FROM exp),
  ${wakeAfter('exp')}
  SELECT count(*)::int AS n, (SELECT count(*) FROM wake) AS woken FROM exp`;

/** A paused or removed worker's held assignments end as released (their drafts kept): the slots go back. */
const releaseAllText = `WITH upd AS (
    UPDATE assignments SET status = 'released', ended_at = $2::timestamptz WHERE worker_id = $1::text AND status = 'active'
    RETURNING *),
  slot AS (
    UPDATE task_work tw SET open_slots = tw.open_slots + c.n
    FROM (SELECT task_id, ${stageOf('upd')} AS stage, count(*) AS n FROM upd GROUP BY 1, 2) c
    WHERE tw.task_id = c.task_id AND tw.stage = c.stage),
  ev AS (INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind, data)
    SELECT $2::timestamptz, upd.account_id, upd.worker_id, upd.assignment_id, upd.task_id, 'released', jsonb_build_object('by', $3::text) FROM upd),
  ${wakeAfter('upd')}
  SELECT count(*)::int AS n, (SELECT count(*) FROM wake) AS woken FROM upd`;

const closeText = `WITH tw AS (UPDATE task_work SET stage = 'canceled', open_slots = 0 WHERE task_id = $1::text AND stage IN ('attempt', 'review')),
  ended AS (
    UPDATE assignments SET status = 'canceled', ended_at = $2::timestamptz, draft = NULL WHERE task_id = $1::text AND status = 'active'
    RETURNING assignment_id, task_id, account_id, worker_id),
  -- The task is over: no draft of it will be used again.
  drafts AS (UPDATE assignments SET draft = NULL WHERE task_id = $1::text AND status <> 'active' AND draft IS NOT NULL),
  ev AS (INSERT INTO work_events (at, account_id, worker_id, assignment_id, task_id, kind)
    SELECT $2::timestamptz, ended.account_id, ended.worker_id, ended.assignment_id, ended.task_id, 'canceled' FROM ended)
  SELECT count(*)::int AS n FROM ended`;

export function workRepository(db: Database, execute: Execute): WorkRepository {
  const one = async (text: string, values: unknown[]) => {
    const [row] = await execute(statement(text, values));
    return row ? assignmentRow.fromRow(row) : null;
  };
  return {
    async claim(r) {
      const values = [
        r.worker.workerId,
        r.worker.accountId,
        r.worker.accountId === null ? 'operator' : 'account',
        r.worker.calibrator,
        r.role,
        r.now.toISOString(),
        r.lease.leaseMs,
        r.lease.hardCapMs,
        r.assignmentId,
        r.leaseToken,
        r.project ?? null,
        r.passOverStandInsSince?.toISOString() ?? null,
      ];
      try {
        const operator = r.worker.accountId === null;
        const text = r.reservedOnly
          ? operator
            ? claimText.operatorReserved
            : claimText.ownReserved
          : operator
            ? claimText.operator
            : claimText.own;
        return await one(text, values);
      } catch (err) {
        // The same worker claiming twice at once: the other claim won (the caller reads its assignment).
        if (isUniqueViolation(err, 'assignments_one_attempt') || isUniqueViolation(err, 'assignments_one_active')) return null;
        throw err;
      }
    },
    heartbeat(i) {
      const draft = i.draft === undefined ? null : JSON.stringify(i.draft);
      return one(heartbeatText, [i.assignmentId, i.workerId, i.leaseToken, draft, i.now.toISOString(), i.leaseMs, i.activeMs ?? null]);
    },
    giveBack(i) {
      return one(giveBackText, [
        i.assignmentId,
        i.workerId,
        i.leaseToken,
        i.status,
        i.reason ?? null,
        i.now.toISOString(),
        i.activeMs ?? null,
      ]);
    },
    async expireLapsed(now, limit) {
      const [row] = await execute<{ n: number }>(statement(expireText, [now.toISOString(), limit]));
      return Number(row?.n ?? 0);
    },
    async releaseAllHeld(workerId, by, now) {
      const [row] = await execute<{ n: number }>(statement(releaseAllText, [workerId, now.toISOString(), by]));
      return Number(row?.n ?? 0);
    },
    async get(assignmentId, workerId, options) {
      const lock = options?.forUpdate ? ' FOR UPDATE' : '';
      return one(
        `SELECT ${assignmentRow.columnList} FROM assignments WHERE assignment_id = $1::text AND ($2::text IS NULL OR worker_id = $2::text)${lock}`,
        [assignmentId, workerId],
      );
    },
    async activeFor(workerId) {
      return one(`SELECT ${assignmentRow.columnList} FROM assignments WHERE worker_id = $1::text AND status = 'active'`, [workerId]);
    },
    async update(a) {
      await db.update(assignments).set(a).where(eq(assignments.assignmentId, a.assignmentId));
    },
    async getTaskWork(taskId) {
      const rows = await db.select().from(taskWork).where(eq(taskWork.taskId, taskId));
      return (rows[0] as TaskWork | undefined) ?? null;
    },
    async lockTaskWork(taskId) {
      const rows = await db.select().from(taskWork).where(eq(taskWork.taskId, taskId)).for('update');
      return (rows[0] as TaskWork | undefined) ?? null;
    },
    async updateTaskWork(work) {
      await db.update(taskWork).set(work).where(eq(taskWork.taskId, work.taskId));
      // A review or a redo to take: wake waiting claimers (delivered after the commit).
      if (work.openSlots > 0) await execute(statement(`SELECT pg_notify('${workChannel}', $1)`, [workPayload('assignments')]));
    },
    async closeTask(taskId, now) {
      await execute(statement(closeText, [taskId, now.toISOString()]));
    },
    async dropDrafts(taskId) {
      await execute(
        statement(`UPDATE assignments SET draft = NULL WHERE task_id = $1::text AND status <> 'active' AND draft IS NOT NULL`, [taskId]),
      );
    },
    async forTask(taskId) {
      return (await db
        .select()
        .from(assignments)
        .where(eq(assignments.taskId, taskId))
        .orderBy(asc(assignments.issuedAt), asc(assignments.assignmentId))) as Assignment[];
    },
    async forWorker(workerId, filters, page) {
      const where: SQL[] = [eq(assignments.workerId, workerId)];
      if (filters.statuses?.length) where.push(inArray(assignments.status, filters.statuses));
      if (page.before) {
        const { issuedAt, assignmentId } = page.before;
        where.push(
          or(lt(assignments.issuedAt, issuedAt), and(eq(assignments.issuedAt, issuedAt), lt(assignments.assignmentId, assignmentId)))!,
        );
      }
      // Without drafts: a page of history carries none (the contract's AssignmentList), so none is read.
      const { draft: _draft, ...columns } = getTableColumns(assignments);
      const rows = await db
        .select(columns)
        .from(assignments)
        .where(and(...where))
        .orderBy(desc(assignments.issuedAt), desc(assignments.assignmentId))
        .limit(page.limit);
      return rows.map((row) => ({ ...row, draft: null })) as Assignment[];
    },
    async submittedCount(workerId, accountId, project) {
      const [row] = await execute<{ n: number }>(
        statement(
          `SELECT count(*)::int AS n FROM assignments a JOIN task_work tw ON tw.task_id = a.task_id
           WHERE a.worker_id = $1::text AND a.account_id = $2::text AND tw.project IS NOT DISTINCT FROM $3::text
             AND a.role IN ('attempt', 'redo') AND a.submitted_at IS NOT NULL`,
          [workerId, accountId, project],
        ),
      );
      return Number(row?.n ?? 0);
    },
    async staffingFor(accountId, project, batch) {
      const rows = await db
        .select()
        .from(staffing)
        .where(
          and(
            eq(staffing.accountId, accountId),
            eq(staffing.mode, 'live'),
            eq(staffing.project, project),
            inArray(staffing.batch, ['', batch ?? '']),
          ),
        )
        .orderBy(desc(staffing.batch))
        .limit(1);
      return (rows[0] as Staffing | undefined) ?? null;
    },
    async getStaffing(accountId, mode, project, batch) {
      const rows = await db
        .select()
        .from(staffing)
        .where(and(eq(staffing.accountId, accountId), eq(staffing.mode, mode), eq(staffing.project, project), eq(staffing.batch, batch)));
      return (rows[0] as Staffing | undefined) ?? null;
    },
    async putStaffing(s) {
      const { accountId: _a, mode: _m, project: _p, batch: _b, ...rest } = s;
      await db
        .insert(staffing)
        .values(s)
        .onConflictDoUpdate({ target: [staffing.accountId, staffing.mode, staffing.project, staffing.batch], set: rest });
    },
    async addEvents(events) {
      if (events.length > 0) await db.insert(workEvents).values(events);
    },
  };
}
