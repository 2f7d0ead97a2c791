// Rows of a drizzle table as plain SQL: column list, placeholders with casts, values, and the
// object back from a result row. The hot statements are written in SQL (one round trip each); the
// columns still come from schema.ts, so there is one place where a column is named.
import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { withStatementName } from './errors.ts';
import type { Database, Execute, Statement } from './db.ts';

interface Column {
  prop: string;
  name: string;
  cast: '' | '::jsonb' | '::json' | '::timestamptz';
  /** drizzle's own reading of a driver value (drivers give dates as text inside drizzle's transactions). */
  read: (value: unknown) => unknown;
  write: (value: unknown) => unknown;
  /** A custom column (schema.ts's customType): its value is written by its own `toDriver`. */
  custom: boolean;
}

export interface RowCodec<T> {
  /** `"a", "b", ...` in schema order. */
  columnList: string;
  /** The same list qualified by a table alias: `t."a", t."b", ...`. */
  qualified(alias: string): string;
  /** `$n::cast, ...` for the columns, numbered from `first`. */
  placeholders(first: number): string;
  /** The values in column order (JSON as text, dates as ISO text: both drivers take them alike). */
  values(row: T): unknown[];
  fromRow(row: Record<string, unknown>): T;
}

export function rowCodec<T>(table: PgTable): RowCodec<T> {
  const columns: Column[] = Object.entries(getTableColumns(table)).map(([prop, c]) => ({
    prop,
    name: c.name,
    cast:
      c.getSQLType() === 'jsonb' ? '::jsonb' : c.getSQLType() === 'json' ? '::json' : c.columnType === 'PgTimestamp' ? '::timestamptz' : '',
    // A custom JSON column (tasks.audits) writes its own text.
    write:
      c.columnType === 'PgJsonb' || c.columnType === 'PgJson' ? (v: unknown) => JSON.stringify(v) : (v: unknown) => c.mapToDriverValue(v),
    read: (value: unknown) => (value instanceof Date ? value : c.mapFromDriverValue(value)),
    custom: c.columnType === 'PgCustomColumn',
  }));
  const columnList = columns.map((c) => `"${c.name}"`).join(', ');
  return {
    columnList,
    qualified: (alias) => columns.map((c) => `${alias}."${c.name}"`).join(', '),
    placeholders: (first) => columns.map((c, i) => `$${first + i}${c.cast}`).join(', '),
    values(row) {
      const r = row as Record<string, unknown>;
      return columns.map((c) => {
        const v = r[c.prop];
        if (v === null || v === undefined) return null;
        if (c.cast === '::jsonb' || c.cast === '::json' || c.custom) return c.write(v);
        if (c.cast === '::timestamptz') return (v as Date).toISOString();
        return v;
      });
    },
    fromRow(row) {
      const out: Record<string, unknown> = {};
      for (const c of columns) {
        const v = row[c.name];
        out[c.prop] = v === null || v === undefined ? null : c.read(v);
      }
      return out as T;
    },
  };
}

const names = new Map<string, string>();

/** A statement named after its text: prepared once per connection, whatever builds the text. */
export function statement(text: string, values: unknown[]): Statement {
  let name = names.get(text);
  if (name === undefined) {
    name = `humantask_${names.size}`;
    names.set(text, name);
  }
  return { name, text, values };
}

/** Runs statements inside a drizzle transaction (on its connection), as drizzle SQL. */
export function executeIn(tx: Database): Execute {
  return <R>(st: Statement) =>
    withStatementName(st.name, async () => {
      const parts = st.text.split(/\$(\d+)/);
      // One parameter each, an array too (drizzle would spread an array into a list of parameters).
      const chunks: SQL[] = parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${sql.param(st.values[Number(part) - 1])}`));
      const result = (await tx.execute(sql.join(chunks))) as unknown as { rows: R[] };
      return result.rows;
    });
}

export interface RecordsetCodec<T> {
  /** `"a", "b", ...` in schema order. */
  columnList: string;
  /** The column definitions of `jsonb_to_recordset(...) AS r(<definition>)`: `"a" text, "b" jsonb, ...`. */
  definition: string;
  /** A row as one JSON object of the recordset (JSON columns as JSON, times as ISO text). */
  toJson(row: T): Record<string, unknown>;
}

/**
 * Many rows of a table in one parameter: `INSERT INTO t (<columnList>) SELECT <columnList> FROM
 * jsonb_to_recordset($1::jsonb) AS r(<definition>)`, one statement text whatever the number of
 * rows (both drivers take the JSON text alike; arrays of parameters they do not).
 */
export function recordsetCodec<T>(table: PgTable): RecordsetCodec<T> {
  const columns = Object.entries(getTableColumns(table)).map(([prop, c]) => {
    const type = c.getSQLType();
    const toJson =
      c.columnType === 'PgJsonb'
        ? (v: unknown) => v
        : type === 'jsonb'
          ? (v: unknown) => JSON.parse(c.mapToDriverValue(v) as string) as unknown
          : c.columnType === 'PgTimestamp'
            ? (v: unknown) => (v as Date).toISOString()
            : (v: unknown) => v;
    return { prop, name: c.name, type, toJson };
  });
  return {
    columnList: columns.map((c) => `"${c.name}"`).join(', '),
    definition: columns.map((c) => `"${c.name}" ${c.type}`).join(', '),
    toJson(row) {
      const r = row as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const c of columns) {
        const v = r[c.prop];
        out[c.name] = v === null || v === undefined ? null : c.toJson(v);
      }
      return out;
    },
  };
}

/** Descending as the list indexes are made (drizzle's `.desc()` is DESC NULLS LAST). */
export const descNullsLast = (column: AnyPgColumn) => sql`${column} desc nulls last`;
