// What the suite's own checks need on the server under test: a task, a project, a batch, a training
// and an evaluation task to put in templated paths, made from the contract's own examples (with
// unique names, and callbacks to the suite's receiver so that nothing leaves the machine).
import { randomBytes } from 'node:crypto';
import type { Contract, ContractOperation, Json } from './contract.ts';
import { invite, logIn, realIdentityFields } from './members.ts';
import { describeExchange } from './shape.ts';
import { ConformanceFailure, type CheckContext, type Exchange, type Generation, type KeyName } from './types.ts';

/** The named examples of an operation's request body for one media type: [name, value]. */
export function requestExamples(contract: Contract, op: ContractOperation, media = 'application/json'): [string, unknown][] {
  const content = contract.requestBody(op)?.content?.[media];
  if (!content) return [];
  const named = Object.entries<Json>(content.examples ?? {}).map(([name, ex]) => [name, contract.resolve(ex).value] as [string, unknown]);
  if (named.length) return named;
  return content.example !== undefined ? [['example', content.example]] : [];
}

/** A form body as the older generation reads it: arrays as repeated keys, objects as `key[sub]`. */
export function formEncode(value: Record<string, unknown>): string {
  const params = new URLSearchParams();
  const add = (key: string, v: unknown) => {
    if (v === undefined) return;
    if (Array.isArray(v)) {
      if (v.every((x) => x === null || typeof x !== 'object'))
        v.forEach((x) => {
          params.append(key, String(x));
        });
      else
        v.forEach((x, i) => {
          add(`${key}[${i}]`, x);
        });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, sub] of Object.entries(v)) add(`${key}[${k}]`, sub);
    } else {
      params.append(key, v === null ? '' : String(v));
    }
  };
  for (const [k, v] of Object.entries(value)) add(k, v);
  return params.toString();
}

/** Whether a form body can carry the value without losing what it is (flat values only). */
export function formSafe(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  const entries = Object.values(value as object);
  return entries.every(
    (v) =>
      v === null ||
      typeof v !== 'object' ||
      (Array.isArray(v)
        ? v.every((x) => x !== null && typeof x !== 'object' && x !== '') && v.length > 0
        : Object.values(v).every((x) => typeof x === 'string' && x !== '')),
  );
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A parameter's value in the contract's example. */
const exampleOf = (param: Json): string => String(param.example ?? param.schema?.examples?.[0] ?? 'x');

/** A 24-hex id that no server has handed out (random, so practically never taken). */
export const unknownHexId = () => randomBytes(12).toString('hex');

const isCreation = (op: ContractOperation) => op.method === 'post' && /^\/v1\/task\/[a-z]+$/.test(op.path);
const isTraining = (op: ContractOperation) => op.method === 'post' && /^\/v1\/(training|evaluation)_tasks\/[a-z]+$/.test(op.path);
export const operationKind = (op: ContractOperation) =>
  isCreation(op)
    ? 'task-creation'
    : isTraining(op)
      ? 'training-creation'
      : op.operationId === 'createProject'
        ? 'project-creation'
        : op.operationId === 'createBatch'
          ? 'batch-creation'
          : 'other';

/** An API key's expiry at least a day ahead: a date the example or the generator put in the past is moved 30 days ahead of now. */
function futureExpiry(value: unknown): unknown {
  if (typeof value !== 'string' || Date.parse(value) > Date.now() + 86_400_000) return value;
  return new Date(Date.now() + 30 * 86_400_000).toISOString();
}

/**
 * A request body made safe to send: a fresh unique_id, callbacks to the receiver, fresh names for
 * new projects and batches, fresh e-mail addresses for new workers and members. References to
 * projects and batches are left to the caller. What an Identity request names that only the server
 * hands out (a link's token, a member's credentials, a TOTP code) is made real (members.ts), except
 * with `--profile mock`, which keeps nothing to make real.
 */
export async function personalize(ctx: CheckContext, op: ContractOperation, body: unknown): Promise<unknown> {
  if (!isRecord(body)) {
    if (op.operationId === 'setTaskUniqueId') return { unique_id: ctx.unique('uid') };
    return body;
  }
  const out: Record<string, unknown> = { ...body };
  const kind = operationKind(op);
  if ('unique_id' in out || op.operationId === 'setTaskUniqueId') out.unique_id = ctx.unique('uid');
  if (kind === 'task-creation' && typeof out.callback_url === 'string') out.callback_url = (await ctx.receiver()).url('suite');
  if (kind === 'batch-creation' && 'callback' in out) out.callback = (await ctx.receiver()).url('suite-batch');
  if (kind === 'project-creation') out.name = ctx.unique('project');
  if (kind === 'batch-creation') out.name = ctx.unique('batch');
  // An e-mail address is one worker's login, or one member's: each new one gets one of its own.
  if (op.operationId === 'createWorker' && typeof out.email === 'string') out.email = `${ctx.unique('worker')}@example.com`;
  if (op.operationId === 'inviteMember' && typeof out.email === 'string') out.email = `${ctx.unique('member')}@example.com`;
  if (op.operationId === 'createApiKey' && 'expires_at' in out) out.expires_at = futureExpiry(out.expires_at);
  return ctx.options.profile === 'mock' ? out : realIdentityFields(ctx, op.operationId, out);
}

/** A staffing body with the example's worker ids replaced by `workerId` (a worker of the run), each list without repeats. */
export function staffedBy(body: unknown, workerId: string): unknown {
  if (!isRecord(body)) return body;
  const out: Record<string, unknown> = { ...body };
  for (const list of ['attempt', 'review'])
    if (Array.isArray(out[list]))
      out[list] = [...new Set((out[list] as unknown[]).map((x) => (typeof x === 'string' && x.startsWith('wkr_') ? workerId : x)))];
  return out;
}

/** Throws with the exchange shown unless it answered one of `statuses`. */
function expectAnswer(ex: Exchange, statuses: number[], why: string): void {
  if (!statuses.includes(ex.status)) {
    throw new FixtureError(`${why}: expected ${statuses.join(' or ')}, got ${ex.status}\n${describeExchange(ex)}`);
  }
}

/** The server refused what the suite needs (the contract's own example): a failure of the check that needed it. */
class FixtureError extends ConformanceFailure {
  override name = 'FixtureError';
}

const freshTaskOperations = new Set(['addTaskTags', 'putTaskTags', 'auditTask']);
/** Operations that end the worker, member or API key they act on: each gets one of its own. */
const freshWorkerOperations = new Set(['removeWorker']);
const freshMemberOperations = new Set(['removeMember']);
const freshKeyOperations = new Set(['deleteApiKey']);

/** Objects made once per generation and run, and fresh tasks on demand. */
export class Fixtures {
  private readonly cache = new Map<string, Promise<string>>();

  constructor(
    readonly contract: Contract,
    readonly generation: Generation,
  ) {}

  private once(key: string, make: () => Promise<string>): Promise<string> {
    let p = this.cache.get(key);
    if (!p) {
      p = make();
      // A failure is not cached: the next check tries again (and fails with its own message).
      p.catch(() => this.cache.delete(key));
      this.cache.set(key, p);
    }
    return p;
  }

  private op(id: string): ContractOperation {
    const op = this.contract.byId.get(id);
    if (!op) throw new FixtureError(`the ${this.generation} contract has no operation ${id}`);
    return op;
  }

  /** A new task (categorization of a text: nothing to fetch), through the contract's own example. */
  async freshTask(ctx: CheckContext): Promise<string> {
    const op = this.op('createCategorizationTask');
    const [, example] = requestExamples(this.contract, op).find(([, v]) => isRecord(v) && v.attachment_type === 'text' && !v.project) ?? [];
    const body = await personalize(ctx, op, { ...(example as Json), unique_id: 'x' });
    const ex = await ctx.call('POST', op.path, { json: body });
    expectAnswer(ex, [200], "creating a task for the check (the contract's categorization example)");
    return String(ex.body?.task_id);
  }

  sharedTask(ctx: CheckContext): Promise<string> {
    return this.once('task', () => this.freshTask(ctx));
  }

  /** A test-mode task, completed and accepted by the customer's audit: what promotion takes (made once). */
  auditedTask(ctx: CheckContext): Promise<string> {
    return this.once('audited-task', async () => {
      const taskId = await this.freshTask(ctx);
      const audit = this.op('auditTask');
      const ex = await ctx.until(`task ${taskId} to be completed and audited`, async () => {
        const answer = await ctx.call('POST', audit.path.replace('{taskId}', taskId), { json: { accepted: true } });
        return answer.status === 200 ? answer : undefined;
      });
      expectAnswer(ex, [200], 'auditing a task for the check (accepted)');
      return taskId;
    });
  }

  /** A project made from the createProject example named `exampleName` (default: the first one), with `key`'s mode. */
  projectFrom(ctx: CheckContext, exampleName?: string, key: KeyName = 'main'): Promise<string> {
    return this.once(`project:${exampleName ?? ''}:${key}`, async () => {
      const op = this.op('createProject');
      const examples = requestExamples(this.contract, op);
      const [, example] = (exampleName ? examples.find(([n]) => n === exampleName) : examples[0]) ?? [];
      const body = (await personalize(ctx, op, example)) as Json;
      const ex = await ctx.call('POST', op.path, { json: body, key });
      expectAnswer(ex, [200], "creating a project for the check (the contract's createProject example)");
      return String(body.name);
    });
  }

  /** The createProject example (by its name inside the value) that a batch example's project refers to. */
  projectExampleNamed(projectName: string): string | undefined {
    const op = this.contract.byId.get('createProject');
    if (!op) return undefined;
    return requestExamples(this.contract, op).find(([, v]) => isRecord(v) && v.name === projectName)?.[0];
  }

  project(ctx: CheckContext): Promise<string> {
    return this.projectFrom(ctx);
  }

  batch(ctx: CheckContext): Promise<string> {
    return this.once('batch', async () => {
      const op = this.op('createBatch');
      const [, example] =
        requestExamples(this.contract, op).find(([, v]) => isRecord(v) && !v.calibration_batch && !v.self_label_batch) ?? [];
      const body = (await personalize(ctx, op, example)) as Json;
      body.project = await this.project(ctx);
      const ex = await ctx.call('POST', op.path, { json: body });
      expectAnswer(ex, [200], "creating a batch for the check (the contract's createBatch example)");
      return String(body.name);
    });
  }

  private trainingLike(ctx: CheckContext, kind: 'training' | 'evaluation'): Promise<string> {
    return this.once(kind, async () => {
      const op = this.contract.operations.find((o) => o.method === 'post' && o.path.startsWith(`/v1/${kind}_tasks/`));
      if (!op) throw new FixtureError(`the ${this.generation} contract has no ${kind} task creation`);
      const [, example] = requestExamples(this.contract, op)[0] ?? [];
      const ex = await ctx.call('POST', op.path, { json: example });
      expectAnswer(ex, [200], `creating a ${kind} task for the check (the contract's ${op.operationId} example)`);
      return String(ex.body?.id);
    });
  }

  /** An import of the createImport JSON Lines example (made once). */
  importOf(ctx: CheckContext): Promise<string> {
    return this.once('import', async () => {
      const op = this.op('createImport');
      const [, example] = requestExamples(this.contract, op, 'application/x-ndjson')[0] ?? [];
      const ex = await ctx.call('POST', op.path, { raw: { contentType: 'application/x-ndjson', body: String(example ?? '') } });
      expectAnswer(ex, [200], "creating an import for the check (the contract's createImport example)");
      return String(ex.body?.import_id);
    });
  }

  /** An export of every task as JSON Lines (made once). */
  exportOf(ctx: CheckContext): Promise<string> {
    return this.once('export', async () => {
      const ex = await ctx.call('POST', this.op('createExport').path, { json: { format: 'jsonl' } });
      expectAnswer(ex, [200], 'creating an export for the check (JSON Lines of every task)');
      return String(ex.body?.export_id);
    });
  }

  trainingTask(ctx: CheckContext): Promise<string> {
    return this.trainingLike(ctx, 'training');
  }

  evaluationTask(ctx: CheckContext): Promise<string> {
    return this.trainingLike(ctx, 'evaluation');
  }

  /**
   * A new worker of the account's own workforce (roles labeler and reviewer, so that staffing may
   * list it both ways), from the contract's createWorker example that has both roles.
   */
  async freshWorker(ctx: CheckContext): Promise<string> {
    const op = this.op('createWorker');
    const examples = requestExamples(this.contract, op);
    const [, example] =
      examples.find(([, v]) => isRecord(v) && Array.isArray(v.roles) && v.roles.includes('reviewer') && v.roles.includes('labeler')) ??
      examples[0] ??
      [];
    const body = await personalize(ctx, op, example);
    const ex = await ctx.call('POST', op.path, { json: body });
    expectAnswer(ex, [200], "creating a worker for the check (the contract's createWorker example)");
    return String(ex.body?.worker_id);
  }

  worker(ctx: CheckContext): Promise<string> {
    return this.once('worker', () => this.freshWorker(ctx));
  }

  /** A member invited with the main key (still `invited`: it can be invited again, and reach no data). */
  member(ctx: CheckContext): Promise<string> {
    return this.once('member', async () => (await invite(ctx)).memberId);
  }

  /** A new test-mode API key that may read tasks, made with the main key. */
  async freshApiKey(ctx: CheckContext): Promise<string> {
    const ex = await ctx.call('POST', this.op('createApiKey').path, {
      key: 'main',
      json: { name: ctx.unique('key'), mode: 'test', scopes: ['tasks:read'] },
    });
    expectAnswer(ex, [200], 'creating an API key for the check (scope tasks:read)');
    return String(ex.body?.key?.key_id);
  }

  apiKey(ctx: CheckContext): Promise<string> {
    return this.once('api-key', () => this.freshApiKey(ctx));
  }

  /**
   * The concrete path of an operation: each path parameter filled with an object of this run.
   * `fresh`: a new task rather than the shared one (by default for the operations whose outcome
   * depends on what earlier requests did to the task: tags add up to at most 5, a review needs a
   * task not under review).
   */
  async pathFor(ctx: CheckContext, op: ContractOperation, fresh = freshTaskOperations.has(op.operationId)): Promise<string> {
    const mock = ctx.options.profile === 'mock';
    let path = op.path;
    for (const param of op.parameters.filter((p) => p.in === 'path')) {
      let value: string;
      switch (param.name) {
        case 'taskId':
        case 'task_id':
          if (op.operationId === 'promoteTask') value = await this.auditedTask(ctx);
          else value = fresh ? await this.freshTask(ctx) : await this.sharedTask(ctx);
          break;
        case 'projectName':
          value = await this.project(ctx);
          break;
        case 'batchName':
          value = await this.batch(ctx);
          break;
        case 'trainingTaskId':
          value = await this.trainingTask(ctx);
          break;
        case 'evaluationTaskId':
          value = await this.evaluationTask(ctx);
          break;
        case 'importId':
          value = await this.importOf(ctx);
          break;
        case 'exportId':
          value = await this.exportOf(ctx);
          break;
        case 'workerId':
          value = freshWorkerOperations.has(op.operationId) ? await this.freshWorker(ctx) : await this.worker(ctx);
          break;
        // A mock keeps no members, keys or sessions: their paths take the contract's examples.
        case 'memberId':
          if (mock) value = exampleOf(param);
          else value = freshMemberOperations.has(op.operationId) ? (await invite(ctx)).memberId : await this.member(ctx);
          break;
        case 'keyId':
          if (mock) value = exampleOf(param);
          else value = freshKeyOperations.has(op.operationId) ? await this.freshApiKey(ctx) : await this.apiKey(ctx);
          break;
        case 'sessionId':
          // Another session of the check's member: the one its requests carry stays.
          value = mock ? exampleOf(param) : (await logIn(ctx, await ctx.member())).sessionId;
          break;
        default:
          value = exampleOf(param);
          ctx.note(`path parameter ${param.name}: no object of this run fits it; the contract's example ${value} was used`);
      }
      path = path.replace(`{${param.name}}`, encodeURIComponent(value));
    }
    return path;
  }

  /** The concrete path with every parameter naming nothing that exists. */
  unknownPathFor(ctx: CheckContext, op: ContractOperation): string {
    let path = op.path;
    for (const param of op.parameters.filter((p) => p.in === 'path')) {
      const hex = /0-9a-f/.test(String(param.schema?.pattern ?? '')) || /Id$|_id$/.test(param.name);
      path = path.replace(`{${param.name}}`, encodeURIComponent(hex ? unknownHexId() : ctx.unique('unknown')));
    }
    return path;
  }

  /** The concrete path filled with the contract's own parameter examples (for requests that stop at authentication). */
  examplePathFor(op: ContractOperation): string {
    let path = op.path;
    for (const param of op.parameters.filter((p) => p.in === 'path'))
      path = path.replace(`{${param.name}}`, encodeURIComponent(exampleOf(param)));
    return path;
  }
}

/**
 * Operations whose success changes the account's log-in rules for every member (with TOTP
 * required, a member without it may only set it up): where the rules are read, and their fields.
 */
const accountRules: Record<string, { path: string; fields: string[] }> = {
  updateAccountSecurity: { path: '/v1/account/security', fields: ['require_totp', 'password_login'] },
};

/**
 * Runs a check of `operationId` and, for an operation that changes the account's log-in rules,
 * puts them back as the check found them: the later checks, and the account's people, meet the
 * rules they had.
 */
export async function keepingAccountRules(ctx: CheckContext, operationId: string, run: () => Promise<void>): Promise<void> {
  const rules = accountRules[operationId];
  if (!rules || ctx.options.profile === 'mock') return run();
  const before = await ctx.call('GET', rules.path, { key: 'main' });
  expectAnswer(before, [200], "reading the account's log-in rules before the check changes them");
  try {
    await run();
  } finally {
    const json = Object.fromEntries(rules.fields.map((f) => [f, before.body?.[f]]));
    const restored = await ctx.call('PATCH', rules.path, { key: 'main', json });
    expectAnswer(restored, [200], "putting the account's log-in rules back as the check found them");
  }
}

/** One Fixtures per generation of a run. */
export class SuiteState {
  private readonly byGeneration = new Map<Generation, Fixtures>();

  fixtures(contract: Contract): Fixtures {
    const generation = contract.generation;
    if (generation === 'workforce') throw new Error('the suite keeps no fixtures for the worker API');
    let f = this.byGeneration.get(generation);
    if (!f) {
      f = new Fixtures(contract, generation);
      this.byGeneration.set(generation, f);
    }
    return f;
  }
}
