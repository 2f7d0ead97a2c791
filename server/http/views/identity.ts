// Wire shapes of tag Identity (issue 34), typed by the contract.
import type { components } from '../../../generated/current.ts';
import type { ActivityEntry, Actor } from '../../domain/identity/activity.ts';
import type { KeyView } from '../../domain/identity/keys.ts';
import type { AccountIdentityRecord, MemberRecord, MemberSessionRecord } from '../../domain/identity/model.ts';
import { csrfTokenOf } from '../../domain/identity/sessions.ts';
import type { Account } from '../../domain/model.ts';

type Schemas = components['schemas'];

const iso = (d: Date) => d.toISOString();

export function memberView(m: MemberRecord): Schemas['Member'] {
  return {
    member_id: m.memberId,
    email: m.email,
    display_name: m.displayName || undefined,
    role: m.role,
    status: m.status,
    totp_enabled: m.totpSecret !== null,
    sso: m.ssoSubject !== null,
    created_at: iso(m.createdAt),
    last_login_at: m.lastLoginAt ? iso(m.lastLoginAt) : undefined,
  };
}

export function memberSessionView(
  session: MemberSessionRecord,
  member: MemberRecord,
  account: Pick<Account, 'accountId' | 'name'>,
  secret: string,
  secondFactorSetupRequired: boolean,
): Schemas['MemberSession'] {
  return {
    session_id: session.sessionId,
    member: memberView(member),
    account: { account_id: account.accountId, name: account.name },
    csrf_token: csrfTokenOf(secret),
    via: session.via,
    created_at: iso(session.createdAt),
    expires_at: iso(session.expiresAt),
    absolute_expires_at: iso(session.absoluteExpiresAt),
    second_factor_setup_required: secondFactorSetupRequired,
  };
}

export function sessionSummaryView(s: MemberSessionRecord, currentId: string): Schemas['MemberSessionSummary'] {
  return {
    session_id: s.sessionId,
    via: s.via,
    created_at: iso(s.createdAt),
    last_used_at: s.lastUsedAt ? iso(s.lastUsedAt) : undefined,
    expires_at: iso(s.expiresAt),
    absolute_expires_at: iso(s.absoluteExpiresAt),
    address: s.address || undefined,
    user_agent: s.userAgent || undefined,
    current: s.sessionId === currentId,
  };
}

export function linkView(
  expiresAt: Date,
  delivery: { mailed: true } | { mailed: false; url: string; mailError?: string | null },
): Schemas['MemberLink'] {
  return {
    expires_at: iso(expiresAt),
    mailed: delivery.mailed,
    url: !delivery.mailed ? delivery.url : undefined,
    mail_error: !delivery.mailed ? delivery.mailError || undefined : undefined,
  };
}

export function accountSecurityView(r: AccountIdentityRecord): Schemas['AccountSecurity'] {
  return { require_totp: r.requireTotp, password_login: r.passwordLogin, sso_enabled: r.sso?.enabled === true };
}

export function ssoSettingsView(r: AccountIdentityRecord, redirectUri: string): Schemas['SsoSettings'] | null {
  if (!r.sso) return null;
  return {
    issuer: r.sso.issuer,
    client_id: r.sso.clientId,
    client_secret_set: r.sso.clientSecret !== null,
    allowed_domains: r.sso.allowedDomains,
    default_role: r.sso.defaultRole,
    enabled: r.sso.enabled,
    redirect_uri: redirectUri,
    updated_at: iso(r.sso.updatedAt),
  };
}

function actorView(a: Actor): Schemas['ActivityActor'] {
  return { type: a.type, id: a.id || undefined, name: a.name || undefined };
}

export function apiKeyView(k: KeyView): Schemas['ApiKey'] {
  return {
    key_id: k.keyId,
    name: k.name,
    mode: k.mode,
    scopes: [...k.scopes],
    prefix: k.prefix,
    legacy: k.legacy,
    created_by: k.createdBy ? actorView(k.createdBy) : undefined,
    created_at: iso(k.createdAt),
    expires_at: k.expiresAt ? iso(k.expiresAt) : undefined,
    last_used_at: k.lastUsedAt ? iso(k.lastUsedAt) : undefined,
    revoked_at: k.revokedAt ? iso(k.revokedAt) : undefined,
  };
}

export function activityView(e: ActivityEntry): Schemas['ActivityEntry'] {
  return {
    activity_id: e.activityId,
    at: iso(e.at),
    action: e.action,
    actor: actorView(e.actor),
    target: { type: e.targetType, id: e.targetId ?? undefined },
    mode: e.mode || undefined,
    address: e.address || undefined,
    request_id: e.requestId || undefined,
    details: e.details || undefined,
  };
}
