// The git hooks (.husky/, installed by `npm install` through husky's `prepare`) in a scratch
// repository: a staged file that Biome would reformat or lint against stops the commit (pre-commit),
// and so does a subject longer than 72 characters (commit-msg); a clean one is committed.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { root } from '../support/spec.ts';

const repo = mkdtempSync(path.join(tmpdir(), 'humantask-hook-'));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const git = (...args: string[]) =>
  spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', `core.hooksPath=${path.join(repo, '.husky')}`, ...args], {
    cwd: repo,
    encoding: 'utf8',
  });

it('refuses an unformatted or linted-against file and a subject over 72 characters; takes a clean commit', () => {
  execFileSync('git', ['init', '-q'], { cwd: repo });
  for (const hook of ['pre-commit', 'commit-msg']) cpSync(path.join(root, '.husky', hook), path.join(repo, '.husky', hook));
  cpSync(path.join(root, 'biome.jsonc'), path.join(repo, 'biome.jsonc'));
  symlinkSync(path.join(root, 'node_modules'), path.join(repo, 'node_modules'));
  writeFileSync(path.join(repo, '.gitignore'), 'node_modules\n');

  writeFileSync(path.join(repo, 'a.ts'), 'export const a = {b:"c"}\n');
  git('add', '.');
  const unformatted = git('commit', '-q', '-m', 'unformatted');
  expect(unformatted.status, unformatted.stdout + unformatted.stderr).not.toBe(0);
  expect(unformatted.stdout + unformatted.stderr).toMatch(/format/i);

  writeFileSync(path.join(repo, 'a.ts'), 'export function a(x: any): any {\n  return x;\n}\n');
  git('add', '.');
  const linted = git('commit', '-q', '-m', 'explicit any');
  expect(linted.status, linted.stdout + linted.stderr).not.toBe(0);
  expect(linted.stdout + linted.stderr).toMatch(/noExplicitAny/);

  writeFileSync(path.join(repo, 'a.ts'), "export const a = { b: 'c' };\n");
  git('add', '.');
  const long = git('commit', '-q', '-m', `Add ${'a very long subject '.repeat(4)}`, '-m', 'Why.');
  expect(long.status, long.stdout + long.stderr).not.toBe(0);
  expect(long.stderr).toMatch(/the subject has \d+ characters; keep it to 72/);
  const clean = git('commit', '-q', '-m', 'clean', '-m', 'Why it is clean.');
  expect(clean.status, clean.stdout + clean.stderr).toBe(0);
  expect(git('log', '--format=%s').stdout.trim()).toBe('clean');
});
