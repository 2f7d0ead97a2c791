// CPU time from /proc (no profiler), for the benchmarks that say where the CPU went: a process's
// own ticks, a PostgreSQL cluster's (every process of it), the whole machine's.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

let ticksPerSecond = 0;
/** Clock ticks a second (`getconf CLK_TCK`). */
export const ticks = () => (ticksPerSecond ||= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100);

/** utime + stime (+ the children it waited for: cutime + cstime) of a process in clock ticks, and its parent. */
export function statOf(pid: number): { own: number; children: number; ppid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: the fields after it.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

/** The cluster's CPU in ticks: the postmaster (with the children that ended) and its live children. */
export function postgresTicks(postmaster: number): number {
  let total = 0;
  const main = statOf(postmaster);
  if (main) total += main.own + main.children;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = statOf(Number(name));
    if (s?.ppid === postmaster) total += s.own;
  }
  return total;
}

/** Busy ticks of all CPUs together (everything but idle and iowait). */
export function machineTicks(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return f.slice(0, 8).reduce((a, b) => a + b, 0) - (f[3] ?? 0) - (f[4] ?? 0);
}

/** The cluster's postmaster: the parent of a backend (null where /proc says nothing, e.g. a remote server). */
export async function postmasterOf(databaseUrl: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    return statOf(rows[0]!.pid)?.ppid ?? null;
  } finally {
    await client.end();
  }
}
