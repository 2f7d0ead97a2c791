// The bundled contract of a generation (or of the worker API), and what the server derives from it
// at start: the creation operations with their task type, parameter names and body schema.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { isRecord } from '../../shared/json.ts';
import type { Generation } from '../domain/model.ts';
import type { ParamRules } from '../domain/projects.ts';
import { coerceBody } from './coerce.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed YAML document, walked by the keys the OpenAPI format defines
export type Json = Record<string, any>;
const generatedDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'generated');

export interface CreationOperation {
  operationId: string;
  path: string;
  type: string;
  paramNames: ReadonlySet<string>;
  bodySchema: Json;
  /**
   * Checks a body whose parameters were merged from a project against the creation rules as if
   * the task named no project (so the type-defining parameters are required): a message, or null.
   */
  checkMerged(body: Json): string | null;
}

/** The contracts of generated/: the two generations and the worker API (which has no creations). */
export type ContractName = Generation | 'workforce';

export interface Contract<Name extends ContractName = Generation> {
  generation: Name;
  doc: Json;
  /** By path: POST /v1/task/<type>. */
  creations: Map<string, CreationOperation>;
  operationIds: string[];
  resolve(node: Json | undefined): Json | undefined;
  /** Whether some operation takes `application/x-www-form-urlencoded` bodies (the older generation's creation). */
  acceptsForms: boolean;
  /** The parameter names of a task type (those kept in `params`). */
  paramNamesOf(type: string): ReadonlySet<string>;
  /** The rules of a project's parameter versions: the names of a type's parameters, and each one's schema. */
  paramRules: ParamRules;
  /**
   * Checks a worker's answer against the type's `<Type>Response` schema: a message naming the first
   * problems (JSON pointer and rule), or null when it is valid.
   */
  checkResponse(type: string, response: Json): string | null;
  /** Property names a schema defines, through allOf/anyOf/oneOf and if/then. */
  propertyNames(schema: Json | undefined): Set<string>;
  /** Whether the operation a request reaches takes an Idempotency-Key (`x-retry: {repeat: key}`: http/idempotency.ts). */
  takesKey(method: string, path: string): boolean;
  /** The JSON body schema of the operation a request reaches (`POST`, `/v1/batches/b/finalize`), if it has one. */
  bodySchemaOf(method: string, path: string): Json | undefined;
  /** The list filters (query parameters typed as arrays) of the operation a request reaches, if it has any. */
  listQueryParamsOf(method: string, path: string): ReadonlySet<string> | undefined;
  /** A validator of one schema of the document (a branch of a oneOf), compiled once (http/validation-words.ts). */
  validatorOf(schema: Json): ValidateFunction;
  /**
   * Checks a JSON answer of an operation against its documented response of that status: a message
   * naming the first problems, or null when it is valid (or the operation documents no JSON body).
   */
  checkAnswer(operationId: string, status: number, body: unknown): string | null;
}

/** Reads a contract the first time it is asked for, then answers that one. */
function once<N extends ContractName>(name: N): () => Contract<N> {
  let contract: Contract<N> | undefined;
  return () => (contract ??= readContract(name));
}
const contracts: { [N in ContractName]: () => Contract<N> } = {
  current: once('current'),
  legacy: once('legacy'),
  workforce: once('workforce'),
};

/** The contract of a generation (or of the worker API), read and compiled once per process. */
export function loadContract<Name extends ContractName>(generation: Name): Contract<Name> {
  return contracts[generation]();
}

function readContract<Name extends ContractName>(generation: Name): Contract<Name> {
  const doc: Json = parse(readFileSync(path.join(generatedDir, `${generation}.openapi.yaml`), 'utf8'));
  // The document does not change: each reference is followed once (requests resolve the same ones).
  const targets = new Map<string, Json | undefined>();
  const target = (ref: string): Json | undefined => {
    if (targets.has(ref)) return targets.get(ref);
    const found = ref
      .slice(2)
      .split('/')
      .reduce((acc: Json | undefined, k: string) => acc?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
    targets.set(ref, found);
    return found;
  };
  const resolve = (node: Json | undefined): Json | undefined => {
    let n = node;
    while (n && typeof n.$ref === 'string') n = target(n.$ref);
    return n;
  };
  /** Property names a schema defines, through allOf/anyOf/oneOf and if/then. */
  const propertyNames = (schema: Json | undefined, out = new Set<string>()): Set<string> => {
    const s = resolve(schema);
    if (!s) return out;
    for (const k of Object.keys(s.properties ?? {})) out.add(k);
    for (const sub of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? []), s.then, s.else]) propertyNames(sub, out);
    return out;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: generation });
  const details = resolve(doc.components.schemas.TaskTypeDetails)!;
  const paramNamesOf = (type: string): ReadonlySet<string> => {
    const branch = details.oneOf.map(resolve).find((b: Json) => b.properties.type.const === type);
    return propertyNames(branch?.properties.params);
  };
  const creations = new Map<string, CreationOperation>();
  const operationIds: string[] = [];
  const operationsById = new Map<string, Json>();
  const bodies: { method: string; route: RegExp; literal: boolean; schema: Json }[] = [];
  const lists: { method: string; route: RegExp; literal: boolean; names: ReadonlySet<string> }[] = [];
  const keyed: { method: string; route: RegExp }[] = [];
  for (const [p, item] of Object.entries<Json>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      operationIds.push(op.operationId);
      operationsById.set(op.operationId, op);
      const route = new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      const jsonBody: Json | undefined = resolve(op.requestBody)?.content?.['application/json']?.schema;
      if (op['x-retry']?.repeat === 'key') keyed.push({ method: method.toUpperCase(), route });
      if (jsonBody) bodies.push({ method: method.toUpperCase(), route, literal: !p.includes('{'), schema: jsonBody });
      const listNames = [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map((ref: Json) => resolve(ref))
        .filter((param): param is Json => param?.in === 'query' && resolve(param.schema)?.type === 'array')
        .map((param) => String(param.name));
      if (listNames.length) lists.push({ method: method.toUpperCase(), route, literal: !p.includes('{'), names: new Set(listNames) });
      const m = /^\/v1\/task\/([a-z]+)$/.exec(p);
      if (method === 'post' && m) {
        const bodySchema: Json = op.requestBody.content['application/json'].schema;
        // The stored type of the alias path (documentranscription) is its canonical type.
        const example = Object.values<Json>(op.responses['200'].content['application/json'].examples)[0]!;
        const type = String(example.value.type);
        const pointer = `${generation}#/paths/${p.replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema`;
        let validate: ValidateFunction | undefined;
        creations.set(p, {
          operationId: op.operationId,
          path: p,
          type,
          paramNames: paramNamesOf(type),
          bodySchema,
          checkMerged(body) {
            validate ??= ajv.compile({ $ref: pointer });
            const { project: _p, batch: _b, project_param_version: _v, ...rest } = body;
            // A project may keep numbers as the strings a client sent: typed, they meet the bounds.
            const typed = coerceBody(rest, bodySchema, resolve, false);
            if (validate(typed)) return null;
            const e = validate.errors?.find((x) => x.keyword === 'required') ?? validate.errors?.[0];
            if (!e) return 'the merged parameters are invalid';
            return e.keyword === 'required'
              ? `${String(e.params.missingProperty)} is required`
              : `${e.instancePath.slice(1).replaceAll('/', '.') || 'body'} ${e.message ?? 'is invalid'}`;
          },
        });
      }
    }
  }
  const acceptsForms = JSON.stringify(doc.paths).includes('"application/x-www-form-urlencoded"');
  // A literal path wins over a template that also matches it (`/v1/task/categorization`).
  bodies.sort((a, b) => Number(b.literal) - Number(a.literal));
  lists.sort((a, b) => Number(b.literal) - Number(a.literal));
  const bodySchemaOf = (method: string, path: string) => bodies.find((b) => b.method === method && b.route.test(path))?.schema;
  const takesKey = (method: string, path: string) => keyed.some((k) => k.method === method && k.route.test(path));
  const listQueryParamsOf = (method: string, path: string) => lists.find((l) => l.method === method && l.route.test(path))?.names;
  const responseChecks = new Map<string, ValidateFunction>();
  const checkResponse = (type: string, response: Json): string | null => {
    let validate = responseChecks.get(type);
    if (!validate) {
      const branch = details.oneOf.map(resolve).find((b: Json) => b.properties.type.const === type);
      const ref: unknown = branch?.properties.response?.oneOf?.[0]?.$ref;
      if (typeof ref !== 'string') return `cannot be checked: no response schema for task type "${type}"`;
      validate = ajv.compile({ $ref: `${generation}${ref}` });
      responseChecks.set(type, validate);
    }
    if (validate(response)) return null;
    return (validate.errors ?? [])
      .slice(0, 3)
      .map(
        (e) =>
          `${e.instancePath.slice(1).replaceAll('/', '.') || '(the answer)'} ${e.message ?? 'is invalid'}${e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : ''}`,
      )
      .join('; ');
  };
  // A schema of the document compiled on its own: its references made absolute (`current#/components/...`).
  const nodeChecks = new WeakMap<Json, ValidateFunction>();
  const absolute = (node: unknown): unknown =>
    Array.isArray(node)
      ? node.map(absolute)
      : node !== null && typeof node === 'object'
        ? Object.fromEntries(
            Object.entries(node).map(([k, v]) => [
              k,
              k === '$ref' && typeof v === 'string' && v.startsWith('#') ? `${generation}${v}` : absolute(v),
            ]),
          )
        : node;
  const validatorOf = (schema: Json): ValidateFunction => {
    let validate = nodeChecks.get(schema);
    if (!validate) {
      const compiled = absolute(schema);
      if (!isRecord(compiled)) throw new Error('a schema of the contract is not an object');
      validate = ajv.compile(compiled);
      nodeChecks.set(schema, validate);
    }
    return validate;
  };
  /** Every schema the body schema gives the property `name` (one per branch of a oneOf or if/then). */
  const propertySchemas = (schema: Json | undefined, name: string, out: Json[] = []): Json[] => {
    const s = resolve(schema);
    if (!s) return out;
    if (s.properties?.[name]) out.push(s.properties[name]);
    for (const sub of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? []), s.then, s.else]) propertySchemas(sub, name, out);
    return out;
  };
  const paramRules: ParamRules = {
    namesOf: paramNamesOf,
    check(type, params) {
      const creation = [...creations.values()].find((c) => c.type === type);
      if (!creation) return null;
      // As a task's creation takes them: numbers may come as the strings a client sent.
      const typed = coerceBody(params, creation.bodySchema, resolve, false);
      if (!isRecord(typed)) return null;
      for (const [name, value] of Object.entries(typed)) {
        const schemas = propertySchemas(creation.bodySchema, name);
        if (schemas.length === 0 || schemas.some((schema) => validatorOf(schema)(value))) continue;
        const e = validatorOf(schemas[0]!).errors?.[0];
        return `${name}${e?.instancePath.replaceAll('/', '.') ?? ''} ${e?.message ?? 'is invalid'}`;
      }
      return null;
    },
  };
  // Answers are checked with this document's compiled schemas, shared by every operation (the
  // validator's own response check compiled every schema an answer reaches again for each operation
  // and status: most of a server's CPU in a run that reaches every operation once).
  const answerChecks = new Map<string, ValidateFunction | null>();
  const checkAnswer = (operationId: string, status: number, body: unknown): string | null => {
    const key = `${operationId} ${status}`;
    let validate = answerChecks.get(key);
    if (validate === undefined) {
      const responses = operationsById.get(operationId)?.responses ?? {};
      const schema: Json | undefined = resolve(responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default)
        ?.content?.['application/json']?.schema;
      validate = schema ? validatorOf(schema) : null;
      answerChecks.set(key, validate);
    }
    if (!validate || validate(body)) return null;
    return (validate.errors ?? [])
      .slice(0, 3)
      .map((e) => `${e.instancePath || '(the body)'} ${e.message ?? 'is invalid'}`)
      .join('; ');
  };
  return {
    generation,
    doc,
    creations,
    operationIds,
    resolve,
    acceptsForms,
    paramNamesOf,
    paramRules,
    checkResponse,
    propertyNames: (schema) => propertyNames(schema),
    takesKey,
    bodySchemaOf,
    listQueryParamsOf,
    validatorOf,
    checkAnswer,
  };
}
