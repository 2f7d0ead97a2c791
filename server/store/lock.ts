// One process at a time on an embedded data folder: PGlite is single-process, and two servers on one
// folder overwrite each other's writes. The holder is named by a PID file created with O_EXCL; a
// file whose process is gone (kill -9, a crash) is stale and taken over. Two processes that find the
// same stale file at once take turns through a second O_EXCL file, so only one of them takes over.
// (proper-lockfile was considered: it judges staleness by an mtime refreshed on a timer, which a
// stalled event loop lets lapse; a PID and a liveness check need no timer.)
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class DataDirInUse extends Error {}

const alive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const holderOf = (file: string): number | null => {
  try {
    return Number.parseInt(readFileSync(file, 'utf8'), 10);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
};

/** Creates `file` holding our PID, only if it does not exist. */
const create = (file: string): boolean => {
  try {
    writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
};

export const lockFile = (dataDir: string) => path.join(dataDir, 'humantask.pid');

/**
 * Takes the data folder for this process, or throws DataDirInUse naming the holder's PID. The
 * answer's `release` removes the file (only if it is still ours).
 */
export function lockDataDir(dataDir: string): { release(): void } {
  const file = lockFile(dataDir);
  const turn = `${file}.takeover`;
  for (let tries = 0; tries < 5; tries++) {
    if (create(file)) {
      return {
        release: () => {
          if (holderOf(file) === process.pid) rmSync(file, { force: true });
        },
      };
    }
    const holder = holderOf(file);
    if (Number.isNaN(holder)) {
      // Created but not written yet (or left empty by a crash in between): look again shortly.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      if (Number.isNaN(holderOf(file))) rmSync(file, { force: true });
      continue;
    }
    if (holder !== null && alive(holder)) {
      throw new DataDirInUse(
        `${path.resolve(dataDir)} is in use by process ${holder} (PID file ${file}). Stop that server first, or ` +
          `run the command while it is up: the CLI then goes through its admin interface.`,
      );
    }
    // Stale (or empty). Take turns: whoever creates the turn file re-checks and removes the stale file.
    if (create(turn)) {
      try {
        const again = holderOf(file);
        if (again === holder) rmSync(file, { force: true });
      } finally {
        rmSync(turn, { force: true });
      }
    } else {
      const other = holderOf(turn);
      // A turn file left by a process that died while taking over.
      if (other !== null && !alive(other)) rmSync(turn, { force: true });
    }
  }
  throw new DataDirInUse(`Could not take ${file}: other processes keep taking it. Try again.`);
}
