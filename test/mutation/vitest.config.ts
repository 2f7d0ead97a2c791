// Vitest configuration of the mutation run only (stryker.config.mjs points here): the conformance
// suite, one test per check, against the reference server in process. Not part of `npm test`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/mutation/**/*.mutation.ts'],
    // A PostgreSQL cluster for the run (npm run mutation starts one for all of Stryker's processes).
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 90_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
