// The console at /console/ (issue 35, decision 23): the customer's members' web app. console/public/
// as it is, and console/main.tsx bundled by esbuild into /console/app.js, built in memory on the
// first request as the labeling app's bundle is (server/label.ts): never stale, nothing written to
// the install folder, nothing fetched from the network. Code a screen needs only there (the labeling
// app's players, the chart library) is split into chunks named by their contents, cached for good;
// the shell and app.js are revalidated by their ETag. Every file is compressed once, when the bundle
// is made (Brotli and gzip), and sent as the request's Accept-Encoding allows. Every path under
// /console/ that is no file is the shell: the app routes by the URL (History API).
//
// What a role may do is read from the contract, not written twice: the bundle carries, per operation,
// the least role of its `x-access` (the access table of server/http/access.ts), so that the console
// offers only what the member may call. The server refuses the rest anyway.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import express, { type Request, type Response, type Router } from 'express';
import { roles } from './domain/identity/roles.ts';
import { accessTable } from './http/access.ts';
import { loadContract } from './http/contract.ts';

const consoleDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'console');

// The labeling app's policy (decision 12): the console shows the same players, which set style
// attributes and show customers' frames sandboxed. A task's files come through the server (the
// members' media route): images, media and connections stay on this origin.
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

/** Every answer under /console/ (SECURITY.md, "The console"). */
const headers = {
  'Content-Security-Policy': csp,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

interface ConsoleFile {
  type: string;
  etag: string;
  /** Cached for good (a name that changes with its contents) or revalidated on every load. */
  immutable: boolean;
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
}

const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html', '.svg': 'image/svg+xml' };

function consoleFile(name: string, contents: Buffer | string, immutable: boolean): ConsoleFile {
  const identity = Buffer.isBuffer(contents) ? contents : Buffer.from(contents);
  return {
    type: `${types[path.extname(name)] ?? 'application/octet-stream'}; charset=utf-8`,
    etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`,
    immutable,
    identity,
    br: brotliCompressSync(identity, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
    gzip: gzipSync(identity, { level: 9 }),
  };
}

/** The roles from the lowest, and per operation of the current generation the least role that may call it (public: null). */
function consoleAccess(): { roles: readonly string[]; operations: Record<string, string | null> } {
  const table = accessTable(loadContract('current'));
  return { roles, operations: Object.fromEntries([...table.byId].map(([id, op]) => [id, op.access.public ? null : op.access.role])) };
}

/** The console's files by their path under /console/: the shell, its stylesheet, app.js and its chunks. */
type Bundle = Map<string, ConsoleFile>;

async function buildConsoleBundle(): Promise<Bundle> {
  const { build, stop } = await import('esbuild');
  const outdir = path.join(consoleDir, 'out');
  const result = await build({
    entryPoints: { app: path.join(consoleDir, 'main.tsx') },
    bundle: true,
    splitting: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    chunkNames: 'chunks/[name]-[hash]',
    outdir,
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    define: { HUMANTASK_ACCESS: JSON.stringify(consoleAccess()) },
  }).finally(() => stop());
  const files: Bundle = new Map();
  for (const f of result.outputFiles) {
    const name = path.relative(outdir, f.path).split(path.sep).join('/');
    files.set(name, consoleFile(name, Buffer.from(f.contents), name.startsWith('chunks/')));
  }
  if (!files.has('app.js')) throw new Error('esbuild produced no bundle for the console');
  const publicDir = path.join(consoleDir, 'public');
  for (const name of readdirSync(publicDir)) files.set(name, consoleFile(name, readFileSync(path.join(publicDir, name)), false));
  return files;
}

/** Sends a file as the request accepts it (Brotli, gzip or as it is), or 304 for a copy still good. */
function send(req: Request, res: Response, file: ConsoleFile) {
  res.setHeader('Content-Type', file.type);
  res.setHeader('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  res.setHeader('ETag', file.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  if (!file.immutable && req.headers['if-none-match'] === file.etag) return void res.status(304).end();
  const accepted = String(req.headers['accept-encoding'] ?? '');
  const encoding = /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : null;
  const body = encoding ? file[encoding] : file.identity;
  if (encoding) res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', String(body.length));
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function consoleApp(): Router {
  const router = express.Router({ strict: true });
  let bundle: Promise<Bundle> | null = null;
  const files = async () => {
    bundle ??= buildConsoleBundle();
    try {
      return await bundle;
    } catch (err) {
      bundle = null;
      throw err;
    }
  };
  router.use((_req, res, next) => {
    res.set(headers);
    next();
  });
  router.get('/{*rest}', async (req, res, next) => {
    // /console (no slash) is the shell's address too: its relative links need the slash.
    if (req.originalUrl.split('?', 1)[0] === '/console') return res.redirect(301, '/console/');
    let bundle: Bundle;
    try {
      bundle = await files();
    } catch (err) {
      return next(err);
    }
    const name = req.path.slice(1);
    const file = bundle.get(name);
    if (file) return send(req, res, file);
    // A file that is not there is 404; any other path is a screen of the app: the shell.
    if (/\.[a-z0-9]+$/i.test(name) || name.startsWith('chunks/')) return next();
    send(req, res, bundle.get('index.html')!);
  });
  return router;
}
