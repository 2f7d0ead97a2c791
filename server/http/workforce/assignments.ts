// The work loop of the worker API (issue 18): take work, heartbeat, submit, skip, release, review,
// history. The rules are in domain/workforce/ (work.ts: the lease; answers.ts: submit and review;
// assignments.ts: what a worker reads); here the wire meets them.
import type { Assignment } from '../../domain/workforce/model.ts';
import type { WorkerPrincipal } from '../../domain/workforce/worker.ts';
import { reviewAssignment, submitAssignment } from '../../domain/workforce/answers.ts';
import { assignmentWork, getOwnAssignment, listOwnAssignments, type AssignmentWork } from '../../domain/workforce/assignments.ts';
import { claimNextWaiting, giveBack, heartbeat } from '../../domain/workforce/work.ts';
import type { IdempotencyInput } from '../../domain/idempotency.ts';
import type { UnitOfWork } from '../../domain/ports.ts';
import { underKey } from '../idempotency.ts';
import { NoContent, type WorkerHandlerTable } from '../typed.ts';
import { assignmentView, domainStatuses, heartbeatView } from '../views/assignments.ts';
import type { WorkerApiDeps } from './deps.ts';

/** How soon to ask again when there is no work (seconds). */
const retryAfterSeconds = 5;

/**
 * The worker's view of an assignment: with the rejected work of a redo, the calibration flag, and for
 * a review of a redo the rejected answers it redoes (oldest first), whose reviews the reviewer sees.
 */
async function view(uow: UnitOfWork, work: AssignmentWork) {
  const a = work.assignment;
  const parent = a.role === 'redo' && a.parentAssignmentId ? await uow.work.get(a.parentAssignmentId, null) : null;
  const calibration = (await uow.work.getTaskWork(a.taskId))?.calibration ?? false;
  const redone: Assignment[] = [];
  for (let at = work.reviewed; at?.role === 'redo' && at.parentAssignmentId && redone.length < 20; ) {
    const earlier = await uow.work.get(at.parentAssignmentId, null);
    if (!earlier) break;
    redone.unshift(earlier);
    at = earlier;
  }
  return assignmentView({ ...work, parent, calibration, redone });
}

export function assignmentHandlers({
  uow,
  contract,
  work,
  workAvailable,
  random = Math.random,
  now,
}: WorkerApiDeps): Pick<
  WorkerHandlerTable,
  | 'claimAssignment'
  | 'listAssignments'
  | 'getAssignment'
  | 'heartbeatAssignment'
  | 'submitAssignment'
  | 'skipAssignment'
  | 'releaseAssignment'
  | 'reviewAssignment'
> {
  const own = async (worker: WorkerPrincipal, id: string) => view(uow, await getOwnAssignment(uow, worker, id, work));
  const after = async (a: Assignment) => view(uow, await assignmentWork(uow, a, work));
  return {
    claimAssignment: async ({ worker, query, body, signal }) => {
      const a = await claimNextWaiting(
        uow,
        worker,
        { role: body?.role, project: body?.project },
        work,
        { waitMs: (query.wait ?? 0) * 1000, available: workAvailable, ...(signal ? { signal } : {}) },
        random,
        now,
      );
      if (!a) return new NoContent({ 'Retry-After': String(retryAfterSeconds) });
      return after(a);
    },
    listAssignments: async ({ worker, query }) => {
      const limit = query.limit ?? 100;
      const page = await listOwnAssignments(uow, worker, {
        limit,
        statuses: query.status ? domainStatuses(query.status) : undefined,
        nextToken: query.next_token,
      });
      const docs = await Promise.all(page.assignments.map(after));
      return { docs, limit, has_more: page.nextToken !== null, ...(page.nextToken ? { next_token: page.nextToken } : {}) };
    },
    getAssignment: async ({ worker, path }) => own(worker, path.assignmentId),
    heartbeatAssignment: async ({ worker, path, body }) =>
      heartbeatView(
        await heartbeat(
          uow,
          worker,
          path.assignmentId,
          { leaseToken: body.lease_token, activeMs: body.active_ms, draft: body.draft },
          work,
          now(),
        ),
      ),
    submitAssignment: async ({ worker, path, body, idempotency }) => {
      const mine = await getOwnAssignment(uow, worker, path.assignmentId);
      // A worker's key is theirs alone, kept with the account whose task it is.
      const owner = (key: IdempotencyInput) => ({
        accountId: mine.assignment.accountId,
        mode: 'live' as const,
        key: `worker ${worker.workerId} ${key.key}`,
      });
      return underKey(uow, idempotency, owner, async () => {
        const out = await submitAssignment(
          uow,
          worker,
          path.assignmentId,
          { leaseToken: body.lease_token, response: body.response, activeMs: body.active_ms },
          contract.checkResponse,
          now(),
          random,
        );
        return after(out.assignment);
      });
    },
    skipAssignment: async ({ worker, path, body }) =>
      after(
        await giveBack(
          uow,
          worker,
          path.assignmentId,
          { leaseToken: body.lease_token, status: 'skipped', reason: body.reason, activeMs: body.active_ms },
          now(),
        ),
      ),
    releaseAssignment: async ({ worker, path, body }) =>
      after(
        await giveBack(
          uow,
          worker,
          path.assignmentId,
          { leaseToken: body.lease_token, status: 'released', activeMs: body.active_ms },
          now(),
        ),
      ),
    reviewAssignment: async ({ worker, path, body }) =>
      after(
        await reviewAssignment(
          uow,
          worker,
          path.assignmentId,
          {
            leaseToken: body.lease_token,
            result: body.result,
            response: body.response,
            feedback: body.feedback_items,
            activeMs: body.active_ms,
            attempt: body.attempt,
          },
          contract.checkResponse,
          work,
          now(),
        ),
      ),
  };
}
