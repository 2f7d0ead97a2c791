// Members for tests (issue 34), made as a person would: the owner invites over HTTP, the invitee
// accepts the link the answer shows (no SMTP server in these tests) and logs in; requests then carry
// the session cookie, its CSRF token and the mode header, as the console's do.
import { expect } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { addOwner } from '../../server/domain/identity/members.ts';
import type { Role } from '../../server/domain/identity/roles.ts';
import { basicAuth } from './net.ts';
import type { Reply, TestServer } from './server.ts';

export interface MemberSession {
  /** The log-in's answer. */
  reply: Reply;
  memberId: string;
  email: string;
  password: string;
  cookie: string;
  csrf: string;
  /** A request with the session (cookie, CSRF token, mode): `call('GET', '/v1/members')`. */
  call(
    method: string,
    path: string,
    options?: { json?: unknown; headers?: Record<string, string>; mode?: 'test' | 'live' },
  ): Promise<Reply>;
}

export async function send(
  url: string,
  method: string,
  options: { json?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.json);
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** The session cookie of a log-in's answer (`humantask_session=...`). */
const sessionCookie = (reply: Reply) =>
  reply.headers
    .getSetCookie()
    .find((c) => c.startsWith('humantask_session='))!
    .split(';')[0]!;

function sessionClient(server: { url: string }, cookie: string, csrf: string) {
  return (method: string, path: string, options: { json?: unknown; headers?: Record<string, string>; mode?: 'test' | 'live' } = {}) =>
    send(server.url + path, method, {
      ...options,
      headers: { cookie, 'x-csrf-token': csrf, ...(options.mode ? { 'humantask-mode': options.mode } : {}), ...options.headers },
    });
}

export async function login(
  server: { url: string },
  account: string,
  email: string,
  password: string,
  extra: Record<string, string> = {},
): Promise<MemberSession> {
  const reply = await send(`${server.url}/v1/session`, 'POST', { json: { account, email, password, ...extra } });
  expect(reply.status, reply.text).toBe(200);
  const cookie = sessionCookie(reply);
  const csrf = reply.body.csrf_token as string;
  return { memberId: reply.body.member.member_id, email, password, cookie, csrf, reply, call: sessionClient(server, cookie, csrf) };
}

let counter = 0;

/** A fresh account with an owner (logged in) and its keys. */
export async function accountWithOwner(server: TestServer, name: string) {
  const secrets: AccountSecrets = await createAccount(server.uow, name, new Date());
  const email = `owner-${++counter}@example.com`;
  const password = 'owner-password-long-enough';
  await server.uow.transaction((repos) =>
    addOwner(repos, secrets.account_id, email, { passwordCost: 10, linkTtlMs: 86_400_000 }, new Date(), password),
  );
  const owner = await login(server, name, email, password);
  return { secrets, owner, keyHeader: basicAuth(secrets.test_key) };
}

/** Invites a member with a role (as the owner), accepts the invitation and logs in. */
export async function memberWithRole(
  server: TestServer,
  account: string,
  owner: MemberSession,
  role: Role,
  /** Where the invitation went when it was mailed (a test's SMTP server): its token. */
  mailedToken?: (email: string) => string,
): Promise<MemberSession> {
  const email = `${role}-${++counter}@example.com`;
  const invited = await owner.call('POST', '/v1/members', { json: { email, role } });
  expect(invited.status, invited.text).toBe(200);
  const token = invited.body.invitation.mailed ? mailedToken!(email) : new URL(invited.body.invitation.url).hash.replace('#token=', '');
  const password = `${role}-password-long-enough`;
  const accepted = await send(`${server.url}/v1/invitations/accept`, 'POST', { json: { token, password } });
  expect(accepted.status, accepted.text).toBe(200);
  return login(server, account, email, password);
}
