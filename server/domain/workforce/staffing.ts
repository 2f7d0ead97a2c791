// Staffing of a project or of one of its batches: who may attempt, who may review, how much is
// reviewed. Set with the customer's API key; read by the claim (store/work.ts) and review sampling.
import { invalid, notFound } from '../errors.ts';
import type { Caller } from '../model.ts';
import type { UnitOfWork } from '../ports.ts';
import type { Staffing } from './model.ts';

/** The group subjects: the operator's whole workforce, or all of the account's own workers. */
const STAFFING_GROUPS = ['operator', 'account'] as const;

export interface StaffingScope {
  project: string;
  /** A batch of the project; absent: the project's own staffing. */
  batch?: string | undefined;
}

export interface StaffingChange {
  /** Worker ids and groups; null: the default (the account's own workers and the operator's workforce). */
  attempt?: string[] | null | undefined;
  review?: string[] | null | undefined;
  reviewFirst?: number | undefined;
  reviewRate?: number | undefined;
}

/** The project (and batch) the scope names, for this account and mode: 404 otherwise. */
async function resolveScope(uow: UnitOfWork, caller: Caller, scope: StaffingScope): Promise<{ project: string; batch: string }> {
  const { accountId } = caller.account;
  if (scope.batch !== undefined) {
    const batch = await uow.batches.get(accountId, caller.mode, scope.batch);
    if (!batch) throw notFound(`Batch "${scope.batch}" not found.`);
    return { project: batch.project, batch: batch.name };
  }
  const project = await uow.projects.get(accountId, caller.mode, scope.project);
  if (!project) throw notFound(`Project "${scope.project}" not found.`);
  return { project: project.name, batch: '' };
}

export type StaffingSource = 'batch' | 'project' | 'default';

/** The staffing in force on a scope and where it is set: the batch's own, else its project's, else the defaults. */
export async function staffingInForce(
  uow: UnitOfWork,
  caller: Caller,
  scope: StaffingScope,
): Promise<{ staffing: Staffing; source: StaffingSource }> {
  const resolved = await resolveScope(uow, caller, scope);
  const { accountId } = caller.account;
  if (resolved.batch !== '') {
    const own = await uow.work.getStaffing(accountId, caller.mode, resolved.project, resolved.batch);
    if (own) return { staffing: own, source: 'batch' };
  }
  const project = await uow.work.getStaffing(accountId, caller.mode, resolved.project, '');
  if (project) return { staffing: project, source: 'project' };
  return { staffing: await getStaffing(uow, caller, scope), source: 'default' };
}

/** The staffing set on this scope; the defaults when none was set. */
export async function getStaffing(uow: UnitOfWork, caller: Caller, scope: StaffingScope): Promise<Staffing> {
  const { project, batch } = await resolveScope(uow, caller, scope);
  return (
    (await uow.work.getStaffing(caller.account.accountId, caller.mode, project, batch)) ?? {
      accountId: caller.account.accountId,
      mode: caller.mode,
      project,
      batch,
      attemptSubjects: null,
      reviewSubjects: null,
      reviewFirst: 0,
      reviewRate: 0,
      updatedAt: new Date(0),
    }
  );
}

function subjects(name: string, list: string[] | null | undefined, kept: string[] | null): string[] | null {
  if (list === undefined) return kept;
  if (list === null) return null;
  const unique = [...new Set(list.map((s) => s.trim()))];
  if (unique.some((s) => s === '')) throw invalid(`${name} holds an empty subject: name worker ids or "operator".`);
  return unique;
}

/**
 * Every worker id named is a worker of the caller's own workforce, of the key's mode, that is not
 * removed: 404 naming the first that is not.
 */
async function assertOwnWorkers(uow: UnitOfWork, caller: Caller, lists: (string[] | null)[]) {
  const ids = [...new Set(lists.flatMap((l) => l ?? []).filter((s) => !(STAFFING_GROUPS as readonly string[]).includes(s)))];
  for (const id of ids) {
    const worker = await uow.workers.get(id);
    if (!worker || worker.accountId !== caller.account.accountId || worker.mode !== caller.mode || worker.status === 'removed')
      throw notFound(`Worker ${id} not found in this account's workforce.`);
  }
}

/** Sets the scope's staffing; what the change leaves out is kept. */
export async function putStaffing(
  uow: UnitOfWork,
  caller: Caller,
  scope: StaffingScope,
  change: StaffingChange,
  now: Date,
): Promise<Staffing> {
  const current = await getStaffing(uow, caller, scope);
  const reviewRate = change.reviewRate ?? current.reviewRate;
  if (!(reviewRate >= 0 && reviewRate <= 1)) throw invalid(`review_rate is ${reviewRate}: a share from 0 to 1.`);
  const reviewFirst = change.reviewFirst ?? current.reviewFirst;
  if (!Number.isInteger(reviewFirst) || reviewFirst < 0) throw invalid(`review_first is ${reviewFirst}: a count, 0 or more.`);
  const next: Staffing = {
    ...current,
    attemptSubjects: subjects('attempt', change.attempt, current.attemptSubjects),
    reviewSubjects: subjects('review', change.review, current.reviewSubjects),
    reviewFirst,
    reviewRate,
    updatedAt: now,
  };
  await assertOwnWorkers(uow, caller, [next.attemptSubjects, next.reviewSubjects]);
  await uow.work.putStaffing(next);
  return next;
}
