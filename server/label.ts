// The labeling app at /label/: label/public/ as it is, and label/main.ts bundled by esbuild into
// /label/app.js. The bundle is built in memory on the first request for it (about a second, once
// per process): never stale, nothing written to the install folder, nothing fetched from the
// network. esbuild's binary comes with its platform package (an optional dependency, no install
// script needed). Code only some tasks need is split off (esbuild's code splitting) into chunks
// the app imports when such a task opens: three.js, for the lidar player, at
// /label/chunks/view-<hash>.js. A chunk's name changes with its contents, so it is cached for good;
// app.js is revalidated on every load. The build is deterministic: the processes of one install
// (WORKERS > 1) name the chunks alike, so whichever process answers has the chunk asked for.
// pdf.js (pdfjs-dist) is served as it ships, at /label/vendor/, for the document player to load
// only when a task's document is a PDF.
//
// Every file here is sent compressed to a browser that asks for it (Accept-Encoding: brotli, else
// gzip; plain to a client that asks for neither), compressed once per process and kept in memory:
// the bundle when it is built, a file of label/public/ or pdf.js on its first request. Not the
// `compression` middleware: it would compress the same 400 kB again on every request and stream it
// without a length, while these files never change as long as the process runs.
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import express, { type Request, type Response, type Router } from 'express';

const labelDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'label');
const pdfjsBuild = path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'build');
/** The files of pdf.js the app loads: the library and its worker. */
const vendorFiles = new Set(['pdf.min.mjs', 'pdf.worker.min.mjs']);

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

/**
 * Sends the smallest encoding the request accepts (its Accept-Encoding as express reads it: `;q=0`
 * refuses one; no header asks for the file as it is). Browsers list gzip first: a tie goes to brotli.
 */
function sendEncoded(req: Request, res: Response, file: Encoded, type: string) {
  const encoding = (['br', 'gzip'] as const).find((e) => req.acceptsEncodings(e) === e) ?? 'identity';
  res.vary('Accept-Encoding').type(type);
  if (encoding !== 'identity') res.setHeader('Content-Encoding', encoding);
  res.send(file[encoding]);
}

/** The app's files by their path under /label/: `app.js` (label/main.ts and what it imports) and its chunks. */
type Bundle = Map<string, Encoded>;

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
    logLevel: 'silent',
  }).finally(() => stop());
  const files: Bundle = new Map(
    await Promise.all(
      result.outputFiles.map(async (f) => [path.relative(outdir, f.path).split(path.sep).join('/'), await encode(f.text)] as const),
    ),
  );
  if (!files.has('app.js')) throw new Error('esbuild produced no bundle for the labeling app');
  return files;
}

export function labelApp(): Router {
  const router = express.Router();
  let bundle: Promise<Bundle> | null = null;
  router.use((_req, res, next) => {
    res.set(headers);
    next();
  });
  router.get(['/app.js', '/chunks/:file'], async (req, res, next) => {
    bundle ??= buildLabelBundle();
    let files: Bundle;
    try {
      files = await bundle;
    } catch (err) {
      bundle = null;
      return next(err);
    }
    const file = req.params.file === undefined ? 'app.js' : `chunks/${req.params.file}`;
    const encoded = files.get(file);
    if (encoded === undefined) return next();
    res.setHeader('cache-control', file === 'app.js' ? 'no-cache' : 'public, max-age=31536000, immutable');
    sendEncoded(req, res, encoded, 'text/javascript');
  });
  /** pdf.js's files and label/public/'s, each read and compressed on its first request. */
  const read = new Map<string, Promise<Encoded>>();
  const sendFile = async (req: Request, res: Response, file: string, type: string) => {
    let encoded = read.get(file);
    if (!encoded) {
      encoded = readFile(file).then(encode);
      read.set(file, encoded);
      encoded.catch(() => read.delete(file));
    }
    sendEncoded(req, res, await encoded, type);
  };
  router.get('/vendor/:file', async (req, res, next) => {
    if (!vendorFiles.has(req.params.file)) return next();
    res.setHeader('cache-control', 'public, max-age=3600');
    await sendFile(req, res, path.join(pdfjsBuild, req.params.file), 'text/javascript').catch(next);
  });
  const publicFiles = new Set(readdirSync(path.join(labelDir, 'public')));
  router.get(['/', '/:file'], async (req, res, next) => {
    // The page's relative addresses (app.js, style.css) need the folder's slash: /label -> /label/.
    const asked = new URL(req.originalUrl, 'http://localhost');
    if (req.params.file === undefined && !asked.pathname.endsWith('/')) return res.redirect(301, `${asked.pathname}/${asked.search}`);
    const name = String(req.params.file ?? 'index.html');
    if (!publicFiles.has(name)) return next();
    res.setHeader('cache-control', 'no-cache');
    await sendFile(req, res, path.join(labelDir, 'public', name), path.extname(name)).catch(next);
  });
  return router;
}
