// Staffing of projects and batches, and who worked on a task (current generation, tag Workforce;
// issue 18). The rules are in domain/workforce/staffing.ts and assignments.ts.
import { wallClock } from '../../domain/clock.ts';
import type { Caller } from '../../domain/model.ts';
import { putStaffing, staffingInForce, type StaffingScope, type StaffingSource } from '../../domain/workforce/staffing.ts';
import type { Staffing } from '../../domain/workforce/model.ts';
import { taskAssignments } from '../../domain/workforce/assignments.ts';
import type { components } from '../../../generated/current.ts';
import type { HandlerDeps } from '../tasks.ts';
import type { HandlerTable, Operations } from '../typed.ts';
import { taskAssignmentView } from '../views/assignments.ts';

type Wire = components['schemas'];

/** The contract's review sampling when a PUT leaves it out (ReviewSampling's defaults). */
const defaultSampling = { new_worker_tasks: 20, rate: 0.1 };

/**
 * The staffing on the wire. Nothing set (`default`): the operator's workforce attempts and reviews
 * and nothing is sampled for review (an unstaffed live task completes on its first answer).
 */
function staffingView({ staffing: s, source }: { staffing: Staffing; source: StaffingSource }): Wire['Staffing'] {
  return {
    attempt: s.attemptSubjects ?? ['operator'],
    review: s.reviewSubjects ?? ['operator'],
    review_sampling: { new_worker_tasks: s.reviewFirst, rate: s.reviewRate },
    source,
    ...(source !== 'default' ? { updated_at: s.updatedAt.toISOString() } : {}),
  };
}

async function setStaffing(deps: HandlerDeps, caller: Caller, scope: StaffingScope, body: Wire['StaffingRequest']) {
  const sampling = { ...defaultSampling, ...body.review_sampling };
  await putStaffing(
    deps.uow,
    caller,
    scope,
    { attempt: body.attempt, review: body.review, reviewFirst: sampling.new_worker_tasks, reviewRate: sampling.rate },
    (deps.now ?? wallClock)(),
  );
  return staffingView(await staffingInForce(deps.uow, caller, scope));
}

export function staffingHandlers(
  deps: HandlerDeps,
): Pick<
  HandlerTable<Operations['current']>,
  'getProjectStaffing' | 'setProjectStaffing' | 'getBatchStaffing' | 'setBatchStaffing' | 'listTaskAssignments'
> {
  const { uow } = deps;
  return {
    getProjectStaffing: async ({ caller, path }) => staffingView(await staffingInForce(uow, caller, { project: path.projectName })),
    setProjectStaffing: async ({ caller, path, body }) => setStaffing(deps, caller, { project: path.projectName }, body),
    getBatchStaffing: async ({ caller, path }) => staffingView(await staffingInForce(uow, caller, { project: '', batch: path.batchName })),
    setBatchStaffing: async ({ caller, path, body }) => setStaffing(deps, caller, { project: '', batch: path.batchName }, body),
    listTaskAssignments: async ({ caller, path }) => {
      const list = await taskAssignments(uow, caller, path.taskId);
      // The account's own workers are named by id; the operator's workforce by an opaque handle.
      const own = new Map<string, boolean>();
      for (const id of new Set(list.map((a) => a.workerId)))
        own.set(id, (await uow.workers.get(id))?.accountId === caller.account.accountId);
      return { docs: list.map((a) => taskAssignmentView(a, own.get(a.workerId) ?? false)) };
    },
  };
}
