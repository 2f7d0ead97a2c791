// Who may call what (issue 34), in one place. Every operation of the customer contracts says in its
// `x-access` the least member role (`role`), the scope a key needs (`scope`; none: members only),
// whether it needs no credential (`public`), whether a session that must still set up its second
// factor may call it (`second_factor_setup`), and what the activity log records (`activity`). This
// module reads that table from the bundled contract at start (a missing or malformed entry stops the
// start) and checks each request against it, before the request's body is read. Handlers check no
// role or scope.
import { isRecord } from '../../shared/json.ts';
import type { Request, RequestHandler } from 'express';
import { isRole, isScope, roleAtLeast, type Role, type Scope } from '../domain/identity/roles.ts';
import type { Mode } from '../domain/model.ts';
import type { Contract } from './contract.ts';
import { HttpError } from './errors.ts';

export interface Access {
  public: boolean;
  role: Role | null;
  scope: Scope | null;
  secondFactorSetup: boolean;
  activity: string | null;
}

export interface AccessOperation {
  operationId: string;
  method: string;
  path: string;
  access: Access;
}

/** Who is asking. */
export type Principal =
  | { kind: 'key'; keyId: string; name: string; scopes: readonly Scope[] | 'all' }
  | {
      kind: 'member';
      memberId: string;
      email: string;
      role: Role;
      sessionId: string;
      /** The session cookie's secret (never stored; its CSRF token derives from it). */
      secret: string;
      /** The account requires TOTP and the member has none yet: only setting it up is allowed. */
      secondFactorSetupRequired: boolean;
    }
  | { kind: 'public' };

/** Where a request came from (the activity log's address and request id). */
export interface Requester {
  address: string;
  requestId: string | undefined;
  userAgent: string | undefined;
  mode?: Mode | undefined;
  /** Whether the server is reached over TLS (cookies are then Secure). */
  secure: boolean;
  /** A public operation's request: the secret of its single sign-on attempt cookie, if any. */
  ssoAttempt?: string | undefined;
}

export interface AccessTable {
  /** The operation a request reaches, or undefined (the validator answers 404 later). */
  match(method: string, path: string): AccessOperation | undefined;
  byId: Map<string, AccessOperation>;
}

function readAccess(operationId: string, a: unknown): Access {
  const bad = (why: string) => new Error(`the contract's x-access of ${operationId} ${why}`);
  if (!isRecord(a)) throw bad('is missing');
  if (a.public === true) {
    return {
      public: true,
      role: null,
      scope: null,
      secondFactorSetup: false,
      activity: typeof a.activity === 'string' ? a.activity : null,
    };
  }
  if (!isRole(a.role)) throw bad(`names no role (${String(a.role)})`);
  const scope = a.scope === undefined ? null : a.scope;
  if (scope !== null && !isScope(scope)) throw bad(`names an unknown scope (${String(scope)})`);
  return {
    public: false,
    role: a.role,
    scope,
    secondFactorSetup: a.second_factor_setup === true,
    activity: typeof a.activity === 'string' ? a.activity : null,
  };
}

const tables = new WeakMap<Contract, AccessTable>();

/** The access table of a contract, read once. */
export function accessTable(contract: Contract): AccessTable {
  const cached = tables.get(contract);
  if (cached) return cached;
  const literal = new Map<string, AccessOperation>();
  const templated: { method: string; route: RegExp; op: AccessOperation }[] = [];
  const byId = new Map<string, AccessOperation>();
  for (const [p, item] of Object.entries<Record<string, { operationId: string; 'x-access'?: unknown }>>(contract.doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const entry: AccessOperation = {
        operationId: op.operationId,
        method: method.toUpperCase(),
        path: p,
        access: readAccess(op.operationId, op['x-access']),
      };
      byId.set(op.operationId, entry);
      if (p.includes('{'))
        templated.push({
          method: entry.method,
          route: new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
          op: entry,
        });
      else literal.set(`${entry.method} ${p}`, entry);
    }
  }
  const table: AccessTable = {
    byId,
    match(method, path) {
      const m = method === 'HEAD' ? 'GET' : method;
      // A path with a trailing slash is the same route for Express (and the validator).
      const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
      return literal.get(`${m} ${p}`) ?? templated.find((t) => t.method === m && t.route.test(p))?.op;
    },
  };
  tables.set(contract, table);
  return table;
}

const refuse = (message: string, code: string) => new HttpError(403, message, {}, code);

/** Why a principal may not call an operation, or null when it may. */
function refusal(principal: Principal, op: AccessOperation): HttpError | null {
  const { access } = op;
  if (access.public || principal.kind === 'public') return null;
  if (principal.kind === 'key') {
    if (!access.scope)
      return refuse(
        `${op.operationId} is for members' sessions only (log in at POST /v1/session); an API key may not call it.`,
        'members_only',
      );
    if (principal.scopes !== 'all' && !principal.scopes.includes(access.scope))
      return refuse(
        `This operation needs an API key with the scope ${access.scope}; this key has ${principal.scopes.join(', ') || 'no scope'}.`,
        'scope_missing',
      );
    return null;
  }
  if (principal.secondFactorSetupRequired && !access.secondFactorSetup)
    return refuse(
      'This account requires a second factor: set up TOTP first (POST /v1/me/totp, then PUT /v1/me/totp with a code).',
      'second_factor_setup_required',
    );
  if (access.role && !roleAtLeast(principal.role, access.role))
    return refuse(`This operation needs the role ${access.role} or higher; your role is ${principal.role}.`, 'role_missing');
  return null;
}

/** Checks the principal authentication left against the table: 403 naming the role or scope needed. */
export function authorize(table: AccessTable): RequestHandler {
  return (req: Request, res, next) => {
    const op = table.match(req.method, req.path);
    const principal = res.locals.principal;
    if (!op || !principal) return next();
    next(refusal(principal, op) ?? undefined);
  };
}
