// The wire shapes of imports and exports (tag "Imports and exports").
import type { components } from '../../../generated/current.ts';
import type { ExportRecord, ImportRecord, RefusedLine } from '../../domain/ports.ts';
import { exportTarget, exportTargetUrl } from '../../transfer/exports.ts';
import { stored } from './stored.ts';

type Schemas = components['schemas'];

export function importView(r: ImportRecord, refused: RefusedLine[]): Schemas['Import'] {
  const s = r.settings;
  return {
    import_id: r.importId,
    // An upload is answered only once received: `receiving` is never shown.
    state: r.state === 'receiving' ? 'queued' : r.state,
    format: r.format,
    type:
      s.type !== undefined ? stored<Schemas['TaskType']>(s.type === 'documentranscription' ? 'documenttranscription' : s.type) : undefined,
    project: s.project,
    batch: s.batch,
    source_url: s.sourceUrl,
    bytes_total: r.bytesTotal,
    bytes_read: r.bytesRead,
    lines_read: r.linesRead,
    created: r.created,
    duplicates: r.duplicates,
    refused: r.refused,
    refused_lines: refused.map((l): Schemas['Import']['refused_lines'][number] => ({
      line: l.line,
      status_code: l.statusCode,
      error: l.error,
    })),
    max_refused_share: r.maxRefusedShare,
    error: r.error ?? undefined,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    finished_at: r.finishedAt !== null ? r.finishedAt.toISOString() : undefined,
  };
}

export function exportView(r: ExportRecord, link: { url: string; expiresAt: Date; fileName: string } | null): Schemas['Export'] {
  return {
    export_id: r.exportId,
    state: r.state,
    format: stored<Schemas['ExportFormat']>(r.format),
    view: r.view,
    filters: r.filterQuery,
    tasks_total: r.tasksTotal,
    tasks_written: r.tasksWritten,
    skipped: r.skipped.slice(0, 100),
    size_bytes: r.state === 'completed' ? (r.sizeBytes ?? undefined) : undefined,
    target: exportTarget(r) !== null ? exportTarget(r)! : undefined,
    target_url: r.state === 'completed' && exportTargetUrl(r) !== null ? exportTargetUrl(r)! : undefined,
    file_name: link?.fileName,
    download_url: link?.url,
    download_expires_at: link?.expiresAt.toISOString(),
    expires_at: r.state === 'completed' && r.expiresAt !== null ? r.expiresAt.toISOString() : undefined,
    error: r.error ?? undefined,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    finished_at: r.finishedAt !== null ? r.finishedAt.toISOString() : undefined,
  };
}
