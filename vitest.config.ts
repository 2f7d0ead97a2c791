import { defineConfig } from 'vitest/config';

// Three projects, chosen by folder, so that a new test file lands in one without editing this file:
//   unit         test/unit/**    no server process, no browser, no PostgreSQL (`npm run test:unit`, < 30 s)
//   static       test/static/**  the compiler and the linters over the tree (tsc, biome, knip, dependency-cruiser)
//   integration  every other test file: servers on both databases, the browser, packed installs
// `npm test` runs all three.
const unit = 'test/unit/**/*.test.ts';
const staticChecks = 'test/static/**/*.test.ts';

export default defineConfig({
  test: {
    pool: 'forks',
    // Two files at a time: most tests wait on servers, callbacks and browsers, not on the CPU.
    maxWorkers: 2,
    // Each fetch on a fresh connection: no request lost to a kept-alive socket the server is closing.
    setupFiles: ['test/support/fresh-connections.ts'],
    // .ci/run reads the JSON report for its closing "N passed, N failed" line.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: [unit], testTimeout: 20_000 },
      },
      {
        extends: true,
        // The tools read the whole tree; a loaded machine makes tsc slow.
        test: { name: 'static', include: [staticChecks], testTimeout: 300_000 },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [unit, staticChecks, '**/node_modules/**'],
          // A PostgreSQL 15 cluster for the run (server tests run on it and on PGlite).
          globalSetup: ['test/support/global-setup.ts'],
          // The files of a worker share its process: the server's modules, its compiled contracts and
          // PGlite's WebAssembly are loaded once per worker, not once per file (2 s of CPU a file).
          // So a test file leaves nothing behind: it closes its servers, pages and receivers and
          // restores what it changes in process.env or on globals.
          isolate: false,
          // Browser, mock and server tests start processes; give them room, never time their speed.
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
