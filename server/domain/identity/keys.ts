// Scoped API keys (issue 34): named, of one mode, with scopes and an optional expiry; the secret
// shown once and kept as its SHA-256 (as the account's two keys of old, which keep working with
// every scope). Rotation without downtime: a successor is made, the clients move, the old one is revoked.
import { randomBytes } from 'node:crypto';
import { hashKey } from '../accounts.ts';
import { DomainError, invalid, notFound } from '../errors.ts';
import type { Mode } from '../model.ts';
import type { AccountRecord, UnitOfWork } from '../ports.ts';
import type { Actor } from './activity.ts';
import type { ApiKeyRecord } from './model.ts';
import { isScope, scopes, type Scope } from './roles.ts';

/** At most this many live keys (not revoked, not expired) per account, besides the two of old. */
const maxKeys = 100;

const legacyKeyIds = { test: 'legacy_test', live: 'legacy_live' } as const;

/** A key as the API shows it: the keys of old have no record of their own. */
export interface KeyView {
  keyId: string;
  name: string;
  mode: Mode;
  scopes: readonly Scope[];
  prefix: string;
  legacy: boolean;
  createdBy: Actor | null;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const viewOf = (k: ApiKeyRecord): KeyView => ({ ...k, legacy: false });

async function legacyKeys(uow: UnitOfWork, account: AccountRecord): Promise<KeyView[]> {
  const rules = await uow.accountIdentity.get(account.accountId);
  return (['test', 'live'] as const).map((mode) => ({
    keyId: legacyKeyIds[mode],
    name: `${mode} key`,
    mode,
    scopes,
    prefix: `${mode}_`,
    legacy: true,
    createdBy: null,
    createdAt: account.createdAt,
    expiresAt: null,
    lastUsedAt: mode === 'test' ? rules.testKeyUsedAt : rules.liveKeyUsedAt,
    revokedAt: null,
  }));
}

async function accountRecord(uow: UnitOfWork, accountId: string): Promise<AccountRecord> {
  const account = await uow.accounts.findById(accountId);
  if (!account) throw notFound(`Account ${accountId} not found.`);
  return account;
}

export async function listApiKeys(uow: UnitOfWork, accountId: string, includeRevoked: boolean, now: Date): Promise<KeyView[]> {
  const keys = await uow.apiKeys.list(accountId, { all: includeRevoked, now });
  return [...keys.map(viewOf), ...(await legacyKeys(uow, await accountRecord(uow, accountId)))];
}

export async function getApiKey(uow: UnitOfWork, accountId: string, keyId: string): Promise<KeyView> {
  if (keyId === legacyKeyIds.test || keyId === legacyKeyIds.live)
    return (await legacyKeys(uow, await accountRecord(uow, accountId))).find((k) => k.keyId === keyId)!;
  const key = /^key_[0-9a-f]{24}$/.test(keyId) ? await uow.apiKeys.get(accountId, keyId) : null;
  if (!key) throw notFound(`API key ${keyId} not found.`);
  return viewOf(key);
}

export async function createApiKey(
  uow: UnitOfWork,
  accountId: string,
  input: { name: string; mode: Mode; scopes: unknown[]; expiresAt?: Date | undefined },
  createdBy: Actor,
  now: Date,
): Promise<{ key: KeyView; secret: string }> {
  for (const s of input.scopes) if (!isScope(s)) throw invalid(`scope "${String(s)}" does not exist (${scopes.join(', ')}).`);
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) throw invalid('expires_at must lie in the future.');
  return uow.transaction(async (repos) => {
    // Two creations at once may both pass the limit by one: it bounds storage, not security.
    if ((await repos.apiKeys.countLive(accountId, now)) >= maxKeys)
      throw new DomainError('conflict', `An account has at most ${maxKeys} live API keys; revoke one first.`, 'key_limit');
    const secret = `${input.mode}_${randomBytes(24).toString('base64url')}`;
    const key: ApiKeyRecord = {
      keyId: 'key_' + randomBytes(12).toString('hex'),
      accountId,
      mode: input.mode,
      name: input.name,
      scopes: [...new Set(input.scopes as Scope[])],
      keyHash: hashKey(secret),
      prefix: secret.slice(0, 13),
      createdBy,
      createdAt: now,
      expiresAt: input.expiresAt ?? null,
      revokedAt: null,
      lastUsedAt: null,
    };
    await repos.apiKeys.insert(key);
    return { key: viewOf(key), secret };
  });
}

export async function revokeApiKey(uow: UnitOfWork, accountId: string, keyId: string, now: Date): Promise<KeyView> {
  if (keyId === legacyKeyIds.test || keyId === legacyKeyIds.live)
    throw invalid(`${keyId} is one of the account's two keys of old: rotate it with \`humantask accounts rotate-key\`.`);
  return uow.transaction(async (repos) => {
    const key = /^key_[0-9a-f]{24}$/.test(keyId) ? await repos.apiKeys.get(accountId, keyId) : null;
    if (!key) throw notFound(`API key ${keyId} not found.`);
    if (key.revokedAt) return viewOf(key);
    await repos.apiKeys.revoke(accountId, keyId, now);
    return viewOf({ ...key, revokedAt: now });
  });
}
