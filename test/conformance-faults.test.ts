// The conformance suite catches broken servers: each case puts a small fault-injecting proxy
// (loopback) in front of the reference server, runs the checks of the broken rule, and expects
// them to fail, naming that rule; the same checks pass through the proxy without the fault, so
// no case can pass vacuously.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../server/domain/accounts.ts';
import { behaviourChecks } from '../conformance/checks/index.ts';
import { loadContract } from '../conformance/contract.ts';
import { runConformance, type ConformanceRun } from '../conformance/runner.ts';
import type { Check, Generation, Options } from '../conformance/types.ts';
import { conformanceBucket, startBucketServer, type TestBucketServer } from './support/s3.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { createWorker } from './support/workers.ts';

interface ProxiedRequest {
  method: string;
  /** Path and query as the client sent them (e.g. `/legacy/v1/tasks?limit=2`). */
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
}

interface ProxiedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * One planted fault: it may change the request on its way in and the answer on its way out, and
 * the callbacks of the tasks created through the proxy on their way to the receiver.
 */
interface Fault {
  request?(req: ProxiedRequest): void;
  callback?(body: any): void;
  response?(req: ProxiedRequest, res: ProxiedResponse, upstream: (req: ProxiedRequest) => Promise<ProxiedResponse>): Promise<void> | void;
}

/** The API path without the older generation's prefix: `/v1/...`. */
const apiPath = (url: URL) => url.pathname.replace(/^\/legacy(?=\/v1\/)/, '');

const isCreation = (req: ProxiedRequest) =>
  req.method === 'POST' && /^\/v1\/task\/[a-z]+$/.test(apiPath(req.url)) && !/^\/v1\/task\/[0-9a-f]{24}$/.test(apiPath(req.url));
const isList = (req: ProxiedRequest) => req.method === 'GET' && apiPath(req.url) === '/v1/tasks';

/** An error answer in the usual body, as a fault gives it. */
const refusal = (error: string, status = 400): Pick<ProxiedResponse, 'status' | 'body' | 'headers'> => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify({ status_code: status, error })),
});

function json(res: ProxiedResponse): any {
  return JSON.parse(res.body.toString('utf8'));
}
function setJson(res: ProxiedResponse, value: unknown) {
  res.body = Buffer.from(JSON.stringify(value));
}

/** A proxy on 127.0.0.1 in front of `target`, applying `fault` (when set) to every exchange. */
async function startProxy(target: string) {
  const strip = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);
  const flatten = (headers: IncomingHttpHeaders | Headers): Record<string, string> => {
    const out: Record<string, string> = {};
    const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
    for (const [k, v] of entries)
      if (v !== undefined && !strip.has(k.toLowerCase())) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    return out;
  };
  const upstream = async (req: ProxiedRequest): Promise<ProxiedResponse> => {
    const res = await fetch(target + req.url.pathname + req.url.search, {
      method: req.method,
      headers: req.headers,
      body: req.body.length > 0 ? new Uint8Array(req.body) : undefined,
    });
    const headers = flatten(res.headers);
    delete headers['content-encoding'];
    return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
  };
  const state: { fault?: Fault; server?: Server } = {};
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('end', () => {
      void (async () => {
        const req: ProxiedRequest = {
          method: incoming.method ?? 'GET',
          url: new URL(incoming.url ?? '/', 'http://proxy'),
          headers: flatten(incoming.headers),
          body: Buffer.concat(chunks),
        };
        const fault = state.fault;
        const relayed = /^\/relay\/(.+)$/.exec(req.url.pathname);
        if (relayed) {
          // A callback on its way to the receiver: changed by the fault, then passed on.
          const body = JSON.parse(req.body.toString('utf8'));
          fault?.callback?.(body);
          const passed = await fetch(decodeURIComponent(relayed[1]!), { method: 'POST', headers: req.headers, body: JSON.stringify(body) });
          outgoing.writeHead(passed.status, { 'content-type': 'text/plain' });
          outgoing.end(await passed.text());
          return;
        }
        if (fault?.callback && isCreation(req) && req.headers['content-type']?.includes('json')) {
          const body = JSON.parse(req.body.toString('utf8'));
          if (typeof body.callback_url === 'string') body.callback_url = `${url}/relay/${encodeURIComponent(body.callback_url)}`;
          req.body = Buffer.from(JSON.stringify(body));
        }
        fault?.request?.(req);
        const res = await upstream(req);
        await fault?.response?.(req, res, upstream);
        outgoing.writeHead(res.status, { ...res.headers, 'content-length': String(res.body.length) });
        outgoing.end(res.body);
      })().catch((err: Error) => {
        outgoing.writeHead(502, { 'content-type': 'text/plain' });
        outgoing.end(`proxy failure: ${err.message}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.server = server;
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    set fault(f: Fault | undefined) {
      state.fault = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A worker API request: `/worker/v1/assignments/...`, the rest of the path after `assignments/`. */
const assignmentPath = (req: ProxiedRequest) => /^\/worker\/v1\/assignments\/(.+)$/.exec(req.url.pathname)?.[1];
/** The lease token of each assignment handed out through the proxy, by assignment id. */
const leases = new Map<string, string>();

const byId = (...ids: string[]): Check[] =>
  ids.map((id) => {
    const check = behaviourChecks.find((c) => c.id === id);
    if (!check) throw new Error(`no behaviour check ${id}`);
    return check;
  });

interface Case {
  fault: Fault;
  /** The checks to run: behaviour checks by id, or `only` over the whole suite (for shape rules). */
  checks?: Check[];
  only?: string;
  generations?: Generation[];
  /** Ids of results that must fail with the fault (exact, or a prefix ending in `/`). */
  expectFailed: string[];
}

const cases: Record<string, Case> = {
  'cancel of a completed task answers 200 (with the task)': {
    fault: {
      async response(req, res, upstream) {
        const m = /^\/v1\/task\/([0-9a-f]{24})\/cancel$/.exec(apiPath(req.url));
        if (!m || req.method !== 'POST' || (res.status !== 400 && res.status !== 500)) return;
        const prefix = req.url.pathname.startsWith('/legacy/') ? '/legacy' : '';
        const task = await upstream({ ...req, method: 'GET', url: new URL(`${prefix}/v1/task/${m[1]}`, req.url), body: Buffer.alloc(0) });
        Object.assign(res, { status: 200, body: task.body, headers: task.headers });
      },
    },
    checks: byId('task-states/cancel-pending', 'task-states/cancel-completed-current', 'task-states/cancel-completed-legacy'),
    generations: ['current', 'legacy'],
    expectFailed: ['task-states/cancel-completed-current', 'task-states/cancel-completed-legacy'],
  },
  'the bulk cancel ignores its filters (the proxy drops them from POST /v1/tasks/cancel)': {
    fault: {
      request(req) {
        if (req.method !== 'POST' || apiPath(req.url) !== '/v1/tasks/cancel') return;
        for (const name of [...req.url.searchParams.keys()]) if (name !== 'limit') req.url.searchParams.delete(name);
      },
    },
    checks: byId('task-states/cancel-by-filter'),
    generations: ['current'],
    expectFailed: ['task-states/cancel-by-filter'],
  },
  'unique_id is not enforced (the proxy drops it from creation bodies)': {
    fault: {
      request(req) {
        if (!isCreation(req) || !req.headers['content-type']?.includes('json')) return;
        const body = JSON.parse(req.body.toString('utf8'));
        delete body.unique_id;
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('unique-id/conflict-409', 'unique-id/across-types'),
    expectFailed: ['unique-id/conflict-409', 'unique-id/across-types'],
  },
  'an import creates its lines again (the proxy makes every imported line a new body without unique_id)': {
    fault: {
      request(req) {
        if (req.method !== 'POST' || apiPath(req.url) !== '/v1/imports') return;
        const lines = req.body
          .toString('utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => {
            const { unique_id: _u, ...rest } = JSON.parse(l);
            return JSON.stringify({ ...rest, metadata: { nonce: randomBytes(8).toString('hex') } });
          });
        req.body = Buffer.from(`${lines.join('\n')}\n`);
      },
    },
    checks: byId('transfer/import-exactly-once'),
    generations: ['current'],
    expectFailed: ['transfer/import-exactly-once'],
  },
  "an export ignores the list's filters (the proxy drops them from POST /v1/exports)": {
    fault: {
      request(req) {
        if (req.method === 'POST' && apiPath(req.url) === '/v1/exports') req.url.search = '';
      },
    },
    checks: byId('transfer/export-matches-list'),
    generations: ['current'],
    expectFailed: ['transfer/export-matches-list'],
  },
  'the task list comes oldest first (the proxy reverses docs)': {
    fault: {
      response(req, res) {
        if (!isList(req) || res.status !== 200) return;
        const body = json(res);
        body.docs.reverse();
        setJson(res, body);
      },
    },
    checks: byId('lists/newest-first'),
    generations: ['current', 'legacy'],
    expectFailed: ['lists/newest-first'],
  },
  'the status filter is ignored (the proxy drops it)': {
    fault: {
      request(req) {
        if (isList(req)) req.url.searchParams.delete('status');
      },
    },
    checks: byId('lists/filter-status'),
    expectFailed: ['lists/filter-status'],
  },
  'limit is ignored (the proxy drops it)': {
    fault: {
      request(req) {
        if (isList(req)) req.url.searchParams.delete('limit');
      },
    },
    checks: byId('lists/limit', 'lists/limit-bounds'),
    expectFailed: ['lists/limit', 'lists/limit-bounds'],
  },
  'next_token is ignored (every page is the first)': {
    fault: {
      request(req) {
        if (isList(req)) req.url.searchParams.delete('next_token');
      },
    },
    checks: byId('lists/next-token', 'lists/cursor-stable'),
    expectFailed: ['lists/next-token', 'lists/cursor-stable'],
  },
  'an Idempotency-Key replay creates a second task (the proxy drops the header)': {
    fault: {
      request(req) {
        delete req.headers['idempotency-key'];
      },
    },
    checks: byId('idempotency/replay', 'idempotency/concurrent'),
    expectFailed: ['idempotency/replay', 'idempotency/concurrent'],
  },
  "another account's key acts for the main account (the proxy swaps the key)": {
    fault: {}, // set in beforeAll, when the keys are known
    checks: byId('isolation/tasks'),
    expectFailed: ['isolation/tasks'],
  },
  'Idempotency-Keys are shared between modes (the proxy sends a keyed live creation with the test key)': {
    fault: {}, // set in beforeAll, when the keys are known
    checks: byId('idempotency/per-mode'),
    expectFailed: ['idempotency/per-mode'],
  },
  '401 without WWW-Authenticate (a shape rule)': {
    fault: {
      response(_req, res) {
        if (res.status === 401) delete res.headers['www-authenticate'];
      },
    },
    only: 'auth/no-key/listTasks',
    expectFailed: ['shape/listTasks/401/www-authenticate'],
  },
  'created_at is a number, not a string (a shape rule)': {
    fault: {
      response(req, res) {
        if (req.method !== 'GET' || !/^\/v1\/task\/[0-9a-f]{24}$/.test(apiPath(req.url)) || res.status !== 200) return;
        const task = json(res);
        task.created_at = Date.parse(task.created_at);
        setJson(res, task);
      },
    },
    checks: byId('task-states/create-pending'),
    expectFailed: ['shape/getTask/200/body-schema'],
  },
  'the completion callback has no task_id (a shape rule of callbacks)': {
    fault: {
      callback(body) {
        delete body.task_id;
      },
    },
    checks: byId('callbacks/task-completed'),
    expectFailed: ['shape/notifyTaskCompleted/callback/callback-body'],
  },
  // Issue 22: each rule of what clients in the wild send, broken as servers broke it before.
  'a property sent as null is refused (400), not read as left out (rule 1)': {
    fault: {
      response(req, res) {
        if (!req.headers['content-type']?.includes('json') || req.body.length === 0) return;
        const body = JSON.parse(req.body.toString('utf8'));
        const nulled =
          body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).find((k) => body[k] === null) : undefined;
        if (nulled) Object.assign(res, refusal(`body.${nulled} must be string`));
      },
    },
    only: 'generated/null-as-absent/createCategorizationTask',
    expectFailed: ['generated/null-as-absent/createCategorizationTask'],
  },
  'a task id that is not 24 hex characters is 400 (the old path pattern; rule 3)': {
    fault: {
      response(req, res) {
        const m = /^\/v1\/task\/([^/]+)(\/.*)?$/.exec(apiPath(req.url));
        if (m && !/^[0-9a-f]{24}$/.test(m[1]!) && !isCreation(req))
          Object.assign(res, refusal('path.taskId must match pattern "^[0-9a-f]{24}$"'));
      },
    },
    only: 'not-found/any-form/getTask',
    expectFailed: ['not-found/any-form/getTask'],
  },
  'created_after and created_before are ignored (rule 4)': {
    fault: {
      request(req) {
        if (isList(req)) for (const name of ['created_after', 'created_before']) req.url.searchParams.delete(name);
      },
    },
    checks: byId('lists/created-after-before'),
    expectFailed: ['lists/created-after-before'],
  },
  'include_attachment_url gives text attachments an attachment_url (rule 4)': {
    fault: {
      response(req, res) {
        if (!isList(req) || res.status !== 200 || !req.url.searchParams.has('include_attachment_url')) return;
        const body = json(res);
        for (const task of body.docs) if (typeof task.params?.attachment === 'string') task.attachment_url = task.params.attachment;
        setJson(res, body);
      },
    },
    checks: byId('lists/include-attachment-url'),
    expectFailed: ['lists/include-attachment-url'],
  },
  'limited_response is ignored (rule 4)': {
    fault: {
      request(req) {
        if (isList(req)) req.url.searchParams.delete('limited_response');
      },
    },
    checks: byId('lists/limited-response'),
    expectFailed: ['lists/limited-response'],
  },
  'unknown query parameters are ignored (rule 4)': {
    fault: {
      request(req) {
        const generation = req.url.pathname.startsWith('/legacy/') ? 'legacy' : 'current';
        const op = loadContract(generation).match(req.method, apiPath(req.url));
        const known = new Set(op?.parameters.filter((p) => p.in === 'query').map((p) => String(p.name)));
        for (const name of [...req.url.searchParams.keys()]) if (op && !known.has(name)) req.url.searchParams.delete(name);
      },
    },
    checks: byId('lists/unknown-parameter-400'),
    expectFailed: ['lists/unknown-parameter-400'],
  },
  'exclude_archived is ignored (rule 4)': {
    fault: {
      request(req) {
        if (req.method === 'GET' && apiPath(req.url) === '/v1/batches') req.url.searchParams.delete('exclude_archived');
      },
    },
    checks: byId('batches/archive'),
    expectFailed: ['batches/archive'],
  },
  'completed_after/before and audited_after/before are ignored on the batch list (issue 32, item 1)': {
    fault: {
      request(req) {
        if (req.method === 'GET' && apiPath(req.url) === '/v1/batches')
          for (const name of ['completed_after', 'completed_before', 'audited_after', 'audited_before']) req.url.searchParams.delete(name);
      },
    },
    checks: byId('batches/completed-audited-filters'),
    expectFailed: ['batches/completed-audited-filters'],
  },
  'archived is ignored on the project list (issue 32, item 2)': {
    fault: {
      request(req) {
        if (req.method === 'GET' && apiPath(req.url) === '/v1/projects') req.url.searchParams.delete('archived');
      },
    },
    checks: byId('projects/archive'),
    expectFailed: ['projects/archive'],
  },
  'a list filter takes one value only: the first key, up to its first comma (issue 32, item 3)': {
    fault: {
      request(req) {
        if (req.method !== 'GET' || !['/v1/tasks', '/v1/batches'].includes(apiPath(req.url))) return;
        for (const name of ['unique_id', 'status', 'type', 'project', 'batch', 'customer_review_status']) {
          const first = req.url.searchParams.get(name);
          if (first !== null) req.url.searchParams.set(name, first.split(',')[0]!);
        }
      },
    },
    checks: byId('lists/list-forms'),
    expectFailed: ['lists/list-forms'],
  },
  'a type alias is refused as a list filter (issue 32, item 4)': {
    fault: {
      response(req, res) {
        const types = req.url.searchParams.getAll('type').flatMap((t) => t.split(','));
        if (isList(req) && types.some((t) => t === 'segmentannoation' || t === 'documentranscription'))
          Object.assign(res, refusal('request/query/type/0 must be equal to one of the allowed values'));
      },
    },
    checks: byId('lists/type-alias'),
    expectFailed: ['lists/type-alias'],
  },
  "an unknown creation type answers 405 with the validator's text (issue 32, item 5)": {
    fault: {
      response(req, res) {
        const m = /^\/v1\/task\/([a-z]+)$/.exec(apiPath(req.url));
        if (req.method === 'POST' && m && res.status === 404)
          Object.assign(res, refusal(`v1.task.${m[1]} POST method not allowed`, 405), {
            headers: { 'content-type': 'application/json', allow: 'GET' },
          });
      },
    },
    checks: byId('creation/unknown-type-404'),
    expectFailed: ['creation/unknown-type-404'],
  },
  'a creation drops what it does not take, pre-labels included (issue 32, item 6)': {
    fault: {
      request(req) {
        if (!isCreation(req) || !req.headers['content-type']?.includes('json')) return;
        const body = JSON.parse(req.body.toString('utf8'));
        for (const name of ['priority', 'padding_x', 'objects_to_annotate', 'base_annotations', 'links', 'padding', 'hypothesis'])
          delete body[name];
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('creation/nothing-dropped'),
    expectFailed: ['creation/nothing-dropped'],
  },
  "a creation refuses a name nobody documents, a client's own extra (issue 32, item 6, with decision 2)": {
    fault: {
      response(req, res) {
        if (isCreation(req) && req.body.toString('utf8').includes('"x_client_trace"'))
          Object.assign(res, refusal('x_client_trace is not a parameter this operation takes'));
      },
    },
    checks: byId('creation/nothing-dropped'),
    expectFailed: ['creation/nothing-dropped'],
  },
  'params come back with their keys sorted as jsonb sorts them (issue 32, item 7)': {
    fault: {
      response(req, res) {
        if (req.method !== 'GET' || res.status !== 200 || !/^\/v1\/tasks?(\/|$)/.test(apiPath(req.url))) return;
        const sorted = (value: unknown): unknown =>
          Array.isArray(value)
            ? value.map(sorted)
            : value && typeof value === 'object'
              ? Object.fromEntries(
                  Object.entries(value)
                    .sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
                    .map(([k, v]) => [k, sorted(v)]),
                )
              : value;
        const body = json(res);
        for (const task of body.docs ?? [body]) if (task.params) task.params = sorted(task.params);
        setJson(res, body);
      },
    },
    checks: byId('tasks/param-order'),
    expectFailed: ['tasks/param-order'],
  },
  "a time filter in Python's str(datetime) form is refused (rule 5)": {
    fault: {
      response(req, res) {
        if (req.method !== 'GET') return;
        const spaced = [...req.url.searchParams].find(([name, value]) => /_(time|after|before)$/.test(name) && value.includes(' '));
        if (spaced) Object.assign(res, refusal(`query.${spaced[0]} must match pattern "^\\d{4}-\\d{2}-\\d{2}(T...)?$"`));
      },
    },
    checks: byId('lists/time-forms'),
    expectFailed: ['lists/time-forms'],
  },
  'a completed Enterprise batch refuses new tasks (rule 7)': {
    fault: {}, // set in beforeAll: it remembers the batches it saw completed
    checks: byId('batches/enterprise-lifecycle'),
    expectFailed: ['batches/enterprise-lifecycle'],
  },
  'a time outside the stored years is 500 (rule 8)': {
    fault: {
      response(_req, res) {
        if (res.status === 400 && /outside the times/.test(res.body.toString('utf8'))) Object.assign(res, refusal('internal error', 500));
      },
    },
    checks: byId('lists/time-bounds'),
    generations: ['current', 'legacy'],
    expectFailed: ['lists/time-bounds'],
  },
  'a time outside the stored years is 500, seen by the generated invalid input (rule 8)': {
    fault: {
      response(_req, res) {
        if (res.status === 400 && /outside the times/.test(res.body.toString('utf8'))) Object.assign(res, refusal('internal error', 500));
      },
    },
    only: 'listBatches',
    expectFailed: ['generated/invalid/listBatches'],
  },
  'year 0001 in a time filter is 500 (rule 8: generated valid input at the edges)': {
    fault: {
      response(req, res) {
        if (
          req.method === 'GET' &&
          [...req.url.searchParams].some(([name, value]) => /_(time|after|before)$/.test(name) && /^0\d{3}-/.test(value))
        )
          Object.assign(res, refusal('internal error', 500));
      },
    },
    only: 'generated/valid/listTasks',
    expectFailed: ['generated/valid/listTasks'],
  },
  'raw reserved characters in a query are refused: "must be url encoded" (rule 8)': {
    fault: {
      response(req, res) {
        if (req.method === 'GET' && /[+:]/.test(req.url.search)) Object.assign(res, refusal('query must be url encoded'));
      },
    },
    only: 'raw-reserved-query',
    expectFailed: ['lists/raw-reserved-query'],
  },
  'raw reserved characters refused, seen by the generated valid input (rule 8)': {
    fault: {
      response(req, res) {
        if (req.method === 'GET' && /[+:]/.test(req.url.search)) Object.assign(res, refusal('query must be url encoded'));
      },
    },
    only: 'generated/valid/listTasks',
    expectFailed: ['generated/valid/listTasks'],
  },
  'a submit stores another answer than the one sent (the proxy changes the category)': {
    fault: {
      request(req) {
        if (req.method !== 'POST' || !assignmentPath(req)?.endsWith('/submit')) return;
        const body = JSON.parse(req.body.toString('utf8'));
        if (body.response?.category === 'billing') body.response.category = 'sales';
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('workforce/claim-submit'),
    expectFailed: ['workforce/claim-submit'],
  },
  'an invalid answer is acknowledged (the proxy turns its 400 into 200 with the assignment)': {
    fault: {
      async response(req, res, upstream) {
        const m = /^([^/]+)\/submit$/.exec(assignmentPath(req) ?? '');
        if (req.method !== 'POST' || !m || res.status !== 400) return;
        const read = await upstream({
          ...req,
          method: 'GET',
          url: new URL(`/worker/v1/assignments/${m[1]}`, req.url),
          body: Buffer.alloc(0),
        });
        Object.assign(res, { status: 200, body: read.body, headers: read.headers });
      },
    },
    checks: byId('workforce/submit-invalid'),
    expectFailed: ['workforce/submit-invalid'],
  },
  'the lease token is not checked (the proxy puts the current one into every submit)': {
    fault: {
      request(req) {
        const m = /^([^/]+)\/submit$/.exec(assignmentPath(req) ?? '');
        const current = m && leases.get(m[1]!);
        if (req.method !== 'POST' || !current) return;
        const body = JSON.parse(req.body.toString('utf8'));
        body.lease_token = current;
        req.body = Buffer.from(JSON.stringify(body));
      },
      response(req, res) {
        if (req.method !== 'POST' || assignmentPath(req) !== 'next' || res.status !== 200) return;
        const body = json(res);
        leases.set(body.assignment_id, body.lease_token);
      },
    },
    checks: byId('workforce/stale-lease'),
    expectFailed: ['workforce/stale-lease'],
  },
  'no work answers 204 without Retry-After (the proxy drops the header)': {
    fault: {
      response(req, res) {
        if (assignmentPath(req) === 'next' && res.status === 204) delete res.headers['retry-after'];
      },
    },
    checks: byId('workforce/nothing-to-do'),
    expectFailed: ['workforce/nothing-to-do'],
  },
  'a submit replayed with its Idempotency-Key is refused (the proxy drops the header from submits)': {
    fault: {
      request(req) {
        if (req.method === 'POST' && assignmentPath(req)?.endsWith('/submit')) delete req.headers['idempotency-key'];
      },
    },
    checks: byId('workforce/submit-replay'),
    expectFailed: ['workforce/submit-replay'],
  },
  'a submit on a lapsed lease is acknowledged (the proxy turns its 409 lease_lost into 200)': {
    fault: {
      async response(req, res, upstream) {
        const m = /^([^/]+)\/submit$/.exec(assignmentPath(req) ?? '');
        if (req.method !== 'POST' || !m || res.status !== 409 || json(res).code !== 'lease_lost') return;
        const read = await upstream({
          ...req,
          method: 'GET',
          url: new URL(`/worker/v1/assignments/${m[1]}`, req.url),
          body: Buffer.alloc(0),
        });
        Object.assign(res, { status: 200, body: read.body, headers: read.headers });
      },
    },
    checks: byId('workforce/lease-expiry'),
    expectFailed: ['workforce/lease-expiry'],
  },
  'a review "fixed" keeps the reviewed answer (the proxy turns it into "accepted")': {
    fault: {
      request(req) {
        if (req.method !== 'POST' || !assignmentPath(req)?.endsWith('/review')) return;
        const body = JSON.parse(req.body.toString('utf8'));
        if (body.result !== 'fixed') return;
        body.result = 'accepted';
        delete body.response;
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('workforce/review-accept-fix'),
    expectFailed: ['workforce/review-accept-fix'],
  },
  "a rejection's feedback does not reach the redo (the proxy empties feedback_items)": {
    fault: {
      request(req) {
        if (req.method !== 'POST' || !assignmentPath(req)?.endsWith('/review')) return;
        const body = JSON.parse(req.body.toString('utf8'));
        if (body.result !== 'rejected') return;
        body.feedback_items = [];
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('workforce/review-reject-redo'),
    expectFailed: ['workforce/review-reject-redo'],
  },
  'a final review does not say so (the proxy drops under_review.final from the claim)': {
    fault: {
      response(req, res) {
        if (req.method !== 'POST' || req.url.pathname !== '/worker/v1/assignments/next' || res.status !== 200) return;
        const a = json(res);
        if (!a.under_review?.final) return;
        delete a.under_review.final;
        setJson(res, a);
      },
    },
    checks: byId('workforce/review-final'),
    expectFailed: ['workforce/review-final'],
  },
  "a reviewer's pick among several attempts is ignored (the proxy drops the decision's attempt)": {
    fault: {
      request(req) {
        if (req.method !== 'POST' || !assignmentPath(req)?.endsWith('/review')) return;
        const body = JSON.parse(req.body.toString('utf8'));
        delete body.attempt;
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('workforce/review-attempt'),
    expectFailed: ['workforce/review-attempt'],
  },
  "a customer's rejecting audit of a live task sends it to no redo (the proxy makes it an acceptance)": {
    fault: {
      request(req) {
        if (req.method !== 'POST' || !/^\/v1\/task\/[0-9a-f]{24}\/audit$/.test(apiPath(req.url))) return;
        const body = JSON.parse(req.body.toString('utf8'));
        if (body.accepted === false) body.accepted = true;
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('workforce/customer-audit-redo'),
    expectFailed: ['workforce/customer-audit-redo'],
  },
  'pausing a worker does nothing (the proxy turns the pause into a read of the worker)': {
    fault: {
      request(req) {
        const m = /^\/v1\/workforce\/workers\/([^/]+)\/pause$/.exec(req.url.pathname);
        if (req.method !== 'POST' || !m) return;
        req.method = 'GET';
        req.url = new URL(`/v1/workforce/workers/${m[1]}`, req.url);
        req.body = Buffer.alloc(0);
      },
    },
    checks: byId('workforce/own-workers'),
    expectFailed: ['workforce/own-workers'],
  },
  "the test key manages the live key's workers (the proxy sends its workforce requests with the live key)": {
    fault: {}, // set in beforeAll, when the keys are known
    checks: byId('workforce/modes'),
    expectFailed: ['workforce/modes'],
  },
  'a paused worker keeps the work they hold (the proxy turns the pause into a read of the worker)': {
    fault: {
      request(req) {
        const m = /^\/v1\/workforce\/workers\/([^/]+)\/pause$/.exec(req.url.pathname);
        if (req.method !== 'POST' || !m) return;
        req.method = 'GET';
        req.url = new URL(`/v1/workforce/workers/${m[1]}`, req.url);
        req.body = Buffer.alloc(0);
      },
    },
    checks: byId('workforce/pause-ends-held-work'),
    expectFailed: ['workforce/pause-ends-held-work'],
  },
  "a project's staffing is not stored (the proxy turns the PUT into a GET)": {
    fault: {
      request(req) {
        if (req.method !== 'PUT' || !/^\/v1\/projects\/[^/]+\/staffing$/.test(req.url.pathname)) return;
        req.method = 'GET';
        req.body = Buffer.alloc(0);
      },
    },
    checks: byId('workforce/staffing'),
    expectFailed: ['workforce/staffing'],
  },
  "a project's training requirement is not stored (the proxy sets training.required to 0)": {
    fault: {
      request(req) {
        if (req.method !== 'PUT' || !/^\/v1\/projects\/[^/]+\/quality_policy$/.test(req.url.pathname)) return;
        const body = JSON.parse(req.body.toString('utf8'));
        if (body.training) body.training.required = 0;
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('workforce/training-gate'),
    expectFailed: ['workforce/training-gate'],
  },
  "a worker's low evaluation accuracy pauses nothing (the proxy sets evaluation.pause_below to 0)": {
    fault: {
      request(req) {
        if (req.method !== 'PUT' || !/^\/v1\/projects\/[^/]+\/quality_policy$/.test(req.url.pathname)) return;
        const body = JSON.parse(req.body.toString('utf8'));
        if (body.evaluation) body.evaluation.pause_below = 0;
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('workforce/evaluation-pause'),
    expectFailed: ['workforce/evaluation-pause'],
  },
  'U+0000 in text is stored, not refused (rule 8; the proxy drops the character)': {
    fault: {
      request(req) {
        if (req.headers['content-type']?.includes('json')) req.body = Buffer.from(req.body.toString('utf8').replaceAll('\\u0000', ''));
      },
    },
    checks: byId('errors/unstorable-input-400'),
    expectFailed: ['errors/unstorable-input-400'],
  },
  'a calibration batch below the gate does not hold production (the proxy sets every gate to 0)': {
    fault: {
      request(req) {
        if (req.method !== 'PUT' || !/^\/v1\/projects\/[^/]+\/quality_policy$/.test(req.url.pathname)) return;
        const body = JSON.parse(req.body.toString('utf8'));
        body.calibration = { ...body.calibration, gate_score: 0 };
        req.body = Buffer.from(JSON.stringify(body));
      },
    },
    checks: byId('quality/calibration-gate'),
    expectFailed: ['quality/calibration-gate'],
  },
  'promoting a task again makes another evaluation task (the proxy answers a new id)': {
    fault: {
      response(req, res) {
        if (req.method !== 'POST' || !/^\/v1\/task\/[0-9a-f]{24}\/promote$/.test(apiPath(req.url)) || res.status !== 200) return;
        setJson(res, { ...json(res), id: randomBytes(12).toString('hex') });
      },
    },
    checks: byId('quality/promote'),
    expectFailed: ['quality/promote'],
  },
  // Issue 34: the access table. Each fault sends what the table refused again with the main key
  // (full scope) and answers that: a server that ignores scopes, roles, or whose account a list is.
  "a key's scopes are not enforced (issue 34)": {
    fault: {},
    checks: byId('identity/key-scopes'),
    expectFailed: ['identity/key-scopes'],
  },
  "a member's role is not enforced (issue 34)": {
    fault: {},
    checks: byId('identity/role-forbidden'),
    expectFailed: ['identity/role-forbidden'],
  },
  "another account sees the main account's members and keys (issue 34)": {
    fault: {},
    checks: byId('identity/no-leak'),
    expectFailed: ['identity/no-leak'],
  },
  'a storage connection is kept untested (the proxy answers 200 to a refused connection)': {
    fault: {
      response(req, res) {
        if (req.method !== 'POST' || apiPath(req.url) !== '/v1/storage/connections' || res.status !== 400) return;
        const asked = JSON.parse(req.body.toString('utf8'));
        res.status = 200;
        setJson(res, { connection_id: `stc_${randomBytes(12).toString('hex')}`, provider: 's3', bucket: asked.bucket, media: 'proxy' });
      },
    },
    checks: byId('storage/connection-tested'),
    expectFailed: ['storage/connection-tested'],
  },
  'a bucket attachment needs no connection (the proxy answers a refused one with a task)': {
    fault: {
      async response(req, res, upstream) {
        if (!isCreation(req) || res.status !== 400 || !json(res).error?.includes('no storage connection')) return;
        const body = JSON.parse(req.body.toString('utf8'));
        const made = await upstream({
          ...req,
          body: Buffer.from(JSON.stringify({ ...body, attachment: 'https://example.com/frame.png' })),
        });
        Object.assign(res, { status: made.status, headers: made.headers, body: made.body });
      },
    },
    checks: byId('storage/attachment-needs-connection'),
    expectFailed: ['storage/attachment-needs-connection'],
  },
  'an import from a bucket prefix drops its template (the proxy removes params)': {
    fault: {
      request(req) {
        if (req.method === 'POST' && apiPath(req.url) === '/v1/imports' && req.url.searchParams.get('source_url')?.endsWith('/'))
          req.url.searchParams.delete('params');
      },
    },
    checks: byId('storage/import-prefix'),
    expectFailed: ['storage/import-prefix'],
  },
  'an export is not written into its target bucket (the proxy removes target)': {
    fault: {
      request(req) {
        if (req.method !== 'POST' || apiPath(req.url) !== '/v1/exports' || req.body.length === 0) return;
        const { target: _target, ...rest } = JSON.parse(req.body.toString('utf8'));
        req.body = Buffer.from(JSON.stringify(rest));
      },
    },
    checks: byId('storage/export-to-bucket'),
    expectFailed: ['storage/export-to-bucket'],
  },
  "a response file opens with another account's key (the proxy reads it with the main key)": {
    fault: {},
    checks: byId('result-files/video-links'),
    expectFailed: ['result-files/video-links'],
  },
  'a changed response file link still opens (the proxy restores its expiry)': {
    fault: {},
    checks: byId('result-files/video-links'),
    expectFailed: ['result-files/video-links'],
  },
  'the callback carries the tracks, not the link (the proxy puts them in)': {
    fault: {
      callback(body) {
        if (body?.response?.annotations?.url) body.response = { annotations: [], events: [] };
      },
    },
    checks: byId('result-files/callback-link'),
    expectFailed: ['result-files/callback-link'],
  },
  'logging in wants an API key, as if it were no public operation (issue 34)': {
    fault: {
      response(req, res) {
        if (req.method !== 'POST' || apiPath(req.url) !== '/v1/session' || req.headers.authorization) return;
        Object.assign(res, refusal('A valid API key is required.', 401));
        res.headers['www-authenticate'] = 'Basic realm="humantask"';
      },
    },
    only: 'auth/no-key/loginMember',
    expectFailed: ['auth/no-key/loginMember'],
  },
  'a session cookie the server never handed out is taken (the proxy sends it with the main key; issue 34)': {
    fault: {},
    only: 'auth/no-key/listMembers',
    expectFailed: ['auth/no-key/listMembers'],
  },
};

describe('the conformance suite reports planted faults', () => {
  let server: TestServer;
  let other: AccountSecrets;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let workerToken: string;
  let buckets: TestBucketServer;

  beforeAll(async () => {
    // The storage checks' bucket: an S3-protocol server on loopback, which the suite and the server both reach.
    buckets = await startBucketServer(['conformance']);
    // A short lease: workforce/lease-expiry waits one out.
    server = await startTestServer('pglite', {
      DELIVERY_POLL_MS: '20',
      ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
      WORK_LEASE_SECONDS: '6',
    });
    other = await createAccount(server.uow, 'faults-other', new Date());
    workerToken = (await createWorker(server)).token;
    proxy = await startProxy(server.url);
    const swap = cases["another account's key acts for the main account (the proxy swaps the key)"]!;
    const otherAuth = `Basic ${Buffer.from(`${other.test_key}:`).toString('base64')}`;
    const mainAuth = `Basic ${Buffer.from(`${server.dev.test_key}:`).toString('base64')}`;
    swap.fault = {
      request(req) {
        if (req.headers.authorization === otherAuth) req.headers.authorization = mainAuth;
      },
    };
    const isResultFile = (req: ProxiedRequest) => req.method === 'GET' && /^\/v1\/task\/[^/]+\/files\//.test(apiPath(req.url));
    cases["a response file opens with another account's key (the proxy reads it with the main key)"]!.fault = {
      request(req) {
        if (isResultFile(req) && req.headers.authorization === otherAuth) req.headers.authorization = mainAuth;
      },
    };
    // Each link read is remembered: one read again with another expiry is sent with the one first seen.
    const expiries = new Map<string, string>();
    cases['a changed response file link still opens (the proxy restores its expiry)']!.fault = {
      request(req) {
        if (!isResultFile(req)) return;
        const key = `${req.url.pathname}?${req.url.searchParams.get('signature')}`;
        const first = expiries.get(key);
        if (first) req.url.searchParams.set('expires', first);
        else expiries.set(key, req.url.searchParams.get('expires') ?? '');
      },
    };
    // Issue 34: what the access table refused, sent again as the main key (every scope).
    const asMain = (codes: string[]) => ({
      async response(req: ProxiedRequest, res: ProxiedResponse, upstream: (r: ProxiedRequest) => Promise<ProxiedResponse>) {
        if (res.status !== 403 || !codes.includes(json(res).code)) return;
        const { cookie: _c, 'x-csrf-token': _t, ...headers } = req.headers;
        Object.assign(res, await upstream({ ...req, headers: { ...headers, authorization: mainAuth } }));
      },
    });
    cases["a key's scopes are not enforced (issue 34)"]!.fault = asMain(['scope_missing']);
    cases["a member's role is not enforced (issue 34)"]!.fault = asMain(['role_missing']);
    cases['a session cookie the server never handed out is taken (the proxy sends it with the main key; issue 34)']!.fault = {
      async response(req, res, upstream) {
        if (res.status !== 401 || !req.headers.cookie?.includes('humantask_session=')) return;
        const { cookie: _c, 'x-csrf-token': _t, ...headers } = req.headers;
        Object.assign(res, await upstream({ ...req, headers: { ...headers, authorization: mainAuth } }));
      },
    };
    cases["another account sees the main account's members and keys (issue 34)"]!.fault = {
      request(req) {
        if (req.headers.authorization === otherAuth && /^\/v1\/(members|api_keys)/.test(apiPath(req.url)))
          req.headers.authorization = mainAuth;
      },
    };
    const liveAuth = `Basic ${Buffer.from(`${server.dev.live_key}:`).toString('base64')}`;
    cases['Idempotency-Keys are shared between modes (the proxy sends a keyed live creation with the test key)']!.fault = {
      request(req) {
        if (isCreation(req) && req.headers['idempotency-key'] && req.headers.authorization === liveAuth)
          req.headers.authorization = mainAuth;
      },
    };
    cases["the test key manages the live key's workers (the proxy sends its workforce requests with the live key)"]!.fault = {
      request(req) {
        if (req.url.pathname.startsWith('/v1/workforce/') && req.headers.authorization === mainAuth) req.headers.authorization = liveAuth;
      },
    };
    // Batches once seen completed refuse tasks, as servers did before issue 22 (rule 7).
    const completed = new Set<string>();
    cases['a completed Enterprise batch refuses new tasks (rule 7)']!.fault = {
      response(req, res) {
        const read = /^\/v1\/batches\/([^/]+)(\/status)?$/.exec(apiPath(req.url));
        if (req.method === 'GET' && read && res.status === 200 && json(res).status === 'completed')
          completed.add(decodeURIComponent(read[1]!));
        if (isCreation(req) && res.status === 200 && completed.has(json(res).batch))
          Object.assign(res, refusal('batch is completed and takes no more tasks'));
      },
    };
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    await buckets?.close();
  });

  function run(c: Case): Promise<ConformanceRun> {
    const options: Options = {
      baseUrl: proxy.url,
      key: server.dev.test_key,
      liveKey: server.dev.live_key,
      otherKey: other.test_key,
      workerToken,
      generations: c.generations ?? ['current'],
      callbackHost: '127.0.0.1',
      seed: 7,
      profile: 'full',
      bucket: conformanceBucket(buckets),
      ...(c.only ? { only: c.only } : {}),
    };
    return runConformance(options, c.checks ? { checks: c.checks } : {});
  }

  const summary = (r: ConformanceRun) =>
    r.results
      .map((x) => `${x.outcome} ${x.check.id} [${x.generation}]${x.outcome === 'failed' ? `: ${x.message.split('\n')[0]}` : ''}`)
      .join('\n');

  it.each(Object.entries(cases))('%s', async (_name, c) => {
    proxy.fault = undefined;
    const clean = await run(c);
    expect(clean.passed, summary(clean)).toBe(true);
    // The checks themselves ran and passed (not only the shape results made from their answers).
    const ran = clean.results.filter((r) => !r.check.id.startsWith('shape/') && r.outcome === 'passed');
    expect(ran.length, summary(clean)).toBeGreaterThan(0);

    proxy.fault = c.fault;
    try {
      const broken = await run(c);
      expect(broken.passed, summary(broken)).toBe(false);
      const failed = broken.results.filter((r) => r.outcome === 'failed').map((r) => r.check.id);
      for (const id of c.expectFailed) {
        expect(
          failed.some((f) => (id.endsWith('/') ? f.startsWith(id) : f === id)),
          `${id} should fail:\n${summary(broken)}`,
        ).toBe(true);
      }
    } finally {
      proxy.fault = undefined;
    }
  });
});

describe('the conformance suite verifies callback signatures', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', { DELIVERY_POLL_MS: '20', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' });
  });
  afterAll(async () => {
    await server?.close();
  });

  // A server signing with another secret (or sending another auth key) looks, to the suite, like
  // being given other secrets than the account's.
  it.each([
    ['the right secrets', (s: AccountSecrets) => ({ callbackAuthKey: s.callback_auth_key, signingSecret: s.signing_secret }), true],
    [
      'another signing secret',
      (s: AccountSecrets) => ({
        callbackAuthKey: s.callback_auth_key,
        signingSecret: 'whsec_' + Buffer.from('another secret of 32 bytes......').toString('base64'),
      }),
      false,
    ],
    [
      'another callback auth key',
      (s: AccountSecrets) => ({ callbackAuthKey: `${s.callback_auth_key}x`, signingSecret: s.signing_secret }),
      false,
    ],
  ] as const)('callbacks/verified with %s', async (_what, secrets, passes) => {
    const run = await runConformance(
      {
        baseUrl: server.url,
        key: server.dev.test_key,
        generations: ['current'],
        callbackHost: '127.0.0.1',
        seed: 7,
        profile: 'full',
        ...secrets(server.dev),
      },
      { checks: behaviourChecks.filter((c) => c.id === 'callbacks/verified') },
    );
    const result = run.results.find((r) => r.check.id === 'callbacks/verified');
    expect(result?.outcome, JSON.stringify(result)).toBe(passes ? 'passed' : 'failed');
    if (!passes && result?.outcome === 'failed') expect(result.message).toContain('the callback does not verify');
  });
});
