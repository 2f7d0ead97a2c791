// Customer identity (issue 34): members, their sessions and links, single sign-on, scoped API
// keys and the activity log. Secrets are hashed (passwords with scrypt, session and key secrets with
// SHA-256) or sealed (TOTP seeds, the OIDC client secret, PKCE verifiers: store/secrets.ts).
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { ts } from './columns.ts';
import { accounts } from './tasks.ts';

/** An account's log-in rules and single sign-on provider; a row once one of them is set (defaults otherwise). */
export const accountIdentity = pgTable('account_identity', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accounts.accountId),
  requireTotp: boolean('require_totp').notNull().default(false),
  passwordLogin: boolean('password_login').notNull().default(true),
  ssoIssuer: text('sso_issuer'),
  ssoClientId: text('sso_client_id'),
  /** Sealed. */
  ssoClientSecret: text('sso_client_secret'),
  ssoAllowedDomains: jsonb('sso_allowed_domains').$type<string[]>(),
  ssoDefaultRole: text('sso_default_role'),
  ssoEnabled: boolean('sso_enabled').notNull().default(false),
  ssoUpdatedAt: ts('sso_updated_at'),
  /** The last use of the account's two keys of old (accounts.test_key_hash, live_key_hash), written at most once a minute. */
  testKeyUsedAt: ts('test_key_used_at'),
  liveKeyUsedAt: ts('live_key_used_at'),
});

/** A person of an account. */
export const members = pgTable(
  'members',
  {
    memberId: text('member_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    email: text('email').notNull(),
    displayName: text('display_name'),
    role: text('role').$type<'owner' | 'admin' | 'manager' | 'reviewer' | 'viewer'>().notNull(),
    status: text('status').$type<'invited' | 'active' | 'removed'>().notNull(),
    /** scrypt, as workers' (domain/workforce/passwords.ts); null: none set. */
    passwordHash: text('password_hash'),
    /** Sealed base32 TOTP secrets: the confirmed one, and one being set up. */
    totpSecret: text('totp_secret'),
    totpPending: text('totp_pending'),
    /** The last TOTP time step accepted: a code is good once. */
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    /** `issuer|sub` of the OpenID Connect subject that logs in as this member. */
    ssoSubject: text('sso_subject'),
    createdAt: ts('created_at').notNull(),
    lastLoginAt: ts('last_login_at'),
  },
  (t) => [
    uniqueIndex('members_email_live').on(t.accountId, sql`lower(${t.email})`).where(sql`${t.status} <> 'removed'`),
    uniqueIndex('members_sso_subject').on(t.accountId, t.ssoSubject).where(sql`${t.ssoSubject} is not null`),
    index('members_account').on(t.accountId, t.createdAt),
  ],
);

/** A member's console sessions: only the SHA-256 of each (256-bit random) secret is kept. */
export const memberSessions = pgTable(
  'member_sessions',
  {
    sessionId: text('session_id').primaryKey(),
    memberId: text('member_id')
      .notNull()
      .references(() => members.memberId),
    accountId: text('account_id').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    via: text('via').$type<'password' | 'sso'>().notNull(),
    createdAt: ts('created_at').notNull(),
    /** Moved by each use (sliding), never past absolute_expires_at. */
    expiresAt: ts('expires_at').notNull(),
    absoluteExpiresAt: ts('absolute_expires_at').notNull(),
    lastUsedAt: ts('last_used_at'),
    endedAt: ts('ended_at'),
    address: text('address'),
    userAgent: text('user_agent'),
  },
  (t) => [index('member_sessions_member').on(t.memberId, t.createdAt)],
);

/** Invitation and password links: signed (their token is an HMAC of this row), expiring, single use. */
export const memberLinks = pgTable(
  'member_links',
  {
    linkId: text('link_id').primaryKey(),
    accountId: text('account_id').notNull(),
    memberId: text('member_id')
      .notNull()
      .references(() => members.memberId),
    purpose: text('purpose').$type<'invitation' | 'password'>().notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    /** A newer link of the member replaced it, or the member was removed. */
    voidedAt: ts('voided_at'),
  },
  (t) => [index('member_links_member').on(t.memberId, t.purpose)],
);

/** Single sign-on log-ins under way: what the callback checks (state, nonce) and needs (the PKCE verifier, sealed). */
export const ssoLogins = pgTable('sso_logins', {
  /** The SHA-256 of the browser's `humantask_sso` cookie. */
  loginId: text('login_id').primaryKey(),
  accountId: text('account_id').notNull(),
  state: text('state').notNull(),
  nonce: text('nonce').notNull(),
  codeVerifier: text('code_verifier').notNull(),
  createdAt: ts('created_at').notNull(),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
});

/** Named, scoped API keys of one mode (the account's two keys of old stay in `accounts`). */
export const apiKeys = pgTable(
  'api_keys',
  {
    keyId: text('key_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    mode: text('mode').$type<'test' | 'live'>().notNull(),
    name: text('name').notNull(),
    scopes: text('scopes').array().notNull(),
    /** SHA-256 of the 128-bit random secret, as the keys of old. */
    keyHash: text('key_hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    /** The activity log's actor who made it. */
    createdBy: jsonb('created_by').$type<{ type: string; id?: string; name?: string }>(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [index('api_keys_account').on(t.accountId, t.createdAt)],
);

/** The activity log: append-only, but for the retention sweep. */
export const activity = pgTable(
  'activity',
  {
    activityId: text('activity_id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.accountId),
    at: ts('at').notNull(),
    action: text('action').notNull(),
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id'),
    actorName: text('actor_name'),
    targetType: text('target_type').notNull(),
    targetId: text('target_id'),
    mode: text('mode').$type<'test' | 'live'>(),
    address: text('address'),
    requestId: text('request_id'),
    details: jsonb('details').$type<Record<string, unknown>>(),
  },
  (t) => [index('activity_account').on(t.accountId, t.at.desc(), t.activityId.desc()), index('activity_at').on(t.at)],
);
