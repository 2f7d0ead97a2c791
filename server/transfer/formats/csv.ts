// CSV: every task as one flat row (RFC 4180, csv-stringify); the nested parts as JSON text.
import { stringify } from 'csv-stringify/sync';
import type { Json, Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FormatContext } from './format.ts';

const csvColumns = [
  'task_id',
  'type',
  'status',
  'created_at',
  'completed_at',
  'project',
  'batch',
  'unique_id',
  'tags',
  'attachment',
  'metadata',
  'params',
  'response',
] as const;

async function* csvRows(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<string> {
  yield stringify([[...csvColumns]]);
  for await (const task of tasks) {
    const view = ctx.view(task);
    const params = (view.params ?? {}) as Json;
    const row = [
      view.task_id,
      view.type,
      view.status,
      view.created_at,
      view.completed_at ?? '',
      view.project ?? '',
      view.batch ?? '',
      view.unique_id ?? '',
      Array.isArray(view.tags) ? view.tags.join(',') : '',
      typeof params.attachment === 'string' ? params.attachment : '',
      JSON.stringify(view.metadata ?? {}),
      JSON.stringify(params),
      view.response === undefined ? '' : JSON.stringify(view.response),
    ];
    yield stringify([row]);
  }
}

export const csvFormat: ExportFormatDefinition = { name: 'csv', types: null, suffix: 'csv.gz', writer: { kind: 'file', write: csvRows } };
