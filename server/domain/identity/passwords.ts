// Members' passwords: the workers' hashing (domain/workforce/passwords.ts: scrypt, its parameters
// stored with the hash, a decoy hash for unknown addresses), reached through these few functions
// only, so that a bound on hashing (how many at once, per client) applies to members where it
// applies to workers.
import { decoyHash, hashPassword, verifyPassword } from '../workforce/passwords.ts';

export interface PasswordRules {
  /** log2 of scrypt's N (WORKER_PASSWORD_COST): the same cost as workers'. */
  passwordCost: number;
}

export const hashMemberPassword = (password: string, rules: PasswordRules) => hashPassword(password, rules.passwordCost);

/** Checks a password against a member's hash, or against a decoy when there is none: the same cost either way. */
export async function checkMemberPassword(password: string, hash: string | null, rules: PasswordRules): Promise<boolean> {
  const ok = await verifyPassword(password, hash ?? (await decoyHash(rules.passwordCost)));
  return hash !== null && ok;
}

export function checkNewPassword(password: string, field = 'password'): string | null {
  return password.length < 12 || password.length > 256 ? `${field} must be 12 to 256 characters long.` : null;
}
