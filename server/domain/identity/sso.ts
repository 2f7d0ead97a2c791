// Single sign-on (issue 34): an account's OpenID Connect provider, and members' log-ins through it
// (authorization code with PKCE, state and nonce). The relying party's protocol work (discovery,
// the token exchange, the ID token's checks) is openid-client's, behind the port OidcRelyingParty
// (server/delivery/oidc.ts), which reaches the provider through the network guard.
import { randomBytes } from 'node:crypto';
import { DomainError, invalid, notFound } from '../errors.ts';
import { sha256 } from '../ids.ts';
import type { Account } from '../model.ts';
import type { UnitOfWork } from '../ports.ts';
import { recordActivity, type RequestOrigin } from './activity.ts';
import type { AccountIdentityRecord, MemberRecord, SsoSettingsRecord } from './model.ts';
import { isRole, type Role } from './roles.ts';
import { sessionCreated, startSession, type ClientInfo, type SessionGrant, type SessionSettings } from './sessions.ts';

/** A refusal by the provider or of its answer, with the words to show. */
export class OidcProblem extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface OidcClaims {
  subject: string;
  email: string | undefined;
  emailVerified: boolean | undefined;
  name: string | undefined;
}

export interface OidcRelyingParty {
  /** Fetches and checks the issuer's discovery document (OidcProblem when it cannot). */
  discover(settings: Pick<SsoSettingsRecord, 'issuer' | 'clientId' | 'clientSecret'>): Promise<void>;
  /** The authorization URL of a new log-in, with its state, nonce and PKCE verifier. */
  begin(settings: SsoSettingsRecord, redirectUri: string): Promise<{ url: string; state: string; nonce: string; codeVerifier: string }>;
  /** Exchanges the code of a callback and checks the ID token by the server's clock (OidcProblem when refused). */
  finish(
    settings: SsoSettingsRecord,
    callback: URL,
    checks: { state: string; nonce: string; codeVerifier: string; redirectUri: string },
    now: Date,
  ): Promise<OidcClaims>;
}

/** How long a log-in attempt may take, from start to callback. */
export const ssoLoginTtlMs = 10 * 60_000;

export interface SsoInput {
  issuer: string;
  clientId: string;
  clientSecret?: string | undefined;
  allowedDomains: string[];
  defaultRole: unknown;
  enabled?: boolean | undefined;
}

export async function saveSsoSettings(
  uow: UnitOfWork,
  accountId: string,
  input: SsoInput,
  rp: OidcRelyingParty,
  now: Date,
): Promise<AccountIdentityRecord> {
  if (!isRole(input.defaultRole) || input.defaultRole === 'owner')
    throw invalid(`default_role must be one of admin, manager, reviewer, viewer (never owner), not "${String(input.defaultRole)}".`);
  const settings: SsoSettingsRecord = {
    issuer: input.issuer,
    clientId: input.clientId,
    clientSecret: input.clientSecret ?? null,
    allowedDomains: [...new Set(input.allowedDomains.map((d) => d.toLowerCase()))],
    defaultRole: input.defaultRole as Role,
    enabled: input.enabled ?? true,
    updatedAt: now,
  };
  // Before anything is read or written: the provider is asked outside the transaction.
  try {
    await rp.discover(settings);
  } catch (err) {
    if (err instanceof OidcProblem) throw new DomainError('invalid', `issuer: ${err.message}`, err.code);
    throw err;
  }
  return uow.transaction(async (repos) => {
    const rules = await repos.accountIdentity.get(accountId);
    // A change that leaves the secret out keeps the stored one (of the same issuer).
    if (input.clientSecret === undefined && rules.sso?.issuer === input.issuer) settings.clientSecret = rules.sso.clientSecret;
    if (!settings.enabled && !rules.passwordLogin)
      throw invalid('Single sign-on cannot be disabled while password log-in is off: turn password log-in on first.');
    const next = { ...rules, sso: settings };
    await repos.accountIdentity.put(next);
    return next;
  });
}

export async function deleteSsoSettings(uow: UnitOfWork, accountId: string): Promise<AccountIdentityRecord> {
  return uow.transaction(async (repos) => {
    const rules = await repos.accountIdentity.get(accountId);
    if (!rules.sso) throw notFound('This account has no single sign-on set up.');
    if (!rules.passwordLogin) throw invalid('Password log-in is off: turn it on before removing single sign-on, or nobody can log in.');
    const next = { ...rules, sso: null };
    await repos.accountIdentity.put(next);
    return next;
  });
}

export async function updateAccountSecurity(
  uow: UnitOfWork,
  accountId: string,
  changes: { requireTotp?: boolean | undefined; passwordLogin?: boolean | undefined },
): Promise<AccountIdentityRecord> {
  return uow.transaction(async (repos) => {
    const rules = await repos.accountIdentity.get(accountId);
    const next: AccountIdentityRecord = {
      ...rules,
      ...(changes.requireTotp !== undefined ? { requireTotp: changes.requireTotp } : {}),
      ...(changes.passwordLogin !== undefined ? { passwordLogin: changes.passwordLogin } : {}),
    };
    if (!next.passwordLogin && !next.sso?.enabled)
      throw invalid('password_login can be turned off only while single sign-on is set up and enabled (PUT /v1/sso).');
    await repos.accountIdentity.put(next);
    return next;
  });
}

const noSso = () => invalid('This account has no single sign-on enabled (or there is no such account).');

/** Begins a log-in: where to send the browser, and the secret of its cookie. */
export async function startSsoLogin(uow: UnitOfWork, accountName: string, rp: OidcRelyingParty, redirectUri: string, now: Date) {
  const account = await uow.accounts.findByName(accountName);
  const rules = account ? await uow.accountIdentity.get(account.accountId) : null;
  if (!account || !rules?.sso?.enabled) throw noSso();
  const begun = await rp.begin(rules.sso, redirectUri);
  const cookie = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + ssoLoginTtlMs);
  await uow.ssoLogins.insert({
    loginId: sha256(cookie),
    accountId: account.accountId,
    state: begun.state,
    nonce: begun.nonce,
    codeVerifier: begun.codeVerifier,
    createdAt: now,
    expiresAt,
    usedAt: null,
  });
  return { url: begun.url, cookie, expiresAt };
}

export interface SsoCallback {
  code?: string | undefined;
  state?: string | undefined;
  iss?: string | undefined;
  error?: string | undefined;
  errorDescription?: string | undefined;
  /** Every parameter as the provider sent it, for the relying party to read. */
  params: Record<string, string>;
}

const refused = (message: string, code: string) => new DomainError('invalid', message, code);

/**
 * Finishes a log-in begun in this browser (its cookie): the session and the member, recorded in the
 * activity log in the transaction that makes them (the provider is asked before it begins).
 */
export async function completeSsoLogin(
  uow: UnitOfWork,
  cookie: string | undefined,
  callback: SsoCallback,
  rp: OidcRelyingParty,
  redirectUri: string,
  client: ClientInfo & { origin: RequestOrigin },
  settings: SessionSettings,
  now: Date,
): Promise<{ grant: SessionGrant; account: Account }> {
  if (!cookie)
    throw refused(
      'This browser began no single sign-on log-in (the humantask_sso cookie is missing); start the log-in again.',
      'sso_no_login',
    );
  const loginId = sha256(cookie);
  const login = await uow.ssoLogins.get(loginId);
  if (!login) throw refused('This single sign-on log-in is unknown; start the log-in again.', 'sso_no_login');
  if (login.usedAt) throw refused('This single sign-on log-in was finished already; start a new one.', 'sso_login_used');
  if (login.expiresAt.getTime() <= now.getTime())
    throw refused('This single sign-on log-in took too long (10 minutes); start again.', 'sso_login_expired');
  if (callback.error)
    throw refused(
      `The identity provider refused the log-in: ${callback.error}${callback.errorDescription ? ` (${callback.errorDescription})` : ''}.`,
      'sso_provider_error',
    );
  if (!callback.state || callback.state !== login.state)
    throw refused('The state does not match this log-in attempt; start the log-in again.', 'sso_state_mismatch');
  if (!callback.code) throw refused('The provider sent no code.', 'sso_provider_error');
  const account = await uow.accounts.findById(login.accountId);
  const rules = await uow.accountIdentity.get(login.accountId);
  if (!account || !rules.sso?.enabled) throw noSso();
  // The attempt is used up before the provider is asked: a second callback with it is refused here.
  await uow.ssoLogins.markUsed(loginId, now);
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(callback.params)) url.searchParams.set(k, v);
  let claims: OidcClaims;
  try {
    claims = await rp.finish(
      rules.sso,
      url,
      { state: login.state, nonce: login.nonce, codeVerifier: login.codeVerifier, redirectUri },
      now,
    );
  } catch (err) {
    if (err instanceof OidcProblem) throw refused(`The identity provider's answer was refused: ${err.message}`, err.code);
    throw err;
  }
  const email = claims.email?.toLowerCase();
  if (!email) throw refused('The identity provider sent no e-mail address (ask for the scope "email").', 'sso_no_email');
  if (claims.emailVerified === false) throw new DomainError('forbidden', `The provider has not verified ${email}.`, 'sso_email_unverified');
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!rules.sso.allowedDomains.includes(domain))
    throw new DomainError(
      'forbidden',
      `The e-mail domain of ${email} is not allowed for this account's single sign-on.`,
      'sso_domain_not_allowed',
    );
  const sso = rules.sso;
  const subject = `${sso.issuer}|${claims.subject}`;
  return uow.transaction(async (repos) => {
    let member =
      (await repos.members.findBySsoSubject(account.accountId, subject)) ?? (await repos.members.findByEmail(account.accountId, email));
    if (member && member.status === 'removed')
      throw new DomainError('forbidden', `${email} was removed from this account.`, 'member_removed');
    if (!member) {
      const created: MemberRecord = {
        memberId: 'mbr_' + randomBytes(12).toString('hex'),
        accountId: account.accountId,
        email,
        displayName: claims.name?.slice(0, 100) || null,
        role: sso.defaultRole,
        status: 'active',
        passwordHash: null,
        totpSecret: null,
        totpPending: null,
        totpLastStep: null,
        ssoSubject: subject,
        createdAt: now,
        lastLoginAt: null,
      };
      await repos.members.insert(created);
      member = created;
      await recordActivity(repos, {
        accountId: account.accountId,
        action: 'member.joined',
        actor: { type: 'system' },
        target: { type: 'member', id: created.memberId },
        at: now,
        origin: client.origin,
        details: { via: 'sso', role: created.role, email },
      });
    } else if (member.ssoSubject !== subject || member.status !== 'active') {
      member = { ...member, ssoSubject: subject, status: 'active' };
      await repos.members.update(member);
    }
    const grant = await startSession(repos, member, 'sso', client, settings, now);
    await recordActivity(repos, sessionCreated(grant, now, client.origin));
    return { grant, account };
  });
}
