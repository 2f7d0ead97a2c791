// Issue 34 (members, roles, scoped keys): what the access table promises, checked from outside with
// the suite's keys. A key without an operation's scope and a member below its role get 403 naming
// what is needed (and what they may do still works); another account never sees, nor reaches by id,
// the main account's members and keys. Our decisions (the API description has no members): the
// contract's tag Identity and each operation's x-access.
import { makeMember } from '../members.ts';
import { expectStatus, expectThat, type Check, type CheckContext, type Exchange } from '../types.ts';
import { expectError } from './helpers.ts';

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

/** 403 whose message names `what` (a role or scope). */
function expectRefused(ex: Exchange, what: string, why: string) {
  expectError(ex, 403, why);
  expectThat(String(ex.body?.error).includes(what), `${why}: the 403 should name ${what}`, ex.body);
}

/** A member of the main account with `role` (members.ts: invited with the main key, logged in): a caller with its session. */
async function memberWithRole(ctx: CheckContext, role: string) {
  const { session } = await makeMember(ctx, role);
  return (method: string, path: string, options: { json?: unknown; csrf?: boolean } = {}) =>
    ctx.call(method, path, {
      key: 'none',
      headers: { cookie: session.cookie, ...(options.csrf === false ? {} : { 'x-csrf-token': session.csrfToken }) },
      ...(options.json === undefined ? {} : { json: options.json }),
    });
}

export const identityChecks: Check[] = [
  {
    id: 'identity/key-scopes',
    area: 'Identity',
    seed: '(our decision: tag Identity, x-access of every operation)',
    rule: 'A key made with the scope tasks:read reads tasks but is refused project creation (403 naming projects:write) and member listing (403 naming admin); revoked, it answers 401.',
    kind: 'behaviour',
    // The older generation has no members, keys or sessions of its own (they are the current one's).
    generations: ['current'],
    async run(ctx) {
      const made = await ctx.call('POST', '/v1/api_keys', { json: { name: ctx.unique('reader'), mode: 'test', scopes: ['tasks:read'] } });
      expectStatus(made, 200, 'creating a tasks:read key with the main key');
      const secret = made.body.secret as string;
      const as = (method: string, path: string, json?: unknown) =>
        ctx.call(method, path, { key: 'none', headers: { authorization: basic(secret) }, ...(json === undefined ? {} : { json }) });
      expectStatus(await as('GET', '/v1/tasks?limit=1'), 200, 'the tasks:read key lists tasks');
      expectRefused(
        await as('POST', '/v1/projects', { type: 'categorization', name: ctx.unique('p') }),
        'projects:write',
        'creating a project with a tasks:read key',
      );
      expectRefused(await as('GET', '/v1/members'), 'admin', 'listing members with a tasks:read key');
      const listed = await ctx.call('GET', '/v1/api_keys');
      expectThat(!listed.text.includes(secret), 'the key list never shows a secret', listed.body);
      expectStatus(await ctx.call('DELETE', `/v1/api_keys/${made.body.key.key_id}`), 200, 'revoking the key');
      expectStatus(await as('GET', '/v1/tasks?limit=1'), 401, 'a revoked key');
    },
  },
  {
    id: 'identity/no-leak',
    area: 'Identity',
    seed: '(our decision: tag Identity; 5 Authentication, a key acts for its account only)',
    rule: "Another account's key never lists, reads or changes the main account's members and keys: absent from its lists, 404 by id.",
    kind: 'behaviour',
    generations: ['current'],
    needs: ['otherKey'],
    async run(ctx) {
      const email = `${ctx.unique('hidden')}@example.com`.toLowerCase();
      const invited = await ctx.call('POST', '/v1/members', { json: { email, role: 'viewer' } });
      expectStatus(invited, 200, 'inviting a member with the main key');
      const memberId = invited.body.member.member_id as string;
      const key = await ctx.call('POST', '/v1/api_keys', { json: { name: ctx.unique('hidden'), mode: 'test', scopes: ['tasks:read'] } });
      expectStatus(key, 200, 'creating a key with the main key');
      const keyId = key.body.key.key_id as string;
      const members = await ctx.call('GET', '/v1/members', { key: 'other' });
      expectStatus(members, 200, "listing the other account's members");
      expectThat(
        !members.text.includes(memberId) && !members.text.includes(email),
        "the other account's member list shows none of the main account's",
        members.body,
      );
      const keys = await ctx.call('GET', '/v1/api_keys', { key: 'other' });
      expectStatus(keys, 200, "listing the other account's keys");
      expectThat(!keys.text.includes(keyId), "the other account's key list shows none of the main account's", keys.body);
      for (const [method, path, json] of [
        ['GET', `/v1/members/${memberId}`, undefined],
        ['PATCH', `/v1/members/${memberId}`, { role: 'owner' }],
        ['DELETE', `/v1/members/${memberId}`, undefined],
        ['GET', `/v1/api_keys/${keyId}`, undefined],
        ['DELETE', `/v1/api_keys/${keyId}`, undefined],
      ] as const)
        expectError(
          await ctx.call(method, path, { key: 'other', ...(json ? { json } : {}) }),
          404,
          `another account: ${method} ${path.replace(/[^/]+$/, '{id}')}`,
        );
      const after = await ctx.call('GET', `/v1/members/${memberId}`);
      expectThat(
        after.body?.role === 'viewer' && after.body?.status === 'invited',
        "the other account's attempts changed nothing",
        after.body,
      );
    },
  },
  {
    id: 'identity/role-forbidden',
    area: 'Identity',
    seed: '(our decision: tag Identity, x-access role of every operation)',
    rule: 'A viewer logged in (cookie session, CSRF token) reads tasks but is refused creating a project (403 naming manager) and listing members (403 naming admin); a change without the CSRF token is refused.',
    kind: 'behaviour',
    // The older generation has no members, keys or sessions of its own (they are the current one's).
    generations: ['current'],
    async run(ctx) {
      const viewer = await memberWithRole(ctx, 'viewer');
      expectStatus(await viewer('GET', '/v1/tasks?limit=1'), 200, 'a viewer lists tasks');
      expectRefused(
        await viewer('POST', '/v1/projects', { json: { type: 'categorization', name: ctx.unique('p') } }),
        'manager',
        'a viewer creating a project',
      );
      expectRefused(await viewer('GET', '/v1/members'), 'admin', 'a viewer listing members');
      const noCsrf = await viewer('DELETE', '/v1/session', { csrf: false });
      expectError(noCsrf, 403, 'a change made with the session cookie without its CSRF token');
      expectStatus(await viewer('DELETE', '/v1/session'), 200, 'logging out with the token');
      expectStatus(await viewer('GET', '/v1/session'), 401, 'the session after logging out');
    },
  },
];
