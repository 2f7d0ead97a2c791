// Secrets at rest (issue 15, finding 3): the signing secret and callback auth key are stored sealed
// under a key kept outside the database; callbacks still verify; plain rows of an older database are
// sealed at start; a database opened with another key, or without its key file, refuses to start.
import { createHmac, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openStore, type StoreOptions } from '../../server/store/db.ts';
import { defaultKeyFile, loadSecretsKey } from '../../server/store/secrets.ts';
import { unitOfWork } from '../../server/store/repositories.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { clusterAt, dropDatabase } from '../support/postgres.ts';
import { client, databases, hasPostgres, startTestServer } from '../support/server.ts';
import { type Received, startReceiver } from '../support/receiver.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const stored = async (store: Awaited<ReturnType<typeof openStore>>, name: string) =>
  (
    await store.execute<{ callback_auth_key: string; signing_secret: string }>({
      name: 'stored_secrets',
      text: 'SELECT callback_auth_key, signing_secret FROM accounts WHERE name = $1',
      values: [name],
    })
  )[0]!;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('secrets at rest on %s', (db) => {
  it('stores no plain secret, and the callback is still signed and authenticated with the plain ones', async () => {
    const server = await startTestServer(db, { DELIVERY_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' });
    const hook = await startReceiver();
    try {
      const row = await stored(server.store, 'dev');
      for (const value of Object.values(row)) expect(value).toMatch(/^sealed:v1:/);
      expect(JSON.stringify(row)).not.toContain(server.dev.signing_secret.replace(/^whsec_/, ''));
      expect(JSON.stringify(row)).not.toContain(server.dev.callback_auth_key);
      const created = await client(server, 'current', server.dev.test_key)('POST', '/v1/task/categorization', {
        json: { callback_url: hook.url, instruction: 'Pick', attachment_type: 'text', attachment: 'x', categories: ['a', 'b'] },
      });
      expect(created.status).toBe(200);
      const [{ headers, body }] = (await hook.waitFor(1, 'the callback')) as [Received];
      expect(headers['service-callback-auth']).toBe(server.dev.callback_auth_key);
      const key = Buffer.from(server.dev.signing_secret.replace(/^whsec_/, ''), 'base64');
      const signed = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
      expect(headers['webhook-signature']).toBe(`v1,${signed}`);
    } finally {
      await hook.close();
      await server.close();
    }
  });

  it('seals plain rows of an older database at start, and refuses to start with another key', async () => {
    let options: StoreOptions;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'humantask-secrets-'));
    dirs.push(dataDir, defaultKeyFile(dataDir));
    const secretsKey = randomBytes(32).toString('hex');
    if (db === 'postgres')
      options = { databaseUrl: await clusterAt(inject('postgresUrl')).createDatabase(), dataDir: 'memory://', secretsKey };
    else options = { dataDir };
    const warnings: string[] = [];
    options.warn = (m) => warnings.push(m);
    try {
      let store = await openStore(options);
      if (db === 'pglite') expect(statSync(defaultKeyFile(dataDir)).mode & 0o777).toBe(0o600);
      await createAccount(unitOfWork(store), 'old', new Date());
      // As a database written before sealing existed holds them.
      await store.execute({
        name: 'plain',
        text: `UPDATE accounts SET callback_auth_key = 'cbauth_plain', signing_secret = 'whsec_cGxhaW4=' WHERE name = 'old'`,
        values: [],
      });
      await store.close();
      store = await openStore(options);
      try {
        const row = await stored(store, 'old');
        expect(row.callback_auth_key).toMatch(/^sealed:v1:/);
        expect(row.signing_secret).toMatch(/^sealed:v1:/);
        expect(store.secrets.open(row.callback_auth_key)).toBe('cbauth_plain');
        expect(store.secrets.open(row.signing_secret)).toBe('whsec_cGxhaW4=');
        expect(warnings.join('\n')).toMatch(/sealed the secrets of 1 account/);
      } finally {
        await store.close();
      }
      // The database alone (another key, or no key file) opens nothing.
      await expect(openStore({ ...options, secretsKey: randomBytes(32).toString('hex') })).rejects.toThrow(/sealed with another key/);
      if (db === 'pglite') {
        rmSync(defaultKeyFile(dataDir));
        await expect(openStore(options)).rejects.toThrow(/key file .*\.key does not exist/);
        expect(existsSync(defaultKeyFile(dataDir))).toBe(false);
      }
    } finally {
      if (options.databaseUrl) await dropDatabase(options.databaseUrl);
    }
  });
});

describe('the default key file', () => {
  it('is made once when several servers start at the same moment: each opens what the others sealed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'humantask-keyrace-'));
    dirs.push(dir);
    const settings = JSON.stringify({ dataDir: path.join(dir, 'data') });
    const module = JSON.stringify(new URL('../../server/store/secrets.ts', import.meta.url).href);
    // Each process waits for the same instant, then loads (or makes) the key and seals a word.
    const startAt = Date.now() + 1500;
    const script = `const { loadSecretsKey } = await import(${module});
      while (Date.now() < ${startAt}) {}
      const box = loadSecretsKey(${settings}, () => true, () => {});
      console.log(box.seal('word'));`;
    const runs = Array.from(
      { length: 6 },
      () =>
        new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          let err = '';
          child.stdout.on('data', (d) => (out += d));
          child.stderr.on('data', (d) => (err += d));
          child.on('close', (code) => resolve({ code, out: out.trim(), err }));
        }),
    );
    const results = await Promise.all(runs);
    for (const r of results) expect(r, r.err).toMatchObject({ code: 0 });
    const box = loadSecretsKey(
      { dataDir: path.join(dir, 'data') },
      () => false,
      () => {},
    );
    for (const r of results) expect(box.open(r.out)).toBe('word');
    expect(readdirSync(dir)).toEqual(['data.key']);
  });
});
