// Training and evaluation tasks, the same in both generations: an absent value is left out, never null.
import type { components } from '../../../generated/current.ts';
import type { TrainingTaskPage } from '../../domain/training.ts';
import type { TrainingTask } from '../../domain/ports.ts';
import { stored } from './stored.ts';

type Schemas = components['schemas'];

/** The part whose wire type depends on the task type (each branch of the schema's oneOf, without the common keys). */
type TypeDetails<T = Schemas['TrainingTask']> = T extends unknown ? Omit<T, 'id' | 'kind' | 'created_at'> : never;

export function trainingTaskView(task: TrainingTask): Schemas['TrainingTask'] {
  return {
    id: task.id,
    ...stored<TypeDetails>({
      type: task.type,
      params: task.params,
      expected_response: task.expectedResponse,
      initial_response: task.initialResponse ?? undefined,
    }),
    kind: task.kind,
    created_at: task.createdAt.toISOString(),
  };
}

export const trainingTaskListView = (page: TrainingTaskPage, limit: number, offset: number): Schemas['TrainingTaskList'] => ({
  docs: page.tasks.map(trainingTaskView),
  total: page.total,
  limit,
  offset,
  has_more: page.hasMore,
});
