// express-openapi-validator 5.6.2 compiles a route's regexp (path-to-regexp) on every request. Its
// open upstream pull request #1217 caches them; no release carries it yet. The cache lives here, in
// our code, so it works in every install (an install-time patch does not run in a consumer's
// install under npm 11): the validator calls `pathToRegexp` through the module's exports object,
// and that function is replaced by a memoized one. path-to-regexp's own `match` calls its local
// function and is not affected. The routes come from the contract, so the cache stays small; it
// is bounded all the same.
import { createRequire } from 'node:module';

type Compile = (path: unknown, options?: object) => unknown;
const MAX_ROUTES = 2_000;
const marker = Symbol.for('humantask.pathToRegexpCache');

/** Installs the cache (once per process); returns the path-to-regexp exports it patched. */
export function cacheValidatorRoutes(): { pathToRegexp: Compile } {
  const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const lib = fromValidator('path-to-regexp') as { pathToRegexp: Compile & { [marker]?: true } };
  if (lib.pathToRegexp[marker]) return lib;
  const compile = lib.pathToRegexp;
  const cache = new Map<string, unknown>();
  const cached = Object.assign(
    (path: unknown, options?: object) => {
      if (typeof path !== 'string') return compile(path, options);
      const key = `${JSON.stringify(options ?? {})}\u0000${path}`;
      let compiled = cache.get(key);
      if (compiled === undefined) {
        compiled = compile(path, options);
        if (cache.size < MAX_ROUTES) cache.set(key, compiled);
      }
      return compiled;
    },
    { [marker]: true as const },
  );
  lib.pathToRegexp = cached;
  return lib;
}
