// The few places that rely on a library's internals instead of its public interface, each behind
// one module (docs/decisions/0021-fenced-internals.md). Each test here fails, loudly and by name,
// when the library changes under that module: then the module is checked against the new release
// (and the version here moved on), or the internal it relies on is replaced by the public way that
// has come.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { fullCollection, releaseStartupGarbage, verifiedNodeMajors } from '../../bin/v8-flags.js';
import { cacheValidatorRoutes, fencedVersion, validatorVersion } from '../../server/validator-routes.ts';
import { root } from '../support/spec.ts';

const require = createRequire(import.meta.url);

it('express-openapi-validator is the release server/validator-routes.ts was written against, pinned', () => {
  const pinned = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
    .dependencies['express-openapi-validator'];
  expect(pinned, 'package.json pins the exact release (no range)').toBe(fencedVersion);
  expect(validatorVersion(), 'the installed release; check server/validator-routes.ts against it, then move fencedVersion').toBe(
    fencedVersion,
  );
});

it('express-openapi-validator still looks routes up as server/validator-routes.ts relies on', () => {
  const fromValidator = createRequire(require.resolve('express-openapi-validator'));
  const file = fromValidator.resolve('./middlewares/openapi.metadata.js');
  const source = readFileSync(file, 'utf8');
  // The metadata middleware is made through its module's exports object (what the index replaces) ...
  expect(fromValidator('./middlewares/openapi.metadata.js').applyOpenApiMetadata).toBeTypeOf('function');
  expect(readFileSync(fromValidator.resolve('./openapi.validator.js'), 'utf8')).toContain(
    'return middlewares.applyOpenApiMetadata(context, responseApiDoc);',
  );
  expect(readFileSync(fromValidator.resolve('./middlewares/index.js'), 'utf8')).toContain(
    'get: function () { return openapi_metadata_1.applyOpenApiMetadata; }',
  );
  // ... reads the context's route map inside each call, synchronously (what the narrowed view relies on) ...
  expect(source).toContain('Object.entries(openApiContext.expressRouteMap)');
  expect(source).toContain('const matched = lookupRoute(req, openApiContext.useRequestUrl);');
  // ... and compiles each route through path-to-regexp's exports object (what the cache replaces).
  expect(source).toContain('(0, path_to_regexp_1.pathToRegexp)(expressRoute, pathOpts)');
  const lib = cacheValidatorRoutes();
  expect(lib, 'the cache is installed on this release').not.toBeNull();
  expect(fromValidator('path-to-regexp').pathToRegexp).toBe(lib!.pathToRegexp);
});

it('V8 flags are changed after start only on a Node major bin/v8-flags.js was verified on', () => {
  const major = Number(process.versions.node.split('.')[0]);
  expect(
    verifiedNodeMajors,
    `Node ${process.versions.node}: verify bin/v8-flags.js on it (docs/internal/performance.md), then add ${major}`,
  ).toContain(major);
});

it("V8's full collection, reached by setting --expose-gc for one new context, collects and leaves no global gc", async () => {
  const had = 'gc' in globalThis;
  const gc = fullCollection();
  expect(gc).toBeTypeOf('function');
  let ref: WeakRef<object> | undefined;
  (() => {
    ref = new WeakRef({ garbage: new Array(1_000).fill('x') });
  })();
  // A WeakRef's target is kept to the end of the job that made it.
  await setImmediate();
  gc();
  expect(ref!.deref(), 'a full collection frees what nothing holds').toBeUndefined();
  expect('gc' in globalThis, 'the flag is set back: no gc on the global object').toBe(had);
  expect(() => releaseStartupGarbage()).not.toThrow();
});
