// A throwaway PostgreSQL cluster for the tests, from the machine's Debian binaries
// (PG_BIN, default /usr/lib/postgresql/15/bin). PostgreSQL refuses to run as root, so as root the
// cluster runs as the `postgres` user. TEST_DATABASE_URL points at an existing server instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const bin = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export function postgresAvailable(): boolean {
  return Boolean(process.env.TEST_DATABASE_URL) || existsSync(path.join(bin, 'pg_ctl'));
}

export interface Cluster {
  /** A connection string for a new database of this cluster: empty, or a copy of `template`. */
  createDatabase(options?: { template?: string; name?: string }): Promise<string>;
  stop(): void;
}

export async function startCluster(port: number): Promise<Cluster> {
  if (process.env.TEST_DATABASE_URL) return clusterAt(process.env.TEST_DATABASE_URL, () => {});
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'humantask-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const asPostgres = (cmd: string, args: string[]) => {
    const full = path.join(bin, cmd);
    const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
    return execFileSync(file, argv, { stdio: 'pipe', cwd: dir });
  };
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  asPostgres('pg_ctl', [
    '-D',
    data,
    '-l',
    path.join(dir, 'log'),
    '-w',
    'start',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
  ]);
  const stop = () => {
    spawnSync(
      root ? 'runuser' : path.join(bin, 'pg_ctl'),
      root
        ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop']
        : ['-D', data, '-m', 'immediate', 'stop'],
      { stdio: 'ignore' },
    );
    rmSync(dir, { recursive: true, force: true });
  };
  return clusterAt(`postgres://postgres@127.0.0.1:${port}/postgres`, stop);
}

/**
 * Drops the database that `databaseUrl` names, once its connections are gone. A pool that has
 * ended may still be closing its sockets for a moment; those are waited for, not terminated
 * (terminating them would raise errors in the process that owned them). A database still in use
 * after 5 s is left: the cluster goes at the end of the run anyway.
 */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const u = new URL(databaseUrl);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        await client.query(`drop database if exists ${name}`);
        return;
      } catch (err) {
        // 55006 object_in_use: "database is being accessed by other users".
        if ((err as { code?: string }).code !== '55006') throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    await client.end();
  }
}

export function clusterAt(url: string, stop: () => void = () => {}): Cluster {
  let n = 0;
  return {
    async createDatabase({ template, name = `humantask_test_${process.pid}_${Date.now()}_${n++}` } = {}) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`create database ${name}${template ? ` template ${template}` : ''}`);
      await client.end();
      const u = new URL(url);
      u.pathname = `/${name}`;
      return u.toString();
    },
    stop,
  };
}
