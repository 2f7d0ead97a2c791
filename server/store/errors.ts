// What of a database error may be logged or shown: its SQLSTATE code, the constraint, table or
// column it names, and the name of our statement; never the SQL text, its parameters, or the
// server's message and detail (which quote values: `invalid input syntax for type integer: "..."`).

/** A loggable description of any error; a database error anywhere in its cause chain is reduced. */
export function safeError(err: unknown): Record<string, unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: walks the cause chain of whatever a driver threw
  for (let e: any = err; e && typeof e === 'object'; e = e.cause) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) {
      const out: Record<string, unknown> = { type: 'DatabaseError', code: e.code };
      for (const k of ['constraint', 'table', 'column', 'routine'] as const) if (typeof e[k] === 'string') out[k] = e[k];
      const statement = (err as { statement?: unknown }).statement ?? e.statement;
      if (typeof statement === 'string') out.statement = statement;
      return out;
    }
  }
  if (err instanceof Error) {
    // Drizzle's "Failed query: <sql> params: ..." without a database error under it (a lost connection).
    if (/^Failed query:/.test(err.message))
      return { type: err.name, message: 'a query failed (connection or driver error)', cause: safeError(err.cause) };
    return { type: err.name, message: err.message, stack: err.stack };
  }
  return { type: typeof err, message: String(err) };
}

/** Notes our statement's name on an error it raised, for safeError. */
export function withStatementName<T>(name: string, run: () => Promise<T>): Promise<T> {
  return run().catch((err: unknown) => {
    if (err && typeof err === 'object') (err as { statement?: string }).statement = name;
    throw err;
  });
}

/** Whether a database error anywhere in the cause chain is a unique violation of this constraint. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  // biome-ignore lint/suspicious/noExplicitAny: walks the cause chain of whatever a driver threw
  for (let e: any = err; e; e = e.cause) {
    if (e.code === '23505' && (e.constraint === constraint || String(e.message).includes(constraint))) return true;
  }
  return false;
}
