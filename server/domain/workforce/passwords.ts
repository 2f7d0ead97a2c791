// Worker passwords: scrypt (memory-hard, in node:crypto, no native dependency), a random salt per
// password, the parameters stored with the hash so that the cost can be raised later without
// invalidating old hashes, and a constant-time comparison.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

const keyLength = 32;
const blockSize = 8;
const parallelization = 1;

/** scrypt needs 128 × N × r bytes; allow twice that (node's default maxmem is 32 MB). */
const maxmemFor = (n: number, r: number) => 256 * n * r;

/**
 * `scrypt$<log2 N>$<r>$<p>$<salt base64url>$<hash base64url>`. `cost` is log2 of N: 15 (32 MB, tens
 * of milliseconds) by default (WORKER_PASSWORD_COST), lower in tests.
 */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const n = 2 ** cost;
  const hash = await scrypt(password.normalize('NFC'), salt, keyLength, {
    N: n,
    r: blockSize,
    p: parallelization,
    maxmem: maxmemFor(n, blockSize),
  });
  return ['scrypt', cost, blockSize, parallelization, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; false for a malformed hash, never a throw. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [cost, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![cost, r, p].every((x) => Number.isInteger(x) && x > 0) || cost > 24 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const n = 2 ** cost;
  const actual = await scrypt(password.normalize('NFC'), salt, expected.length, { N: n, r, p, maxmem: maxmemFor(n, r) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash to check against when there is no worker: a failed login costs the same either way. */
let decoy: Promise<string> | undefined;
export function decoyHash(cost: number): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'), cost);
  return decoy;
}

/** A password the server chooses: 24 characters from an unambiguous alphabet (~140 bits). */
export function generatePassword(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  const bytes = randomBytes(24);
  // 256 is not a multiple of 57: the slight bias costs well under a bit of the ~140.
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
}
