// Issue 34: the access table walked whole. Every operation of both generations is called by a member
// of every role (the session cookie, its CSRF token) and by scoped API keys: where the contract's
// x-access allows the caller, the answer is the operation's own (a 2xx or a 4xx of its rules, never
// the 403 of the access check); where it does not, 403 naming the role or scope needed. Both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roles, scopes, type Role, type Scope } from '../../server/domain/identity/roles.ts';
import { accountWithOwner, login, memberWithRole, send, type MemberSession } from '../support/members.ts';
import { basicAuth } from '../support/net.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { deref, generations, loadBundle, operations, type Json } from '../support/spec.ts';

const rank = (r: Role) => roles.indexOf(r);
const accessCodes = new Set(['role_missing', 'scope_missing', 'members_only', 'second_factor_setup_required']);

interface Call {
  gen: 'current' | 'legacy';
  operationId: string;
  method: string;
  path: string;
  access: Json;
  body: unknown;
}

/** Every non-public operation, with a path that names nothing (its own 404 when allowed) and its first body example. */
function calls(): Call[] {
  const out: Call[] = [];
  for (const gen of generations) {
    const doc = loadBundle(gen);
    for (const { op, method, path } of operations(gen, doc)) {
      const access = op['x-access'];
      if (access.public) continue;
      const content = deref(doc, op.requestBody)?.content?.['application/json'];
      const example = content ? deref(doc, Object.values<Json>(content.examples ?? {})[0])?.value : undefined;
      out.push({
        gen: gen as Call['gen'],
        operationId: op.operationId,
        method: method.toUpperCase(),
        path: path.replaceAll(/\{[^}]+\}/g, 'no-such-object'),
        access,
        // The walk must not change the rules its own later calls meet.
        body: op.operationId === 'updateAccountSecurity' ? { require_totp: false } : example,
      });
    }
  }
  // What ends the caller's sessions runs last.
  const last = new Set(['logoutMember', 'logoutMemberEverywhere']);
  return [...out.filter((c) => !last.has(c.operationId)), ...out.filter((c) => last.has(c.operationId))];
}

const url = (server: TestServer, c: Call) => `${server.url}${c.gen === 'legacy' ? '/legacy' : ''}${c.path}`;

describe.each(databases)('the access table, walked (%s)', (db) => {
  let server: TestServer;
  let owner: MemberSession;
  const members = new Map<Role, MemberSession>();
  beforeAll(async () => {
    if (db === 'postgres' && !hasPostgres()) return;
    server = await startTestServer(db, { CALLBACK_SCHEDULE_SCALE: '0.001' });
    ({ owner } = await accountWithOwner(server, 'walk'));
    members.set('owner', owner);
    for (const role of roles.filter((r) => r !== 'owner')) members.set(role, await memberWithRole(server, 'walk', owner, role));
  }, 120_000);
  afterAll(async () => server?.close());

  it.each(roles)(
    'every operation, called by a member whose role is %s: allowed where x-access allows it, else 403 naming the role',
    async (role) => {
      if (!server) return;
      const m = members.get(role)!;
      const problems: string[] = [];
      for (const c of calls()) {
        const reply = await send(url(server, c), c.method, {
          ...(c.body !== undefined ? { json: c.body } : {}),
          headers: { cookie: m.cookie, 'x-csrf-token': m.csrf },
        });
        const allowed = rank(role) >= rank(c.access.role);
        const refusedByTable = reply.status === 403 && accessCodes.has(reply.body?.code);
        if (allowed && refusedByTable) problems.push(`${c.gen} ${c.operationId}: refused ${reply.text}`);
        if (
          !allowed &&
          !(reply.status === 403 && reply.body?.code === 'role_missing' && reply.body.error.includes(`role ${c.access.role}`))
        )
          problems.push(`${c.gen} ${c.operationId}: ${reply.status} ${reply.text}`);
        if (allowed && reply.status >= 500) problems.push(`${c.gen} ${c.operationId}: ${reply.status} ${reply.text}`);
      }
      expect(problems).toEqual([]);
      // It logged itself out at the end: the session is gone.
      expect((await send(`${server.url}/v1/session`, 'GET', { headers: { cookie: m.cookie } })).status).toBe(401);
    },
    180_000,
  );

  it('scoped keys: a key with exactly the scope an operation needs is let through; a key with every other scope gets 403 naming it; members-only operations refuse every key', async () => {
    if (!server) return;
    const fresh = await login(server, 'walk', owner.email, owner.password);
    const keyWith = new Map<string, string>();
    const make = async (name: string, with_: Scope[]) => {
      const created = await fresh.call('POST', '/v1/api_keys', { json: { name, mode: 'test', scopes: with_ } });
      expect(created.status, created.text).toBe(200);
      return created.body.secret as string;
    };
    for (const s of scopes) {
      keyWith.set(`only ${s}`, await make(`only ${s}`, [s]));
      keyWith.set(
        `all but ${s}`,
        await make(
          `all but ${s}`,
          scopes.filter((x) => x !== s),
        ),
      );
    }
    const problems: string[] = [];
    for (const c of calls()) {
      if (['createApiKey', 'inviteMember'].includes(c.operationId)) continue; // they add rows on every call
      const scope = c.access.scope as Scope | undefined;
      const as = (key: string) =>
        send(url(server, c), c.method, { ...(c.body !== undefined ? { json: c.body } : {}), headers: { authorization: basicAuth(key) } });
      if (!scope) {
        const reply = await as(keyWith.get('all but exports')!);
        if (!(reply.status === 403 && reply.body?.code === 'members_only'))
          problems.push(`${c.gen} ${c.operationId} (members only): ${reply.status} ${reply.text}`);
        continue;
      }
      const yes = await as(keyWith.get(`only ${scope}`)!);
      if (yes.status === 403 && accessCodes.has(yes.body?.code)) problems.push(`${c.gen} ${c.operationId} with ${scope}: ${yes.text}`);
      const no = await as(keyWith.get(`all but ${scope}`)!);
      if (!(no.status === 403 && no.body?.code === 'scope_missing' && no.body.error.includes(`scope ${scope}`)))
        problems.push(`${c.gen} ${c.operationId} without ${scope}: ${no.status} ${no.text}`);
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
