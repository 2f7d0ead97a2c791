#!/usr/bin/env node
// The `humantask` command. The code is TypeScript, run through tsx's loader.
import { setFlagsFromString } from 'node:v8';
import { register } from 'tsx/esm/api';

// On Node 20 the loader runs in a thread of its own, with a V8 heap of its own: made before the
// flag below is taken back, its young generation is 1 MB instead of 32 MB (it only compiles the
// modules as they load; about 50 MB less resident memory). The main thread is made already and keeps its own.
setFlagsFromString('--max-semi-space-size=1');
register();
await import('../server/cli.ts');
