// Issue 18's operations that nobody has implemented yet: each answers 501 with the code
// `not_implemented`. Whoever implements one deletes its line here and adds its handler to
// identity.ts, assignments.ts or staffing.ts: handlers.ts spreads this table under theirs, and the
// compiler fails when an operation is in neither. This file goes away when the last line does.
import { HttpError } from '../errors.ts';

const notYet = (operationId: string) => async (): Promise<never> => {
  throw new HttpError(501, `Not implemented yet: ${operationId} (issue 18, the workforce).`, {}, 'not_implemented');
};

/** Worker API (/worker/v1) operations not implemented yet. */
export const workerApiNotYet = {
};

/** Current-generation operations of tag Workforce not implemented yet. */
export const managementNotYet = {
  getProjectStaffing: notYet('getProjectStaffing'),
  setProjectStaffing: notYet('setProjectStaffing'),
  getBatchStaffing: notYet('getBatchStaffing'),
  setBatchStaffing: notYet('setBatchStaffing'),
  listTaskAssignments: notYet('listTaskAssignments'),
};
