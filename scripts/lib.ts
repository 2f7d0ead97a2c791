// Small helpers shared by the build scripts (generate, docs).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const generations = ['current', 'legacy'] as const;
export type Generation = (typeof generations)[number];
/** Every contract root: the two generations of the customer API, and the worker API (/worker/v1). */
export const apis = [...generations, 'workforce'] as const;
export type Api = (typeof apis)[number];

/** Runs a CLI from node_modules/.bin in the project root; throws with its output on failure. */
export function runBin(bin: string, args: string[]): string {
  try {
    return execFileSync(path.join(root, 'node_modules', '.bin', bin), args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}
