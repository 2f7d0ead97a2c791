// The work loop of the worker API (issue 18): take work, heartbeat, submit, skip, release, review,
// history. The rules are in domain/workforce/ (work.ts: the lease; answers.ts: submit and review;
// assignments.ts: what a worker reads); here the wire meets them.
import type { Assignment } from '../../domain/workforce/model.ts';
import type { WorkerPrincipal } from '../../domain/workforce/worker.ts';
import { reviewAssignment, submitAssignment } from '../../domain/workforce/answers.ts';
import { assignmentWork, getOwnAssignment, listOwnAssignments, type AssignmentWork } from '../../domain/workforce/assignments.ts';
import { claimNextWaiting, giveBack, heartbeat } from '../../domain/workforce/work.ts';
import type { SavedAnswer, UnitOfWork } from '../../domain/ports.ts';
import { DomainError } from '../../domain/errors.ts';
import { HttpError, toErrorAnswer } from '../errors.ts';
import type { IdempotencyContext } from '../idempotency.ts';
import { NoContent, Replay, type WorkerHandlerTable } from '../typed.ts';
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

/**
 * A submit with an Idempotency-Key: the key is held (per worker) while the submit runs, then keeps
 * its answer; a retry gets that answer again, a different request with the key 409.
 */
async function idempotent<T>(
  uow: UnitOfWork,
  worker: WorkerPrincipal,
  accountId: string,
  idem: IdempotencyContext | undefined,
  run: () => Promise<T>,
): Promise<T | Replay> {
  if (!idem) return run();
  const now = idem.at;
  const saved: SavedAnswer = {
    accountId,
    key: `worker ${worker.workerId} ${idem.key}`,
    mode: 'live',
    fingerprint: idem.fingerprint,
    statusCode: 0,
    body: '',
    createdAt: now,
    expiresAt: new Date(now.getTime() + Math.min(idem.ttlMs, 60_000)),
  };
  if (!(await uow.idempotency.claim(saved))) {
    const held = await uow.idempotency.find(accountId, saved.mode, saved.key);
    if (!held || held.statusCode === 0)
      throw new HttpError(
        429,
        'A request with this Idempotency-Key is still in progress; retry after 1 second.',
        { 'Retry-After': '1' },
        'rate_limited',
      );
    if (held.fingerprint !== idem.fingerprint)
      throw new HttpError(409, 'The Idempotency-Key was already used for a different request.', {}, 'idempotency_mismatch');
    return new Replay(held);
  }
  const keep = (statusCode: number, body: unknown) =>
    uow.idempotency.update({ ...saved, statusCode, body: JSON.stringify(body), expiresAt: new Date(now.getTime() + idem.ttlMs) });
  try {
    const answer = await run();
    await keep(200, answer);
    return answer;
  } catch (err) {
    // A refusal (400, 404, 409) is the answer to this request too; anything else frees the key.
    const refusal = err instanceof DomainError ? toErrorAnswer(err, 'current') : null;
    if (refusal && refusal.status < 500)
      await keep(refusal.status, { status_code: refusal.status, error: refusal.message, ...(refusal.code ? { code: refusal.code } : {}) });
    else await uow.idempotency.release(accountId, saved.mode, saved.key);
    throw err;
  }
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
      return idempotent(uow, worker, mine.assignment.accountId, idempotency, async () => {
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
