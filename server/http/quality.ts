// Handlers of the quality loop (issue 19): the current generation's tag Quality and the worker API's
// own figures. The quality policy is served in full; the project's quality figures and promoting a
// task answer 501 until the quality loop (training, evaluation, consensus, scoring) runs, because
// their figures and expected answers come from scores this server does not compute yet.
import { notFound } from '../domain/errors.ts';
import { getQualityPolicy, setQualityPolicy } from '../domain/quality/policy.ts';
import { workerStats } from '../domain/quality/stats.ts';
import { HttpError } from './errors.ts';
import { parseTimeFilter, type HandlerDeps } from './tasks.ts';
import type { HandlerTable, Operations, WorkerHandlerTable } from './typed.ts';
import { qualityPolicyView, workerStatsView } from './views/quality.ts';
import type { WorkerApiDeps } from './workforce/deps.ts';

/** A contract operation this server does not offer yet: 501, naming what is missing. */
const notImplemented = (what: string) => new HttpError(501, `Not implemented yet: ${what}`);

export function qualityHandlers({
  uow,
}: HandlerDeps): Pick<
  HandlerTable<Operations['current']>,
  'getProjectQualityPolicy' | 'setProjectQualityPolicy' | 'getProjectQuality' | 'promoteTask'
> {
  return {
    getProjectQualityPolicy: async ({ caller, path, query }) =>
      qualityPolicyView(await getQualityPolicy(uow, caller, path.projectName, query.version)),
    setProjectQualityPolicy: async ({ caller, path, body }) =>
      qualityPolicyView(await setQualityPolicy(uow, caller, path.projectName, body, new Date())),
    async getProjectQuality({ caller, path, query }) {
      parseTimeFilter('since', query.since);
      await getQualityPolicy(uow, caller, path.projectName); // 404 for a project the caller does not have
      throw notImplemented(
        'project quality figures (agreement, per-worker accuracy, calibration score) need the quality loop, which this server does not run yet.',
      );
    },
    async promoteTask({ caller, path }) {
      if (!(await uow.tasks.get(caller.account.accountId, caller.mode, path.taskId))) throw notFound(`Task ${path.taskId} not found.`);
      throw notImplemented(
        'promoting an audited task to a training or evaluation task comes with the quality loop, which this server does not run yet.',
      );
    },
  };
}

export function workerQualityHandlers({ uow }: WorkerApiDeps): Pick<WorkerHandlerTable, 'getWorkerStats'> {
  return {
    getWorkerStats: async ({ worker, query }) =>
      workerStatsView(await workerStats(uow, worker, parseTimeFilter('since', query.since), new Date())),
  };
}
