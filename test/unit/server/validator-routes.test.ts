// The validator's route regexps are compiled once (server/validator-routes.ts), in any install:
// the cache is our code, not an install-time patch of node_modules.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';
import { cacheValidatorRoutes } from '../../../server/validator-routes.ts';

it('the validator still compiles its routes through path-to-regexp exports (what the cache replaces)', () => {
  const require = createRequire(import.meta.url);
  const file = require.resolve('express-openapi-validator/dist/middlewares/openapi.metadata.js');
  expect(readFileSync(file, 'utf8')).toContain('(0, path_to_regexp_1.pathToRegexp)(expressRoute, pathOpts)');
});

it('compiles a route once per route and options, and keeps distinct options apart', () => {
  const lib = cacheValidatorRoutes();
  expect(cacheValidatorRoutes()).toBe(lib);
  const a = lib.pathToRegexp('/v1/task/:taskId', { sensitive: false, strict: false });
  expect(lib.pathToRegexp('/v1/task/:taskId', { sensitive: false, strict: false })).toBe(a);
  expect(lib.pathToRegexp('/v1/task/:taskId', { sensitive: true, strict: false })).not.toBe(a);
  const { regexp } = a as { regexp: RegExp };
  expect(regexp.exec('/v1/task/abc')?.[1]).toBe('abc');
});
