// The operability side of the server, served without a key, before the generation apps: the index
// at `/`, health (`/healthz`) and readiness (`/readyz`), the bundled contracts (`/openapi/...`),
// metrics (`/metrics`, when enabled), CORS and request ids.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, type Router } from 'express';
import { parse } from 'yaml';
import type { Readiness } from '../store/health.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const packageJson: { version: string } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const version = packageJson.version;

/** A client's X-Request-Id is kept when it is 1 to 128 of these characters; otherwise one is made. */
const requestIdPattern = /^[A-Za-z0-9._:@+=/-]{1,128}$/;

/**
 * Takes the caller's `X-Request-Id` (when sane) or makes one, and echoes it; the access log and
 * error bodies (`request_id`) read it from `res.locals.requestId`.
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    const id = given !== undefined && requestIdPattern.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

const corsAllowHeaders = 'Authorization, Content-Type, Idempotency-Key, X-Request-Id, Prefer';
const corsExposeHeaders = 'X-Request-Id, Idempotent-Replayed, Retry-After, WWW-Authenticate';

/**
 * CORS for the origins of CORS_ORIGINS (`*` for any); none when the list is empty. A small handler
 * rather than the `cors` package: a fixed list of origins and headers is all it takes. A preflight
 * (OPTIONS with Access-Control-Request-Method) is answered here, without a key: 204, with the
 * allowing headers only for an allowed origin.
 */
export function cors(origins: readonly string[]): RequestHandler {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.get('origin');
    const ok = origin !== undefined && (any || allowed.has(origin));
    if (origins.length > 0) res.vary('Origin');
    if (ok) {
      res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
      res.setHeader('Access-Control-Expose-Headers', corsExposeHeaders);
    }
    if (req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined) {
      res.locals.operation = 'preflight';
      if (ok) {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE');
        res.setHeader('Access-Control-Allow-Headers', corsAllowHeaders);
        res.setHeader('Access-Control-Max-Age', '600');
      }
      res.status(204).end();
      return;
    }
    next();
  };
}

/**
 * The bundled contracts of generated/ by name (current, legacy, workforce), each read when it is
 * first asked for: parsing them all at start made garbage that the heap kept as room afterwards.
 */
function bundledContracts(): Map<string, () => { yaml: string; json: string }> {
  const dir = path.join(root, 'generated');
  const contracts = new Map<string, () => { yaml: string; json: string }>();
  for (const file of readdirSync(dir).sort()) {
    const m = /^([a-z]+)\.openapi\.yaml$/.exec(file);
    if (!m) continue;
    let read: { yaml: string; json: string } | undefined;
    contracts.set(m[1]!, () => {
      if (read) return read;
      const yaml = readFileSync(path.join(dir, file), 'utf8');
      read = { yaml, json: JSON.stringify(parse(yaml)) };
      return read;
    });
  }
  return contracts;
}

export interface OpsOptions {
  readiness(): Promise<Readiness>;
  /** The metrics registry when METRICS=true; `/metrics` answers 404 otherwise. */
  metrics: { contentType: string; metrics(): Promise<string> } | null;
  /** Whether the reference site is served at /docs (mounted before this router). */
  docs: boolean;
}

/** Paths that the generation apps (and their key check) answer; everything else is answered here. */
const apiPath = /^\/(v1|legacy|worker)(\/|$)/;

const notFound = { status_code: 404, error: 'Not found: no such endpoint. GET / lists what this server serves.' };

export function opsRouter(options: OpsOptions): Router {
  const contracts = bundledContracts();
  const router = express.Router();
  const named =
    (operation: string): RequestHandler =>
    (_req, res, next) => {
      res.locals.operation = operation;
      next();
    };

  router.get('/', named('index'), (_req, res) => {
    const links: Record<string, string> = { current: '/v1', legacy: '/legacy/v1', worker: '/worker/v1' };
    if (options.docs) links.docs = '/docs/';
    links.healthz = '/healthz';
    links.readyz = '/readyz';
    for (const name of contracts.keys()) {
      links[`openapi_${name}_yaml`] = `/openapi/${name}.yaml`;
      links[`openapi_${name}_json`] = `/openapi/${name}.json`;
    }
    if (options.metrics) links.metrics = '/metrics';
    res.json({
      name: 'humantask',
      version,
      description:
        'Reference server of the human-task labeling service API. API requests need a key as the HTTP Basic user name (curl -u KEY: ...).',
      links,
    });
  });
  router.get('/healthz', named('healthz'), (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });
  router.get('/readyz', named('readyz'), async (_req, res) => {
    const state = await options.readiness();
    res.setHeader('Cache-Control', 'no-store');
    if (state.ready) res.json({ status: 'ready' });
    else res.status(503).json({ status_code: 503, error: `Not ready: ${state.reason}.`, request_id: res.locals.requestId });
  });
  router.get('/openapi/:file', named('openapi'), (req, res, next) => {
    const m = /^([a-z]+)\.(yaml|json)$/.exec(String(req.params.file));
    const contract = m ? contracts.get(m[1]!)?.() : undefined;
    if (!m || !contract) return next();
    if (m[2] === 'yaml') res.type('application/yaml; charset=utf-8').send(contract.yaml);
    else res.type('application/json').send(contract.json);
  });
  if (options.metrics) {
    const registry = options.metrics;
    router.get('/metrics', named('metrics'), async (_req, res, next) => {
      try {
        res.type(registry.contentType).send(await registry.metrics());
      } catch (err) {
        next(err);
      }
    });
  }
  // Whatever is not the API (e.g. /favicon.ico, a stray link) is a plain 404, not a 401 asking for a key.
  router.use((req, res, next) => {
    if (apiPath.test(req.path)) return next();
    res.locals.operation = 'unknown';
    res.status(404).json({ ...notFound, request_id: res.locals.requestId });
  });
  return router;
}
