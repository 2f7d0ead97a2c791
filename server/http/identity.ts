// Handlers of tag Identity (issue 34): members, sessions, single sign-on, scoped API keys and the
// activity log. Who may call each is the access table's business (access.ts), not these handlers'.
import { wallClock } from '../domain/clock.ts';
import { DomainError, notFound } from '../domain/errors.ts';
import { listActivity, type ActivityFilters } from '../domain/identity/activity.ts';
import { createApiKey, getApiKey, listApiKeys, revokeApiKey } from '../domain/identity/keys.ts';
import {
  acceptInvitation,
  beginTotp,
  changeOwnPassword,
  completePasswordReset,
  confirmTotp,
  disableOwnTotp,
  inviteMember,
  issueLink,
  listMembers,
  memberOf,
  passwordLinkFor,
  reinviteMember,
  removeMember,
  resetMemberTotp,
  updateMember,
  type MemberActor,
} from '../domain/identity/members.ts';
import type { MemberLinkRecord } from '../domain/identity/model.ts';
import { hashSessionSecret, passwordLogin } from '../domain/identity/sessions.ts';
import {
  completeSsoLogin,
  deleteSsoSettings,
  saveSsoSettings,
  startSsoLogin,
  ssoLoginTtlMs,
  updateAccountSecurity,
} from '../domain/identity/sso.ts';
import type { UnitOfWork } from '../domain/ports.ts';
import type { Principal } from './access.ts';
import { actorOf, noteActivity } from './activity.ts';
import { authFailureLimit, failureLimit } from './auth.ts';
import type { IdentityDeps } from './identity-deps.ts';
import { HttpError, authChallenge } from './errors.ts';
import { clearCookie, sessionCookieName, setCookie, ssoCookieName } from './member-auth.ts';
import { flag, parseTimeFilter } from './filters.ts';
import { afterCommit, WithHeaders, type HandlerTable, type Operations } from './typed.ts';
import {
  accountSecurityView,
  activityView,
  apiKeyView,
  linkView,
  memberSessionView,
  memberView,
  sessionSummaryView,
  ssoSettingsView,
} from './views/identity.ts';

/** The operations that hash or check a member's password: they wait their turn at the hash gate (app.ts). */
export const memberPasswordOperations: ReadonlySet<string> = new Set([
  'loginMember',
  'setMemberPassword',
  'acceptInvitation',
  'completePasswordReset',
]);

/** The operations that write their own activity entries, in the transaction that makes their change. */
export const selfRecordedOperations: ReadonlySet<string> = new Set([
  'loginMember',
  'completeSsoLogin',
  'setMemberPassword',
  // Their change follows work that must hold no transaction: a bucket's test, a file's upload.
  'createStorageConnection',
  'createImport',
]);

const tooMany = (wait: number) =>
  new HttpError(
    429,
    `Too many failed log-ins; retry after ${wait} second${wait === 1 ? '' : 's'}.`,
    { 'Retry-After': String(wait) },
    'rate_limited',
  );

function memberActor(principal: Principal): MemberActor {
  if (principal.kind === 'member') return { kind: 'member', memberId: principal.memberId, role: principal.role };
  return { kind: 'key' };
}

function member(principal: Principal) {
  if (principal.kind !== 'member') throw new HttpError(403, "This operation is for members' sessions only.", {}, 'members_only');
  return principal;
}

type Ops = Operations['current'];
type IdentityOperation =
  | 'loginMember'
  | 'getMemberSession'
  | 'logoutMember'
  | 'listMemberSessions'
  | 'logoutMemberEverywhere'
  | 'deleteMemberSession'
  | 'setMemberPassword'
  | 'createTotpEnrollment'
  | 'confirmTotpEnrollment'
  | 'deleteOwnTotp'
  | 'acceptInvitation'
  | 'createPasswordReset'
  | 'completePasswordReset'
  | 'listMembers'
  | 'inviteMember'
  | 'getMember'
  | 'updateMember'
  | 'removeMember'
  | 'createMemberInvitation'
  | 'createMemberPasswordReset'
  | 'resetMemberTotp'
  | 'getAccountSecurity'
  | 'updateAccountSecurity'
  | 'getSsoSettings'
  | 'setSsoSettings'
  | 'deleteSsoSettings'
  | 'startSsoLogin'
  | 'completeSsoLogin'
  | 'listApiKeys'
  | 'createApiKey'
  | 'getApiKey'
  | 'deleteApiKey'
  | 'listActivity';

export function identityHandlers(uow: UnitOfWork, deps: IdentityDeps | undefined): Pick<HandlerTable<Ops>, IdentityOperation> {
  const d: IdentityDeps = deps ?? defaultIdentityDeps();
  const { settings, now } = d;
  // Read at each use: without PUBLIC_URL it is known once the server listens.
  const redirectUri = () => `${d.publicUrl}/console/sso/callback`;
  const sessionCookie = (secret: string, absoluteExpiresAt: Date, secure: boolean) =>
    setCookie(sessionCookieName, secret, {
      path: '/',
      maxAgeSeconds: (absoluteExpiresAt.getTime() - now().getTime()) / 1000,
      sameSite: 'Strict',
      secure,
    });
  const linkUrl = (purpose: MemberLinkRecord['purpose'], token: string) =>
    `${d.publicUrl}/console/${purpose === 'invitation' ? 'accept-invitation' : 'reset-password'}#token=${token}`;
  /** Mails a link (after the commit), or shows it when it could not be mailed. */
  const deliver = async (to: string, accountName: string, purpose: MemberLinkRecord['purpose'], token: string, expiresAt: Date) => {
    const url = linkUrl(purpose, token);
    if (!d.notices) return linkView(expiresAt, { mailed: false, url });
    const error = await d.notices({
      to,
      subject: purpose === 'invitation' ? `You are invited to ${accountName} on humantask` : `Set your humantask password (${accountName})`,
      text:
        (purpose === 'invitation'
          ? `You are invited to the account ${accountName} on humantask. Accept the invitation and choose a password here:\n\n`
          : `Set a new password for the account ${accountName} on humantask here:\n\n`) +
        `${url}\n\nThe link works once, until ${expiresAt.toISOString()}. If you did not expect this mail, ignore it.\n`,
    });
    return error === null ? linkView(expiresAt, { mailed: true }) : linkView(expiresAt, { mailed: false, url, mailError: error });
  };

  return {
    async loginMember({ body, requester }) {
      const memberKey = `${body.account}\n${body.email.toLowerCase()}`;
      const wait = Math.max(d.addressFailures.retryAfter(requester.address), d.memberFailures.retryAfter(memberKey));
      if (wait > 0) throw tooMany(wait);
      // Counted as a failure of the address and of the member before the password is checked (as a
      // worker's log-in, http/workforce/auth.ts): concurrent tries cannot pass the limit; what turns
      // out not to be a failure is given back.
      const overAddress = await d.addressFailures.failed(requester.address);
      if (overAddress > 0) throw tooMany(overAddress);
      const overMember = await d.memberFailures.failed(memberKey);
      if (overMember > 0) {
        await d.addressFailures.forgive(requester.address);
        throw tooMany(overMember);
      }
      const forgive = () => Promise.all([d.addressFailures.forgive(requester.address), d.memberFailures.forgive(memberKey)]);
      const outcome = await passwordLogin(
        uow,
        { account: body.account, email: body.email, password: body.password, totpCode: body.totp_code },
        { address: requester.address, userAgent: requester.userAgent, origin: requester },
        settings,
        now(),
      );
      if (!outcome.ok) {
        if (outcome.reason === 'password_login_disabled') {
          await forgive();
          throw new HttpError(
            403,
            'Password log-in is turned off for this account; log in with single sign-on.',
            {},
            'password_login_disabled',
          );
        }
        if (outcome.reason === 'totp_required') {
          // The password was right: the first step of a log-in with a second factor.
          await forgive();
          throw new HttpError(401, 'This member logs in with a TOTP code; send totp_code.', authChallenge, 'totp_required');
        }
        if (outcome.reason === 'totp_invalid')
          throw new HttpError(401, 'totp_code is not a current code (or was used already).', authChallenge, 'totp_invalid');
        throw new HttpError(401, 'The account, e-mail address or password is wrong.', authChallenge, 'login_failed');
      }
      await forgive();
      const { grant, account, rules } = outcome;
      const view = memberSessionView(grant.session, grant.member, account, grant.secret, rules.requireTotp && !grant.member.totpSecret);
      return new WithHeaders(view, { 'Set-Cookie': sessionCookie(grant.secret, grant.session.absoluteExpiresAt, requester.secure) });
    },
    async getMemberSession({ principal, caller }) {
      const p = member(principal);
      const found = await uow.memberSessions.findByTokenHash(hashSessionSecret(p.secret));
      if (!found) throw new HttpError(401, 'The session has ended.', authChallenge, 'unauthenticated');
      return memberSessionView(found.session, found.member, caller.account, p.secret, p.secondFactorSetupRequired);
    },
    async logoutMember({ principal, requester }) {
      const p = member(principal);
      const ended = (await uow.memberSessions.end(p.memberId, p.sessionId, now())) ? 1 : 0;
      return new WithHeaders({ ended_sessions: ended }, { 'Set-Cookie': clearCookie(sessionCookieName, '/', requester.secure) });
    },
    async listMemberSessions({ principal }) {
      const p = member(principal);
      return { docs: (await uow.memberSessions.live(p.memberId, now())).map((s) => sessionSummaryView(s, p.sessionId)) };
    },
    async logoutMemberEverywhere({ principal, requester }) {
      const p = member(principal);
      const ended = await uow.memberSessions.endAll(p.memberId, now());
      noteActivity({ target: { type: 'member', id: p.memberId }, details: { ended_sessions: ended } });
      return new WithHeaders({ ended_sessions: ended }, { 'Set-Cookie': clearCookie(sessionCookieName, '/', requester.secure) });
    },
    async deleteMemberSession({ principal, path }) {
      const p = member(principal);
      if (!(await uow.memberSessions.end(p.memberId, path.sessionId, now()))) throw notFound(`Session ${path.sessionId} not found.`);
      return { ended_sessions: 1 };
    },
    async setMemberPassword({ principal, caller, body, requester }) {
      const p = member(principal);
      const ended = await changeOwnPassword(
        uow,
        caller.account.accountId,
        p.memberId,
        { currentPassword: body.current_password, password: body.password },
        p.sessionId,
        settings,
        now(),
        requester,
      );
      if (ended === 'wrong_password') throw new HttpError(401, 'current_password is wrong.', authChallenge, 'login_failed');
      return { ended_sessions: ended };
    },
    async createTotpEnrollment({ principal, caller }) {
      const p = member(principal);
      const { secret, uri } = await beginTotp(uow, caller.account.accountId, caller.account.name, p.memberId);
      return { secret, otpauth_uri: uri };
    },
    async confirmTotpEnrollment({ principal, caller, body }) {
      const p = member(principal);
      return memberView(await confirmTotp(uow, caller.account.accountId, p.memberId, body.code, now()));
    },
    async deleteOwnTotp({ principal, caller, body }) {
      const p = member(principal);
      return memberView(await disableOwnTotp(uow, caller.account.accountId, p.memberId, body.code, now()));
    },
    async acceptInvitation({ body }) {
      const accepted = await acceptInvitation(
        uow,
        { token: body.token, password: body.password, displayName: body.display_name },
        settings,
        now(),
      );
      const account = await uow.accounts.findById(accepted.accountId);
      noteActivity({
        accountId: accepted.accountId,
        actor: { type: 'member', id: accepted.memberId, name: accepted.email },
        target: { type: 'member', id: accepted.memberId },
        details: { role: accepted.role },
      });
      return { member: memberView(accepted), account: account?.name ?? '' };
    },
    async createPasswordReset({ body, requester }) {
      // Each request counts as a failure of its address: it cannot be used to mail someone over and over.
      const over = await d.addressFailures.failed(requester.address);
      if (over > 0) throw tooMany(over);
      const account = await uow.accounts.findByName(body.account);
      const found = account ? await uow.members.findByEmail(account.accountId, body.email) : null;
      if (account && found && found.status === 'active' && d.notices && (await uow.accountIdentity.get(account.accountId)).passwordLogin) {
        const { token, link } = await uow.transaction((repos) => issueLink(repos, found, 'password', settings, now()));
        await deliver(found.email, account.name, 'password', token, link.expiresAt);
      }
      return { requested: true as const };
    },
    async completePasswordReset({ body }) {
      const changed = await completePasswordReset(uow, { token: body.token, password: body.password }, settings, now());
      const account = await uow.accounts.findById(changed.accountId);
      noteActivity({
        accountId: changed.accountId,
        actor: { type: 'member', id: changed.memberId, name: changed.email },
        target: { type: 'member', id: changed.memberId },
      });
      return { member: memberView(changed), account: account?.name ?? '' };
    },
    listMembers: async ({ caller, query }) => ({ docs: (await listMembers(uow, caller.account.accountId, query.status)).map(memberView) }),
    async inviteMember({ caller, body, principal }) {
      const {
        member: invited,
        link,
        token,
      } = await inviteMember(
        uow,
        caller.account.accountId,
        { email: body.email, role: body.role, displayName: body.display_name },
        memberActor(principal),
        settings,
        now(),
      );
      noteActivity({ target: { type: 'member', id: invited.memberId }, details: { email: invited.email, role: invited.role } });
      return afterCommit(async () => ({
        member: memberView(invited),
        invitation: await deliver(invited.email, caller.account.name, 'invitation', token, link.expiresAt),
      }));
    },
    getMember: async ({ caller, path }) => memberView(await memberOf(uow, caller.account.accountId, path.memberId)),
    async updateMember({ caller, path, body, principal }) {
      const { before, after } = await updateMember(
        uow,
        caller.account.accountId,
        path.memberId,
        { role: body.role, displayName: body.display_name },
        memberActor(principal),
      );
      if (before.role !== after.role) noteActivity({ details: { from: before.role, to: after.role } });
      return memberView(after);
    },
    removeMember: async ({ caller, path, principal }) =>
      memberView(await removeMember(uow, caller.account.accountId, path.memberId, memberActor(principal), now())),
    async createMemberInvitation({ caller, path, principal }) {
      const {
        member: invited,
        link,
        token,
      } = await reinviteMember(uow, caller.account.accountId, path.memberId, memberActor(principal), settings, now());
      return afterCommit(() => deliver(invited.email, caller.account.name, 'invitation', token, link.expiresAt));
    },
    async createMemberPasswordReset({ caller, path, principal }) {
      const {
        member: target,
        link,
        token,
      } = await passwordLinkFor(uow, caller.account.accountId, path.memberId, memberActor(principal), settings, now());
      return afterCommit(() => deliver(target.email, caller.account.name, 'password', token, link.expiresAt));
    },
    resetMemberTotp: async ({ caller, path, principal }) =>
      memberView(await resetMemberTotp(uow, caller.account.accountId, path.memberId, memberActor(principal), now())),
    getAccountSecurity: async ({ caller }) => accountSecurityView(await uow.accountIdentity.get(caller.account.accountId)),
    async updateAccountSecurity({ caller, body }) {
      noteActivity({ target: { type: 'account', id: caller.account.accountId }, details: { ...body } });
      return accountSecurityView(
        await updateAccountSecurity(uow, caller.account.accountId, { requireTotp: body.require_totp, passwordLogin: body.password_login }),
      );
    },
    async getSsoSettings({ caller }) {
      const view = ssoSettingsView(await uow.accountIdentity.get(caller.account.accountId), redirectUri());
      if (!view) throw notFound('This account has no single sign-on set up.');
      return view;
    },
    async setSsoSettings({ caller, body }) {
      const saved = await saveSsoSettings(
        uow,
        caller.account.accountId,
        {
          issuer: body.issuer,
          clientId: body.client_id,
          clientSecret: body.client_secret,
          allowedDomains: body.allowed_domains,
          defaultRole: body.default_role,
          enabled: body.enabled,
        },
        d.oidc,
        now(),
      );
      noteActivity({
        target: { type: 'sso', id: caller.account.accountId },
        details: { issuer: body.issuer, client_id: body.client_id, allowed_domains: body.allowed_domains, default_role: body.default_role },
      });
      return ssoSettingsView(saved, redirectUri())!;
    },
    async deleteSsoSettings({ caller }) {
      noteActivity({ target: { type: 'sso', id: caller.account.accountId } });
      return accountSecurityView(await deleteSsoSettings(uow, caller.account.accountId));
    },
    async startSsoLogin({ body, requester }) {
      const started = await startSsoLogin(uow, body.account, d.oidc, redirectUri(), now());
      return new WithHeaders(
        { authorization_url: started.url, expires_at: started.expiresAt.toISOString() },
        {
          'Set-Cookie': setCookie(ssoCookieName, started.cookie, {
            path: '/v1/sso',
            maxAgeSeconds: ssoLoginTtlMs / 1000,
            sameSite: 'Lax',
            secure: requester.secure,
          }),
        },
      );
    },
    async completeSsoLogin({ body, requester }) {
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(body ?? {})) if (typeof v === 'string') params[k] = v;
      const { grant, account } = await completeSsoLogin(
        uow,
        requester.ssoAttempt,
        { code: body?.code, state: body?.state, iss: body?.iss, error: body?.error, errorDescription: body?.error_description, params },
        d.oidc,
        redirectUri(),
        { address: requester.address, userAgent: requester.userAgent, origin: requester },
        settings,
        now(),
      );
      return new WithHeaders(memberSessionView(grant.session, grant.member, account, grant.secret, false), {
        'Set-Cookie': [
          sessionCookie(grant.secret, grant.session.absoluteExpiresAt, requester.secure),
          clearCookie(ssoCookieName, '/v1/sso', requester.secure),
        ],
      });
    },
    listApiKeys: async ({ caller, query }) => ({
      docs: (await listApiKeys(uow, caller.account.accountId, flag(query.include_revoked), now())).map(apiKeyView),
    }),
    async createApiKey({ caller, body, principal }) {
      const { key, secret } = await createApiKey(
        uow,
        caller.account.accountId,
        { name: body.name, mode: body.mode, scopes: body.scopes, expiresAt: body.expires_at ? new Date(body.expires_at) : undefined },
        actorOf(principal),
        now(),
      );
      noteActivity({ target: { type: 'api_key', id: key.keyId }, details: { name: key.name, mode: key.mode, scopes: [...key.scopes] } });
      return { key: apiKeyView(key), secret };
    },
    getApiKey: async ({ caller, path }) => apiKeyView(await getApiKey(uow, caller.account.accountId, path.keyId)),
    deleteApiKey: async ({ caller, path }) => apiKeyView(await revokeApiKey(uow, caller.account.accountId, path.keyId, now())),
    async listActivity({ caller, query }) {
      const filters: ActivityFilters = {};
      if (query.action?.endsWith('.*')) filters.actionPrefix = query.action.slice(0, -2);
      else if (query.action) filters.action = query.action;
      if (query.actor_type) filters.actorType = query.actor_type;
      if (query.actor_id) filters.actorId = query.actor_id;
      if (query.target_type) filters.targetType = query.target_type;
      if (query.target_id) filters.targetId = query.target_id;
      const since = parseTimeFilter('since', query.since);
      const until = parseTimeFilter('until', query.until);
      if (since) filters.since = since;
      if (until) filters.until = until;
      const limit = query.limit ?? 100;
      const page = await listActivity(uow, caller.account.accountId, filters, { limit, nextToken: query.next_token });
      return {
        docs: page.entries.map(activityView),
        limit,
        has_more: page.hasMore,
        ...(page.nextToken ? { next_token: page.nextToken } : {}),
      };
    },
  };
}

/** Where no identity settings are passed (a unit test's handler table): nothing mailed, SSO refused. */
function defaultIdentityDeps(): IdentityDeps {
  return {
    settings: { passwordCost: 15, linkTtlMs: 7 * 86_400_000, idleMs: 3_600_000, maxMs: 43_200_000 },
    now: wallClock,
    publicUrl: 'http://127.0.0.1:8080',
    notices: null,
    oidc: {
      discover: async () => {
        throw new DomainError('invalid', 'single sign-on is not configured on this server');
      },
      begin: async () => {
        throw new DomainError('invalid', 'single sign-on is not configured on this server');
      },
      finish: async () => {
        throw new DomainError('invalid', 'single sign-on is not configured on this server');
      },
    },
    addressFailures: authFailureLimit(0, 0),
    memberFailures: failureLimit('failed member log-ins', 'member', 0, 0),
  };
}
