// runConformance: runs the checks against a server, one after another, per generation. Every
// answer any check sees is shape-checked against the bundled contract and counted for coverage.
import { randomBytes } from 'node:crypto';
import { behaviourChecks } from './checks/index.ts';
import { credentialOf, documentedPairs, loadContract, type Contract, type ContractOperation } from './contract.ts';
import { coreChecks } from './core-checks.ts';
import { generatedChecks } from './generated-checks.ts';
import { makeMember, mockMember } from './members.ts';
import { startReceiver, type RunningReceiver } from './receiver.ts';
import { callbackProblems, describeExchange, shapeProblems, shapeRuleText, truncate, type ShapeProblem, type ShapeRule } from './shape.ts';
import { SuiteState } from './fixtures.ts';
import {
  CheckSkipped,
  ConformanceFailure,
  freshConnection,
  type Check,
  type CheckContext,
  type CheckResult,
  type Exchange,
  type Generation,
  type KeyName,
  type Options,
  type ProgressSink,
  type ReceivedCallback,
  type RequestOptions,
  type SuiteMember,
} from './types.ts';

/** One documented (operation, status) pair of a generation, and how often the run saw it. */
export interface CoverageEntry {
  generation: Generation;
  operationId: string;
  method: string;
  path: string;
  status: string;
  /** False for a status the run saw but the contract does not document (a shape failure too). */
  documented: boolean;
  count: number;
}

export interface Coverage {
  entries: CoverageEntry[];
  /** Documented pairs seen at least once / documented pairs (of the generations run). */
  exercised: number;
  documented: number;
}

export interface ConformanceRun {
  results: CheckResult[];
  coverage: Coverage;
  seed: number;
  passed: boolean;
  options: Options;
  startedAt: Date;
  ms: number;
  /** Requests sent to the server under test. */
  requests: number;
  /** The check runs planned (check × generation): the progress bar's total. */
  checkRuns: number;
  /** Tasks the run created, and with `cleanup`, what cancelling them gave. */
  created: { tasks: number; cancelled?: number; alreadyDone?: number; notCancelled?: string[] };
  /** The members the run invited and the API keys it made: removed (revoked) when it ended, always; what could not be. */
  access: { removed: number; notRemoved: string[] };
}

export interface RunExtras {
  /** The checks to run instead of the built-in ones (shape checks of every answer still apply). */
  checks?: Check[];
  /** Progress: a sink, or a function that gets plain lines. */
  out?: ProgressSink | ((line: string) => void);
}

export const defaultRuns = 6;
const requestTimeoutMs = 30_000;

/** The seed section each shape rule comes from. */
const shapeSeed: Record<ShapeRule, string> = {
  'status-documented': '7 Errors; 4 Endpoints',
  'content-type': '4 Endpoints (responses are JSON)',
  'body-schema': '2 Resources and their fields; 4 Endpoints',
  'error-body': '7 Errors (409 body {status_code, error}; decision: every error body)',
  'www-authenticate': '5 Authentication (missing or invalid key: 401)',
  'retry-after': '7 Errors (429: too many requests, safe to retry)',
  'header-schema': '4 Endpoints',
  'callback-body': '6 Events (the callback bodies)',
};

interface ShapeRecord {
  generation: Generation;
  operationId: string;
  /** The answer's status, or `callback` for the bodies of a webhook. */
  status: number | 'callback';
  seen: number;
  failures: Map<ShapeRule, { count: number; first: string; example: string; checkId: string }>;
}

function basicAuth(key: string): string {
  return `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
}

function sinkOf(out: RunExtras['out']): ProgressSink {
  if (!out) return {};
  if (typeof out === 'function') {
    return {
      log: (text) => out(text),
      result: (r, done, total) =>
        out(
          `[${done}/${total}] ${r.outcome.padEnd(7)} ${r.generation.padEnd(7)} ${r.check.id}${r.outcome === 'failed' ? `: ${r.message.split('\n')[0]}` : ''}`,
        ),
    };
  }
  return out;
}

function keyFor(options: Options, name: KeyName): string | null {
  switch (name) {
    case 'main':
      return options.key;
    case 'other':
      if (!options.otherKey) throw new Error('this check needs --other-key (a key of another account)');
      return options.otherKey;
    case 'live':
      if (!options.liveKey) throw new Error('this check needs --live-key (the live key of the account)');
      return options.liveKey;
    case 'settings':
      if (!options.settingsKey)
        throw new Error('this check needs --settings-key (the test key of an account set up to try the account settings)');
      return options.settingsKey;
    case 'none':
    case 'member':
      return null;
  }
}

/**
 * The credential of a request that names none: none when it brings its own Authorization or Cookie
 * header; the check's member's session for an operation that only a member's session may call;
 * the main key otherwise.
 */
function defaultCredential(contract: Contract, op: ContractOperation | undefined, headers: RequestOptions['headers']): KeyName {
  if (Object.keys(headers ?? {}).some((h) => /^(authorization|cookie)$/i.test(h))) return 'none';
  return op && credentialOf(contract, op) === 'session' ? 'member' : 'main';
}

/** How a request's header is shown in reports: credentials hidden. */
function shownHeader(name: string, value: string): string {
  const lower = name.toLowerCase();
  if (lower === 'authorization') return 'Basic (API key hidden)';
  if (lower === 'cookie' || lower === 'x-csrf-token') return '(session hidden)';
  return value;
}

/**
 * Operations whose success hands out a way into the account (a member, an API key), with where
 * the id is in the answer and what removes or revokes it: the run undoes what it made when it ends.
 */
const accessMade: Record<string, { id: (body: any) => unknown; path: (id: string) => string }> = {
  inviteMember: { id: (body) => body?.member?.member_id, path: (id) => `/v1/members/${encodeURIComponent(id)}` },
  createApiKey: { id: (body) => body?.key?.key_id, path: (id) => `/v1/api_keys/${encodeURIComponent(id)}` },
};

/**
 * Percent-encodes everything but RFC 3986's unreserved characters: a space is `%20` (not the
 * form encoding's `+`), and no reserved character goes out as itself (the contract's query
 * parameters do not allow reserved characters unless they say so).
 */
const strictEncode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The URL of a request: the generation's base, the path, the query (arrays as repeated keys). */
function requestUrl(options: Options, generation: Generation, path: string, query?: RequestOptions['query']): string {
  const base = options.baseUrl.replace(/\/+$/, '') + (generation === 'legacy' ? (options.legacyPrefix ?? '/legacy') : '');
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) pairs.push(`${strictEncode(k)}=${strictEncode(String(item))}`);
  }
  const qs = pairs.join('&');
  return `${base}${path}${qs ? (path.includes('?') ? '&' : '?') + qs : ''}`;
}

function missingNeed(check: Check, options: Options): string | undefined {
  for (const need of check.needs ?? []) {
    if (need === 'otherKey' && !options.otherKey) return 'needs --other-key (a key of a second account)';
    if (need === 'liveKey' && !options.liveKey) return 'needs --live-key (the live key of the account)';
    if (need === 'settingsKey' && !options.settingsKey)
      return 'needs --settings-key (the test key of an account set up to try the account settings)';
    if (need === 'workerToken' && !options.workerToken)
      return "needs --worker-token (a worker of the server's operator workforce or of the account's own)";
    if (need === 'callbackSecrets' && !(options.callbackAuthKey && options.signingSecret))
      return "needs --callback-auth-key and --signing-secret (the account's callback secrets)";
    if (need === 'callback' && !options.callbackHost) return 'needs --callback-host (an address of this machine the server can reach)';
    if (need === 'bucket' && !options.bucket) return 'needs --bucket and --bucket-key (a bucket the suite and the server can reach)';
  }
  return undefined;
}

/** Whether a check runs with --profile mock (Prism keeps no state: behaviour checks do not). */
const runsOnMock = (check: Check) => check.mock ?? check.kind !== 'behaviour';

function matchesOnly(check: Check, only: string | undefined): boolean {
  if (!only) return true;
  const needle = only.toLowerCase();
  return check.id.toLowerCase().includes(needle) || check.area.toLowerCase().includes(needle);
}

export async function runConformance(input: Options, extra: RunExtras = {}): Promise<ConformanceRun> {
  const options: Options = { runs: defaultRuns, ...input };
  const startedAt = new Date();
  const started = performance.now();
  const sink = sinkOf(extra.out);
  const contracts = new Map<Generation, Contract>(options.generations.map((g) => [g, loadContract(g)]));
  const state = new SuiteState();
  const checks = extra.checks ?? [...coreChecks(state), ...behaviourChecks, ...generatedChecks(state)];

  const plan: { check: Check; generation: Generation }[] = [];
  for (const generation of options.generations) {
    for (const check of checks) {
      if ((check.generations ?? ['current', 'legacy']).includes(generation) && matchesOnly(check, options.only))
        plan.push({ check, generation });
    }
  }

  // Unique texts of this run: another run against the same server must not collide with them.
  const runTag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  let counter = 0;
  let receiver: Promise<RunningReceiver> | undefined;
  const shapes = new Map<string, ShapeRecord>();
  const undocumented = new Map<string, CoverageEntry>();
  const seen = new Map<string, number>();
  let requests = 0;
  /** Tasks created by the run, by `generation|id`, with the key that created them. */
  const createdTasks = new Map<string, { generation: Generation; id: string; key: string | null }>();
  /** Members invited and API keys made by the run (with the main key), by the path that removes them. */
  const madeAccess = new Map<string, { generation: Generation; path: string }>();

  function record(check: Check, ex: Exchange, contract: Contract) {
    const op = ex.operationId ? contract.byId.get(ex.operationId) : undefined;
    const problems = shapeProblems(contract, op, ex);
    ex.shapeProblems.push(...problems.map((p) => `${p.rule}: ${p.message}`));
    const opName = ex.operationId ?? `${ex.method} ${ex.path} (no operation of the contract)`;
    tally(check, ex.generation, opName, ex.status, problems, () => describeExchange(ex));
    if (op) {
      const documentedKey = contract.response(op, ex.status)?.key;
      if (documentedKey) {
        const k = `${ex.generation}|${op.operationId}|${documentedKey}`;
        seen.set(k, (seen.get(k) ?? 0) + 1);
      } else {
        const k = `${ex.generation}|${op.operationId}|${ex.status}`;
        const e = undocumented.get(k) ?? {
          generation: ex.generation,
          operationId: op.operationId,
          method: op.method.toUpperCase(),
          path: op.path,
          status: String(ex.status),
          documented: false,
          count: 0,
        };
        e.count++;
        undocumented.set(k, e);
      }
    }
  }

  function tally(
    check: Check,
    generation: Generation,
    operationId: string,
    status: ShapeRecord['status'],
    problems: ShapeProblem[],
    example: () => string,
  ) {
    const key = `${generation}|${operationId}|${status}`;
    let rec = shapes.get(key);
    if (!rec) {
      rec = { generation, operationId, status, seen: 0, failures: new Map() };
      shapes.set(key, rec);
    }
    rec.seen++;
    for (const p of problems) {
      const f = rec.failures.get(p.rule);
      if (f) f.count++;
      else rec.failures.set(p.rule, { count: 1, first: p.message, example: example(), checkId: check.id });
    }
  }

  /** Shape-checks a callback the first time a check looks at it (against the check's generation's webhooks). */
  const seenCallbacks = new WeakSet<ReceivedCallback>();
  function recordCallback(check: Check, generation: Generation, cb: ReceivedCallback) {
    if (seenCallbacks.has(cb) || cb.method !== 'POST') return;
    seenCallbacks.add(cb);
    const { operationId, problems } = callbackProblems(contracts.get(generation)!, cb.text, cb.body);
    tally(
      check,
      generation,
      operationId,
      'callback',
      problems,
      () => `POST ${cb.path} (a callback, ${generation} generation)\nbody: ${truncate(cb.text, 600)}`,
    );
  }

  /** One request and its answer, as an Exchange (not yet shape-checked). */
  async function exchange(
    generation: Generation,
    upper: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    pathOnly: string,
    op: ContractOperation | undefined,
  ): Promise<Exchange> {
    let res: Response;
    requests++;
    try {
      res = await fetch(url, { method: upper, headers, body, signal: AbortSignal.timeout(requestTimeoutMs) });
    } catch (err) {
      throw new ConformanceFailure(
        `${upper} ${url} got no answer: ${(err as Error).message}${(err as { cause?: Error }).cause ? ` (${(err as { cause: Error }).cause.message})` : ''}`,
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return {
      generation,
      method: upper,
      path: pathOnly,
      ...(op ? { operationId: op.operationId, template: op.path } : {}),
      status: res.status,
      headers: res.headers,
      text,
      body: parsed,
      shapeProblems: [],
      url,
      ...(body !== undefined ? { requestText: body } : {}),
      requestHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, shownHeader(name, value)])),
    };
  }

  /** How many of a check's last requests a failure shows. */
  const requestsShown = 3;

  function contextFor(check: Check, generation: Generation, notes: string[], sent: Exchange[]): CheckContext {
    const contract = contracts.get(generation)!;
    /** The check's member: made on first use, or anew when a check asks (see CheckContext.member). */
    let member: Promise<SuiteMember> | undefined;
    const ctx: CheckContext = {
      generation,
      options,
      async call(method, path, req: RequestOptions = {}) {
        const upper = method.toUpperCase();
        const pathOnly = path.split('?')[0]!;
        const op = contract.match(upper, pathOnly);
        const credential = req.key ?? defaultCredential(contract, op, req.headers);
        const key = keyFor(options, credential);
        const headers: Record<string, string> = { ...freshConnection };
        if (key !== null) headers.authorization = basicAuth(key);
        if (credential === 'member') {
          const { session } = await ctx.member();
          headers.cookie = session.cookie;
          headers['x-csrf-token'] = session.csrfToken;
        }
        let body: string | undefined;
        if (req.json !== undefined) {
          headers['content-type'] = 'application/json';
          body = JSON.stringify(req.json);
        } else if (req.form !== undefined) {
          headers['content-type'] = 'application/x-www-form-urlencoded';
          body = req.form;
        } else if (req.raw !== undefined) {
          headers['content-type'] = req.raw.contentType;
          body = req.raw.body;
        }
        Object.assign(headers, req.headers);
        const url = requestUrl(options, generation, path, req.query);
        // A rate-limited request (429) is shape-checked, then sent again after its Retry-After
        // (at most 10 s, 5 times): a server's rate limit is no failure of the check that hit it.
        for (let attempt = 1; ; attempt++) {
          const ex = await exchange(generation, upper, url, headers, body, pathOnly, op);
          record(check, ex, contract);
          sent.push(ex);
          if (sent.length > requestsShown) sent.shift();
          const taskId = (ex.body as { task_id?: unknown } | undefined)?.task_id;
          if (upper === 'POST' && ex.status === 200 && op && /^\/v1\/task\/[a-z]+$/.test(op.path) && typeof taskId === 'string') {
            createdTasks.set(`${generation}|${taskId}`, { generation, id: taskId, key });
          }
          const made = op && ex.status === 200 && credential === 'main' ? accessMade[op.operationId] : undefined;
          const madeId = made?.id(ex.body);
          if (made && typeof madeId === 'string') madeAccess.set(made.path(madeId), { generation, path: made.path(madeId) });
          if (ex.status !== 429 || attempt === 5) return ex;
          const retryAfter = Number(ex.headers.get('retry-after'));
          await new Promise((r) =>
            setTimeout(r, Math.min(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 1000, 10_000)),
          );
        }
      },
      async receiver() {
        receiver ??= startReceiver(options.callbackHost || '127.0.0.1');
        const shared = await receiver;
        // Every callback a check looks at is shape-checked too.
        return {
          ...shared,
          received(label) {
            const list = shared.received(label);
            for (const cb of list) recordCallback(check, generation, cb);
            return list;
          },
        };
      },
      unique(prefix = 'conformance') {
        return `${prefix}-${runTag}-${++counter}`;
      },
      async until(what, probe, timeoutMs = 30_000) {
        const end = Date.now() + timeoutMs;
        let wait = 20;
        for (;;) {
          const value = await probe();
          if (value !== undefined && value !== false) return value as never;
          if (Date.now() > end) throw new ConformanceFailure(`timed out after ${timeoutMs} ms waiting for ${what}`);
          await new Promise((r) => setTimeout(r, wait));
          wait = Math.min(wait * 2, 250);
        }
      },
      note(text) {
        notes.push(text);
      },
      member({ fresh = false } = {}) {
        if (options.profile === 'mock') return Promise.resolve(mockMember());
        if (!member || fresh) {
          const made = makeMember(ctx);
          // A failure is not kept: the next request tries again (and fails with its own message).
          made.catch(() => {
            if (member === made) member = undefined;
          });
          member = made;
        }
        return member;
      },
    };
    return ctx;
  }

  sink.log?.(
    `humantask conformance: ${options.baseUrl}, generations ${options.generations.join(', ')}, profile ${options.profile}, seed ${options.seed} (repeat with --seed ${options.seed})`,
  );
  sink.log?.(
    options.cleanup
      ? `${plan.length} checks. --cleanup: the tasks this run creates are cancelled when it ends (projects, batches, training and evaluation tasks stay: the API deletes none of them; the members and API keys it makes are removed).`
      : `${plan.length} checks. Warning: the run creates tasks, projects, batches, training and evaluation tasks in the accounts of the keys given, and leaves them there; --cleanup cancels its tasks when it ends (the members and API keys it makes are removed in any case). Use a test account.`,
  );
  sink.start?.(plan.length);
  const results: CheckResult[] = [];
  try {
    for (const [i, { check, generation }] of plan.entries()) {
      let result: CheckResult;
      const skip =
        options.profile === 'mock' && !runsOnMock(check)
          ? 'behaviour check: not run with --profile mock (a mock keeps no state)'
          : missingNeed(check, options);
      if (skip) {
        result = { check, generation, outcome: 'skipped', ms: 0, notes: [], reason: skip };
      } else {
        const notes: string[] = [];
        const sent: Exchange[] = [];
        const t0 = performance.now();
        try {
          await check.run(contextFor(check, generation, notes, sent));
          result = { check, generation, outcome: 'passed', ms: Math.round(performance.now() - t0), notes };
        } catch (err) {
          const ms = Math.round(performance.now() - t0);
          if (err instanceof CheckSkipped) {
            result = { check, generation, outcome: 'skipped', ms: 0, notes, reason: err.reason };
          } else if (err instanceof ConformanceFailure) {
            result = {
              check,
              generation,
              outcome: 'failed',
              ms,
              notes,
              message: err.message,
              ...(err.details !== undefined ? { details: err.details } : {}),
              requests: sent.map(describeExchange),
            };
          } else {
            const e = err as Error;
            result = {
              check,
              generation,
              outcome: 'failed',
              ms,
              notes,
              message: `the check stopped with an error: ${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`,
              details: e?.stack,
              requests: sent.map(describeExchange),
            };
          }
        }
      }
      results.push(result);
      sink.result?.(result, i + 1, plan.length);
    }
  } finally {
    if (receiver) await (await receiver).close();
    sink.stop?.();
  }
  // A member or key the run made is a way into the account: none is left behind (a mock made none).
  const access = options.profile === 'mock' ? { removed: 0, notRemoved: [] } : await removeAccess(options, [...madeAccess.values()]);
  if (madeAccess.size > 0 && options.profile !== 'mock')
    sink.log?.(
      `the ${access.removed} members and API keys the run made were removed${access.notRemoved.length ? `; not removed: ${access.notRemoved.join(', ')}` : ''}`,
    );
  const created: ConformanceRun['created'] = { tasks: createdTasks.size };
  if (options.cleanup) {
    Object.assign(created, await cancelTasks(options, [...createdTasks.values()]));
    sink.log?.(
      `cleanup: ${created.cancelled} of ${created.tasks} tasks cancelled, ${created.alreadyDone} had already ended${created.notCancelled?.length ? `, ${created.notCancelled.length} could not be cancelled` : ''}`,
    );
  }

  // One Shape result per (generation, operation, status) seen; a failure per broken rule.
  for (const rec of shapes.values()) {
    const base = { area: 'Shape', kind: 'shape' as const, generations: [rec.generation], run: async () => {} };
    const callbacks = rec.status === 'callback';
    const what = callbacks ? 'callback(s)' : 'answer(s)';
    if (rec.failures.size === 0) {
      const check: Check = callbacks
        ? {
            ...base,
            id: `shape/${rec.operationId}/callback`,
            seed: shapeSeed['callback-body'],
            rule: `Every ${rec.operationId} callback body fits the contract.`,
          }
        : {
            ...base,
            id: `shape/${rec.operationId}/${rec.status}`,
            seed: '4 Endpoints; 7 Errors',
            rule: `Every answer of ${rec.operationId} with status ${rec.status} fits the contract.`,
          };
      results.push({ check, generation: rec.generation, outcome: 'passed', ms: 0, notes: [`${rec.seen} ${what} checked`] });
      continue;
    }
    for (const [rule, f] of rec.failures) {
      const check: Check = {
        ...base,
        id: `shape/${rec.operationId}/${rec.status}/${rule}`,
        seed: shapeSeed[rule],
        rule: shapeRuleText[rule],
      };
      results.push({
        check,
        generation: rec.generation,
        outcome: 'failed',
        ms: 0,
        notes: [],
        message: `${f.first}\n${f.count} of ${rec.seen} ${what} broke this rule; the first came to check ${f.checkId}:\n${f.example}`,
      });
    }
  }

  const entries: CoverageEntry[] = [];
  for (const generation of options.generations) {
    for (const pair of documentedPairs(contracts.get(generation)!)) {
      entries.push({ generation, ...pair, documented: true, count: seen.get(`${generation}|${pair.operationId}|${pair.status}`) ?? 0 });
    }
  }
  entries.push(...undocumented.values());
  const documented = entries.filter((e) => e.documented);
  return {
    results,
    coverage: { entries, exercised: documented.filter((e) => e.count > 0).length, documented: documented.length },
    seed: options.seed,
    passed: results.every((r) => r.outcome !== 'failed'),
    options,
    startedAt,
    ms: Math.round(performance.now() - started),
    requests,
    checkRuns: plan.length,
    created,
    access,
  };
}

/**
 * Removes the members a run invited and revokes the API keys it made (DELETE with the main key). One
 * that a check removed already answers 200 again (or 404 where the server forgets removed ones).
 */
async function removeAccess(options: Options, made: { generation: Generation; path: string }[]) {
  let removed = 0;
  const notRemoved: string[] = [];
  const queue = [...made];
  const worker = async () => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      try {
        const res = await fetch(requestUrl(options, item.generation, item.path), {
          method: 'DELETE',
          headers: { ...freshConnection, authorization: basicAuth(options.key) },
          signal: AbortSignal.timeout(requestTimeoutMs),
        });
        await res.arrayBuffer();
        if (res.ok || res.status === 404) removed++;
        else notRemoved.push(`${item.path}: ${res.status}`);
      } catch (err) {
        notRemoved.push(`${item.path}: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { removed, notRemoved };
}

/**
 * Cancels the tasks a run created, a few at a time, each with the key that created it. A task that
 * has already ended (completed, cancelled, errored) answers 409 or 400 (the older generation answers
 * a cancel of a completed task with 500): counted as such when the task, read again, is not pending.
 */
async function cancelTasks(options: Options, tasks: { generation: Generation; id: string; key: string | null }[]) {
  let cancelled = 0;
  let alreadyDone = 0;
  const notCancelled: string[] = [];
  const queue = [...tasks];
  /** Whether the task is no longer pending (read with the key that created it). */
  const ended = async (task: (typeof tasks)[number]) => {
    const res = await fetch(requestUrl(options, task.generation, `/v1/task/${encodeURIComponent(task.id)}`), {
      headers: { ...freshConnection, ...(task.key ? { authorization: basicAuth(task.key) } : {}) },
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    const body = (await res.json().catch(() => null)) as { status?: unknown } | null;
    return res.ok && typeof body?.status === 'string' && body.status !== 'pending';
  };
  const worker = async () => {
    for (let task = queue.shift(); task; task = queue.shift()) {
      const url = requestUrl(options, task.generation, `/v1/task/${encodeURIComponent(task.id)}/cancel`);
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { ...freshConnection, ...(task.key ? { authorization: basicAuth(task.key) } : {}) },
          signal: AbortSignal.timeout(requestTimeoutMs),
        });
        await res.arrayBuffer();
        if (res.ok) cancelled++;
        else if (res.status === 409 || res.status === 400 || (await ended(task))) alreadyDone++;
        else notCancelled.push(`${task.id}: ${res.status}`);
      } catch (err) {
        notCancelled.push(`${task.id}: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { cancelled, alreadyDone, notCancelled };
}
