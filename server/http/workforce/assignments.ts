// The work loop of the worker API (issue 18): take work, heartbeat, submit, skip, release, review,
// history.
// Each function returns the handlers implemented so far (a Pick of the table, by operationId); the
// others answer 501 from not-yet.ts.
import type { WorkerHandlerTable } from '../typed.ts';
import type { WorkerApiDeps } from './deps.ts';

export function assignmentHandlers(_deps: WorkerApiDeps): Pick<WorkerHandlerTable, never> {
  return {};
}
