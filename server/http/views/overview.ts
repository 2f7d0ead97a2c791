// The overview as the current generation shows it (schema Overview).
import type { components } from '../../../generated/current.ts';
import type { Overview } from '../../domain/overview.ts';
import { stored } from './stored.ts';

type Schemas = components['schemas'];

export function overviewView(o: Overview): Schemas['Overview'] {
  return {
    as_of: o.asOf.toISOString(),
    tasks: o.tasks.map((t) => ({
      type: stored<Schemas['TaskType']>(t.type),
      status: stored<Schemas['TaskStatus']>(t.status),
      count: t.count,
    })),
    completed_per_day: o.completedPerDay,
    pending_by_project: o.pendingByProject,
    failed_callbacks: o.failedCallbacks,
    paused_workers: o.pausedWorkers,
  };
}
