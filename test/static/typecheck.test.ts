// The generated types and all our TypeScript compile under the project's strict settings.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { root } from '../support/spec.ts';

/** What `tsc --noEmit -p <project>` prints: nothing when the project compiles. */
function tsc(project: string): string {
  try {
    execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', project], {
      cwd: root,
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return '';
  } catch (e) {
    return (e as { stdout: string }).stdout;
  }
}

it('typechecks (tsc --noEmit, strict, noUncheckedIndexedAccess)', () => {
  expect(tsc(root)).toBe('');
});

it('typechecks the labeling app for the browser (tsc -p label: DOM types, no Node types)', () => {
  expect(tsc(path.join(root, 'label'))).toBe('');
});

it('typechecks the console for the browser (tsc -p console: DOM types, no Node types, TSX with Preact)', () => {
  expect(tsc(path.join(root, 'console'))).toBe('');
});

it("typechecks the client guide's examples as a user with exactOptionalPropertyTypes would (tsc -p test/client/examples)", () => {
  expect(tsc(path.join(root, 'test', 'client', 'examples'))).toBe('');
});
