#!/usr/bin/env node
// The `humantask` command. The code is TypeScript: run as JavaScript bundled from it
// (bin/server-bundle.js, made on the first start and whenever a source changed), or through tsx's
// loader when Node already has it (`node --import tsx bin/humantask.js ...`) or the bundle cannot be made.
import { loaderFlags, startingFlags } from './v8-flags.js';

if (process.argv[2] === 'serve') startingFlags();

const hasTsx = process.execArgv.some(
  (arg, i, all) => /^--(import|loader)=tsx/.test(arg) || (/^--(import|loader)$/.test(arg) && /^tsx/.test(all[i + 1] ?? '')),
);
const bundle = hasTsx ? null : await (await import('./server-bundle.js')).serverBundle();
if (bundle) {
  await import(bundle);
} else {
  if (!hasTsx) {
    loaderFlags();
    (await import('tsx/esm/api')).register();
  }
  await import('../server/cli.ts');
}
