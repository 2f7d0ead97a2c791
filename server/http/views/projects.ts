// Projects and batches, the same in both generations.
import type { components } from '../../../generated/current.ts';
import type { BatchCounts } from '../../domain/batches.ts';
import type { ProjectDetails } from '../../domain/projects.ts';
import type { Batch } from '../../domain/ports.ts';
import { stored } from './stored.ts';

type Schemas = components['schemas'];

export function projectView(d: ProjectDetails): Schemas['Project'] {
  const history = d.params.map((v) => ({ version: v.version, created_at: v.createdAt.toISOString(), ...v.params }));
  return {
    type: stored<Schemas['TaskType']>(d.project.type),
    name: d.project.name,
    created_at: d.project.createdAt.toISOString(),
    rapid: d.project.rapid,
    studio: d.project.studio,
    archived: d.project.archived,
    param_history: history,
    paramHistory: history,
    ontologyHistory: d.ontologies.map((v): Schemas['ProjectOntologyVersion'] => ({
      version: v.version,
      name: v.name ?? undefined,
      created_at: v.createdAt.toISOString(),
      ontology: stored<Schemas['Ontology']>(v.ontology),
    })),
  };
}

export const projectListView = (list: ProjectDetails[]): Schemas['ProjectList'] => list.map(projectView);

export function batchView(b: Batch): Schemas['Batch'] {
  return {
    project: b.project,
    name: b.name,
    status: b.status,
    callback: b.callback ?? undefined,
    created_at: b.createdAt.toISOString(),
    completed_at: b.completedAt !== null ? b.completedAt.toISOString() : undefined,
    audited_at: b.auditedAt !== null && b.auditedAt !== undefined ? b.auditedAt.toISOString() : undefined,
    metadata: b.metadata,
    calibration_batch: b.calibrationBatch,
    self_label_batch: b.selfLabelBatch,
    archived: b.archived,
  };
}

export const batchListView = (
  page: { batches: Batch[]; total: number; hasMore: boolean },
  limit: number,
  offset: number,
): Schemas['BatchList'] => ({
  docs: page.batches.map(batchView),
  total: page.total,
  totalDocs: page.total,
  limit,
  offset,
  has_more: page.hasMore,
});

export const batchCountsView = (counts: BatchCounts): Schemas['BatchTaskCounts'] => ({
  status: counts.status,
  ...counts.tasks,
  held: counts.held ?? undefined,
});
