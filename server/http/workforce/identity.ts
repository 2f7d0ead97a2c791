// Worker identity (issue 18): log in and out, who am I, API tokens (worker API), and the account's
// own workers (current generation, tag Workforce).
// Each function returns the handlers implemented so far (a Pick of the table, by operationId); the
// others answer 501 from not-yet.ts.
import type { HandlerDeps } from '../tasks.ts';
import type { WorkerApiDeps } from './deps.ts';
import type { HandlerTable, Operations, WorkerHandlerTable } from '../typed.ts';

export function identityHandlers(_deps: WorkerApiDeps): Pick<WorkerHandlerTable, never> {
  return {};
}

export function workerManagementHandlers(_deps: HandlerDeps): Pick<HandlerTable<Operations['current']>, never> {
  return {};
}
