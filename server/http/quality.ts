// Handlers of the quality loop (issue 19): the current generation's tag Quality (the policy, the
// project's figures, promotion of an audited task) and the worker API's own figures.
import { wallClock } from '../domain/clock.ts';
import { projectQuality } from '../domain/quality/metrics.ts';
import { getQualityPolicy, setQualityPolicy } from '../domain/quality/policy.ts';
import { promoteTask } from '../domain/quality/promote.ts';
import { workerStats } from '../domain/quality/stats.ts';
import { parseTimeFilter } from './filters.ts';
import type { HandlerDeps } from './tasks.ts';
import type { HandlerTable, Operations, WorkerHandlerTable } from './typed.ts';
import { qualityPolicyView, projectQualityView, workerStatsView } from './views/quality.ts';
import { trainingTaskView } from './views/training.ts';
import type { WorkerApiDeps } from './workforce/deps.ts';

export function qualityHandlers({
  uow,
  contract,
  now = wallClock,
}: HandlerDeps): Pick<
  HandlerTable<Operations['current']>,
  'getProjectQualityPolicy' | 'setProjectQualityPolicy' | 'getProjectQuality' | 'promoteTask'
> {
  return {
    getProjectQualityPolicy: async ({ caller, path, query }) =>
      qualityPolicyView(await getQualityPolicy(uow, caller, path.projectName, query.version)),
    setProjectQualityPolicy: async ({ caller, path, body }) =>
      qualityPolicyView(await setQualityPolicy(uow, caller, path.projectName, body, now())),
    getProjectQuality: async ({ caller, path, query }) =>
      projectQualityView(
        caller.account.accountId,
        await projectQuality(uow, caller, path.projectName, parseTimeFilter('since', query.since), now()),
      ),
    promoteTask: async ({ caller, path, body }) =>
      trainingTaskView(
        await promoteTask(
          uow,
          caller,
          path.taskId,
          { kind: body.kind, initialResponse: body.initial_response },
          contract.checkResponse,
          now(),
        ),
      ),
  };
}

export function workerQualityHandlers({ uow, now }: WorkerApiDeps): Pick<WorkerHandlerTable, 'getWorkerStats'> {
  return {
    // The work loop's clock: the figures are as of the clock the work they count was stamped by.
    getWorkerStats: async ({ worker, query }) =>
      workerStatsView(await workerStats(uow, worker, parseTimeFilter('since', query.since), now())),
  };
}
