// What the process does once the server has started, so that it holds no more memory than it uses.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's default: the young generation doubles (up to 2 × 16 MB) when much of it survives a
 * scavenge. bin/humantask.js sets 1 before anything loads, so that starting (where most of what is
 * made survives) leaves it at its first 2 × 1 MB instead of 32 MB; it grows again once requests come.
 */
const youngGrowthFactor = 2;

/** V8's default: WebAssembly functions are compiled (and tiered up) by up to 128 background tasks. */
const wasmCompilationTasks = 128;

/**
 * Two full garbage collections right after start, and a bound on how far the V8 heap grows
 * between full collections.
 *
 * Starting makes far more garbage than the server keeps (the contracts parsed and compiled, the
 * migrations, PGlite's start): about 130 MB of V8 heap for 50 MB alive, and V8 keeps that room
 * until it has collected twice and compacted. Both take a few hundred milliseconds, once (a request
 * that comes meanwhile waits for them). `gc` is V8's own function, reached through a context made
 * while it is exposed.
 *
 * Under load V8 lets the heap grow to up to four times what survived the last full collection
 * before the next one (requests that wait on the database outlive the young generation): 60 MB
 * alive became 200 MB of heap. Growing by half at most keeps the peak about 100 MB lower, for a
 * full collection every few seconds under load (mostly marked concurrently).
 */
export function releaseStartupGarbage(): void {
  setFlagsFromString('--heap-growing-percent=50');
  setFlagsFromString(`--semi-space-growth-factor=${youngGrowthFactor}`);
  setFlagsFromString(`--wasm-num-compilation-tasks=${wasmCompilationTasks}`);
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  gc();
  gc();
}
