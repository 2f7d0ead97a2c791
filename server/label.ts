// The labeling app at /label/: label/public/ as it is, and label/main.ts bundled by esbuild into
// /label/app.js. Code only some tasks need is split off (esbuild's code splitting) into chunks the
// app imports when such a task opens: three.js, for the lidar player, at
// /label/chunks/view-<hash>.js. A chunk's name changes with its contents, so it is cached for good;
// app.js is revalidated on every load. pdf.js (pdfjs-dist) is served as it ships, at /label/vendor/,
// for the document player to load only when a task's document is a PDF.
//
// Where the files come from (docs/decisions/0022-a-package-that-carries-what-it-needs.md):
// - the published package: dist/label/, written by `npm pack` (prepack, scripts/build-label.ts) with
//   the same build. The package ships neither label/'s sources nor the libraries they import
//   (three.js, Konva, pdf.js, DOMPurify are development dependencies), so nothing is bundled at a
//   request, and nothing at all is built or fetched when it runs.
// - a clone (label/main.ts is there): built in memory on the first request for it (about a second,
//   once per process), so the app is never stale while it is being changed. The build is
//   deterministic: the processes of one install (WORKERS > 1) name the chunks alike, so whichever
//   process answers has the chunk asked for.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const labelDir = path.join(root, 'label');
/** The app as the published package ships it (scripts/build-label.ts). */
const builtDir = path.join(root, 'dist', 'label');
/** The files of pdf.js the app loads: the library and its worker. */
const vendorFiles = new Set(['pdf.min.mjs', 'pdf.worker.min.mjs']);
/** Where pdf.js's files are in a clone (pdfjs-dist, a development dependency). */
const pdfjsBuild = () => path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'build');

// The app talks to its own origin only (label/api.ts), and loads every file of a task through the
// worker API's media route (label/media.ts): no customer host sees a worker's address, and a page
// elsewhere can neither frame the app nor be sent anything by it. The one exception is a frame of
// the customer's (a website or PDF attachment, an <iframe> of an instruction): a web page cannot be
// passed on faithfully, so it comes from its host, sandboxed and without a referrer
// (server/domain/markup-allowlist.ts's frameAttributes). SECURITY.md, "The labeling app".
const csp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  'frame-src http: https:',
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every answer under /label/ (SECURITY.md): the policy above, no framing, no sniffing, no referrer. */
const headers = {
  'Content-Security-Policy': csp,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/**
 * The app's files by their path under /label/: `app.js` (label/main.ts and what it imports) and its
 * chunks; `packages`, the libraries bundled into them (name → folder).
 */
type Bundle = Map<string, string> & { packages: Map<string, string> };

/** Bundles the app into minified ES modules: the entry, app.js, and the chunks it imports lazily. */
async function buildLabelBundle(): Promise<Bundle> {
  const { build, stop } = await import('esbuild');
  const outdir = path.join(labelDir, 'out');
  // esbuild's service process ends once the bundle is made: the server holds only the text.
  const result = await build({
    entryPoints: { app: path.join(labelDir, 'main.ts') },
    bundle: true,
    splitting: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    chunkNames: 'chunks/[name]-[hash]',
    outdir,
    write: false,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  }).finally(() => stop());
  const files = new Map(result.outputFiles.map((f) => [path.relative(outdir, f.path).split(path.sep).join('/'), f.text]));
  if (!files.has('app.js')) throw new Error('esbuild produced no bundle for the labeling app');
  const packages = new Map<string, string>();
  for (const input of Object.keys(result.metafile.inputs)) {
    const found = /^(.*?node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
    if (found) packages.set(found[2]!, path.resolve(found[1]!));
  }
  return Object.assign(files, { packages });
}

/**
 * Writes the app as the published package serves it to `outdir` (made empty first): app.js, its
 * chunks, pdf.js's files under vendor/, and THIRD-PARTY-LICENSES.txt with the license of every
 * library shipped in them (the bundle keeps no license comments).
 */
export async function writeLabelApp(outdir: string): Promise<string[]> {
  const files = await buildLabelBundle();
  rmSync(outdir, { recursive: true, force: true });
  for (const [file, text] of files) {
    mkdirSync(path.dirname(path.join(outdir, file)), { recursive: true });
    writeFileSync(path.join(outdir, file), text);
  }
  mkdirSync(path.join(outdir, 'vendor'));
  for (const file of vendorFiles) writeFileSync(path.join(outdir, 'vendor', file), readFileSync(path.join(pdfjsBuild(), file)));
  const packages = new Map([...files.packages, ['pdfjs-dist', path.dirname(pdfjsBuild())]]);
  const licenses = [...packages.keys()].sort().map((name) => {
    const dir = packages.get(name)!;
    const { version, license } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string; license: string };
    const file = readdirSync(dir).find((f) => /^(license|licence|copying)(\.|$)/i.test(f));
    if (!file) throw new Error(`${name} ships no license file to put beside the labeling app`);
    return `${name} ${version}, license ${license}\n\n${readFileSync(path.join(dir, file), 'utf8').trim()}\n`;
  });
  writeFileSync(
    path.join(outdir, 'THIRD-PARTY-LICENSES.txt'),
    `The labeling app (app.js, chunks/, vendor/) contains these libraries:\n\n${licenses.join(`\n${'-'.repeat(72)}\n\n`)}`,
  );
  return [...files.keys(), ...[...vendorFiles].map((file) => `vendor/${file}`), 'THIRD-PARTY-LICENSES.txt'];
}

/** How long a browser keeps each kind of file: app.js is asked again on every load, a chunk never changes. */
function cacheControl(file: string): string {
  if (file === 'app.js') return 'no-cache';
  if (file.startsWith('vendor/')) return 'public, max-age=3600';
  return 'public, max-age=31536000, immutable';
}

/** app.js and its chunks bundled in memory on the first request (a clone). */
function bundledOnRequest(router: Router): void {
  let bundle: Promise<Bundle> | null = null;
  router.get(['/app.js', '/chunks/:file'], async (req, res, next) => {
    bundle ??= buildLabelBundle();
    let files: Bundle;
    try {
      files = await bundle;
    } catch (err) {
      bundle = null;
      return next(err);
    }
    const file = req.params.file === undefined ? 'app.js' : `chunks/${String(req.params.file)}`;
    const text = files.get(file);
    if (text === undefined) return next();
    res.type('text/javascript').setHeader('cache-control', cacheControl(file));
    res.send(text);
  });
  router.get('/vendor/:file', (req, res, next) => {
    if (!vendorFiles.has(req.params.file)) return next();
    res.type('text/javascript').setHeader('cache-control', cacheControl(`vendor/${req.params.file}`));
    res.sendFile(path.join(pdfjsBuild(), req.params.file));
  });
}

/** app.js, its chunks and pdf.js as the package ships them (dist/label/). */
function shipped(router: Router): void {
  router.get(['/app.js', '/chunks/:file', '/vendor/:file'], (req, res, next) => {
    const file = req.path.slice(1);
    if (file.startsWith('vendor/') && !vendorFiles.has(String(req.params.file))) return next();
    res.type('text/javascript').setHeader('cache-control', cacheControl(file));
    res.sendFile(file, { root: builtDir, dotfiles: 'deny' }, (err?: Error & { status?: number }) => {
      if (err) next(err.status === 404 ? undefined : err);
    });
  });
}

export function labelApp(): Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set(headers);
    next();
  });
  if (existsSync(path.join(labelDir, 'main.ts'))) bundledOnRequest(router);
  else shipped(router);
  router.use(express.static(path.join(labelDir, 'public')));
  return router;
}
