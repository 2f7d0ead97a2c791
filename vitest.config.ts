import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A PostgreSQL 15 cluster for the run (server tests run on it and on PGlite).
    globalSetup: ['test/support/global-setup.ts'],
    // Browser, mock and server tests start processes; give them room, never time their speed.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Two files at a time: most tests wait on servers, callbacks and browsers, not on the CPU.
    maxWorkers: 2,
    // .ci/run reads the JSON report for its closing "N passed, N failed" line.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
