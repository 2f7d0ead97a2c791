// Assignments on the wire: the worker's own view (worker API) and the customer's view of who
// worked on a task (current generation). Absent values are left out, never null. The domain's
// decided statuses (accepted, fixed, rejected) show as `reviewed` with the review's result.
import type { components as Current } from '../../../generated/current.ts';
import type { components as Workforce } from '../../../generated/workforce.ts';
import type { Task } from '../../domain/model.ts';
import type { Answer, Assignment, AssignmentStatus } from '../../domain/workforce/model.ts';
import type { AssignmentWork } from '../../domain/workforce/assignments.ts';
import { operatorWorkerHandle } from '../../domain/workforce/handles.ts';
import { stored } from './stored.ts';

type Wire = Workforce['schemas'];

/** The wire status of a domain status. */
function wireStatus(a: Pick<Assignment, 'status' | 'role' | 'reviewResult'>): Wire['AssignmentStatus'] {
  if (a.status === 'accepted' || a.status === 'fixed' || a.status === 'rejected') return 'reviewed';
  if (a.role === 'review' && a.status === 'submitted' && a.reviewResult) return 'reviewed';
  return a.status;
}

/** The domain statuses a wire status filter means. */
export function domainStatuses(status: Wire['AssignmentStatus']): AssignmentStatus[] {
  return status === 'reviewed' ? ['accepted', 'fixed', 'rejected'] : [status];
}

/** The decision on `a`: a review's own (decided when it was submitted), or the one made on reviewed work. */
function review(a: Assignment): Wire['AssignmentReview'] | undefined {
  const result =
    a.role === 'review' ? a.reviewResult : a.status === 'accepted' || a.status === 'fixed' || a.status === 'rejected' ? a.status : null;
  if (!result) return undefined;
  const decidedAt = a.role === 'review' ? a.submittedAt : a.reviewedAt;
  return { result, feedback_items: a.feedback ?? [], reviewed_at: (decidedAt ?? a.endedAt ?? a.issuedAt).toISOString() };
}

/**
 * The task as the worker needs it. Its type and params were checked against the type's schema when
 * the task was created, so they are asserted as stored, as the task views do.
 */
function assignmentTaskView(task: Task, calibration: boolean): Wire['AssignmentTask'] {
  return {
    task_id: task.taskId,
    instruction: task.instruction ?? '',
    project: task.project || undefined,
    batch: task.batch || undefined,
    calibration: calibration || undefined,
    ...stored<Wire['TaskTypeDetails']>({ type: task.type, params: task.params }),
  };
}

/**
 * An answer on the wire: a JSON object that passed the task type's response schema and the task's
 * params when it was submitted, so it is asserted as stored. (Today's generated WorkerResponse is
 * `unknown`, through ComparisonResponse's anyOf; this keeps compiling when it becomes precise.)
 */
const answer = (a: Answer): Wire['WorkerResponse'] => stored<Wire['WorkerResponse']>(a);

/**
 * The worker's view: the task, the lease while active, the draft, the answer; for a review the
 * answer under review (and the reviews that rejected the answers a redo redoes, `redone`); for a
 * redo the rejection's feedback and the worker's earlier answer.
 */
export function assignmentView(
  work: AssignmentWork & { parent?: Assignment | null; calibration?: boolean; redone?: Assignment[] },
): Wire['Assignment'] {
  const { assignment: a, task, reviewed } = work;
  const active = a.status === 'active';
  const decided = review(a);
  const parent = a.role === 'redo' ? (work.parent ?? null) : null;
  const rejection = parent ? review(parent) : undefined;
  const earlierReviews = (work.redone ?? []).flatMap((x) => review(x) ?? []);
  return {
    assignment_id: a.assignmentId,
    role: a.role,
    status: wireStatus(a),
    task: assignmentTaskView(task, work.calibration ?? false),
    lease_token: active ? a.leaseToken : undefined,
    lease_expires_at: active ? a.leaseExpiresAt.toISOString() : undefined,
    hard_deadline: active ? a.hardDeadline.toISOString() : undefined,
    draft: a.draft || undefined,
    response: a.response && a.role !== 'review' ? answer(a.response) : undefined,
    under_review: reviewed?.response
      ? {
          response: answer(reviewed.response),
          active_ms: reviewed.activeMs,
          final: work.final ? true : undefined,
          attempt: work.attempts ? work.attempts.findIndex((x) => x.assignmentId === reviewed.assignmentId) + 1 : undefined,
          attempts: work.attempts?.flatMap((x) => (x.response ? [{ response: answer(x.response), active_ms: x.activeMs }] : [])),
          earlier_reviews: earlierReviews.length ? earlierReviews : undefined,
        }
      : undefined,
    feedback: rejection || undefined,
    previous_response: parent?.response ? answer(parent.response) : undefined,
    review: decided || undefined,
    // Training is never hidden; evaluation assignments carry nothing of the kind (decision 0011).
    training:
      a.purpose === 'training' && a.qualityProject
        ? { project: a.qualityProject, feedback: a.trainingFeedback ? stored<Wire['TrainingFeedback']>(a.trainingFeedback) : undefined }
        : undefined,
    skip_reason: a.skipReason || undefined,
    active_ms: a.activeMs,
    created_at: a.issuedAt.toISOString(),
    submitted_at: a.submittedAt ? a.submittedAt.toISOString() : undefined,
    ended_at: a.endedAt ? a.endedAt.toISOString() : undefined,
  };
}

export function heartbeatView(a: Assignment): Wire['Heartbeat'] {
  return {
    assignment_id: a.assignmentId,
    lease_expires_at: a.leaseExpiresAt.toISOString(),
    hard_deadline: a.hardDeadline.toISOString(),
    active_ms: a.activeMs,
  };
}

/**
 * A worker as a task's customer sees it: the id of the account's own worker, or for the operator's
 * workforce an opaque handle, stable per account and worker, that tells nothing else.
 */
export const workerHandle = (accountId: string, workerId: string, own: boolean) =>
  own ? workerId : operatorWorkerHandle(accountId, workerId);

export function taskAssignmentView(a: Assignment, own: boolean): Current['schemas']['TaskAssignment'] {
  const result = review(a)?.result;
  return {
    assignment_id: a.assignmentId,
    worker: workerHandle(a.accountId, a.workerId, own),
    role: a.role,
    status: wireStatus(a),
    created_at: a.issuedAt.toISOString(),
    submitted_at: a.submittedAt ? a.submittedAt.toISOString() : undefined,
    ended_at: a.endedAt ? a.endedAt.toISOString() : undefined,
    active_ms: a.activeMs,
    review_result: result || undefined,
  };
}
