// Mutation run (`npm run mutation`): how many of the mutants that Stryker makes in the server's
// rules (server/domain, shared/) and HTTP layer (server/http) the conformance suite kills. Not in CI (too
// slow); the result and the command are in docs/conformance.md. The only test is
// test/mutation/conformance.mutation.ts: the reference server in process (on PostgreSQL when the
// machine has it, else PGlite), one vitest test per (generation, check), so that per-test coverage
// runs only the checks reaching a mutant.
// A subset: npm run mutation -- --mutate server/domain/task-creation.ts,server/http/tasks.ts
// A uniform random sample (test/mutation/sample.mjs): npm run mutation:sample
import { filesUnder, sampledMutatePatterns, sampleOptions } from './test/mutation/sample.mjs';

const scope = ['server/domain', 'shared', 'server/http'];
const sample = sampleOptions();

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  mutate: sample ? await sampledMutatePatterns(filesUnder(scope), sample) : scope.map((dir) => `${dir}/**/*.ts`),
  plugins: ['@stryker-mutator/*', './test/mutation/sample.mjs'],
  ignorers: sample ? ['sample'] : [],
  coverageAnalysis: 'perTest',
  // Code run while the server starts (before any check) covers no single test; running every
  // check for each such mutant would take hours. They are reported as ignored.
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 20_000,
  timeoutFactor: 2,
  // Reruns only mutants whose code or covering checks changed.
  incremental: true,
  incrementalFile: sample
    ? `reports/mutation/sample-${sample.seed}-${sample.rate}-incremental.json`
    : 'reports/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  ignorePatterns: ['docs/site', 'test-results', 'data', 'dist', '.prof', 'reports', 'bench/results'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
