// Worker passwords (server/domain/workforce/passwords.ts): scrypt with its parameters in the hash,
// a salt per password, a cost that can change without invalidating older hashes, and no throw on
// a malformed hash.
import { describe, expect, it } from 'vitest';
import { generatePassword, hashPassword, verifyPassword } from '../../server/domain/workforce/passwords.ts';

describe('worker passwords', () => {
  it('hash with scrypt, the cost and a fresh salt stored with the hash; only the password matches', async () => {
    const a = await hashPassword('correct-horse-battery-staple', 10);
    const b = await hashPassword('correct-horse-battery-staple', 10);
    expect(a).toMatch(/^scrypt\$10\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct-horse-battery-staple', a)).toBe(true);
    expect(await verifyPassword('correct-horse-battery-stapl', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('check a hash made at another cost by its own parameters', async () => {
    const cheap = await hashPassword('a-long-enough-password', 10);
    const dearer = await hashPassword('a-long-enough-password', 12);
    expect(await verifyPassword('a-long-enough-password', cheap)).toBe(true);
    expect(await verifyPassword('a-long-enough-password', dearer)).toBe(true);
  });

  it('treat the same text in another Unicode normal form as the same password', async () => {
    const composed = await hashPassword('caf\u00e9-password-long', 10);
    expect(await verifyPassword('cafe\u0301-password-long', composed)).toBe(true);
  });

  it.each(['', 'bcrypt$10$x', 'scrypt$10$8$1$salt', 'scrypt$99$8$1$c2FsdA$aGFzaA', 'scrypt$x$8$1$c2FsdA$aGFzaA'])(
    'answer false for the malformed hash %j',
    async (stored) => {
      expect(await verifyPassword('anything', stored)).toBe(false);
    },
  );

  it('choose passwords of 24 unambiguous characters, each different', () => {
    const seen = new Set(Array.from({ length: 50 }, generatePassword));
    expect(seen.size).toBe(50);
    for (const p of seen) expect(p).toMatch(/^[A-HJ-NP-Za-km-z2-9]{24}$/);
  });
});
