// The validator's route regexps are compiled once and its route lookup is narrowed by an index
// (server/validator-routes.ts), in any install: our code, not an install-time patch of node_modules.
// That the validator is still the release this relies on: test/unit/fenced-internals.test.ts.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect, it } from 'vitest';
import { parse } from 'yaml';
import { cacheValidatorRoutes, routeIndex } from '../../../server/validator-routes.ts';
import { root } from '../../support/spec.ts';

it('compiles a route once per route and options, and keeps distinct options apart', () => {
  const lib = cacheValidatorRoutes()!;
  expect(cacheValidatorRoutes()).toBe(lib);
  const a = lib.pathToRegexp('/v1/task/:taskId', { sensitive: false, strict: false });
  expect(lib.pathToRegexp('/v1/task/:taskId', { sensitive: false, strict: false })).toBe(a);
  expect(lib.pathToRegexp('/v1/task/:taskId', { sensitive: true, strict: false })).not.toBe(a);
  const { regexp } = a as { regexp: RegExp };
  expect(regexp.exec('/v1/task/abc')?.[1]).toBe('abc');
});

it("hands the validator's route lookup only the routes a path can match, so it finds the route the full scan finds", () => {
  const require = createRequire(import.meta.url);
  const fromValidator = createRequire(require.resolve('express-openapi-validator'));
  const { pathToRegexp } = fromValidator('path-to-regexp') as { pathToRegexp: (p: string, o: object) => { regexp: RegExp } };
  const routes: string[] = [];
  for (const [file, base] of [
    ['current', ''],
    ['legacy', '/legacy'],
    ['workforce', '/worker'],
  ] as const) {
    const spec = parse(readFileSync(path.join(root, 'generated', `${file}.openapi.yaml`), 'utf8')) as { paths: object };
    for (const p of Object.keys(spec.paths)) routes.push(`${base}${p.replace(/\{([^}]+)\}/g, ':$1')}`);
  }
  expect(routes.length).toBeGreaterThan(100);
  const first = (candidates: string[], path: string) =>
    candidates.find((route) => pathToRegexp(route, { sensitive: false, strict: false }).regexp.test(path)) ?? null;
  const lookup = routeIndex(routes);
  const paths = routes.flatMap((route) => {
    const p = route.replace(/:[^/]+/g, 'abc');
    return [p, `${p}/`, p.toUpperCase(), `${p}/extra`, p.replace(/\/[^/]+$/, '/batch'), p.replace(/\/[^/]+$/, '')];
  });
  paths.push('/', '/nothing', '/v1', '/legacy', '/worker/v1/none', '/V1/TASKS');
  let narrowed = 0;
  for (const p of paths) {
    const candidates = lookup(p);
    expect(first(candidates, p), p).toBe(first(routes, p));
    if (candidates.length < routes.length / 4) narrowed++;
  }
  // Not a full scan in disguise: most paths get a small part of the routes.
  expect(narrowed).toBeGreaterThan(paths.length / 2);
});
