// Accounts: keys are shown once, at creation or rotation; only their hashes are stored.
import { callbackAddressProblem } from './callback-address.ts';
import { DomainError, invalid, notFound } from './errors.ts';
import { newAccountId, newSecret, newSigningSecret, sha256 } from './ids.ts';
import type { Caller, Mode } from './model.ts';
import type { AccountRecord, Repositories } from './ports.ts';

export interface AccountSecrets {
  account_id: string;
  name: string;
  test_key: string;
  live_key: string;
  callback_auth_key: string;
  signing_secret: string;
  /** The first owner (issue 34), when one was made with the account. */
  owner?: { member_id: string; email: string; password?: string; set_password_url?: string };
}

export const hashKey = (key: string) => sha256(key);

export async function createAccount(repos: Repositories, name: string, now: Date): Promise<AccountSecrets> {
  if (!name.trim()) throw invalid('An account needs a name.');
  if (await repos.accounts.findByName(name)) throw invalid(`An account named "${name}" exists already.`);
  const secrets: AccountSecrets = {
    account_id: newAccountId(),
    name,
    test_key: newSecret('test_'),
    live_key: newSecret('live_'),
    callback_auth_key: newSecret('cbauth_'),
    signing_secret: newSigningSecret(),
  };
  await repos.accounts.insert({
    accountId: secrets.account_id,
    name,
    testKeyHash: hashKey(secrets.test_key),
    liveKeyHash: hashKey(secrets.live_key),
    callbackAuthKey: secrets.callback_auth_key,
    signingSecret: secrets.signing_secret,
    defaultCallbackUrl: null,
    disabledTypes: [],
    testCompletionDelayMs: 0,
    liveRequestCount: 0,
    createdAt: now,
  });
  return secrets;
}

async function byName(repos: Repositories, name: string): Promise<AccountRecord> {
  const account = await repos.accounts.findByName(name);
  if (!account) throw notFound(`No account named "${name}".`);
  return account;
}

/** Replaces one key (test or live) with a new one; the old key stops working at once. */
export async function rotateKey(repos: Repositories, name: string, mode: Mode): Promise<{ name: string; mode: Mode; key: string }> {
  const account = await byName(repos, name);
  const key = newSecret(`${mode}_`);
  await repos.accounts.update({ ...account, [mode === 'test' ? 'testKeyHash' : 'liveKeyHash']: hashKey(key) });
  return { name, mode, key };
}

export interface AccountSettings {
  defaultCallbackUrl?: string | null;
  enableTypes?: string[];
  disableTypes?: string[];
  testCompletionDelayMs?: number;
}

export async function updateAccount(repos: Repositories, name: string, settings: AccountSettings) {
  // The same rule as a task's callback_url, whichever path sets it (CLI, admin interface, code).
  const badCallback = settings.defaultCallbackUrl ? callbackAddressProblem(settings.defaultCallbackUrl) : null;
  if (badCallback) throw invalid(`The default callback URL ${badCallback}.`);
  const account = await byName(repos, name);
  const disabled = new Set(account.disabledTypes);
  for (const t of settings.enableTypes ?? []) disabled.delete(t);
  for (const t of settings.disableTypes ?? []) disabled.add(t);
  const updated: AccountRecord = {
    ...account,
    disabledTypes: [...disabled].sort(),
    ...(settings.defaultCallbackUrl !== undefined ? { defaultCallbackUrl: settings.defaultCallbackUrl } : {}),
    ...(settings.testCompletionDelayMs !== undefined ? { testCompletionDelayMs: settings.testCompletionDelayMs } : {}),
  };
  await repos.accounts.update(updated);
  return accountSummary(updated);
}

/** What an operator may see of an account: no keys, no secrets. */
export function accountSummary(a: AccountRecord) {
  return {
    account_id: a.accountId,
    name: a.name,
    default_callback_url: a.defaultCallbackUrl,
    disabled_types: a.disabledTypes,
    test_completion_delay_ms: a.testCompletionDelayMs,
    live_requests: a.liveRequestCount,
    live_requests_charged: Math.max(0, a.liveRequestCount - 5),
    created_at: a.createdAt.toISOString(),
  };
}

/** Throws `type_disabled` (402) when the caller's account has this task type disabled. */
export function assertTypeEnabled(caller: Caller, type: string): void {
  if (caller.account.disabledTypes.includes(type)) {
    throw new DomainError('type_disabled', `Task type "${type}" is not enabled for this account.`);
  }
}
