// The generated types and all our TypeScript compile under the project's strict settings.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { root } from '../support/spec.ts';

it('typechecks (tsc --noEmit, strict, noUncheckedIndexedAccess)', () => {
  let output = '';
  try {
    execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', root], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    output = (e as { stdout: string }).stdout;
  }
  expect(output).toBe('');
});

it('typechecks the labeling app for the browser (tsc -p label: DOM types, no Node types)', () => {
  let output = '';
  try {
    execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', path.join(root, 'label')], {
      cwd: root,
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (e) {
    output = (e as { stdout: string }).stdout;
  }
  expect(output).toBe('');
});
