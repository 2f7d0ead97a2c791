// A uniform random sample of the mutation run (`npm run mutation:sample`): with MUTATION_SAMPLE=R
// (0 < R < 1), Stryker tests only the mutants of a share R of the mutated syntax nodes of the scope.
// A node is drawn by a hash of (MUTATION_SEED, file, position), so a sample is the same on every
// run and machine, and a node keeps its draw when code elsewhere in its file changes nothing of
// its position. The whole scope (about 3,800 mutants) takes many hours on 2 cores.
//
// Stryker selects by source range (`mutate` patterns with positions) and ignores whole subtrees
// (ignorer plugins): the drawn nodes' ranges are the `mutate` patterns, and the `sample` ignorer
// drops what lies inside them but is not drawn. What is tested is then exactly the mutants of the
// drawn nodes. Plain JavaScript: Stryker loads this file itself (stryker.config.mjs).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { commonTokens, declareValuePlugin, PluginKind } from '@stryker-mutator/api/plugin';
import { createInstrumenter } from '@stryker-mutator/instrumenter';
import { createInjector } from 'typed-inject';

/**
 * @typedef {{ line: number; column: number }} Position
 * @typedef {{ start: Position; end: Position }} Location a mutation report's: lines and columns count from 1
 */

/**
 * Whether the node at `location` of `file` (relative to the project) is drawn.
 * @param {string} file
 * @param {Location} location
 * @param {{ rate: number; seed: string }} sample
 */
export function drawn(file, location, { rate, seed }) {
  const key = `${seed}|${file.split(path.sep).join('/')}|${location.start.line}:${location.start.column}-${location.end.line}:${location.end.column}`;
  return createHash('sha256').update(key).digest().readUInt32BE(0) / 2 ** 32 < rate;
}

/** The sample that MUTATION_SAMPLE and MUTATION_SEED ask for, or null for the whole scope. */
export function sampleOptions(env = process.env) {
  if (env.MUTATION_SAMPLE === undefined || env.MUTATION_SAMPLE === '') return null;
  const rate = Number(env.MUTATION_SAMPLE);
  if (!(rate > 0 && rate < 1)) throw new Error(`MUTATION_SAMPLE must be a share between 0 and 1, not ${env.MUTATION_SAMPLE}`);
  return { rate, seed: env.MUTATION_SEED || '1' };
}

/** The TypeScript files under `dirs`, relative to the project. */
export function filesUnder(dirs) {
  return dirs.flatMap((dir) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(dir, f).split(path.sep).join('/'))
      .sort(),
  );
}

const quiet = {
  debug() {},
  info() {},
  trace() {},
  warn: console.warn,
  error: console.error,
  fatal: console.error,
  isDebugEnabled: () => false,
  isInfoEnabled: () => false,
  isTraceEnabled: () => false,
  isWarnEnabled: () => true,
  isErrorEnabled: () => true,
  isFatalEnabled: () => true,
};

/**
 * `mutate` patterns (`file:line:column-line:column`, Stryker's form: lines from 1, columns from 0)
 * for the drawn nodes among those Stryker mutates in `files`.
 * @param {string[]} files
 * @param {{ rate: number; seed: string }} sample
 */
export async function sampledMutatePatterns(files, sample) {
  const instrumenter = createInstrumenter(createInjector().provideValue(commonTokens.logger, quiet));
  const { mutants } = await instrumenter.instrument(
    files.map((name) => ({ name, content: readFileSync(name, 'utf8'), mutate: true })),
    { plugins: null, excludedMutations: [], ignorers: [], noHeader: false },
  );
  const patterns = new Set();
  for (const m of mutants) {
    // The instrumenter counts lines and columns from 0.
    const { start, end } = m.location;
    const location = { start: { line: start.line + 1, column: start.column + 1 }, end: { line: end.line + 1, column: end.column + 1 } };
    if (drawn(m.fileName, location, sample)) patterns.add(`${m.fileName}:${start.line + 1}:${start.column}-${end.line + 1}:${end.column}`);
  }
  return [...patterns];
}

/** The child nodes of a Babel node. */
function* children(node) {
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc' || key.endsWith('Comments') || !value || typeof value !== 'object') continue;
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child.type === 'string') yield child;
    }
  }
}

/** Ignores every subtree that holds no drawn node (Babel's columns count from 0). */
function sampleIgnorer() {
  const sample = sampleOptions();
  let keep = new WeakSet();
  return {
    shouldIgnore(nodePath) {
      if (!sample) return undefined;
      if (nodePath.isProgram()) {
        const file = path.relative(process.cwd(), nodePath.hub.file.opts.filename);
        keep = new WeakSet();
        const visit = (node) => {
          const loc = node.loc;
          let kept =
            Boolean(loc) &&
            drawn(
              file,
              { start: { line: loc.start.line, column: loc.start.column + 1 }, end: { line: loc.end.line, column: loc.end.column + 1 } },
              sample,
            );
          for (const child of children(node)) kept = visit(child) || kept;
          if (kept) keep.add(node);
          return kept;
        };
        visit(nodePath.node);
      }
      return keep.has(nodePath.node)
        ? undefined
        : `not drawn for the sample (MUTATION_SAMPLE=${sample.rate}, MUTATION_SEED=${sample.seed})`;
    },
  };
}

export const strykerPlugins = [declareValuePlugin(PluginKind.Ignore, 'sample', sampleIgnorer())];
