// Roles and scopes (issue 34): who may call what. The contract's `x-access` of each operation names
// the least role a member needs and the scope a key needs; the HTTP layer checks every request
// against it in one place (server/http/access.ts). These are the words that table uses.

/** Ranked: each role allows everything the ones below it allow. */
export const roles = ['viewer', 'reviewer', 'manager', 'admin', 'owner'] as const;
export type Role = (typeof roles)[number];

export const scopes = ['tasks:read', 'tasks:write', 'projects:write', 'workforce', 'exports', 'admin'] as const;
export type Scope = (typeof scopes)[number];

export const isRole = (value: unknown): value is Role => (roles as readonly unknown[]).includes(value);
export const isScope = (value: unknown): value is Scope => (scopes as readonly unknown[]).includes(value);

/** Whether `role` is at least `least`. */
export const roleAtLeast = (role: Role, least: Role) => roles.indexOf(role) >= roles.indexOf(least);
