// The Prism mock of both generations on one port, at the paths the server serves: the current
// generation at /v1, the older at /legacy/v1. Used by `humantask mock` (`npm run mock`), the tests
// and the benchmarks. The worker API has its own mock on its own port (startWorkerMock, `humantask
// mock --worker`), at /worker/v1 as on the server, for the labeling app and worker scripts; it serves
// the labeling app itself too, at /label/, since the app talks to its own origin only.
//
// Prism serves one document at its root, so one Prism process per generation listens on a private
// loopback port, and a front proxy in this process routes by path. The proxy also does what Prism
// cannot do as the contract says: it refuses a request without an API key or a member's session
// cookie to an operation that is not public (401, like the server; Prism accepts `-u :`), answers
// malformed JSON with the contract's `{status_code, error}` (Prism has its own problem+json shape,
// turned into that shape for any other error of Prism's own too),
// removes `Idempotent-Replayed`, which Prism copies from the header's example into every create
// answer although only a replay carries it (and a mock keeps nothing to replay), and refuses a
// creation's documented name that the creation does not take (400 naming it, as the server does;
// Prism sees only an open body), and says what is wrong with an invalid request in the server's
// words (Prism answers the contract's 400 example, whatever the fault).
// Each Prism process preloads server/prism-preload.cjs, which spares it two costs our contracts gain
// nothing from (a second walk of the whole contract at start, ajv's optimizer on every validator).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { notValidJson } from './domain/json.ts';
import type { Generation } from './domain/model.ts';
import { accessTable } from './http/access.ts';
import { loadContract } from './http/contract.ts';
import { creationNames } from './http/creation-names.ts';
import { describeProblems, fromAjv, fromMessage } from './http/validation-words.ts';
import { labelApp } from './label.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
type MockedApi = Generation | 'workforce';

export interface RunningMock {
  /** The origin: the current generation at `${url}/v1`, the older at `${url}/legacy/v1` (the worker mock: `${url}/worker/v1`). */
  url: string;
  stop(): Promise<void>;
}

/** Where each contract lives on its mock's port (the server's base paths). */
const mockBasePath: Record<MockedApi, string> = { current: '', legacy: '/legacy', workforce: '/worker' };

/** How a front serves its contracts: which one a path reaches, and what a request must carry. */
interface Front {
  apis: readonly MockedApi[];
  route(url: string): MockedApi | undefined;
  notFound(path: string): string;
  /** The 401 answer for a request (to `api`) without credentials, or null when it may pass. */
  refuse(req: IncomingMessage, api: MockedApi): { error: string; headers: Record<string, string> } | null;
  /** The worker API's error bodies carry a `code`. */
  codes: boolean;
  /** Paths served by this process itself rather than Prism (the labeling app at /label/), with their handler. */
  own?: { route: RegExp; handler: () => (req: IncomingMessage, res: ServerResponse) => void };
}

const customerFront: Front = {
  apis: ['current', 'legacy'],
  route: (url) => (/^\/legacy\/v1(\/|\?|$)/.test(url) ? 'legacy' : /^\/v1(\/|\?|$)/.test(url) ? 'current' : undefined),
  notFound: (p) => `Not found: the mock serves the current generation at /v1 and the older at /legacy/v1, not ${p}.`,
  // As on the server: an operation the contract calls public (`security: []`: logging in,
  // invitations, password links, single sign-on) needs no credential, and a member's session cookie
  // is one (Prism checks that the operation takes it; the mock keeps no sessions: any cookie does).
  refuse: (req, api) =>
    apiKeyOf(req.headers.authorization) || sessionCookieOf(req) || publicOperation(api, req)
      ? null
      : {
          error: 'A valid API key is required (HTTP Basic, the key as user name, empty password).',
          headers: { 'www-authenticate': 'Basic realm="humantask"' },
        },
  codes: false,
};

const workerFront: Front = {
  apis: ['workforce'],
  route: (url) => (/^\/worker\/v1(\/|\?|$)/.test(url) ? 'workforce' : undefined),
  notFound: (p) => `Not found: the worker mock serves the worker API at /worker/v1, not ${p}.`,
  // Any Bearer token passes (a mock keeps no sessions); logging in needs none, a file of an
  // assignment (the media route) its lease token in the query.
  refuse: (req) =>
    (req.method === 'POST' && /^\/worker\/v1\/session(\?|$)/.test(req.url ?? '')) ||
    /^Bearer\s+\S+/i.test(req.headers.authorization ?? '') ||
    (req.method === 'GET' && /^\/worker\/v1\/assignments\/[^/?]+\/media\?(.*&)?lease_token=[^&]/.test(req.url ?? ''))
      ? null
      : {
          error: 'A valid worker token is required (Authorization Bearer, a session or API token).',
          headers: { 'www-authenticate': 'Bearer realm="humantask-worker"' },
        },
  codes: true,
  // The labeling app, on the mock's own origin: open http://127.0.0.1:4011/label/ to try it on the mock.
  own: {
    route: /^\/label(\/|\?|$)/,
    handler: () => {
      const app = express();
      app.use('/label', labelApp());
      return app;
    },
  },
};

/** The worker API's `code` of an error the mock itself answers, by status. */
const codeOfStatus: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthenticated',
  404: 'not_found',
  413: 'payload_too_large',
  422: 'invalid_request',
};

const maxBody = 10 * 1024 * 1024;
const hopByHop = ['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-connection'];

/** Starts Prism for both generations behind one port; resolves once everything listens. */
export function startMock(options: { port?: number; host?: string } = {}): Promise<RunningMock> {
  return startFront(customerFront, options);
}

/** Starts Prism for the worker API on its own port (at /worker/v1); resolves once it listens. */
export function startWorkerMock(options: { port?: number; host?: string } = {}): Promise<RunningMock> {
  return startFront(workerFront, options);
}

async function startFront(served: Front, options: { port?: number; host?: string }): Promise<RunningMock> {
  const prismCli = createRequire(import.meta.url).resolve('@stoplight/prism-cli/dist/index.js');
  const children: ChildProcess[] = [];
  const front = createServer();
  const stop = async () => {
    front.closeAllConnections();
    if (front.listening) await new Promise<void>((resolve) => front.close(() => resolve()));
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        await once(child, 'exit');
      }),
    );
  };
  try {
    const upstream = {} as Record<MockedApi, number>;
    await Promise.all(
      served.apis.map(async (gen) => {
        const port = await freeLoopbackPort();
        const spec = path.join(root, 'generated', `${gen}.openapi.yaml`);
        const child = spawn(
          process.execPath,
          [
            '--require',
            path.join(root, 'server', 'prism-preload.cjs'),
            prismCli,
            'mock',
            spec,
            '--host',
            '127.0.0.1',
            '--port',
            String(port),
            '--errors',
            'false',
          ],
          {
            cwd: root,
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        children.push(child);
        await waitForListening(child, gen);
        upstream[gen] = port;
      }),
    );
    const own = served.own ? { route: served.own.route, handle: served.own.handler() } : null;
    front.on('request', (req, res) => {
      if (own?.route.test(req.url ?? '')) own.handle(req, res);
      else void proxy(served, req, res, upstream);
    });
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      front.once('error', reject);
      front.listen(options.port ?? 0, host, () => resolve());
    });
    const { port } = front.address() as AddressInfo;
    return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function sendError(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}, codes = false) {
  const body = JSON.stringify({ status_code: status, error, ...(codes ? { code: codeOfStatus[status] ?? 'internal' } : {}) });
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Whether the request carries a member's session cookie (`humantask_session`, any value). */
function sessionCookieOf(req: IncomingMessage): boolean {
  return (req.headers.cookie ?? '').split(';').some((c) => /^\s*humantask_session=\S/.test(c));
}

/** Whether the request reaches an operation the contract lets anybody call (its x-access says public). */
function publicOperation(api: MockedApi, req: IncomingMessage): boolean {
  const path = (req.url ?? '/').slice(mockBasePath[api].length).split('?')[0]!;
  return api !== 'workforce' && accessTable(loadContract(api)).match(req.method ?? 'GET', path)?.access.public === true;
}

/** The API key of HTTP Basic credentials (the user name), or '' when there is none. */
function apiKeyOf(header: string | undefined): string {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8').replace(/:.*$/s, '') : '';
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBody) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function proxy(front: Front, req: IncomingMessage, res: ServerResponse, upstream: Record<MockedApi, number>) {
  const url = req.url ?? '/';
  const gen = front.route(url);
  if (!gen) return sendError(res, 404, front.notFound(url.split('?')[0]!), {}, front.codes);
  const refused = front.refuse(req, gen);
  if (refused) return sendError(res, 401, refused.error, refused.headers, front.codes);
  const body = await readBody(req);
  if (body === null) return sendError(res, 413, `The request body is larger than ${maxBody} bytes.`, {}, front.codes);
  let parsed: unknown;
  const json = body.length > 0 && /^application\/(.+\+)?json\b/i.test(req.headers['content-type'] ?? '');
  if (json) {
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch (err) {
      return sendError(res, 400, notValidJson(err), {}, front.codes);
    }
  } else if (/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
    // Only the names count here: `key[]=` and `key[sub]=` give `key`, as the server reads them.
    parsed = Object.fromEntries([...new URLSearchParams(body.toString('utf8')).keys()].map((k) => [k.replace(/\[.*$/s, ''), '']));
  }
  // What Prism cannot tell from an open body: a name the API documents that this creation does not
  // take is refused, naming it, as the server refuses it (the same rule, http/creation-names.ts).
  if (gen !== 'workforce' && req.method === 'POST' && parsed !== undefined) {
    const refused = creationNames(gen).refusal(url.slice(mockBasePath[gen].length).split('?')[0]!, parsed);
    if (refused) return sendError(res, 400, refused, {}, front.codes);
  }
  const headers: Record<string, string | string[] | undefined> = {
    ...req.headers,
    host: `127.0.0.1:${upstream[gen]}`,
    'content-length': String(body.length),
  };
  for (const hop of hopByHop) delete headers[hop];
  // A connection per request: a kept-alive connection that Prism closes as it is reused would
  // fail the request.
  const out = request(
    { host: '127.0.0.1', port: upstream[gen], method: req.method, path: url.slice(mockBasePath[gen].length), headers, agent: false },
    (answer) => {
      void relay(answer, res, front.codes, (violations) => mockProblems(gen, req.method ?? 'GET', url, parsed, json, violations));
    },
  );
  out.on('error', (err) => {
    if (!res.headersSent) sendError(res, 502, `The mock's Prism process did not answer: ${err.message}`, {}, front.codes);
    else res.destroy();
  });
  out.end(body);
}

/** One violation of Prism's `sl-violations` header: where (`['request', 'body', 'fields', '0']`), which keyword, Ajv's message. */
interface Violation {
  location?: string[];
  code?: string | number;
  message?: string;
}

/**
 * What the server would say of an invalid request, in the same words (http/validation-words.ts):
 * a JSON body checked against its schema in the contract (Prism's violations name neither an
 * unknown property nor the branch a value chose), the rest as Prism reports it.
 */
function mockProblems(gen: MockedApi, method: string, url: string, body: unknown, json: boolean, violations: Violation[]): string | null {
  const contract = loadContract(gen);
  const path = url.slice(mockBasePath[gen].length).split('?')[0]!;
  const bodySchema = contract.bodySchemaOf(method, path);
  const ofBody = (v: Violation) => v.location?.[1] === 'body';
  const problems = violations
    .filter((v) => !(json && bodySchema && ofBody(v)))
    .map((v) => fromMessage((v.location ?? []).slice(1), v.code === undefined ? undefined : String(v.code), v.message ?? ''));
  if (json && bodySchema && violations.some(ofBody)) {
    const validate = contract.validatorOf(bodySchema);
    if (!validate(structuredClone(body))) problems.push(...fromAjv(validate.errors ?? [], ['body']));
  }
  return problems.length ? describeProblems(problems, { contract, bodySchema, body }) : null;
}

async function relay(answer: IncomingMessage, res: ServerResponse, codes: boolean, describe: (violations: Violation[]) => string | null) {
  const status = answer.statusCode ?? 502;
  const headers = { ...answer.headers };
  delete headers['idempotent-replayed'];
  for (const hop of hopByHop) delete headers[hop];
  // An invalid request: Prism answers the contract's documented 400 example and lists what it
  // found in `sl-violations`; the mock says what is wrong instead, as the server would.
  const violations = headers['sl-violations'];
  delete headers['sl-violations'];
  if (status === 400 && typeof violations === 'string') {
    let found: Violation[] = [];
    try {
      found = JSON.parse(violations);
    } catch {
      // not JSON after all: Prism's answer stays
    }
    const message = Array.isArray(found) && found.length ? describe(found) : null;
    if (message) {
      answer.resume();
      delete headers['content-type'];
      delete headers['content-length'];
      return sendError(res, status, message, headers as Record<string, string>, codes);
    }
  }
  if (/^application\/problem\+json/i.test(String(headers['content-type']))) {
    // One of Prism's own errors (no documented answer, an invalid request): the contract's shape.
    const text = (await readBody(answer))?.toString('utf8') ?? '';
    let problem: { title?: string; detail?: string; validation?: { location?: string[]; message?: string }[] } = {};
    try {
      problem = JSON.parse(text);
    } catch {
      // not JSON after all: the title stays generic
    }
    const details = (problem.validation ?? []).map((v) => `${(v.location ?? []).join('/')} ${v.message ?? ''}`.trim());
    const message = [problem.title ?? `The mock answered ${status}`, problem.detail?.split('\n')[0], ...details].filter(Boolean).join(': ');
    delete headers['content-type'];
    delete headers['content-length'];
    return sendError(res, status, message, headers as Record<string, string>, codes);
  }
  res.writeHead(status, headers);
  answer.pipe(res);
}

async function freeLoopbackPort(): Promise<number> {
  const srv = createNetServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function waitForListening(child: ChildProcess, gen: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    let listening = false;
    const timer = setTimeout(() => reject(new Error(`Prism (${gen}) did not start within 150 s:\n${output}`)), 150_000);
    // Prism logs every request: its output is read (and dropped) for as long as it runs, or the
    // pipe would fill and stop it.
    const onData = (chunk: Buffer) => {
      if (listening) return;
      output += chunk.toString();
      if (/Prism is listening on http:\/\//.test(output)) {
        listening = true;
        output = '';
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism (${gen}) exited with ${code}:\n${output}`));
    });
  });
}
