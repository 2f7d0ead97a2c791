// `humantask serve` as a child process, as an operator runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { root } from './spec.ts';

export const bin = path.join(root, 'bin', 'humantask.js');

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/**
 * Starts `humantask serve` (one process, delivery and attachment checks off unless `env` turns them on).
 * `nodeArgs` go to Node before the script (the profiler's `--cpu-prof`, which NODE_OPTIONS refuses).
 */
export async function serve(env: Record<string, string>, nodeArgs: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve'], {
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'info',
      WORKERS: '1',
      RATE_LIMIT_BURST: '0',
      AUTH_FAILURE_BURST: '0',
      // Tests log workers in and create them many at once from one address (see server.ts).
      WORKER_LOGIN_FAILURE_BURST: '0',
      WORKER_PASSWORD_PER_CLIENT: '1000',
      WORKER_PASSWORD_QUEUE: '1000',
      DELIVERY_POLL_MS: '0',
      ATTACHMENT_CHECK_POLL_MS: '0',
      ...env,
    },
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      // The start banner is one write (address, store, and the dev keys when they are printed).
      const m = /listening on (http:\/\/\S+)/.exec(output);
      const complete =
        /\nstore: .*\n/.test(output) && (!output.includes('development account was created') || output.includes('try: curl'));
      if (m && complete) {
        clearInterval(timer);
        resolve(m[1]!);
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`serve exited with ${code}: ${output}`));
    });
  });
  return { child, url, output: () => output };
}
