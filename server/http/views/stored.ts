/**
 * A stored value whose shape the contract's schema checked when it was stored (a task's params,
 * its answer, a project's type and ontology): typed as the contract types it on the way out. The
 * one place where a view trusts the store instead of the compiler; grep for `stored(` to find them.
 */
export const stored = <T>(value: unknown): T => value as T;
