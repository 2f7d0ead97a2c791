// express-openapi-validator 5.6.2 compiles a route's regexp (path-to-regexp) on every request. Its
// open upstream pull request #1217 caches them; no release carries it yet. The cache lives here, in
// our code, so it works in every install (an install-time patch does not run in a consumer's
// install under npm 11): the validator calls `pathToRegexp` through the module's exports object,
// and that function is replaced by a memoized one. path-to-regexp's own `match` calls its local
// function and is not affected. The routes come from the contract, so the cache stays small; it
// is bounded all the same.
//
// Its route lookup also tries every route of the contract in turn, on every request (about 3 % of
// a creation's CPU on PostgreSQL): `indexValidatorRoutes` hands it, for each request, only the
// routes whose leading literal segments fit the request's path, in the contract's order, so the
// first match is the one the full scan finds.
//
// Both replace functions inside the validator's modules (not its public interface, which has no
// option for either): docs/decisions/0021-fenced-internals.md says why and what upstream would
// need. They are made for one release of it, `fencedVersion` (package.json pins it); with any
// other, the validator is left as it is (slower, not wrong), and test/unit/fenced-internals.test.ts
// fails until this module has been checked against the new release.
import { createRequire } from 'node:module';

/** The express-openapi-validator release whose internals this module was written against. */
export const fencedVersion = '5.6.2';

type Compile = (path: unknown, options?: object) => unknown;
const MAX_ROUTES = 2_000;
const marker = Symbol.for('humantask.pathToRegexpCache');

const fromValidator = () => createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));

/** The version of the express-openapi-validator that the server loads. */
export function validatorVersion(): string {
  return (fromValidator()('../package.json') as { version: string }).version;
}

/**
 * Installs the cache and the index (once per process); returns the path-to-regexp exports it
 * patched, or null when the installed validator is not the release they were made for.
 */
export function cacheValidatorRoutes(): { pathToRegexp: Compile } | null {
  if (validatorVersion() !== fencedVersion) return null;
  indexValidatorRoutes();
  return cachePathToRegexp(fromValidator());
}

function cachePathToRegexp(fromValidator: NodeJS.Require): { pathToRegexp: Compile } {
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

/** What the validator's metadata middleware reads of its context (dist/framework/openapi.context.js). */
interface RouteContext {
  expressRouteMap: Record<string, unknown>;
  useRequestUrl?: boolean;
}
type Middleware = (req: { url: string; originalUrl: string }, res: unknown, next: unknown) => unknown;
type ApplyMetadata = ((context: RouteContext, responseApiDoc: unknown) => Middleware) & { [marker]?: true };

/** How many leading segments of a route's path are indexed. */
const INDEXED_SEGMENTS = 3;

/** The leading literal segments of an Express route path (`/v1/task/:type` → `/v1/task`), lower case, at most INDEXED_SEGMENTS. */
function literalPrefix(route: string): string {
  const literal: string[] = [];
  for (const segment of route.split('/').slice(1, INDEXED_SEGMENTS + 1)) {
    if (/[:*?()+%\\]/.test(segment)) break;
    literal.push(segment.toLowerCase());
  }
  return literal.map((s) => `/${s}`).join('');
}

/**
 * For the routes in the contract's order, a function that gives for a path the routes it can match
 * (every route whose leading literal segments begin the path, case aside), in the same order. The
 * answers are as many as the distinct prefixes, and the same array for the same prefix.
 */
export function routeIndex(routes: string[]): (path: string) => string[] {
  const groups = new Map<string, string[]>();
  for (const route of routes) {
    const prefix = literalPrefix(route);
    groups.set(prefix, [...(groups.get(prefix) ?? []), route]);
  }
  // Keyed by the longest prefix of the path that is a group's: the shorter ones are its own prefixes.
  const answers = new Map<string, string[]>();
  return (path) => {
    const segments = path
      .toLowerCase()
      .split('/')
      .slice(1, INDEXED_SEGMENTS + 1);
    let longest = '';
    for (let n = 0, prefix = ''; n < segments.length; n++) {
      prefix += `/${segments[n]}`;
      if (groups.has(prefix)) longest = prefix;
    }
    let answer = answers.get(longest);
    if (!answer) {
      const fits = new Set<string>();
      for (const [prefix, group] of groups)
        if (prefix === '' || longest === prefix || longest.startsWith(`${prefix}/`)) for (const r of group) fits.add(r);
      answer = routes.filter((route) => fits.has(route));
      answers.set(longest, answer);
    }
    return answer;
  };
}

/**
 * Replaces the validator's `applyOpenApiMetadata` (read through its module's exports at the time
 * the middleware is made) by one that gives the original a view of the context whose
 * `expressRouteMap` holds only the routes the request's path can match. The original runs its
 * lookup synchronously inside the call, so the view is set just around it.
 */
function indexValidatorRoutes(): void {
  const metadata = fromValidator()('./middlewares/openapi.metadata.js') as { applyOpenApiMetadata: ApplyMetadata };
  if (metadata.applyOpenApiMetadata[marker]) return;
  const original = metadata.applyOpenApiMetadata;
  metadata.applyOpenApiMetadata = Object.assign(
    (context: RouteContext, responseApiDoc: unknown): Middleware => {
      const all = context.expressRouteMap;
      const candidates = routeIndex(Object.keys(all));
      const views = new Map<string[], Record<string, unknown>>();
      const viewOf = (routes: string[]) => {
        let view = views.get(routes);
        if (!view) {
          view = Object.fromEntries(routes.map((route) => [route, all[route]]));
          views.set(routes, view);
        }
        return view;
      };
      let current = all;
      const narrowed: RouteContext = Object.create(context, {
        expressRouteMap: { get: () => current },
      });
      const middleware = original(narrowed, responseApiDoc);
      return (req, res, next) => {
        const path = (context.useRequestUrl ? req.url : req.originalUrl).split('?')[0] ?? '';
        current = path.includes('%') ? all : viewOf(candidates(path));
        try {
          return middleware(req, res, next);
        } finally {
          current = all;
        }
      };
    },
    { [marker]: true as const },
  );
}
