// What customer identity keeps (issue 34), and what it needs of the store. Secrets never appear here
// in the clear but where they are made or checked: the store seals TOTP seeds, the OIDC client secret
// and PKCE verifiers (store/secrets.ts), and keeps only hashes of passwords and session and key secrets.
import type { Mode } from '../model.ts';
import type { Actor } from './activity.ts';
import type { Role, Scope } from './roles.ts';

export type MemberStatus = 'invited' | 'active' | 'removed';

export interface MemberRecord {
  memberId: string;
  accountId: string;
  email: string;
  displayName: string | null;
  role: Role;
  status: MemberStatus;
  /** scrypt hash; null: none set (invited, or created by single sign-on). */
  passwordHash: string | null;
  /** The confirmed TOTP secret (base32), opened; null: no TOTP. */
  totpSecret: string | null;
  /** A TOTP secret being set up, opened. */
  totpPending: string | null;
  totpLastStep: number | null;
  ssoSubject: string | null;
  createdAt: Date;
  lastLoginAt: Date | null;
}

export interface MemberSessionRecord {
  sessionId: string;
  memberId: string;
  accountId: string;
  tokenHash: string;
  via: 'password' | 'sso';
  createdAt: Date;
  expiresAt: Date;
  absoluteExpiresAt: Date;
  lastUsedAt: Date | null;
  endedAt: Date | null;
  address: string | null;
  userAgent: string | null;
}

export interface MemberLinkRecord {
  linkId: string;
  accountId: string;
  memberId: string;
  purpose: 'invitation' | 'password';
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
  voidedAt: Date | null;
}

export interface SsoSettingsRecord {
  issuer: string;
  clientId: string;
  /** Opened; null: a public client. */
  clientSecret: string | null;
  allowedDomains: string[];
  defaultRole: Role;
  enabled: boolean;
  updatedAt: Date;
}

export interface AccountIdentityRecord {
  accountId: string;
  requireTotp: boolean;
  passwordLogin: boolean;
  sso: SsoSettingsRecord | null;
  testKeyUsedAt: Date | null;
  liveKeyUsedAt: Date | null;
}

export interface SsoLoginRecord {
  loginId: string;
  accountId: string;
  state: string;
  nonce: string;
  /** Opened. */
  codeVerifier: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export interface ApiKeyRecord {
  keyId: string;
  accountId: string;
  mode: Mode;
  name: string;
  scopes: Scope[];
  keyHash: string;
  prefix: string;
  createdBy: Actor | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** Thrown by insert/update when another member that is not removed has the address. */
export class MemberEmailTaken extends Error {
  constructor() {
    super('member email taken');
  }
}

export interface MemberRepository {
  insert(member: MemberRecord): Promise<void>;
  update(member: MemberRecord): Promise<void>;
  get(accountId: string, memberId: string, options?: { forUpdate?: boolean }): Promise<MemberRecord | null>;
  /** The member that is not removed with this address (any letter case). */
  findByEmail(accountId: string, email: string): Promise<MemberRecord | null>;
  findBySsoSubject(accountId: string, subject: string): Promise<MemberRecord | null>;
  /** Oldest first; without a status, those that are not removed. */
  list(accountId: string, status?: MemberStatus): Promise<MemberRecord[]>;
  /** Active owners, locked until the transaction ends (the last-owner rule). */
  activeOwners(accountId: string): Promise<MemberRecord[]>;
  countNotRemoved(accountId: string): Promise<number>;
}

export interface MemberSessionRepository {
  insert(session: MemberSessionRecord): Promise<void>;
  /** The session of a token, with its member and account, when it still works. */
  findByTokenHash(tokenHash: string): Promise<{ session: MemberSessionRecord; member: MemberRecord } | null>;
  touch(sessionId: string, usedAt: Date, expiresAt: Date): Promise<void>;
  /** Live sessions of a member (not ended, not lapsed at `now`), newest first. */
  live(memberId: string, now: Date): Promise<MemberSessionRecord[]>;
  /** Ends one session of the member; false when it had ended or is not the member's. */
  end(memberId: string, sessionId: string, now: Date): Promise<boolean>;
  /** Ends every session of the member but `except`; how many. */
  endAll(memberId: string, now: Date, except?: string): Promise<number>;
}

export interface MemberLinkRepository {
  insert(link: MemberLinkRecord): Promise<void>;
  get(linkId: string, options?: { forUpdate?: boolean }): Promise<MemberLinkRecord | null>;
  markUsed(linkId: string, at: Date): Promise<void>;
  /** Voids the member's unused links (of one purpose, or all). */
  voidFor(memberId: string, at: Date, purpose?: MemberLinkRecord['purpose']): Promise<void>;
  /** The token of a link: its id and an HMAC of the row under a key derived from SECRETS_KEY. */
  token(link: MemberLinkRecord): string;
}

export interface AccountIdentityRepository {
  /** The account's rules (the defaults when it has no row). */
  get(accountId: string): Promise<AccountIdentityRecord>;
  /** Writes the rules and provider (the provider's secret sealed). */
  put(record: AccountIdentityRecord): Promise<void>;
  /** Records a use of a key of old, at most once a minute per process (the caller throttles). */
  touchLegacyKey(accountId: string, mode: Mode, at: Date): Promise<void>;
}

export interface SsoLoginRepository {
  insert(login: SsoLoginRecord): Promise<void>;
  get(loginId: string, options?: { forUpdate?: boolean }): Promise<SsoLoginRecord | null>;
  markUsed(loginId: string, at: Date): Promise<void>;
  deleteBefore(before: Date): Promise<number>;
}

export interface ApiKeyRepository {
  insert(key: ApiKeyRecord): Promise<void>;
  get(accountId: string, keyId: string): Promise<ApiKeyRecord | null>;
  /** Newest first; with `all`, revoked and expired ones too. */
  list(accountId: string, options: { all: boolean; now: Date }): Promise<ApiKeyRecord[]>;
  countLive(accountId: string, now: Date): Promise<number>;
  revoke(accountId: string, keyId: string, at: Date): Promise<void>;
  touch(keyId: string, at: Date): Promise<void>;
}
