// Staffing of projects and batches, and who worked on a task (current generation, tag Workforce;
// issue 18).
// Each function returns the handlers implemented so far (a Pick of the table, by operationId); the
// others answer 501 from not-yet.ts.
import type { HandlerDeps } from '../tasks.ts';
import type { HandlerTable, Operations } from '../typed.ts';

export function staffingHandlers(_deps: HandlerDeps): Pick<HandlerTable<Operations['current']>, never> {
  return {};
}
