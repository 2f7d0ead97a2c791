// Set by the server when it bundles the console (server/console.ts), from the contract's access
// table: the member roles from the lowest, and per operation of the current generation the least
// role of its `x-access` (null: a public operation).
declare const HUMANTASK_ACCESS: { roles: readonly string[]; operations: Record<string, string | null> };
