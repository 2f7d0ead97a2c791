// Batches: a lifecycle (staging → in_progress → completed), joining rules for tasks, and a
// completion callback queued in the same transaction as the change that completes the batch.
import { assertTypeEnabled } from './accounts.ts';
import { callbackAddressProblem } from './callback-address.ts';
import { conflict, invalid, notFound } from './errors.ts';
import { newTaskId } from './ids.ts';
import { newOutboxMessage } from './outbox.ts';
import { assertTakesWork, projectByName } from './projects.ts';
import { calibrationHold } from './quality/calibration.ts';
import type { Caller, Json, Task } from './model.ts';
import type { Batch, BatchFilters, Repositories, UnitOfWork } from './ports.ts';

export interface CreateBatchInput {
  project: string;
  name: string;
  callback?: string;
  calibration_batch?: boolean;
  self_label_batch?: boolean;
  metadata?: Json;
}

async function batchByName(repos: Repositories, caller: Caller, name: string, forUpdate = false): Promise<Batch> {
  const batch = await repos.batches.get(caller.account.accountId, caller.mode, name, { forUpdate });
  if (!batch) throw notFound(`Batch "${name}" not found.`);
  return batch;
}

export async function createBatch(uow: UnitOfWork, caller: Caller, input: CreateBatchInput, now: Date): Promise<Batch> {
  return uow.transaction(async (repos) => {
    const project = await projectByName(repos, caller, input.project);
    assertTypeEnabled(caller, project.type);
    assertTakesWork(project, 'batch');
    if ((input.calibration_batch || input.self_label_batch) && !project.rapid) {
      throw invalid('calibration_batch and self_label_batch are for batches of rapid projects only.');
    }
    if (input.calibration_batch && input.self_label_batch) throw invalid('A batch is a calibration batch or a self-label batch, not both.');
    const badCallback = input.callback !== undefined ? callbackAddressProblem(input.callback) : null;
    if (badCallback) throw invalid(`callback ${badCallback}.`);
    const batch: Batch = {
      batchId: newTaskId(now),
      accountId: caller.account.accountId,
      mode: caller.mode,
      name: input.name,
      project: project.name,
      // Rapid and Studio batches are staged until finalized; Enterprise batches start at once.
      status: project.rapid || project.studio ? 'staging' : 'in_progress',
      callback: input.callback ?? null,
      metadata: input.metadata ?? {},
      calibrationBatch: input.calibration_batch ?? false,
      selfLabelBatch: input.self_label_batch ?? false,
      archived: false,
      createdAt: now,
      completedAt: null,
      auditedAt: null,
    };
    if (!(await repos.batches.insert(batch))) throw conflict(`A batch named "${input.name}" exists already.`);
    return batch;
  });
}

export async function getBatch(uow: UnitOfWork, caller: Caller, name: string): Promise<Batch> {
  return batchByName(uow, caller, name);
}

/** A batch's status and how many of its tasks are in each status. */
export interface BatchCounts {
  status: Batch['status'];
  tasks: Record<'pending' | 'completed' | 'canceled' | 'error', number>;
  /** Why its tasks are not dispatched to workers (the calibration gate), or null. */
  held: string | null;
}

export async function batchStatus(uow: UnitOfWork, caller: Caller, name: string): Promise<BatchCounts> {
  const batch = await batchByName(uow, caller, name);
  const [tasks, held] = await Promise.all([
    uow.batches.taskCounts(caller.account.accountId, caller.mode, name),
    calibrationHold(uow, caller, batch),
  ]);
  return { status: batch.status, tasks, held };
}

export async function listBatches(uow: UnitOfWork, caller: Caller, filters: BatchFilters, limit: number, offset: number) {
  const { batches, total } = await uow.batches.list(caller.account.accountId, caller.mode, filters, { limit, offset });
  return { batches: batches.slice(0, limit), total, hasMore: batches.length > limit };
}

export async function setBatchMetadata(uow: UnitOfWork, caller: Caller, name: string, metadata: Json): Promise<Batch> {
  return uow.transaction(async (repos) => {
    const batch = await batchByName(repos, caller, name, true);
    batch.metadata = metadata;
    await repos.batches.update(batch);
    return batch;
  });
}

/** Archives a batch or undoes it; a batch already so is returned unchanged. */
export async function setBatchArchived(uow: UnitOfWork, caller: Caller, name: string, archived: boolean): Promise<Batch> {
  return uow.transaction(async (repos) => {
    const batch = await batchByName(repos, caller, name, true);
    if (batch.archived === archived) return batch;
    batch.archived = archived;
    await repos.batches.update(batch);
    return batch;
  });
}

export async function finalizeBatch(uow: UnitOfWork, caller: Caller, name: string, now: Date): Promise<Batch> {
  return uow.transaction(async (repos) => {
    const batch = await batchByName(repos, caller, name, true);
    if (batch.status !== 'staging') return batch; // nothing to do: still 200
    const project = await repos.projects.get(caller.account.accountId, caller.mode, batch.project); // Stryker disable next-line OptionalChaining: a batch's project always exists (projects are never deleted)
    if (
      project?.rapid &&
      !batch.calibrationBatch &&
      !(await repos.batches.hasCompletedCalibration(caller.account.accountId, caller.mode, batch.project))
    ) {
      throw invalid(`Batch "${name}" cannot be finalized yet: no calibration batch of project "${batch.project}" has completed.`);
    }
    batch.status = 'in_progress';
    await repos.batches.update(batch);
    await completeBatchIfDone(repos, batch, now);
    return batch;
  });
}

/** The batch a new task joins, checked against the joining rules; its project name. */
export async function batchToJoin(repos: Repositories, caller: Caller, name: string, project: string | undefined): Promise<Batch> {
  const batch = await batchByName(repos, caller, name, true);
  if (project !== undefined && project !== batch.project) {
    throw invalid(`batch: "${name}" belongs to project "${batch.project}", not "${project}".`);
  }
  if (batch.archived) throw invalid(`batch: "${name}" is archived and takes no more tasks (unarchive it first).`);
  const owner = await repos.projects.get(caller.account.accountId, caller.mode, batch.project);
  if ((owner?.rapid || owner?.studio) && batch.status !== 'staging') {
    throw invalid(`batch: "${name}" was finalized; a ${owner.rapid ? 'rapid' : 'studio'} batch takes tasks only while staging.`);
  }
  if (batch.status === 'completed') {
    // An Enterprise batch takes tasks until it is archived: a new task reopens it, and it completes
    // again (with a new callback) when none of its tasks is pending. The batch row is locked.
    batch.status = 'in_progress';
    batch.completedAt = null;
    await repos.batches.update(batch);
  }
  return batch;
}

/**
 * A batch with at least one task completes when none of its tasks is pending any more. Called in
 * the transaction that changed a task; the batch row is locked, so that two tasks finishing at
 * once complete it (and queue its callback) exactly once.
 */
async function completeBatchIfDone(repos: Repositories, batch: Batch, now: Date): Promise<void> {
  if (batch.status !== 'in_progress') return;
  const counts = await repos.batches.taskCounts(batch.accountId, batch.mode, batch.name);
  const total = counts.pending + counts.completed + counts.canceled + counts.error;
  if (total === 0 || counts.pending > 0) return;
  batch.status = 'completed';
  batch.completedAt = now;
  await repos.batches.update(batch);
  if (batch.callback) {
    const counts3 = { completed: counts.completed, canceled: counts.canceled, error: counts.error };
    await repos.outbox.add(
      newOutboxMessage(
        {
          accountId: batch.accountId,
          mode: batch.mode,
          event: 'batch_completed',
          subject: batch.name,
          url: batch.callback,
          payload: repos.payloads.batchCompleted(batch, counts3),
        },
        now,
      ),
    );
  }
}

/** After a task left `pending`: its batch may be done. */
export async function taskSettled(repos: Repositories, task: Task, now: Date): Promise<void> {
  if (task.batch === null || task.status === 'pending') return;
  const batch = await repos.batches.get(task.accountId, task.mode, task.batch, { forUpdate: true });
  if (batch) await completeBatchIfDone(repos, batch, now);
}

/** A batch that tasks joined in bulk (an import) may be done now: settled once, not after each task. */
export async function settleBatch(repos: Repositories, caller: Caller, name: string, now: Date): Promise<void> {
  const batch = await repos.batches.get(caller.account.accountId, caller.mode, name, { forUpdate: true });
  if (batch) await completeBatchIfDone(repos, batch, now);
}
