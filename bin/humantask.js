#!/usr/bin/env node
// The `humantask` command. The code is TypeScript: run as JavaScript bundled from it
// (bin/server-bundle.js, made on the first start and whenever a source changed), or through tsx's
// loader when Node already has it (`node --import tsx bin/humantask.js ...`) or the bundle cannot be made.
import { setFlagsFromString } from 'node:v8';

// While the server starts (server/memory.ts takes both back): the young generation stays at its first
// size, and WebAssembly (PGlite) is compiled on the main thread only, none of it in V8's background
// threads, whose freed compiler memory glibc kept in their malloc arenas (about 35 MB).
if (process.argv[2] === 'serve') {
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--wasm-num-compilation-tasks=0');
}

const hasTsx = process.execArgv.some(
  (arg, i, all) => /^--(import|loader)=tsx/.test(arg) || (/^--(import|loader)$/.test(arg) && /^tsx/.test(all[i + 1] ?? '')),
);
const bundle = hasTsx ? null : await (await import('./server-bundle.js')).serverBundle();
if (bundle) {
  await import(bundle);
} else {
  // On Node 20 the loader runs in a thread of its own, with a V8 heap of its own: made before the
  // flag below is taken back, its young generation is 1 MB instead of 32 MB (it only compiles the
  // modules as they load; about 50 MB less resident memory). The main thread is made already and keeps its own.
  if (!hasTsx) {
    setFlagsFromString('--max-semi-space-size=1');
    (await import('tsx/esm/api')).register();
  }
  await import('../server/cli.ts');
}
