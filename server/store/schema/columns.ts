import { customType, json, timestamp } from 'drizzle-orm/pg-core';
import type { TaskAudit } from '../../domain/model.ts';
import type { Draft } from '../../domain/workforce/model.ts';

export const ts = (name: string) => timestamp(name, { precision: 3, withTimezone: true, mode: 'date' });

/**
 * What a customer sent and gets back (task parameters, metadata, a callback's body) is `json`, not
 * `jsonb`: `json` keeps the text as written, so object keys come back in the customer's order
 * (`jsonb` sorts them by length). Nothing queries inside these columns.
 */
export const customerJson = <T>(name: string) => json(name).$type<T>();

/** A task's reviews: JSON with snake_case keys and ISO times in the row (as ever), Dates in the domain. */
export const auditsJson = customType<{ data: TaskAudit[]; driverData: string }>({
  dataType: () => 'jsonb',
  toDriver: (list) =>
    JSON.stringify(
      list.map((a) => ({
        audited_by: a.auditedBy,
        audited_at: a.auditedAt.toISOString(),
        audit_time_secs: a.auditTimeSecs,
        audit_result: a.result,
        audit_source: a.source,
        ...(a.comments !== undefined ? { comments: a.comments } : {}),
      })),
    ),
  fromDriver: (value: unknown) =>
    (typeof value === 'string' ? JSON.parse(value) : value).map((a: Record<string, unknown>) => ({
      auditedBy: a.audited_by,
      auditedAt: new Date(a.audited_at as string),
      auditTimeSecs: a.audit_time_secs,
      result: a.audit_result,
      source: a.audit_source,
      ...(a.comments !== undefined ? { comments: a.comments } : {}),
    })),
});

/**
 * A draft of live work: JSON the server never looks into, kept as its text. As jsonb, every
 * heartbeat made the database parse up to a megabyte of JSON and every read print it again (on
 * the embedded database, on the server's own thread).
 */
export const draftText = customType<{ data: Draft; driverData: string }>({
  dataType: () => 'text',
  toDriver: (draft) => JSON.stringify(draft),
  fromDriver: (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as Draft,
});
