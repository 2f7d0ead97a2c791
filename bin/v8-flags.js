// Every V8 flag the process changes while it runs, in one module (docs/decisions/0021-fenced-internals.md).
// Node documents `v8.setFlagsFromString` with a warning: a flag changed after V8 has started "may
// result in unpredictable behavior, including crashes and data loss; or it may simply do nothing".
// No public interface gives what these give (a start with a small young generation and no
// background WebAssembly compilation, two full collections once the server has started, a bound on
// heap growth), and the process npm's `humantask` shim starts takes no V8 flags of ours. So they are
// set here only on the Node majors where they were verified (test/unit/fenced-internals.test.ts
// checks them on the Node it runs on and fails on any other major); on another Node, nothing is
// changed and the server runs with V8's defaults (more memory, nothing else). A flag that is known
// to break when set this way (`--single-threaded`: V8 aborts at the next collection) is not here.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The Node majors on which the flags below were verified (docs/internal/performance.md). */
export const verifiedNodeMajors = [20];

const verified = () => verifiedNodeMajors.includes(Number(process.versions.node.split('.')[0]));

/**
 * V8's default: the young generation doubles (up to 2 × 16 MB) when much of it survives a
 * scavenge. Set to 1 while the server starts (where most of what is made survives), so that it stays at
 * its first 2 × 1 MB instead of 32 MB; set back once it has started, so it grows again under load.
 */
const youngGrowthFactor = 2;

/** V8's default: WebAssembly functions are compiled (and tiered up) by up to 128 background tasks. */
const wasmCompilationTasks = 128;

/**
 * Before anything of the server loads (bin/humantask.js, `serve`): the young generation stays at
 * its first size, and WebAssembly (PGlite) is compiled on the main thread only, none of it in V8's
 * background threads, whose freed compiler memory glibc kept in their malloc arenas (about 35 MB).
 * `releaseStartupGarbage` takes both back.
 */
export function startingFlags() {
  if (!verified()) return;
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--wasm-num-compilation-tasks=0');
}

/**
 * Before tsx's loader is registered (bin/humantask.js, when there is no server bundle): on Node 20
 * the loader runs in a thread with a V8 heap of its own, made with the flags of the moment, so its
 * young generation is 1 MB instead of 32 MB (about 50 MB less resident memory). The main thread is
 * made already and keeps its own.
 */
export function loaderFlags() {
  if (!verified()) return;
  setFlagsFromString('--max-semi-space-size=1');
}

/**
 * Once the server has started: two full garbage collections, a bound on how far the V8 heap grows
 * between full collections, and the defaults `startingFlags` changed taken back.
 *
 * Starting makes far more garbage than the server keeps (the contracts parsed and compiled, the
 * migrations, PGlite's start): about 130 MB of V8 heap for 50 MB alive, and V8 keeps that room
 * until it has collected twice and compacted. Both take a few hundred milliseconds, once (a request
 * that comes meanwhile waits for them). `gc` is V8's own function: `globalThis.gc` when the process
 * was started with `node --expose-gc` (the public way), else reached through a context made while
 * the flag is set.
 *
 * Under load V8 lets the heap grow to up to four times what survived the last full collection
 * before the next one (requests that wait on the database outlive the young generation): 60 MB
 * alive became 200 MB of heap. Growing by half at most keeps the peak about 100 MB lower, for a
 * full collection every few seconds under load (mostly marked concurrently).
 */
export function releaseStartupGarbage() {
  if (!verified()) return;
  setFlagsFromString('--heap-growing-percent=50');
  setFlagsFromString(`--semi-space-growth-factor=${youngGrowthFactor}`);
  setFlagsFromString(`--wasm-num-compilation-tasks=${wasmCompilationTasks}`);
  const gc = fullCollection();
  gc();
  gc();
}

/** V8's full garbage collection, as `--expose-gc` gives it. */
export function fullCollection() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc');
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
