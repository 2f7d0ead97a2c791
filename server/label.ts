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
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';

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

/** The app's files by their path under /label/: `app.js` (label/main.ts and what it imports) and its chunks. */
type Bundle = Map<string, string>;

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
  const files: Bundle = new Map(result.outputFiles.map((f) => [path.relative(outdir, f.path).split(path.sep).join('/'), f.text]));
  if (!files.has('app.js')) throw new Error('esbuild produced no bundle for the labeling app');
  return files;
}

/** The app, its pages allowed to load files from `mediaOrigins` besides their own (STORAGE_MEDIA_ORIGINS). */
export function labelApp(mediaOrigins: readonly string[] = []): Router {
  const router = express.Router();
  let bundle: Promise<Bundle> | null = null;
  const answerHeaders = headers(mediaOrigins);
  router.use((_req, res, next) => {
    res.set(answerHeaders);
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
    const text = files.get(file);
    if (text === undefined) return next();
    res.type('text/javascript').setHeader('cache-control', file === 'app.js' ? 'no-cache' : 'public, max-age=31536000, immutable');
    res.send(text);
  });
  router.get('/vendor/:file', (req, res, next) => {
    if (!vendorFiles.has(req.params.file)) return next();
    res.type('text/javascript').setHeader('cache-control', 'public, max-age=3600');
    res.sendFile(path.join(pdfjsBuild, req.params.file));
  });
  router.use(express.static(path.join(labelDir, 'public')));
  return router;
}
