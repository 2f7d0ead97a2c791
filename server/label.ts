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
//
// Every file here is sent compressed to a browser that asks for it (Accept-Encoding: brotli, else
// gzip; plain to a client that asks for neither), compressed once per process, on its first
// request, and kept in memory. Not the `compression` middleware: it would compress the same 400 kB
// again on every request and stream it without a length, while these files never change as long
// as the process runs.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import express, { type Request, type Response, type Router } from 'express';

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
// The other exception: the origins of the buckets whose objects workers' browsers load by a signed
// link (a connection with `media: presigned`), which the operator lists (STORAGE_MEDIA_ORIGINS), and
// no other: the media route redirects there, and the browser checks the redirect against the policy.
const csp = (mediaOrigins: readonly string[]) => {
  const extra = mediaOrigins.map((o) => ` ${o}`).join('');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${extra}`,
    `media-src 'self' blob:${extra}`,
    'frame-src http: https:',
    `connect-src 'self'${extra}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
};

/** Every answer under /label/ (SECURITY.md): the policy above, no framing, no sniffing, no referrer. */
const headers = (mediaOrigins: readonly string[]) => ({
  'Content-Security-Policy': csp(mediaOrigins),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

/** A file as sent: plain, and compressed with each encoding a browser may ask for. */
interface Encoded {
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
}
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * Compresses a file once (the result is kept for the process's life), off the event loop. Brotli at
 * quality 9: pdf.js's 1.2 MB worker in about 0.1 s, within a tenth of the size quality 11 reaches in
 * 2.7 s, which the first worker to open a PDF would wait for.
 */
async function encode(text: string | Buffer): Promise<Encoded> {
  const identity = Buffer.from(text);
  const [br, gz] = await Promise.all([
    brotli(identity, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
    gzipped(identity, { level: zlib.Z_BEST_COMPRESSION }),
  ]);
  return { identity, br, gzip: gz };
}

/** Each file's encodings by its path, made on its first request and kept for the process's life. */
type Encodings = Map<string, Promise<Encoded>>;

/**
 * Sends the smallest encoding the request accepts (its Accept-Encoding as express reads it: `;q=0`
 * refuses one; no header asks for the file as it is). Browsers list gzip first: a tie goes to brotli.
 * `load` gives the file's contents the first time it is asked for.
 */
async function sendEncoded(
  req: Request,
  res: Response,
  cache: Encodings,
  key: string,
  load: () => Promise<string | Buffer>,
  type: string,
): Promise<void> {
  let file = cache.get(key);
  if (!file) {
    file = load().then(encode);
    cache.set(key, file);
    file.catch(() => cache.delete(key));
  }
  const encoded = await file;
  const encoding = (['br', 'gzip'] as const).find((e) => req.acceptsEncodings(e) === e) ?? 'identity';
  res.vary('Accept-Encoding').type(type);
  if (encoding !== 'identity') res.setHeader('Content-Encoding', encoding);
  res.send(encoded[encoding]);
}

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

/** app.js and its chunks bundled in memory on the first request (a clone), pdf.js from pdfjs-dist. */
function bundledOnRequest(router: Router, cache: Encodings): void {
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
    res.setHeader('cache-control', cacheControl(file));
    await sendEncoded(req, res, cache, file, async () => text, 'text/javascript');
  });
  router.get('/vendor/:file', async (req, res, next) => {
    if (!vendorFiles.has(req.params.file)) return next();
    const file = `vendor/${req.params.file}`;
    res.setHeader('cache-control', cacheControl(file));
    await sendEncoded(req, res, cache, file, () => readFile(path.join(pdfjsBuild(), req.params.file)), 'text/javascript').catch(next);
  });
}

/** app.js, its chunks and pdf.js as the package ships them (dist/label/), listed once at start. */
function shipped(router: Router, cache: Encodings): void {
  const files = new Set([
    'app.js',
    ...readdirSync(path.join(builtDir, 'chunks')).map((f) => `chunks/${f}`),
    ...[...vendorFiles].map((f) => `vendor/${f}`),
  ]);
  router.get(['/app.js', '/chunks/:file', '/vendor/:file'], async (req, res, next) => {
    const file = req.path.slice(1);
    if (!files.has(file)) return next();
    res.setHeader('cache-control', cacheControl(file));
    await sendEncoded(req, res, cache, file, () => readFile(path.join(builtDir, file)), 'text/javascript').catch(next);
  });
}

/** The app, its pages allowed to load files from `mediaOrigins` besides their own (STORAGE_MEDIA_ORIGINS). */
export function labelApp(mediaOrigins: readonly string[] = []): Router {
  const router = express.Router();
  const answerHeaders = headers(mediaOrigins);
  router.use((_req, res, next) => {
    res.set(answerHeaders);
    next();
  });
  const cache: Encodings = new Map();
  if (existsSync(path.join(labelDir, 'main.ts'))) bundledOnRequest(router, cache);
  else shipped(router, cache);
  const publicFiles = new Set(readdirSync(path.join(labelDir, 'public')));
  router.get(['/', '/:file'], async (req, res, next) => {
    // The page's relative addresses (app.js, style.css) need the folder's slash: /label -> /label/.
    const asked = new URL(req.originalUrl, 'http://localhost');
    if (req.params.file === undefined && !asked.pathname.endsWith('/')) return res.redirect(301, `${asked.pathname}/${asked.search}`);
    const name = String(req.params.file ?? 'index.html');
    if (!publicFiles.has(name)) return next();
    res.setHeader('cache-control', 'no-cache');
    await sendEncoded(req, res, cache, `public/${name}`, () => readFile(path.join(labelDir, 'public', name)), path.extname(name)).catch(
      next,
    );
  });
  return router;
}
