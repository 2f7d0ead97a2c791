// The layering rules of the house (.dependency-cruiser.cjs) hold in this repository, and each rule
// reports what it forbids: a tree of planted modules, one per violation, is cruised with the same
// configuration, and exactly the planted violations come out (the named exceptions stay narrow).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { root } from '../support/spec.ts';

const run = promisify(execFile);
const config = path.join(root, '.dependency-cruiser.cjs');
const depcruise = path.join(root, 'node_modules', '.bin', 'depcruise');
const planted = mkdtempSync(path.join(tmpdir(), 'humantask-layering-'));

afterAll(() => rmSync(planted, { recursive: true, force: true }));

it('npm run lint:deps finds no violation in the repository', async () => {
  const { stdout } = await run('npm', ['run', '--silent', 'lint:deps'], { cwd: root });
  expect(stdout).toMatch(/no dependency violations found \(\d+ modules/);
});

it('reports every planted violation, and nothing the exceptions allow', async () => {
  const files: Record<string, string> = {
    // The brief's case: the domain imports Express.
    'server/domain/planted.ts': [
      "import express from 'express';",
      "import pg from 'pg';",
      "import { PGlite } from '@electric-sql/pglite';",
      "import { sql } from 'drizzle-orm';",
      "import { errors } from '../http/errors.ts';",
      "import { repositories } from '../store/repositories.ts';",
      "import { taskViewOf } from '../http/views/tasks.ts';",
      'export const all = [express, pg, PGlite, sql, errors, repositories, taskViewOf];',
    ].join('\n'),
    // No exception for the callback payloads any more: the domain asks the port CallbackPayloads, and
    // outbox.ts rendering a payload with the view again is reported like any other domain -> http import.
    'server/domain/outbox.ts':
      "import { taskViewOf } from '../http/views/tasks.ts';\nimport { errors } from '../http/errors.ts';\nexport const x = [taskViewOf, errors];",
    'server/http/views/tasks.ts': 'export const taskViewOf = 1;',
    'server/http/errors.ts': 'export const errors = 1;',
    'server/store/repositories.ts':
      "import express from 'express';\nimport { errors } from '../http/errors.ts';\nexport const repositories = [express, errors];",
    'server/cli.ts': "export const load = () => [import('../scripts/generate.ts'), import('../test/support/net.ts')];",
    'server/a.ts': "import { b } from './b.ts';\nexport const a = () => b;",
    'server/b.ts': "import { a } from './a.ts';\nexport const b = () => a;",
    'client/index.ts': "import { errors } from '../server/http/errors.ts';\nexport const x = errors;",
    'console/main.tsx': "import { errors } from '../server/http/errors.ts';\nexport const x = errors;",
    'conformance/runner.ts':
      "import { errors } from '../server/http/errors.ts';\nimport { net } from '../test/support/net.ts';\nexport const x = [errors, net];",
    // bench/ may use test/support/, nothing else of test/.
    'bench/run.ts':
      "import { net } from '../test/support/net.ts';\nimport { helper } from '../test/helper.ts';\nexport const x = [net, helper];",
    'scripts/generate.ts': "import { helper } from '../test/helper.ts';\nexport const x = helper;",
    'test/helper.ts': "import { net } from './support/net.ts';\nexport const helper = net;",
    'test/support/net.ts': 'export const net = 1;',
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(planted, file)), { recursive: true });
    writeFileSync(path.join(planted, file), `${text}\n`);
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(planted, 'node_modules'), 'dir');

  const result = await run(
    depcruise,
    ['--config', config, '--output-type', 'json', 'server', 'client', 'console', 'conformance', 'bench', 'scripts', 'test'],
    {
      cwd: planted,
      maxBuffer: 64 << 20,
    },
  ).catch((e: { stdout: string }) => e);
  const { summary } = JSON.parse(result.stdout) as {
    summary: { violations: { from: string; to: string; rule: { name: string; severity: string } }[] };
  };
  /** A package under node_modules by its name, a module of the tree by its path. */
  const target = (to: string) => /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(to)?.[1] ?? to;
  const found = summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${target(v.to)}`);
  expect(summary.violations.every((v) => v.rule.severity === 'error')).toBe(true);
  expect([...new Set(found)].sort()).toEqual(
    [
      'domain-no-framework-or-driver: server/domain/planted.ts -> express',
      'domain-no-framework-or-driver: server/domain/planted.ts -> pg',
      'domain-no-framework-or-driver: server/domain/planted.ts -> @electric-sql/pglite',
      'domain-no-framework-or-driver: server/domain/planted.ts -> drizzle-orm',
      'domain-no-http-or-store: server/domain/planted.ts -> server/http/errors.ts',
      'domain-no-http-or-store: server/domain/planted.ts -> server/store/repositories.ts',
      'domain-no-http-or-store: server/domain/outbox.ts -> server/http/errors.ts',
      'domain-no-http-or-store: server/domain/outbox.ts -> server/http/views/tasks.ts',
      'domain-no-http-or-store: server/domain/planted.ts -> server/http/views/tasks.ts',
      'store-no-http: server/store/repositories.ts -> express',
      'store-no-http: server/store/repositories.ts -> server/http/errors.ts',
      'server-not-scripts-or-test: server/cli.ts -> scripts/generate.ts',
      'server-not-scripts-or-test: server/cli.ts -> test/support/net.ts',
      'nothing-imports-test: server/cli.ts -> test/support/net.ts',
      // A cycle is reported once, at its first edge.
      'no-circular-in-server: server/a.ts -> server/b.ts',
      'client-not-server: client/index.ts -> server/http/errors.ts',
      'console-browser-only: console/main.tsx -> server/http/errors.ts',
      'conformance-standalone: conformance/runner.ts -> server/http/errors.ts',
      'conformance-standalone: conformance/runner.ts -> test/support/net.ts',
      'nothing-imports-test: conformance/runner.ts -> test/support/net.ts',
      'nothing-imports-test-but-bench-support: bench/run.ts -> test/helper.ts',
      'nothing-imports-test: scripts/generate.ts -> test/helper.ts',
    ].sort(),
  );
});
