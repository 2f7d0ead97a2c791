// What a worker's log-in costs (issue 31, decision 13): one password hash for an address nobody
// uses (a decoy), as for an address one worker has; one per workforce that uses the address
// otherwise (at most 5), and one when the log-in names its workforce. Counted by the hashes
// checked, never by time: the password functions are replaced by a counter.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { workforceIdOf } from '../../../server/domain/workforce/handles.ts';
import type { IdentityStore, WorkerRecord, WorkerWithHash } from '../../../server/domain/workforce/identity.ts';

const checked: string[] = [];
vi.mock('../../../server/domain/workforce/passwords.ts', () => ({
  decoyHash: async () => 'decoy',
  hashPassword: async (password: string) => `hash:${password}`,
  generatePassword: () => 'generated-password',
  verifyPassword: async (password: string, stored: string) => {
    checked.push(stored);
    return stored === `hash:${password}`;
  },
}));
const { login } = await import('../../../server/domain/workforce/identity.ts');

const settings = { passwordCost: 10, sessionTtlMs: 3_600_000, sessionMaxMs: 86_400_000 };

function worker(n: number, accountId: string | null, mode: 'test' | 'live' = 'live'): WorkerRecord {
  return {
    workerId: `wkr_${String(n).padStart(24, '0')}`,
    accountId,
    mode,
    email: 'ana@example.com',
    displayName: 'Ana',
    status: 'active',
    roles: ['labeler'],
    calibrator: false,
    createdAt: new Date(0),
    lastSeenAt: null,
  };
}

/** A store holding these workers of one address, each with the password `pw-<n>` unless given. */
function storeOf(rows: { worker: WorkerRecord; password?: string }[]): IdentityStore {
  const withHash: WorkerWithHash[] = rows.map((r) => ({
    worker: r.worker,
    passwordHash: `hash:${r.password ?? `pw-${r.worker.workerId}`}`,
  }));
  const workers = {
    withEmail: async (email: string, limit: number) => (email === 'ana@example.com' ? withHash.slice(0, limit) : []),
    get: async (id: string) => rows.find((r) => r.worker.workerId === id)?.worker ?? null,
    insertToken: async () => {},
    revokeSessionsBeyond: async () => 0,
  };
  return { workers, work: {}, transaction: (fn: (r: unknown) => unknown) => fn({ workers, work: {} }) } as unknown as IdentityStore;
}

describe('the cost of a worker log-in, in password hashes checked', () => {
  beforeEach(() => {
    checked.length = 0;
  });

  it('checks one hash for an unknown address, as for a wrong password of an address used once', async () => {
    const one = storeOf([{ worker: worker(1, 'acct_a') }]);
    expect(await login(one, { email: 'nobody@example.com', password: 'x' }, settings, new Date())).toBeNull();
    expect(checked).toEqual(['decoy']);
    checked.length = 0;
    expect(await login(one, { email: 'ana@example.com', password: 'wrong' }, settings, new Date())).toBeNull();
    expect(checked).toHaveLength(1);
  });

  it('checks one hash per workforce using the address, at most 5; one when the log-in names its workforce', async () => {
    const many = storeOf(Array.from({ length: 7 }, (_, i) => ({ worker: worker(i + 1, i === 0 ? null : `acct_${i}`) })));
    expect(await login(many, { email: 'ana@example.com', password: 'wrong' }, settings, new Date())).toBeNull();
    expect(checked).toHaveLength(5);
    checked.length = 0;
    const third = worker(3, 'acct_2');
    const named = await login(
      many,
      { email: 'ana@example.com', password: `pw-${third.workerId}`, workforceId: workforceIdOf(third) },
      settings,
      new Date(),
    );
    expect(named?.worker.workerId).toBe(third.workerId);
    expect(checked).toHaveLength(1);
    checked.length = 0;
    // A workforce that does not use the address: one decoy hash, nothing opened.
    expect(
      await login(
        many,
        { email: 'ana@example.com', password: 'wrong', workforceId: workforceIdOf({ accountId: 'acct_9', mode: 'test' }) },
        settings,
        new Date(),
      ),
    ).toBeNull();
    expect(checked).toEqual(['decoy']);
  });
});
