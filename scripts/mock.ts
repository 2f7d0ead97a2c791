// Prism mocks of both generations on loopback, made from the bundled contracts. Used by
// `humantask mock` (`npm run mock`) and by the tests, which start it on free ports.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { once } from 'node:events';
import path from 'node:path';
import { generations, root, type Generation } from './lib.ts';

const prismCli = createRequire(import.meta.url).resolve('@stoplight/prism-cli/dist/index.js');

export interface RunningMock {
  urls: Record<Generation, string>;
  stop(): Promise<void>;
}

/** Starts one Prism process per generation and resolves once both listen. */
export async function startMock(
  ports: Record<Generation, number>,
  host = '127.0.0.1',
): Promise<RunningMock> {
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        await once(child, 'exit');
      }),
    );
  };
  try {
    const urls = {} as Record<Generation, string>;
    await Promise.all(
      generations.map(async (gen) => {
        const spec = path.join(root, 'generated', `${gen}.openapi.yaml`);
        const child = spawn(
          process.execPath,
          [prismCli, 'mock', spec, '--host', host, '--port', String(ports[gen]), '--errors', 'false'],
          { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        children.push(child);
        urls[gen] = await waitForListening(child, gen);
      }),
    );
    return { urls, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function waitForListening(child: ChildProcess, gen: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`Prism (${gen}) did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Prism is listening on (http:\/\/[^\s]+)/.exec(output);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ''));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism (${gen}) exited with ${code}:\n${output}`));
    });
  });
}
