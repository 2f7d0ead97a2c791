// What a request's validation errors say, in plain words: one translation from the validator's
// errors (express-openapi-validator's on the server, Prism's on the mock, Ajv's on an import line)
// to `body.categories is required; query.limit must be at most 100`. Each problem starts with the
// path of the value it is about (`body.fields.0.min`, `query.limit`), which programs can read, then
// says what is wrong, naming the field once.
//
// The validators word their errors as JSON Schema does ("must have required property 'x'", "must
// match \"then\" schema") and report every branch of a oneOf or anyOf. Both keep only an error's
// location, keyword and message (not Ajv's params or schema path), so the values a message needs
// are read back from Ajv's message templates, and a failed oneOf/anyOf is settled against the
// contract: the value is checked against the branch its discriminator (`type`) names, or against
// the branch it comes closest to, and only that branch's problems are said.
//
// Considered: ajv-errors (messages written into the schema, per keyword; no branch choice),
// better-ajv-errors and @segment/ajv-human-errors (both need Ajv's own error objects with params
// and schema paths, which neither validator hands on, and still pick among branches by heuristics
// without the discriminator). What they do that applies here is small; it is written here.
import type { ErrorObject } from 'ajv/dist/2020.js';
import { list, strings } from '../../shared/json.ts';
import { callbackAddressPattern } from '../domain/callback-address.ts';
import type { Contract, ContractName, Json } from './contract.ts';

/** One validation error: where (the request part first: `body`, `query`, `path`, `headers`), which keyword, its values. */
export interface SchemaError {
  at: string[];
  keyword: string;
  params: Record<string, unknown>;
  /** The validator's own words, said when the keyword is one this file does not know. */
  message?: string;
}

/** What the translation may consult: the contract, the request body's schema and the body itself. */
export interface RequestShape {
  contract: Pick<Contract<ContractName>, 'resolve' | 'validatorOf'>;
  bodySchema: Json | undefined;
  body: unknown;
}

/** At most this many problems are said; the rest follow once these are fixed. */
const maxProblems = 5;

/** Keywords that only say that something under them failed: the failure under them is said instead. */
const wrappers = new Set(['if', 'then', 'else', 'allOf', 'false schema', '$ref']);

/** Patterns of the contract, said in words (any other is quoted). */
const patternWords: Record<string, string> = {
  '^[^\\u0000]*$': 'must not contain the character U+0000',
  '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$': 'must be true or false',
  '^[Tt][Rr][Uu][Ee]$': 'must be true',
  '^[0-9]+$': 'must be a whole number of 0 or more',
  '^[0-9]{1,12}$': 'must be a whole number of 0 or more',
  '^[1-9][0-9]*$': 'must be a whole number of 1 or more',
  '^0*[1-9][0-9]*$': 'must be a whole number of 1 or more',
  '^-?[0-9]+(\\.[0-9]+)?$': 'must be a number',
  '^[0-9]+(\\.[0-9]+)?$': 'must be a number of 0 or more',
  '^[0-9a-f]{24}$': 'must be 24 lowercase hexadecimal characters',
  '^#[0-9a-f]{6}$': 'must be a colour such as #1f77b4',
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([Tt ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?([Zz]|[+ -]([01][0-9]|2[0-3])(:?[0-5][0-9])?)?)?$':
    'must be a date such as 2026-11-21 or a date and time such as 2026-11-21T10:00:00.000Z',
  '^[\\x21-\\x7E]{1,255}$': 'must be 1 to 255 visible ASCII characters',
  '^[\\x21-\\x7e]+$': 'must be visible ASCII characters',
  '^([Hh][Tt][Tt][Pp][Ss]?|[Ss]3|[Gg][Ss])://': 'must be an http(s), s3 or gs URL',
  '^([Hh][Tt][Tt][Pp][Ss]?|[Ss]3|[Gg][Ss])://[^\\u0000]*$': 'must be an http(s), s3 or gs URL',
};

/** The contract's pattern of a callback address (CallbackAddress), said as the server's own check says it. */
patternWords[callbackAddressPattern] = 'must be an http(s) URL or an e-mail address';

const formatWords: Record<string, string> = {
  uri: 'must be a URL',
  email: 'must be an e-mail address',
  'date-time': 'must be a date and time such as 2026-11-21T10:00:00.000Z',
  date: 'must be a date such as 2026-11-21',
  uuid: 'must be a UUID',
};

const typeWords: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const quote = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const items = (n: number) => (n === 1 ? '1 item' : `${n} items`);
const characters = (n: number) => (n === 1 ? '1 character' : `${n} characters`);

/** What is wrong, in words, for the value at the error's path (the path itself is said before). */
function words(e: SchemaError): string {
  const p = e.params;
  const limit = Number(p.limit);
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((t) => typeWords[t] ?? t)
        .join(' or ')}`;
    case 'enum':
      return Array.isArray(p.allowedValues)
        ? `must be one of: ${p.allowedValues.map(quote).join(', ')}`
        : 'is not one of the allowed values';
    case 'const':
      return 'allowedValue' in p ? `must be ${quote(p.allowedValue)}` : 'is not the allowed value';
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'exclusiveMinimum':
      return `must be more than ${limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${limit}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${characters(limit)} long`;
    case 'maxLength':
      return `must be at most ${characters(limit)} long`;
    case 'minItems':
      return limit === 1 ? 'must not be empty' : `must have at least ${items(limit)}`;
    case 'maxItems':
      return `must have at most ${items(limit)}`;
    case 'minProperties':
      return limit === 1 ? 'must not be empty' : `must have at least ${limit} fields`;
    case 'maxProperties':
      return `must have at most ${limit} fields`;
    case 'uniqueItems':
      return `must not repeat an item (items ${String(p.j)} and ${String(p.i)} are the same)`;
    case 'pattern':
      return patternWords[String(p.pattern)] ?? `must match the pattern ${String(p.pattern)}`;
    case 'format':
      return formatWords[String(p.format)] ?? `must be a ${String(p.format)}`;
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not a field this object takes';
    case 'unknownParameter':
      return 'is not a parameter this operation takes';
    case 'emptyParameter':
      return 'must not be empty';
    case 'anyOfRequired': {
      const names = strings(p.names);
      return names.length > 2 ? `needs one of: ${names.join(', ')}` : `needs ${names.join(' or ')}`;
    }
    case 'kinds':
      return `must be ${strings(p.kinds).join(' or ')}`;
    case 'not':
      return 'is not allowed here';
    case 'oneOf':
    case 'anyOf':
      return 'does not fit any of the forms this value may take';
    case 'dependentRequired':
    case 'dependencies':
      return `needs ${String(p.missingProperty)} too`;
    default:
      return e.message ?? 'is not valid';
  }
}

const pathText = (at: string[]) => at.join('.');

function said(e: SchemaError): string {
  return `${pathText(e.at)} ${words(e)}`;
}

/** Ajv's own error objects (an import line's check), as problems of the request part `part`. */
export function fromAjv(errors: readonly ErrorObject[], part: string[] = []): SchemaError[] {
  return errors.map((e) => {
    const params: Record<string, unknown> = e.params;
    const named = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
    const at = [
      ...part,
      ...pointerSegments(e.instancePath),
      ...(named !== undefined && e.keyword !== 'dependentRequired' ? [String(named)] : []),
    ];
    return { at, keyword: e.keyword, params, ...(e.message ? { message: e.message } : {}) };
  });
}

/**
 * A validator's error given as location, keyword and Ajv's message (express-openapi-validator's
 * `{path, errorCode, message}`, Prism's violations): the values the message carries read back.
 */
export function fromMessage(at: string[], keyword: string | undefined, message: string): SchemaError {
  const m = message.replace(/^.*?\b(?=must |Unknown query|Empty value)/s, '');
  let k = keyword;
  const params: Record<string, unknown> = {};
  let where = at;
  if (!k) {
    const unknown = /^Unknown query parameter '(.*)'$/s.exec(m);
    const empty = /^Empty value found for query parameter '(.*)'$/s.exec(m);
    if (unknown) k = 'unknownParameter';
    else if (empty) k = 'emptyParameter';
    else return { at, keyword: 'message', params, message };
  }
  let r: RegExpExecArray | null;
  switch (k) {
    case 'required':
      r = /property '(.*)'$/s.exec(m);
      // Prism names the object, express-openapi-validator the missing property.
      if (r && at[at.length - 1] !== r[1]) where = [...at, r[1]!];
      break;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      r = /must be [<>]=? (\S+)$/.exec(m);
      if (r) params.limit = Number(r[1]);
      break;
    case 'multipleOf':
      r = /multiple of (\S+)$/.exec(m);
      if (r) params.multipleOf = Number(r[1]);
      break;
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minProperties':
    case 'maxProperties':
      r = /than (\d+) /.exec(m);
      if (r) params.limit = Number(r[1]);
      break;
    case 'enum':
      r = /allowed values: (.*)$/s.exec(m);
      if (r) params.allowedValues = r[1]!.split(', ');
      break;
    case 'pattern':
      r = /must match pattern "(.*)"$/s.exec(m);
      if (r) params.pattern = r[1];
      break;
    case 'format':
      r = /must match format "(.*)"$/s.exec(m);
      if (r) params.format = r[1];
      break;
    case 'type':
      r = /must be (\S+)$/.exec(m);
      if (r) params.type = r[1];
      break;
    case 'uniqueItems':
      r = /items ## (\d+) and (\d+) /.exec(m);
      if (r) Object.assign(params, { i: Number(r[1]), j: Number(r[2]) });
      break;
  }
  return { at: where, keyword: k, params, message: m };
}

/** The segments of a JSON pointer (`/fields/0/min`). */
function pointerSegments(pointer: string): string[] {
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function valueAt(data: unknown, at: readonly string[]): unknown {
  let v = data;
  for (const seg of at) v = v !== null && typeof v === 'object' ? Reflect.get(v, seg) : undefined;
  return v;
}

/** The schemas that apply to a value: the schema itself and what it takes in through $ref, allOf and if/then/else. */
function applying(schema: Json | undefined, resolve: RequestShape['contract']['resolve'], withBranches: boolean, out: Json[] = []): Json[] {
  const s = resolve(schema);
  if (!s || typeof s !== 'object' || out.includes(s)) return out;
  out.push(s);
  const subs = [...(s.allOf ?? []), s.then, s.else, ...(withBranches ? [...(s.oneOf ?? []), ...(s.anyOf ?? [])] : [])];
  for (const sub of subs) if (sub) applying(sub, resolve, withBranches, out);
  return out;
}

/** The schemas that apply at `at` under `root` (every branch of a oneOf or anyOf on the way counts). */
function schemasAt(root: Json | undefined, at: readonly string[], resolve: RequestShape['contract']['resolve']): Json[] {
  let here = applying(root, resolve, true);
  for (const seg of at) {
    const next: Json[] = [];
    for (const s of here) {
      const children = [
        s.properties?.[seg],
        ...Object.entries<Json>(s.patternProperties ?? {})
          .filter(([p]) => new RegExp(p, 'u').test(seg))
          .map(([, v]) => v),
        /^\d+$/.test(seg) ? (s.prefixItems?.[Number(seg)] ?? s.items) : undefined,
        typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined,
      ];
      for (const c of children) if (c) applying(c, resolve, true, next);
    }
    here = next;
  }
  return here;
}

/** The property each branch fixes with a `const` (or `enum`): the discriminator of a oneOf/anyOf, if its branches have one. */
function discriminatorOf(branches: Json[][]): string | undefined {
  const keysOf = (branch: Json[]) => new Set(branch.flatMap((s) => Object.keys(s.properties ?? {}).filter((k) => fixedValues(branch, k))));
  const [first, ...rest] = branches.map(keysOf);
  return [...(first ?? [])].find((k) => rest.every((keys) => keys.has(k)));
}

function fixedValues(branch: Json[], key: string): unknown[] | undefined {
  for (const s of branch) {
    const p = s.properties?.[key];
    if (p && 'const' in p) return [p.const];
    if (p && Array.isArray(p.enum)) return p.enum;
  }
  return undefined;
}

/**
 * The problems of a failed oneOf/anyOf at `at`: those of the branch the value's discriminator
 * names, or of the branch it comes closest to; null when the contract has no such choice there.
 */
function settleBranches(e: SchemaError, shape: RequestShape, depth: number): SchemaError[] | null {
  const { contract, bodySchema, body } = shape;
  if (e.at[0] !== 'body' || !bodySchema || depth > 6) return null;
  const inBody = e.at.slice(1);
  const node = schemasAt(bodySchema, inBody, contract.resolve).find((s) => Array.isArray(s[e.keyword]));
  if (!node) return null;
  const branches: Json[] = node[e.keyword];
  const value = valueAt(body, inBody);
  const tag = discriminatorOf(branches.map((b) => applying(b, contract.resolve, false)));
  let candidates = branches;
  if (tag !== undefined && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const given = Reflect.get(value, tag);
    const allowed = branches.flatMap((b) => fixedValues(applying(b, contract.resolve, false), tag) ?? []);
    if (given === undefined) return [{ at: [...e.at, tag], keyword: 'required', params: {} }];
    candidates = branches.filter((b) => (fixedValues(applying(b, contract.resolve, false), tag) ?? []).includes(given));
    if (!candidates.length) return [{ at: [...e.at, tag], keyword: 'enum', params: { allowedValues: allowed } }];
  }
  const outcomes = candidates.map((b) => {
    const validate = contract.validatorOf(b);
    validate(structuredClone(value));
    return fromAjv(validate.errors ?? [], e.at);
  });
  // Missing names only, in every branch (this or that is needed): say so once.
  if (
    outcomes.length > 1 &&
    outcomes.every((o) => o.length > 0 && o.every((x) => x.keyword === 'required' && x.at.length === e.at.length + 1))
  )
    return [{ at: e.at, keyword: 'anyOfRequired', params: { names: [...new Set(outcomes.flat().map((x) => x.at[x.at.length - 1]!))] } }];
  // A value that is none of the kinds or values the branches take (`a number or "auto"`): those kinds and values.
  const alone = (o: SchemaError[]) =>
    o.length === 1 && o[0]!.at.length === e.at.length && ['type', 'const', 'enum'].includes(o[0]!.keyword);
  if (outcomes.length > 1 && outcomes.every(alone)) {
    const kinds = outcomes.flatMap(([x]) =>
      x!.keyword === 'type'
        ? String(x!.params.type)
            .split(',')
            .map((t) => typeWords[t] ?? t)
        : x!.keyword === 'const'
          ? [JSON.stringify(x!.params.allowedValue)]
          : list(x!.params.allowedValues).map((v) => JSON.stringify(v)),
    );
    return [{ at: e.at, keyword: 'kinds', params: { kinds: [...new Set(kinds)] } }];
  }
  // The branch the value comes closest to: one of the value's own kind (an object for an object)
  // before one that wants another kind, then the one with fewest problems.
  const distance = (o: SchemaError[]) => (o.some((x) => x.keyword === 'type' && x.at.length === e.at.length) ? 1000 : 0) + o.length;
  const closest = outcomes.reduce((best, o) => (distance(o) < distance(best) ? o : best));
  return plain(closest, shape, depth + 1);
}

/** The problems to say, in order, once branches are settled and wrappers dropped. */
function plain(errors: SchemaError[], shape: RequestShape | undefined, depth = 0): SchemaError[] {
  const out: SchemaError[] = [];
  const settled: string[][] = [];
  const under = (at: string[], base: string[]) => base.every((seg, i) => at[i] === seg);
  // A oneOf/anyOf is reported after its branches' errors (an outer one after an inner one): settle
  // the outermost first, from the end, then drop what they replace.
  for (const e of [...errors].reverse()) {
    if (e.keyword !== 'oneOf' && e.keyword !== 'anyOf') continue;
    if (settled.some((s) => under(e.at, s))) continue;
    const settledHere = shape && settleBranches(e, shape, depth);
    if (settledHere) {
      settled.push(e.at);
      out.push(...settledHere);
    }
  }
  const rest = errors.filter((e) => !settled.some((s) => under(e.at, s)) && !wrappers.has(e.keyword));
  // Branch keywords left unsettled (no contract to consult) say only that no form fits, when nothing under them says more.
  const kept = rest.filter(
    (e) => (e.keyword !== 'oneOf' && e.keyword !== 'anyOf') || !rest.some((x) => x !== e && under(x.at, e.at) && x.keyword !== e.keyword),
  );
  return [...kept, ...out];
}

/** The message of a request's validation errors: each problem once, path first, in plain words. */
export function describeProblems(errors: SchemaError[], shape?: RequestShape): string {
  const problems = plain(errors, shape);
  const messages = [...new Set((problems.length ? problems : errors).map(said))];
  return messages.slice(0, maxProblems).join('; ');
}

/** express-openapi-validator's errors (`{path: '/body/x', errorCode: 'required.openapi.validation', message}`), as problems. */
export function fromValidator(errors: readonly { path?: string; message: string; errorCode?: string }[]): SchemaError[] {
  return errors.map((e) => fromMessage(pointerSegments(e.path ?? ''), e.errorCode?.replace(/\.openapi\.validation$/, ''), e.message));
}

/** The message of express-openapi-validator's 400 for a request of `contract` (its body's schema consulted for branches). */
export function requestProblems(
  errors: readonly { path?: string; message: string; errorCode?: string }[],
  contract: Contract<ContractName>,
  request: { method: string; path: string; body: unknown },
): string {
  return describeProblems(fromValidator(errors), {
    contract,
    bodySchema: contract.bodySchemaOf(request.method, request.path),
    body: request.body,
  });
}
