// Generated input (issue #7, item 4): for every operation, requests made by fast-check from the
// contract's schemas.
//
// Valid requests vary the contract's own request examples: each independent field is kept, dropped
// or replaced by a value generated from its schema, unknown extra keys are added (requests are
// open), query parameters are generated from theirs. Fields that other fields or the server's state
// refer to (labels that other fields name, attachments and their type, project and batch names,
// unique ids, callback addresses, ...) keep the example's value: a schema cannot say how they
// relate, and a request that breaks such a rule is not valid. Every candidate must pass the
// contract's validator. A valid request must get 200 (or a documented business answer), never
// another 4xx, never 5xx.
//
// Invalid requests break one thing of a valid one (a field missing, of the wrong type, out of its
// enum, too long, empty, null, out of range, in a bad format; an extra key on a closed object; a
// query, path or header parameter out of its schema), and only what the contract's validator
// rejects is sent. Each must get 400 with an error body, never 5xx, and must store nothing.
//
// The inputs of an operation depend only on --seed, the generation and the operation: any failure
// is repeated by the same command with `--seed N --only <check id>`.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { flatten, merge, schemaArbitrary } from './arbitraries.ts';
import { ajvErrors, loadContract, type Contract, type ContractOperation, type Json } from './contract.ts';
import { businessOutcomes, operationOf, operationsOfBothGenerations } from './core-checks.ts';
import {
  formEncode,
  formSafe,
  isRecord,
  keepingAccountRules,
  operationKind,
  personalize,
  requestExamples,
  type SuiteState,
} from './fixtures.ts';
import { describeExchange, truncate } from './shape.ts';
import { ConformanceFailure, type Check, type CheckContext, type Exchange, type RequestOptions } from './types.ts';

/**
 * Fields whose value another field, another object or the account refers to (seed 2.x, 4.2 and
 * the contract's descriptions): generated values would break a rule the schema cannot express.
 */
const dependentFields = new Set([
  'unique_id',
  'callback_url',
  'callback',
  'project',
  'batch',
  'project_param_version',
  // a project's type decides its parameters; rapid and studio exclude each other; calibration and
  // self-label batches need a rapid project
  'type',
  'rapid',
  'studio',
  'calibration_batch',
  'self_label_batch',
  // names that other fields refer to, and fields that refer to them
  'categories',
  'category_ids',
  'labels',
  'instance_labels',
  'features',
  'ontology',
  'min_vertices',
  'max_vertices',
  // a video's pre-labelled events name them
  'events_to_annotate',
  // the attachment and its type decide each other's form (URL or text); spans refer to the text
  'attachment',
  'attachments',
  'attachment_type',
  'text',
  'expected_response',
  'initial_response',
]);
/** Names that are fresh per request (createProject, createBatch). */
const freshNameOps = new Set(['createProject', 'createBatch']);
/** Query parameters whose values come from an earlier answer. */
const dependentQuery = new Set(['next_token']);
/** Seed 4.1 / 8: at most 5 tags per task (a fresh task has none). */
const maxDistinctItems: Record<string, number> = { addTaskTags: 5, putTaskTags: 5 };

const KEEP = Symbol('keep');
const DROP = Symbol('drop');
const EXTRA_KEY = 'x_conformance_extra';

const asList = (t: unknown): string[] => (Array.isArray(t) ? t.map(String) : typeof t === 'string' ? [t] : []);

/** Scalars, enums, arrays of scalars and open maps of scalars: values no other field refers to. */
function isSimple(schema: Json | boolean | undefined, resolve: (n: Json) => Json, depth = 0): boolean {
  if (schema === undefined || typeof schema === 'boolean' || depth > 3) return false;
  const s = flatten(schema, resolve);
  for (const key of ['oneOf', 'anyOf']) {
    if (Array.isArray(s[key])) {
      const { [key]: branches, ...rest } = s;
      return (branches as Json[]).every((b) => isSimple(merge(rest, flatten(b, resolve)), resolve, depth + 1));
    }
  }
  if ('const' in s || Array.isArray(s.enum)) return true;
  const types = asList(s.type).length ? asList(s.type) : s.properties || s.additionalProperties ? ['object'] : s.items ? ['array'] : [];
  return types.every((t) => {
    if (t === 'object') {
      if (Object.keys(s.properties ?? {}).length > 0) return false;
      return (
        s.additionalProperties === undefined || s.additionalProperties === true || isSimple(s.additionalProperties, resolve, depth + 1)
      );
    }
    if (t === 'array')
      return isSimple(s.items, resolve, depth + 1) && !['object', 'array'].some((x) => asList(flatten(s.items, resolve).type).includes(x));
    return true;
  });
}

/** A 32-bit seed of its own for each (generation, operation, kind), derived from --seed. */
function seedFor(seed: number, ...parts: string[]): number {
  let h = 0x811c9dc5 ^ (seed | 0);
  for (const c of parts.join('|')) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193);
  return h | 0;
}

/**
 * How the query string is written: `strict` percent-encodes every reserved character, `form` as
 * URLSearchParams and HTML forms do (a space is `+`), `raw` leaves the reserved characters that
 * HTTP clients leave (`:`, `/`, `,`, `@`, `+` ...) as they are (issue 22 rule 8).
 */
type QueryStyle = 'strict' | 'form' | 'raw';

interface Plan {
  body?: unknown;
  /** Sent as a form (older generation's creation operations). */
  form?: boolean;
  query: Record<string, string | string[]>;
  queryStyle?: QueryStyle;
  idempotencyKey?: boolean;
}

/** A query parameter's generated value as the query string carries it. */
function queryText(value: unknown): string | string[] {
  return Array.isArray(value) ? value.map((v) => String(v)) : String(value);
}

function bodyValidator(contract: Contract, op: ContractOperation) {
  const pointer = contract.requestSchemaPointer(op);
  return pointer ? contract.validator(pointer) : undefined;
}

/** The bases of valid bodies: the operation's examples that stand on their own. */
function baseExamples(contract: Contract, op: ContractOperation): unknown[] {
  const kind = operationKind(op);
  return requestExamples(contract, op)
    .map(([, v]) => v)
    .filter((v) => {
      if (!isRecord(v)) return true;
      if (kind === 'task-creation') return v.project === undefined && v.batch === undefined;
      if (kind === 'batch-creation') return !v.calibration_batch && !v.self_label_batch;
      return true;
    });
}

/** The arbitrary of valid requests of an operation (before the contract's validator filters them). */
function validArbitrary(contract: Contract, op: ContractOperation): fc.Arbitrary<Plan> {
  const resolve = (n: Json) => contract.resolve(n);
  const queryParams = op.parameters.filter((p) => p.in === 'query' && !dependentQuery.has(p.name));
  const query = fc
    .record(
      Object.fromEntries(queryParams.map((p) => [p.name, fc.option(schemaArbitrary(p.schema, { resolve }), { nil: undefined, freq: 2 })])),
    )
    .map((q) =>
      Object.fromEntries(
        Object.entries(q)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, queryParams.find((p) => p.name === k)?.json ? JSON.stringify(v) : queryText(v)]),
      ),
    );

  const pointer = contract.requestSchemaPointer(op);
  let body: fc.Arbitrary<unknown> = fc.constant(undefined);
  if (pointer) {
    const schema = contract.resolve(contract.requestBody(op)!.content['application/json'].schema);
    const flat = flatten(schema, resolve);
    const properties: Json = flat.properties ?? {};
    const bases = baseExamples(contract, op);
    if (Object.keys(properties).length > 0 && bases.length > 0) {
      const varied = Object.keys(properties).filter(
        (k) => !dependentFields.has(k) && !(freshNameOps.has(op.operationId) && k === 'name') && isSimple(properties[k], resolve),
      );
      const changes = fc.record(
        Object.fromEntries(
          varied.map((k) => [
            k,
            fc.oneof(
              { weight: 2, arbitrary: fc.constant(KEEP) as fc.Arbitrary<unknown> },
              { weight: 1, arbitrary: fc.constant(DROP) as fc.Arbitrary<unknown> },
              { weight: 3, arbitrary: schemaArbitrary(properties[k], { resolve }) },
            ),
          ]),
        ),
      );
      body = fc
        .tuple(fc.constantFrom(...bases), changes, fc.option(fc.jsonValue({ maxDepth: 1 }), { freq: 3 }))
        .map(([base, change, extra]) => {
          const out: Record<string, unknown> = { ...(base as Json) };
          for (const [k, v] of Object.entries(change)) {
            if (v === KEEP) continue;
            if (v === DROP) delete out[k];
            else out[k] = v;
          }
          // Requests are open: unknown keys are accepted and ignored (contract style).
          if (extra !== null) out[EXTRA_KEY] = extra;
          return out;
        });
    } else {
      const limit = maxDistinctItems[op.operationId];
      body = schemaArbitrary(schema, { resolve });
      if (limit !== undefined) body = body.map((v) => (Array.isArray(v) ? [...new Set(v)].slice(0, limit) : v));
    }
  }
  const forms = contract.requestBody(op)?.content?.['application/x-www-form-urlencoded'] !== undefined;
  const idempotency = op.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
  const queryStyle = queryParams.length ? fc.constantFrom<QueryStyle>('strict', 'form', 'raw') : fc.constant<QueryStyle>('strict');
  return fc
    .record({
      body,
      query,
      queryStyle,
      form: forms ? fc.boolean() : fc.constant(false),
      idempotencyKey: idempotency ? fc.boolean() : fc.constant(false),
    })
    .map((plan) => ({
      ...plan,
      form: plan.form && isRecord(plan.body) && formSafe(plan.body),
    }));
}

/** Up to `count` valid requests (by the contract's validator) of an operation, the same for the same seed. */
function validPlans(contract: Contract, op: ContractOperation, seed: number, count: number): Plan[] {
  const validate = bodyValidator(contract, op);
  const candidates = fc.sample(validArbitrary(contract, op), {
    seed: seedFor(seed, contract.generation, op.operationId, 'valid'),
    numRuns: count * 6,
  });
  // Operations without a body or query give the same request every time: it is sent once.
  const distinct = new Map<string, Plan>();
  for (const plan of candidates) {
    const key = JSON.stringify(plan);
    if ((!validate || validate(plan.body)) && !distinct.has(key)) distinct.set(key, plan);
  }
  return [...distinct.values()].slice(0, count);
}

// ---- invalid requests: one thing broken ----------------------------------------------------------

type MutationKind =
  | 'missing'
  | 'wrong-type'
  | 'enum'
  | 'too-long'
  | 'empty'
  | 'null'
  | 'range'
  | 'format'
  | 'extra-property'
  | 'query'
  | 'time-range'
  | 'path'
  | 'header';

/**
 * Time-filter values that the `TimeFilter` pattern lets through and its description refuses: times
 * outside what is stored, 0001-01-01 to 9999-12-31 in UTC (issue 22 rule 8: such values were 500).
 */
const unstoredTimes = ['0000-01-09', '0001-01-01T00:00:00+01:00', '0000-12-31 23:59:59.999999', '9999-12-31T23:00:00-05:00'];

interface Mutation {
  kind: MutationKind;
  /** What is broken, for the report. */
  what: string;
  /** The body path it changes (JSON pointer segments), for body mutations. */
  at?: (string | number)[];
  apply(plan: SendPlan): SendPlan;
  /** What the contract reads, where that differs from what is sent: a property sent as null is read as left out. */
  read?(plan: SendPlan): SendPlan;
}

interface SendPlan {
  path: string;
  body?: unknown;
  query: Record<string, string | string[]>;
  queryStyle?: QueryStyle;
  headers: Record<string, string>;
}

/** The query string of a plan in its style ('' for none); `strict` is left to the runner. */
function queryString(query: Record<string, string | string[]>, style: QueryStyle): string {
  const pairs = Object.entries(query).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((item) => [k, item] as const));
  if (style === 'form') return new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString();
  // A raw `+` is read as a space: only time values, where a space is the offset's sign, keep theirs.
  const raw = (v: string) =>
    encodeURIComponent(v)
      .replace(/%20/g, '+')
      .replace(/%(3A|2F|40|2C|3B|24)/gi, (c) => decodeURIComponent(c))
      .replace(/%2B/gi, (c) => (/^[0-9]{4}-/.test(v) ? '+' : c));
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${raw(v)}`).join('&');
}

const pointerText = (at: (string | number)[]) => `/${at.join('/')}`;

/** A copy of `value` with the node at `at` replaced (or deleted, for DROP). */
function setAt(value: unknown, at: (string | number)[], replacement: unknown): unknown {
  if (at.length === 0) return replacement;
  const [head, ...rest] = at;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (replacement === DROP && rest.length === 0) copy.splice(head as number, 1);
    else copy[head as number] = setAt(copy[head as number], rest, replacement);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (replacement === DROP && rest.length === 0) delete copy[head as string];
  else copy[head as string] = setAt(copy[head as string], rest, replacement);
  return copy;
}

/** Every node of a body (depth-first, bounded), with its path. */
function sites(value: unknown, at: (string | number)[] = [], out: { at: (string | number)[]; value: unknown }[] = []) {
  if (out.length > 300 || at.length > 6) return out;
  out.push({ at, value });
  if (Array.isArray(value))
    value.forEach((v, i) => {
      sites(v, [...at, i], out);
    });
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) sites(v, [...at, k], out);
  return out;
}

const long = 'x'.repeat(4100);

function bodyMutations(body: unknown): Mutation[] {
  const out: Mutation[] = [];
  const replace = (kind: MutationKind, at: (string | number)[], value: unknown, what: string) =>
    out.push({ kind, at, what: `${what} at ${pointerText(at)}`, apply: (p) => ({ ...p, body: setAt(p.body, at, value) }) });
  for (const { at, value } of sites(body)) {
    if (at.length > 0 && typeof at[at.length - 1] === 'string') replace('missing', at, DROP, 'a field left out');
    if (typeof value === 'string') {
      replace('wrong-type', at, 12.5, 'a number instead of a string');
      replace('enum', at, 'no-such-value', 'a value out of its enum');
      replace('too-long', at, long, 'a string of 4100 characters');
      replace('empty', at, '', 'an empty string');
      replace('format', at, 'not a valid value ::', 'a value in no valid format');
      replace('format', at, `${value.slice(0, 8)}\u0000`, 'text with the character U+0000');
    } else if (typeof value === 'number') {
      replace('wrong-type', at, { wrong: true }, 'an object instead of a number');
      replace('range', at, -1_000_000_001, 'a number far below any minimum');
      replace('range', at, 1_000_000_001, 'a number far above any maximum');
      if (Number.isInteger(value)) replace('wrong-type', at, value + 0.5, 'a fraction instead of an integer');
    } else if (typeof value === 'boolean') {
      replace('wrong-type', at, 'maybe', 'a word instead of a boolean');
    } else if (Array.isArray(value)) {
      replace('wrong-type', at, 'not a list', 'a string instead of a list');
      replace('empty', at, [], 'an empty list');
      const first = value[0];
      const many = Array.from({ length: 60 }, (_, i) => (typeof first === 'string' ? `${first}-${i}` : (first ?? `item-${i}`)));
      replace('too-long', at, many, 'a list of 60 items');
    } else if (isRecord(value)) {
      replace('wrong-type', at, at.length === 0 ? 'not an object' : 42, 'a scalar instead of an object');
      replace('extra-property', at, { ...value, unexpected_conformance_property: true }, 'an unknown key on an object');
      replace('empty', at, {}, 'an empty object');
    }
    if (value !== null && at.length > 0) {
      replace('null', at, null, 'null');
      // A property whose value is null counts as not given (the contract's rule for request bodies):
      // the contract judges the body without it.
      if (typeof at[at.length - 1] === 'string') out[out.length - 1]!.read = (p) => ({ ...p, body: setAt(p.body, at, DROP) });
    }
  }
  return out;
}

/** A raw query or path value as the server reads it: integers and booleans parsed per the schema. */
function coerce(raw: string, schema: Json | undefined): unknown {
  const types = asList(schema?.type);
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (types.includes('boolean') && /^(true|false)$/.test(raw)) return raw === 'true';
  if (types.includes('array')) return raw.split(',');
  return raw;
}

function parameterMutations(contract: Contract, op: ContractOperation): Mutation[] {
  const out: Mutation[] = [];
  op.parameters.forEach((param, i) => {
    if (!['query', 'path', 'header'].includes(param.in)) return;
    const validate = contract.validator(op.parameterSchemaPointers[i]!);
    const schema = contract.resolve(param.schema ?? {});
    const raws = [
      'no-such-value',
      'abc',
      '1.5',
      '-1',
      '0',
      '101',
      '100000',
      '!not valid!',
      'not a date',
      '2026-02-30',
      'x'.repeat(256),
      'maybe',
      'bad key',
    ];
    for (const raw of raws) {
      if (validate(coerce(raw, schema))) continue;
      const kind = param.in as MutationKind;
      const what = `${param.in} parameter ${param.name}=${JSON.stringify(truncate(raw, 20))}`;
      if (param.in === 'query') out.push({ kind, what, apply: (p) => ({ ...p, query: { ...p.query, [param.name]: raw } }) });
      else if (param.in === 'header') out.push({ kind, what, apply: (p) => ({ ...p, headers: { ...p.headers, [param.name]: raw } }) });
      else {
        const index = op.path.split('/').indexOf(`{${param.name}}`);
        out.push({
          kind,
          what,
          apply: (p) => ({
            ...p,
            path: p.path
              .split('/')
              .map((seg, j) => (j === index ? encodeURIComponent(raw) : seg))
              .join('/'),
          }),
        });
      }
    }
    if (param.in === 'query' && String(schema.pattern ?? '').startsWith('^[0-9]{4}-')) {
      for (const raw of unstoredTimes)
        out.push({
          kind: 'time-range',
          what: `query parameter ${param.name}=${JSON.stringify(raw)} (outside the stored times)`,
          apply: (p) => ({ ...p, query: { ...p.query, [param.name]: raw } }),
        });
    }
  });
  return out;
}

/** Up to `count` requests that each break one thing, spread over the kinds of breakage. */
function invalidMutations(contract: Contract, op: ContractOperation, base: Plan | undefined, seed: number, count: number): Mutation[] {
  const validate = bodyValidator(contract, op);
  const candidates = [...(base?.body !== undefined ? bodyMutations(base.body) : []), ...parameterMutations(contract, op)];
  if (candidates.length === 0) return [];
  const [order] = fc.sample(fc.shuffledSubarray(candidates, { minLength: candidates.length, maxLength: candidates.length }), {
    seed: seedFor(seed, contract.generation, op.operationId, 'invalid'),
    numRuns: 1,
  });
  const buckets = new Map<MutationKind, Mutation[]>();
  for (const m of order ?? candidates) {
    // Only what the contract's validator refuses is an invalid request.
    if (m.at && (!validate || validate((m.read ?? m.apply)({ path: '', body: base?.body, query: {}, headers: {} }).body))) continue;
    const list = buckets.get(m.kind) ?? [];
    list.push(m);
    buckets.set(m.kind, list);
  }
  // Round robin over the kinds: missing, wrong type, too long ... before a second of any kind.
  const chosen: Mutation[] = [];
  while (chosen.length < count && [...buckets.values()].some((l) => l.length)) {
    for (const list of buckets.values()) {
      const m = list.shift();
      if (m && chosen.length < count) chosen.push(m);
    }
  }
  return chosen;
}

// ---- sending -------------------------------------------------------------------------------------

async function sendPlan(ctx: CheckContext, op: ContractOperation, plan: SendPlan, form: boolean): Promise<Exchange> {
  const style = plan.queryStyle ?? 'strict';
  const written = style === 'strict' ? '' : queryString(plan.query, style);
  const req: RequestOptions = { headers: plan.headers, ...(style === 'strict' ? { query: plan.query } : {}) };
  const path = written ? `${plan.path}?${written}` : plan.path;
  if (plan.body !== undefined) {
    if (form && isRecord(plan.body)) req.form = formEncode(plan.body);
    else req.json = plan.body;
  }
  return ctx.call(op.method.toUpperCase(), path, req);
}

/** The body made ready for this run: fresh ids and names, callbacks to the receiver, the run's project. */
async function ready(ctx: CheckContext, state: SuiteState, contract: Contract, op: ContractOperation, body: unknown): Promise<unknown> {
  const out = await personalize(ctx, op, body);
  if (operationKind(op) === 'batch-creation' && isRecord(out)) return { ...out, project: await state.fixtures(contract).project(ctx) };
  return out;
}

/** What must not change when a request is refused: a count of the objects it would create, or the object it would change. */
async function snapshot(ctx: CheckContext, op: ContractOperation, path: string): Promise<string | undefined> {
  const total = async (listPath: string) => {
    const ex = await ctx.call('GET', listPath, { query: { limit: 1 } });
    return ex.status === 200 ? `${listPath} total ${JSON.stringify(ex.body?.total)}` : undefined;
  };
  switch (operationKind(op)) {
    case 'task-creation':
      return total('/v1/tasks');
    case 'training-creation':
      return total(op.path.startsWith('/v1/training') ? '/v1/training_tasks' : '/v1/evaluation_tasks');
    case 'batch-creation':
      return total('/v1/batches');
    case 'project-creation': {
      const ex = await ctx.call('GET', '/v1/projects');
      return Array.isArray(ex.body) ? `projects ${ex.body.length}` : undefined;
    }
  }
  if (op.method === 'get' || !op.templated) return undefined;
  const m = /^(\/v1\/(?:task|projects|batches)\/[^/]+)/.exec(path);
  if (!m) return undefined;
  const ex = await ctx.call('GET', m[1]!);
  if (ex.status !== 200 || !isRecord(ex.body)) return undefined;
  const b = ex.body as Json;
  // The parts a refused request could have changed (not timestamps of deliveries going on meanwhile).
  return JSON.stringify([
    b.metadata,
    b.tags,
    b.unique_id,
    b.status,
    b.customer_review_status,
    b.audits?.length,
    b.param_history?.length,
    b.ontologyHistory?.length,
  ]);
}

/** Keys whose values differ between two equal requests (fresh ids, names, times, drawn test-mode answers, deliveries). */
const volatileKeys = new Set([
  'task_id',
  'id',
  'name',
  'unique_id',
  'created_at',
  'updated_at',
  'completed_at',
  'response',
  'callback_url',
  'callback',
  'callback_completed',
  'callback_succeeded',
  'project',
]);

/** An answer without what differs between two equal requests, for comparison. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !volatileKeys.has(k))
      .map(([k, v]) => [k, comparable(v)]),
  );
}

/**
 * The optional top-level properties of an operation's JSON body that the contract does not type as
 * nullable (the body with the property null fails the contract's validator): where `null` must
 * mean "not given". Up to `count`, a seeded sample.
 */
function nullableAsAbsent(contract: Contract, op: ContractOperation, base: Record<string, unknown>, seed: number, count: number): string[] {
  const validate = bodyValidator(contract, op);
  if (!validate) return [];
  const schema = flatten(contract.resolve(contract.requestBody(op)!.content['application/json'].schema), (n) => contract.resolve(n));
  const required = new Set<string>(schema.required ?? []);
  const names = Object.keys(schema.properties ?? {}).filter(
    (k) => schema.properties[k] !== false && !required.has(k) && !validate({ ...base, [k]: null }),
  );
  const [order] = fc.sample(fc.shuffledSubarray(names, { minLength: names.length, maxLength: names.length }), {
    seed: seedFor(seed, contract.generation, op.operationId, 'null'),
    numRuns: 1,
  });
  return (order ?? names).slice(0, count);
}

function reproduce(ctx: CheckContext, id: string): string {
  return `repeat with: --seed ${ctx.options.seed} --generation ${ctx.generation} --only ${id}`;
}

export function generatedChecks(state: SuiteState): Check[] {
  const checks: Check[] = [];
  for (const { operationId, generations } of operationsOfBothGenerations({ workforce: false })) {
    const validId = `generated/valid/${operationId}`;
    checks.push({
      id: validId,
      area: 'Generated input',
      seed: '4 Endpoints; 7 Errors (200 success; 4xx only for unacceptable requests)',
      rule: 'Requests that the contract accepts (generated from its schemas) get 200 or a documented business answer, never another 4xx, never 5xx.',
      kind: 'generated',
      generations,
      run: (ctx) =>
        keepingAccountRules(ctx, operationId, async () => {
          const { contract, op } = operationOf(ctx, operationId);
          const fixtures = state.fixtures(contract);
          const plans = validPlans(contract, op, ctx.options.seed, ctx.options.runs ?? 6);
          if (plans.length === 0)
            throw new ConformanceFailure(
              `no valid request of ${operationId} could be generated from the contract (its examples or schemas are not valid)`,
            );
          const failures: string[] = [];
          for (const plan of plans) {
            const path = op.templated ? await fixtures.pathFor(ctx, op) : op.path;
            const body = plan.body === undefined ? undefined : await ready(ctx, state, contract, op, plan.body);
            const headers: Record<string, string> = plan.idempotencyKey ? { 'Idempotency-Key': ctx.unique('idem') } : {};
            // Prism (5.14) stops on form bodies of operations with callbacks: a mock gets JSON only.
            const ex = await sendPlan(
              ctx,
              op,
              { path, body, query: plan.query, ...(plan.queryStyle ? { queryStyle: plan.queryStyle } : {}), headers },
              (plan.form ?? false) && ctx.options.profile !== 'mock',
            );
            const allowed = ctx.options.profile === 'mock' ? [200] : businessOutcomes(ctx, op, true);
            if (ex.status === 402 && operationKind(op) !== 'other' && ctx.options.profile !== 'mock') {
              ctx.note(`${operationId}: 402, the task type is not enabled for this account (a documented business answer)`);
              continue;
            }
            if (!allowed.includes(ex.status))
              failures.push(`${plan.form ? 'form body: ' : ''}expected ${allowed.join(' or ')}, got ${ex.status}\n${describeExchange(ex)}`);
          }
          if (failures.length) {
            throw new ConformanceFailure(
              `${failures.length} of ${plans.length} valid request(s) of ${operationId} were not accepted (${reproduce(ctx, validId)}):\n${failures.slice(0, 3).join('\n')}`,
            );
          }
        }),
    });

    const invalidId = `generated/invalid/${operationId}`;
    checks.push({
      id: invalidId,
      area: 'Generated input',
      seed: '7 Errors (400: unacceptable request); 4.2 (required parameters, limits); 8 Limits',
      rule: 'A request that breaks one rule of the contract gets 400 with an error body, never 5xx, and stores nothing.',
      kind: 'generated',
      // Not with --profile mock: Prism's validator does not know every 2020-12 keyword
      // (unevaluatedProperties), and a mock cannot show that nothing was stored.
      mock: false,
      generations,
      run: (ctx) =>
        keepingAccountRules(ctx, operationId, async () => {
          const { contract, op } = operationOf(ctx, operationId);
          const fixtures = state.fixtures(contract);
          const runs = ctx.options.runs ?? 6;
          const [base] = validPlans(contract, op, ctx.options.seed, 1);
          const mutations = invalidMutations(contract, op, base, ctx.options.seed, runs);
          if (mutations.length === 0) {
            ctx.note(`nothing in a request of ${operationId} can be made invalid by the contract`);
            return;
          }
          const validate = bodyValidator(contract, op);
          const path = op.templated ? await fixtures.pathFor(ctx, op) : op.path;
          const before = await snapshot(ctx, op, path);
          const failures: string[] = [];
          let sent = 0;
          for (const mutation of mutations) {
            const body = base?.body === undefined ? undefined : await ready(ctx, state, contract, op, base.body);
            const plan = mutation.apply({ path, body, query: base?.query ?? {}, headers: {} });
            // The run's own ids and names replaced a value: what is sent must still be refused by the contract.
            if (mutation.at && validate?.((mutation.read ?? mutation.apply)({ path, body, query: base?.query ?? {}, headers: {} }).body))
              continue;
            sent++;
            const ex = await sendPlan(ctx, op, plan, false);
            if (ex.status !== 400)
              failures.push(
                `${mutation.what}: expected 400, got ${ex.status}${validate && mutation.at ? ` (the contract says: ${ajvErrors(validate, 2)})` : ''}\n${describeExchange(ex)}`,
              );
          }
          if (before !== undefined) {
            const after = await snapshot(ctx, op, path);
            if (after !== before) failures.push(`refused requests changed what is stored: before ${before}, after ${after}`);
          }
          if (failures.length) {
            throw new ConformanceFailure(
              `${failures.length} of ${sent} invalid request(s) of ${operationId} were not refused as the contract says (${reproduce(ctx, invalidId)}):\n${failures.slice(0, 3).join('\n')}`,
            );
          }
        }),
    });

    const nullId = `generated/null-as-absent/${operationId}`;
    const withBody = generations.filter((g) => {
      const contract = loadContract(g);
      return contract.requestSchemaPointer(contract.byId.get(operationId)!) !== undefined;
    });
    if (withBody.length === 0) continue;
    checks.push({
      id: nullId,
      area: 'Generated input',
      seed: 'decision beyond the API description (issue 22 rule 1): in a request body, null means "not given"',
      rule: 'Each optional body property sent as null gets the same answer as the property left out (unless the contract types it as nullable), on every operation with optional body properties.',
      kind: 'generated',
      // A mock answers from examples: it cannot show that two requests were read alike.
      mock: false,
      generations: withBody,
      run: (ctx) =>
        keepingAccountRules(ctx, operationId, async () => {
          const { contract, op } = operationOf(ctx, operationId);
          const fixtures = state.fixtures(contract);
          const [base] = validPlans(contract, op, ctx.options.seed, 1);
          // A property whose absence is refused too (needed unless a project gives it) shows little:
          // such pairs are compared but do not count, up to twice the quota of pairs.
          const quota = Math.max(1, Math.floor((ctx.options.runs ?? 6) / 3));
          const properties = isRecord(base?.body) ? nullableAsAbsent(contract, op, base.body, ctx.options.seed, 2 * quota) : [];
          if (!isRecord(base?.body) || properties.length === 0) {
            ctx.note(`${operationId} has no optional body property that the contract does not type as nullable`);
            return;
          }
          // Each request on a fresh object where the path names one (a change must not meet the other's).
          const send = async (body: Record<string, unknown>) =>
            ctx.call(op.method.toUpperCase(), op.templated ? await fixtures.pathFor(ctx, op, true) : op.path, { json: body });
          const fresh = operationKind(op) !== 'other';
          const failures: string[] = [];
          let accepted = 0;
          let tried = 0;
          for (const name of properties) {
            if (accepted >= quota) break;
            tried++;
            const left = { ...((await ready(ctx, state, contract, op, base.body)) as Record<string, unknown>) };
            delete left[name];
            const withNull = { ...((await ready(ctx, state, contract, op, base.body)) as Record<string, unknown>), [name]: null };
            const absent = await send(left);
            const nulled = await send(withNull);
            if (absent.status === 200) accepted++;
            if (absent.status !== nulled.status) {
              failures.push(`${name}: left out → ${absent.status}, null → ${nulled.status}\n${describeExchange(nulled)}`);
            } else if (absent.status === 200 && isRecord(absent.body) && isRecord(nulled.body)) {
              // A new object is compared whole; a changed one by the keys of its answer (both without
              // what differs between equal requests, such as a callback flag set by a delivery meanwhile).
              const a = fresh ? comparable(absent.body) : Object.keys(comparable(absent.body) as object).sort();
              const b = fresh ? comparable(nulled.body) : Object.keys(comparable(nulled.body) as object).sort();
              if (!isDeepStrictEqual(a, b))
                failures.push(
                  `${name}: the answers differ: left out ${truncate(JSON.stringify(a), 400)}, null ${truncate(JSON.stringify(b), 400)}`,
                );
            }
          }
          if (failures.length) {
            throw new ConformanceFailure(
              `${failures.length} of ${tried} optional propert(ies) of ${operationId} sent as null were not read as left out (${reproduce(ctx, nullId)}):\n${failures.slice(0, 3).join('\n')}`,
            );
          }
        }),
    });
  }
  return checks;
}
