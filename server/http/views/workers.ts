// Workers and their tokens on the wire: the worker API's view of oneself, and the current
// generation's view of an account's own workers. Absent values are left out, never null.
import type { components as Current } from '../../../generated/current.ts';
import type { components as Workforce } from '../../../generated/workforce.ts';
import { workforceIdOf } from '../../domain/workforce/handles.ts';
import type { WorkerRecord, WorkerTokenRecord } from '../../domain/workforce/identity.ts';

export function workerView(w: WorkerRecord): Current['schemas']['Worker'] {
  return {
    worker_id: w.workerId,
    workforce_id: workforceIdOf(w),
    email: w.email,
    display_name: w.displayName,
    roles: w.roles,
    calibrator: w.calibrator,
    status: w.status,
    created_at: w.createdAt.toISOString(),
    last_seen_at: w.lastSeenAt ? w.lastSeenAt.toISOString() : undefined,
  };
}

export function workerProfileView(w: WorkerRecord): Workforce['schemas']['WorkerProfile'] {
  return {
    worker_id: w.workerId,
    email: w.email,
    display_name: w.displayName,
    roles: w.roles,
    calibrator: w.calibrator,
    status: w.status,
    workforce: w.accountId === null ? 'operator' : 'account',
    workforce_id: workforceIdOf(w),
    mode: w.mode,
    created_at: w.createdAt.toISOString(),
  };
}

export function workerTokenView(t: WorkerTokenRecord): Workforce['schemas']['WorkerToken'] {
  return {
    token_id: t.tokenId,
    name: t.name ?? '',
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt ? t.expiresAt.toISOString() : undefined,
    last_used_at: t.lastUsedAt ? t.lastUsedAt.toISOString() : undefined,
  };
}
