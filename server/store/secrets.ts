// Secrets at rest: each account's signing secret and callback auth key are stored sealed with
// AES-256-GCM under a key kept outside the database, so that a copy of the database (its folder,
// its WAL, a dump) forges no callback. Rows written before sealing existed are sealed at start.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const prefix = 'sealed:v1:';

export interface SecretBox {
  /** The stored form of a secret (a sealed value is left as it is). */
  seal(plain: string): string;
  /** The secret of a stored value; a value stored before sealing existed is returned as it is. */
  open(stored: string): string;
  /** True when the key is made up for this process (an in-memory database). */
  ephemeral: boolean;
  /** Where the key came from, for messages. */
  source: string;
  /**
   * An HMAC-SHA256 of `message` (base64url) under a key derived from this one for `purpose` (an
   * export's signed download link): every server holding the same key makes and checks the same.
   */
  sign(purpose: string, message: string): string;
}

export class SecretsKeyError extends Error {}

export const isSealed = (stored: string) => stored.startsWith(prefix);

export function secretBox(key: Buffer, source: string, ephemeral = false): SecretBox {
  if (key.length !== 32) throw new SecretsKeyError(`the secrets key (${source}) must be 32 bytes, got ${key.length}`);
  const derived = new Map<string, Buffer>();
  return {
    ephemeral,
    source,
    sign(purpose, message) {
      let k = derived.get(purpose);
      if (!k) {
        k = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `humantask ${purpose}`, 32));
        derived.set(purpose, k);
      }
      return createHmac('sha256', k).update(message).digest('base64url');
    },
    seal(plain) {
      if (isSealed(plain)) return plain;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return prefix + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
    },
    open(stored) {
      if (!isSealed(stored)) return stored;
      const raw = Buffer.from(stored.slice(prefix.length), 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretsKeyError(
          `The account secrets in this database were sealed with another key than ${source}, or are damaged. ` +
            `Give the server the key they were sealed with (SECRETS_KEY or SECRETS_KEY_FILE).`,
        );
      }
    },
  };
}

/** 64 hex digits or the base64 of 32 bytes. */
function parseKey(text: string, source: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (key.length !== 32)
    throw new SecretsKeyError(`${source} must hold 32 bytes as 64 hex digits or base64, e.g. the output of \`openssl rand -hex 32\``);
  return key;
}

export interface KeySettings {
  /** SECRETS_KEY: the key itself. */
  secretsKey?: string | undefined;
  /** SECRETS_KEY_FILE: a file holding it. */
  secretsKeyFile?: string | undefined;
  dataDir: string;
}

/** The default key file: beside the data folder (`./data` -> `./data.key`), never inside it. */
export const defaultKeyFile = (dataDir: string) => `${path.resolve(dataDir).replace(/[\\/]+$/, '')}.key`;

/**
 * The key from SECRETS_KEY, else from SECRETS_KEY_FILE, else from the default key file beside
 * DATA_DIR. A key file is created (0600) only when `mayCreate` (the database holds no sealed secret
 * yet); an in-memory DATA_DIR without either setting gets a key for this process only.
 */
export function loadSecretsKey(settings: KeySettings, mayCreate: () => boolean, warn: (message: string) => void): SecretBox {
  if (settings.secretsKey) return secretBox(parseKey(settings.secretsKey, 'SECRETS_KEY'), 'SECRETS_KEY');
  const file = settings.secretsKeyFile || (settings.dataDir && settings.dataDir !== 'memory://' ? defaultKeyFile(settings.dataDir) : null);
  if (!file) return secretBox(randomBytes(32), 'a key made for this process', true);
  if (existsSync(file)) {
    if ((statSync(file).mode & 0o077) !== 0) warn(`the secrets key file ${file} is readable by others than its owner (chmod 600 it)`);
    return secretBox(parseKey(readFileSync(file, 'utf8'), `the key file ${file}`), `the key file ${file}`);
  }
  if (!mayCreate()) {
    throw new SecretsKeyError(
      `The account secrets in this database are sealed, and the key file ${file} does not exist. ` +
        `Give the server the key they were sealed with (SECRETS_KEY, SECRETS_KEY_FILE, or that file).`,
    );
  }
  // Written whole under another name, then linked into place: a server starting at the same time
  // either wins the link or reads the winner's complete file, never a half-written or second key.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(draft, { force: true });
  }
  return secretBox(parseKey(readFileSync(file, 'utf8'), `the key file ${file}`), `the key file ${file}`);
}
