// What the member's role may call, from the contract's access table (the server puts it into the
// bundle: server/console.ts). A screen or a button whose operation the role may not call is not
// drawn; the server refuses such a call anyway (403 naming the role needed).
import type { operations } from '../generated/current.ts';
import type { Role } from './api.ts';

export type OperationId = keyof operations;

/** Whether a member of `role` may call the operation. */
export function may(role: Role, operation: OperationId): boolean {
  const least = HUMANTASK_ACCESS.operations[operation];
  if (least === undefined) return false;
  if (least === null) return true;
  return HUMANTASK_ACCESS.roles.indexOf(role) >= HUMANTASK_ACCESS.roles.indexOf(least);
}
