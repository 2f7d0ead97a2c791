// The handler tables of issue 18: the worker API's (/worker/v1) and the current generation's tag
// Workforce. Each is exhaustive (the compiler fails when an operation has no handler): an operation
// is implemented in identity.ts, assignments.ts, media.ts or staffing.ts.
import { workerQualityHandlers } from '../quality.ts';
import type { HandlerDeps } from '../tasks.ts';
import type { WorkerHandlerTable } from '../typed.ts';
import { assignmentHandlers } from './assignments.ts';
import type { WorkerApiDeps } from './deps.ts';
import { identityHandlers, workerManagementHandlers } from './identity.ts';
import { mediaHandlers } from './media.ts';
import { staffingHandlers } from './staffing.ts';

export function workerApiHandlers(deps: WorkerApiDeps): WorkerHandlerTable {
  return { ...identityHandlers(deps), ...assignmentHandlers(deps), ...mediaHandlers(deps), ...workerQualityHandlers(deps) };
}

/** The current generation's operations of tag Workforce (spread into its table in ../handlers.ts). */
export function workforceManagementHandlers(deps: HandlerDeps) {
  return { ...workerManagementHandlers(deps), ...staffingHandlers(deps) };
}
