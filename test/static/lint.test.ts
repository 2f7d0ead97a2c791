// The linters of the house, each its own test so that a failure names the tool and shows its report:
// Biome's lint rules and formatting (biome.jsonc), and knip's unused files, exports and dependencies
// (knip.jsonc). The typecheck and the layering rules have their own files beside this one.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { root } from '../support/spec.ts';

const run = promisify(execFile);

/** The exit code of `npm run <script>` and everything it printed. */
async function outcome(script: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', script], {
      cwd: root,
      maxBuffer: 64 << 20,
      env: { ...process.env, NO_COLOR: '1' },
    });
    return { code: 0, output: stdout + stderr };
  } catch (e) {
    const { code, stdout, stderr } = e as { code: number; stdout: string; stderr: string };
    return { code, output: stdout + stderr };
  }
}

it('npm run lint: Biome finds no lint problem', async () => {
  const { code, output } = await outcome('lint');
  expect(code, output).toBe(0);
});

it('npm run format:check: the tree is formatted as npm run format writes it', async () => {
  const { code, output } = await outcome('format:check');
  expect(code, output).toBe(0);
});

it('npm run lint:unused: knip finds no unused file, export or dependency', async () => {
  const { code, output } = await outcome('lint:unused');
  expect(code, output).toBe(0);
});
