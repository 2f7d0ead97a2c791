// The browser apps the server serves, the labeling app at /label/ (server/label.ts) and the console
// at /console/ (server/console.ts), made and served by one mechanism: <name>/public/ as it is, and
// <name>/main.ts(x) bundled by esbuild into app.js. Code only some screens need is split off
// (esbuild's code splitting) into chunks the app imports when it needs them, at
// chunks/<name>-<hash>.js: a chunk's name changes with its contents, so it is cached for good; app.js
// and the pages are revalidated on every load.
//
// Where the files come from (docs/decisions/0022-a-package-that-carries-what-it-needs.md):
// - the published package: dist/<name>/, written by `npm pack` (prepack, scripts/build-apps.ts) with
//   the same build. The package ships neither the apps' sources nor the libraries they import (they
//   are development dependencies), so nothing is bundled at a request, and nothing at all is built
//   or fetched when it runs.
// - a clone (<name>/main.ts(x) is there): built in memory on the first request for it (about a
//   second, once per process), so the app is never stale while it is being changed. The build is
//   deterministic: the processes of one install (WORKERS > 1) name the chunks alike, so whichever
//   process answers has the chunk asked for.
//
// Every file is sent compressed to a browser that asks for it (Accept-Encoding: brotli, else gzip;
// plain to a client that asks for neither), compressed once per process, on its first request, and
// kept in memory. Not the `compression` middleware: it would compress the same 400 kB again on every
// request and stream it without a length, while these files never change as long as the process runs.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { BuildOptions } from 'esbuild';
import express, { type Request, type Response, type Router } from 'express';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What differs between the apps; the rest of how they are made and served is this module's. */
export interface BrowserApp {
  /** Its folder in a clone, its folder under dist/ in the package, and its path: label, console. */
  name: string;
  /** The entry under the app's folder, bundled into app.js: main.ts, main.tsx. */
  entry: string;
  /** Who the app is, for THIRD-PARTY-LICENSES.txt: "The labeling app". */
  title: string;
  /** esbuild's options beyond the shared ones (JSX, build-time constants); made at each build. */
  options?: () => Pick<BuildOptions, 'jsx' | 'jsxImportSource' | 'define'>;
  /** Files of a package served as that package ships them, under vendor/ (pdf.js); in a clone, read from `dir()`. */
  vendor?: { files: ReadonlySet<string>; dir: () => string; packageDir: () => string; packageName: string };
  /**
   * A path under the app that names no file is the page itself (the app routes by the URL, History
   * API), rather than 404. A path with a file's extension, or under chunks/ or vendor/, stays 404.
   */
  pagesByUrl?: boolean;
}

/**
 * The policy of every page of ours a browser runs (SECURITY.md, "The labeling app" and "The
 * console"). The apps talk to their own origin only: no customer host sees a person's address, and
 * a page elsewhere can neither frame an app nor be sent anything by it. The one exception is a frame
 * of the customer's (a website or PDF attachment, an <iframe> of an instruction): a web page cannot
 * be passed on faithfully, so it comes from its host, sandboxed and without a referrer
 * (server/domain/markup-allowlist.ts's frameAttributes). The other: `mediaOrigins`, the origins of
 * the buckets whose objects browsers load by a signed link (a storage connection with
 * `media: presigned`), which the operator lists (STORAGE_MEDIA_ORIGINS), and no other: the media
 * route redirects there, and the browser checks the redirect against the policy.
 */
function policy(mediaOrigins: readonly string[]): string {
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
}

/** Every answer under an app's path: the policy above, no framing, no sniffing, no referrer. */
const headers = (mediaOrigins: readonly string[]) => ({
  'Content-Security-Policy': policy(mediaOrigins),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

/** A file as sent: plain, compressed with each encoding a browser may ask for, and its validator. */
interface Encoded {
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
  /** Weak: the encodings of one file are the same contents, so a copy of any is revalidated as good. */
  etag: string;
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
  const etag = `W/"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`;
  return { identity, br, gzip: gz, etag };
}

/** Each file's encodings by its path, made on its first request and kept for the process's life. */
type Encodings = Map<string, Promise<Encoded>>;

/**
 * Whether the request's If-None-Match names this file's ETag (weak comparison, RFC 9110 13.1.2).
 * Not express's `req.fresh`: it answers the whole file to a request with `Cache-Control: no-cache`,
 * which fetch() adds to every request that carries its own If-None-Match.
 */
function unchanged(req: Request, etag: string): boolean {
  const asked = req.headers['if-none-match'];
  if (!asked) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return asked.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/**
 * Sends the smallest encoding the request accepts (its Accept-Encoding as express reads it: `;q=0`
 * refuses one; no header asks for the file as it is), or 304 to a copy still good. Browsers list
 * gzip first: a tie goes to brotli. `load` gives the file's contents the first time it is asked for.
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
  res.vary('Accept-Encoding').type(type).setHeader('ETag', encoded.etag);
  if (unchanged(req, encoded.etag)) return void res.status(304).end();
  if (encoding !== 'identity') res.setHeader('Content-Encoding', encoding);
  res.send(encoded[encoding]);
}

/** A script's type by its name (app.js, chunks, pdf.js's .mjs); any other by its extension. */
const typeOf = (file: string) => (/\.m?js$/.test(file) ? 'text/javascript' : path.extname(file));

/**
 * The app's files by their path under its folder: `app.js` (the entry and what it imports) and its
 * chunks; `packages`, the libraries bundled into them (name → folder).
 */
type Bundle = Map<string, string> & { packages: Map<string, string> };

// esbuild's `stop()` ends the one service process every build of this process shares, a build under
// way included: the apps' builds (two apps asked for at once) take turns.
let builds: Promise<unknown> = Promise.resolve();

/** Bundles the app into minified ES modules: the entry, app.js, and the chunks it imports lazily. */
function buildBundle(app: BrowserApp): Promise<Bundle> {
  const made = builds.then(async () => {
    const { build, stop } = await import('esbuild');
    const outdir = path.join(root, app.name, 'out');
    // esbuild's service process ends once the bundle is made: the server holds only the text.
    const result = await build({
      entryPoints: { app: path.join(root, app.name, app.entry) },
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
      ...app.options?.(),
    }).finally(() => stop());
    const files = new Map(result.outputFiles.map((f) => [path.relative(outdir, f.path).split(path.sep).join('/'), f.text]));
    if (!files.has('app.js')) throw new Error(`esbuild produced no bundle for ${app.title.toLowerCase()}`);
    const packages = new Map<string, string>();
    for (const input of Object.keys(result.metafile!.inputs)) {
      const found = /^(.*?node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
      if (found) packages.set(found[2]!, path.resolve(found[1]!));
    }
    return Object.assign(files, { packages });
  });
  builds = made.catch(() => undefined);
  return made;
}

/**
 * Writes the app as the published package serves it to dist/<name>/ (made empty first): app.js, its
 * chunks, the vendor's files under vendor/, and THIRD-PARTY-LICENSES.txt with the license of every
 * library shipped in them (the bundle keeps no license comments). Returns the files' paths there.
 */
export async function writeBrowserApp(app: BrowserApp): Promise<{ outdir: string; files: string[] }> {
  const outdir = path.join(root, 'dist', app.name);
  const files = await buildBundle(app);
  rmSync(outdir, { recursive: true, force: true });
  for (const [file, text] of files) {
    mkdirSync(path.dirname(path.join(outdir, file)), { recursive: true });
    writeFileSync(path.join(outdir, file), text);
  }
  const vendor = [...(app.vendor?.files ?? [])].map((file) => `vendor/${file}`);
  if (app.vendor) {
    mkdirSync(path.join(outdir, 'vendor'));
    for (const file of app.vendor.files) writeFileSync(path.join(outdir, 'vendor', file), readFileSync(path.join(app.vendor.dir(), file)));
  }
  const packages = new Map(files.packages);
  if (app.vendor) packages.set(app.vendor.packageName, app.vendor.packageDir());
  const licenses = [...packages.keys()].sort().map((name) => {
    const dir = packages.get(name)!;
    const { version, license } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string; license: string };
    const file = readdirSync(dir).find((f) => /^(license|licence|copying)(\.|$)/i.test(f));
    if (!file) throw new Error(`${name} ships no license file to put beside ${app.title.toLowerCase()}`);
    return `${name} ${version}, license ${license}\n\n${readFileSync(path.join(dir, file), 'utf8').trim()}\n`;
  });
  const contents = ['app.js', ...(files.size > 1 ? ['chunks/'] : []), ...(app.vendor ? ['vendor/'] : [])].join(', ');
  writeFileSync(
    path.join(outdir, 'THIRD-PARTY-LICENSES.txt'),
    `${app.title} (${contents}) contains these libraries:\n\n${licenses.join(`\n${'-'.repeat(72)}\n\n`)}`,
  );
  return { outdir, files: [...files.keys(), ...vendor, 'THIRD-PARTY-LICENSES.txt'] };
}

/** How long a browser keeps each kind of file: app.js is asked again on every load, a chunk never changes. */
function cacheControl(file: string): string {
  if (file === 'app.js') return 'no-cache';
  if (file.startsWith('vendor/')) return 'public, max-age=3600';
  return 'public, max-age=31536000, immutable';
}

/** app.js and its chunks bundled in memory on the first request (a clone), the vendor's files from its package. */
function bundledOnRequest(app: BrowserApp, router: Router, cache: Encodings): void {
  let bundle: Promise<Bundle> | null = null;
  router.get(['/app.js', '/chunks/:file'], async (req, res, next) => {
    bundle ??= buildBundle(app);
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
    await sendEncoded(req, res, cache, file, async () => text, typeOf(file)).catch(next);
  });
  const { vendor } = app;
  if (!vendor) return;
  router.get('/vendor/:file', async (req, res, next) => {
    if (!vendor.files.has(req.params.file)) return next();
    const file = `vendor/${req.params.file}`;
    res.setHeader('cache-control', cacheControl(file));
    await sendEncoded(req, res, cache, file, () => readFile(path.join(vendor.dir(), req.params.file)), typeOf(file)).catch(next);
  });
}

/** app.js, its chunks and the vendor's files as the package ships them (dist/<name>/), listed once at start. */
function shipped(app: BrowserApp, router: Router, cache: Encodings): void {
  const builtDir = path.join(root, 'dist', app.name);
  const folder = (name: string) =>
    existsSync(path.join(builtDir, name)) ? readdirSync(path.join(builtDir, name)).map((f) => `${name}/${f}`) : [];
  const files = new Set(['app.js', ...folder('chunks'), ...folder('vendor')]);
  router.get(['/app.js', '/chunks/:file', '/vendor/:file'], async (req, res, next) => {
    const file = req.path.slice(1);
    if (!files.has(file)) return next();
    res.setHeader('cache-control', cacheControl(file));
    await sendEncoded(req, res, cache, file, () => readFile(path.join(builtDir, file)), typeOf(file)).catch(next);
  });
}

/** The app's router, its pages allowed to load files from `mediaOrigins` besides their own (STORAGE_MEDIA_ORIGINS). */
export function browserApp(app: BrowserApp, mediaOrigins: readonly string[] = []): Router {
  const router = express.Router();
  const answerHeaders = headers(mediaOrigins);
  router.use((_req, res, next) => {
    res.set(answerHeaders);
    next();
  });
  const cache: Encodings = new Map();
  if (existsSync(path.join(root, app.name, app.entry))) bundledOnRequest(app, router, cache);
  else shipped(app, router, cache);
  const publicDir = path.join(root, app.name, 'public');
  const publicFiles = new Set(readdirSync(publicDir));
  const sendPublic = (req: Request, res: Response, name: string) => {
    res.setHeader('cache-control', 'no-cache');
    return sendEncoded(req, res, cache, `public/${name}`, () => readFile(path.join(publicDir, name)), path.extname(name));
  };
  router.get(['/', '/:file'], async (req, res, next) => {
    // The page's relative addresses (app.js, style.css) need the folder's slash: /label -> /label/.
    const asked = new URL(req.originalUrl, 'http://localhost');
    if (req.params.file === undefined && !asked.pathname.endsWith('/')) return res.redirect(301, `${asked.pathname}/${asked.search}`);
    const name = String(req.params.file ?? 'index.html');
    if (!publicFiles.has(name)) return next();
    await sendPublic(req, res, name).catch(next);
  });
  if (app.pagesByUrl) {
    router.get('/{*screen}', async (req, res, next) => {
      if (/\.[a-z0-9]+$/i.test(req.path) || /^\/(chunks|vendor)\//.test(req.path)) return next();
      await sendPublic(req, res, 'index.html').catch(next);
    });
  }
  return router;
}
