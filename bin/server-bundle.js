// The server as JavaScript: server/cli.ts and the TypeScript it imports, bundled by esbuild into
// dist/server/<hash>/ (the packages stay outside, loaded by Node as they are). Running from the
// bundle spares the process tsx's loader, which on Node 20 keeps a thread with a V8 heap of its own
// (about 30 MB), and the source maps it turns on for every module (15–20 MB).
//
// Made by `npm pack` (prepack) for the published package, else on the first start, and again on the
// first start after a source changed: dist/server/current.json lists the files the bundle was made
// of with the hash of their contents, checked on every start. Nothing is fetched from the network
// (esbuild's binary comes with its platform package). Concurrent starts may each build; each writes
// its own folder and renames it into place, so none reads a half-written bundle.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(root, 'server', 'cli.ts');
const outRoot = path.join(root, 'dist', 'server');
const manifestFile = path.join(outRoot, 'current.json');
/** Builds other than the current one are removed once they are this old (a server started from one has loaded it). */
const keepOldMs = 60 * 60 * 1000;

/** The hash of the files' contents (and of this script, which decides how they are bundled). */
function hashOf(files) {
  const hash = createHash('sha256');
  for (const file of ['bin/server-bundle.js', ...files]) {
    hash.update(file);
    hash.update('\0');
    hash.update(readFileSync(path.join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** The current bundle's entry, or null when there is none or a source it was made of changed. */
function current() {
  try {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    const main = path.join(outRoot, manifest.hash, 'cli.js');
    return existsSync(main) && hashOf(manifest.inputs) === manifest.hash ? main : null;
  } catch {
    return null;
  }
}

/**
 * Each of our modules sees its own location in `import.meta.url` (it finds the contract, the
 * migrations and the docs relative to itself), not the bundle's.
 */
const ownUrls = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      const relative = path.relative(build.initialOptions.outdir, args.path).split(path.sep).join('/');
      const url = `new URL(${JSON.stringify(relative)}, import.meta.url).href`;
      return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
    });
  },
};

/** Removes the builds other than `hash` older than `age` ms. */
function prune(hash, age) {
  for (const other of readdirSync(outRoot)) {
    const at = path.join(outRoot, other);
    if (other !== hash && other !== 'current.json' && Date.now() - statSync(at).mtimeMs >= age)
      rmSync(at, { recursive: true, force: true });
  }
}

async function build() {
  const { build: esbuild, stop } = await import('esbuild');
  mkdirSync(outRoot, { recursive: true });
  const staging = path.join(outRoot, `.staging-${process.pid}-${Date.now()}`);
  try {
    // The folder the bundle will have: import.meta.url is made relative to it.
    const result = await esbuild({
      entryPoints: [entry],
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      outdir: staging,
      metafile: true,
      legalComments: 'none',
      // Read only when Node runs with --enable-source-maps: stack traces then name the TypeScript lines.
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [ownUrls],
    }).finally(() => stop());
    const inputs = Object.keys(result.metafile.inputs)
      .map((file) => path.relative(root, path.resolve(file)).split(path.sep).join('/'))
      .filter((file) => !file.startsWith('node_modules/'))
      .sort();
    const hash = hashOf(inputs);
    const folder = path.join(outRoot, hash);
    try {
      renameSync(staging, folder);
    } catch {
      // Another start made the same bundle first.
      if (!existsSync(path.join(folder, 'cli.js'))) throw new Error(`could not write the server bundle to ${folder}`);
    }
    const tmp = `${manifestFile}.${process.pid}`;
    writeFileSync(tmp, `${JSON.stringify({ hash, inputs }, null, 2)}\n`);
    renameSync(tmp, manifestFile);
    prune(hash, keepOldMs);
    return path.join(folder, 'cli.js');
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The URL of the bundled server/cli.ts, made or remade when needed; null when it cannot be made
 * here (a read-only install folder, no esbuild binary), with the reason on stderr: the caller then
 * runs the TypeScript through tsx instead.
 */
export async function serverBundle() {
  const main = current();
  if (main) return pathToFileURL(main).href;
  try {
    return pathToFileURL(await build()).href;
  } catch (err) {
    process.stderr.write(`humantask: running the TypeScript through tsx (the server bundle could not be made: ${err.message})\n`);
    return null;
  }
}

// `node bin/server-bundle.js`: make it now, and remove every other build (npm's prepack: the
// package ships this one).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const main = await serverBundle();
  if (!main) process.exit(1);
  prune(path.basename(path.dirname(fileURLToPath(main))), 0);
  console.log(`server bundle: ${path.relative(root, fileURLToPath(main))}`);
}
