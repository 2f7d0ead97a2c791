import { hash, randomBytes, randomFillSync } from 'node:crypto';

// Random bytes for ids, drawn from the CSPRNG 4 KiB at a time (as node:crypto's randomUUID does):
// one system call for 680 task ids instead of one each. Each byte is handed out once. Secrets
// (newSecret, newSigningSecret) draw their own bytes.
const pool = Buffer.allocUnsafe(4096);
let used = pool.length;
function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += bytes;
  return pool.toString('hex', used - bytes, used);
}

/**
 * A task id: 24 lowercase hex characters, time-ordered (12 hex of milliseconds since the epoch,
 * then 12 random hex), so that ids sort like their creation times.
 */
export function newTaskId(now: Date): string {
  return now.getTime().toString(16).padStart(12, '0') + randomHex(6);
}

export function newAccountId(): string {
  return 'acct_' + randomBytes(12).toString('hex');
}

/** A secret with a readable prefix (`test_`, `live_`, `cbauth_`): 128 random bits. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(16).toString('hex');
}

/** Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}

/** One call (crypto.hash): no Hash object per digest, which createHash().update().digest() makes (twice a creation). */
export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}
