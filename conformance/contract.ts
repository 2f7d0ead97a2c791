// The bundled contracts as data, ajv validators over them (JSON Schema 2020-12, as OpenAPI 3.1),
// and what the conformance suite derives from them: which operation a request path is, which
// (operation, status) pairs exist. Shipped with the CLI, so it imports neither vitest nor server/.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { Generation } from './types.ts';

export type { Generation } from './types.ts';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const generations = ['current', 'legacy'] as const satisfies readonly Generation[];
export const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;
export type Method = (typeof methods)[number];

// Loose views of the OpenAPI document: the suite walks it generically.
export type Json = Record<string, any>;

/** A bundled contract in `generated/`: a generation's, or the worker API's (`workforce`). */
export type Bundle = Generation | 'workforce';

export function loadBundle(gen: Bundle): Json {
  return parse(readFileSync(path.join(root, 'generated', `${gen}.openapi.yaml`), 'utf8')) as Json;
}

export interface OperationRef {
  gen: Bundle;
  path: string;
  method: Method;
  op: Json;
  pointer: string;
}

const escapePointerToken = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

/** Every operation under `paths` (webhooks excluded), in document order. */
export function operations(gen: Bundle, doc = loadBundle(gen)): OperationRef[] {
  const out: OperationRef[] = [];
  for (const [p, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of methods) {
      if (item[method]) out.push({ gen, path: p, method, op: item[method], pointer: `#/paths/${escapePointerToken(p)}/${method}` });
    }
  }
  return out;
}

/** Follows a local `$ref` (as left by the bundler) to its target. */
export function deref<T = Json>(doc: Json, node: T): T {
  return derefWithPointer(doc, node, '').node;
}

/** Follows local `$ref`s and says where it ended (the last `$ref`'s pointer, or `pointer` when there was none). */
function derefWithPointer<T = Json>(doc: Json, node: T, pointer: string): { node: T; pointer: string } {
  let n: any = node;
  let at = pointer;
  while (n && typeof n === 'object' && typeof n.$ref === 'string' && n.$ref.startsWith('#/')) {
    at = n.$ref;
    n = n.$ref
      .slice(2)
      .split('/')
      .map((s: string) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((acc: any, key: string) => acc?.[key], doc);
  }
  return { node: n as T, pointer: at };
}

/** One ajv instance per bundle holding the whole bundled document under `$id: <gen>`. */
export function makeValidator(gen: Bundle, doc = loadBundle(gen)) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: gen });
  const cache = new Map<string, ValidateFunction>();
  return (pointer: string): ValidateFunction => {
    let v = cache.get(pointer);
    if (!v) {
      v = ajv.compile({ $ref: `${gen}${pointer}` });
      cache.set(pointer, v);
    }
    return v;
  };
}

export function pointerOf(...parts: string[]): string {
  return '#/' + parts.map(escapePointerToken).join('/');
}

/** A short text of ajv's errors: `/params/x must be string; ...`. */
export function ajvErrors(v: ValidateFunction, max = 5): string {
  // A oneOf reports the same problem once per branch: each text is shown once.
  const texts = (v.errors ?? []).map(
    (e) =>
      `${e.instancePath || '(body)'} ${e.message ?? e.keyword}${e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties' ? ` (${JSON.stringify(e.params)})` : ''}`,
  );
  return [...new Set(texts)].slice(0, max).join('; ');
}

// ---- the contract as the conformance suite sees it ----------------------------------------------

export interface ContractOperation extends OperationRef {
  operationId: string;
  /** The path's own parameters and the operation's, dereferenced. */
  parameters: Json[];
  /** JSON pointer of each parameter's schema (same order). */
  parameterSchemaPointers: string[];
  /** Matches a concrete request path; the groups are the template's parameters in order. */
  regex: RegExp;
  templated: boolean;
  /** Documented statuses, as written (`200`, `400`, maybe `4XX` or `default`). */
  statuses: string[];
}

export interface DocumentedResponse {
  /** The response object (dereferenced). */
  response: Json;
  /** JSON pointer of that response object, for schema pointers under it. */
  pointer: string;
  /** The key it is documented under (`200`, `4XX`, `default`). */
  key: string;
}

export interface Contract {
  generation: Bundle;
  doc: Json;
  operations: ContractOperation[];
  byId: Map<string, ContractOperation>;
  validator: (pointer: string) => ValidateFunction;
  /** The operation a request is, concrete paths before templated ones; undefined when none is. */
  match(method: string, requestPath: string): ContractOperation | undefined;
  /** The documented response of a status (exact, then `4XX`, then `default`). */
  response(op: ContractOperation, status: number): DocumentedResponse | undefined;
  /** The request body's media types of an operation, dereferenced. */
  requestBody(op: ContractOperation): Json | undefined;
  /** JSON pointer of the request body's schema for a media type. */
  requestSchemaPointer(op: ContractOperation, media?: string): string | undefined;
  resolve<T = Json>(node: T): T;
  /** JSON pointer of each webhook's body schema (`notifyTaskCompleted`, ...), by operationId. */
  webhookBodies: Map<string, string>;
}

function templateRegex(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

const contracts = new Map<Bundle, Contract>();

/** The contract of a generation (or of the worker API), loaded once per process. */
export function loadContract(generation: Bundle): Contract {
  const cached = contracts.get(generation);
  if (cached) return cached;
  const doc = loadBundle(generation);
  const ops: ContractOperation[] = operations(generation, doc).map((ref) => {
    const item = doc.paths[ref.path];
    const located = [
      ...(item.parameters ?? []).map((p: Json, i: number) =>
        derefWithPointer(doc, p, `#/paths/${escapePointerToken(ref.path)}/parameters/${i}`),
      ),
      ...(ref.op.parameters ?? []).map((p: Json, i: number) => derefWithPointer(doc, p, `${ref.pointer}/parameters/${i}`)),
    ];
    return {
      ...ref,
      operationId: String(ref.op.operationId),
      // A parameter given as JSON (`content: application/json`, an import's `params`) is read by its
      // media type's schema, and sent as JSON text.
      parameters: located.map((l) =>
        l.node.content?.['application/json'] ? { ...l.node, schema: l.node.content['application/json'].schema, json: true } : l.node,
      ),
      parameterSchemaPointers: located.map((l) =>
        l.node.content?.['application/json'] ? `${l.pointer}/content/application~1json/schema` : `${l.pointer}/schema`,
      ),
      regex: templateRegex(ref.path),
      templated: ref.path.includes('{'),
      statuses: Object.keys(ref.op.responses ?? {}),
    };
  });
  // Concrete paths first (`/v1/task/annotation` before `/v1/task/{taskId}`), then fewer parameters.
  const ordered = [...ops].sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));
  const contract: Contract = {
    generation,
    doc,
    operations: ops,
    byId: new Map(ops.map((o) => [o.operationId, o])),
    validator: makeValidator(generation, doc),
    match(method, requestPath) {
      const m = method.toLowerCase();
      return ordered.find((o) => o.method === m && o.regex.test(requestPath));
    },
    response(op, status) {
      const responses = op.op.responses ?? {};
      const key = [String(status), `${String(status)[0]}XX`, `${String(status)[0]}xx`, 'default'].find((k) => responses[k] !== undefined);
      if (!key) return undefined;
      const { node, pointer } = derefWithPointer(doc, responses[key], `${op.pointer}/responses/${escapePointerToken(key)}`);
      return { response: node, pointer, key };
    },
    requestBody(op) {
      return deref(doc, op.op.requestBody);
    },
    requestSchemaPointer(op, media = 'application/json') {
      if (!op.op.requestBody) return undefined;
      const { node, pointer } = derefWithPointer(doc, op.op.requestBody, `${op.pointer}/requestBody`);
      return node?.content?.[media]?.schema ? `${pointer}/content/${escapePointerToken(media)}/schema` : undefined;
    },
    resolve: (node) => deref(doc, node),
    webhookBodies: new Map(
      Object.entries<Json>(doc.webhooks ?? {}).flatMap(([name, item]) => {
        const post = deref(doc, item).post;
        if (!post?.requestBody) return [];
        const { node, pointer } = derefWithPointer(doc, post.requestBody, `#/webhooks/${escapePointerToken(name)}/post/requestBody`);
        return node?.content?.['application/json']?.schema
          ? [[String(post.operationId), `${pointer}/content/application~1json/schema`] as const]
          : [];
      }),
    ),
  };
  contracts.set(generation, contract);
  return contract;
}

/**
 * Who may call an operation, by its `security` (the document's when it names none): `public` needs
 * no credential (`security: []`), `session` a member's console session alone (every requirement
 * names `memberSession` only), `key` an API key (or a session, where the contract allows one).
 */
export function credentialOf(contract: Contract, op: ContractOperation): 'public' | 'session' | 'key' {
  const security: Json[] = op.op.security ?? contract.doc.security ?? [];
  if (security.length === 0) return 'public';
  return security.every((s) => Object.keys(s).length === 1 && 'memberSession' in s) ? 'session' : 'key';
}

/** Whether a member's console session may call the operation (some requirement of its security names `memberSession`). */
export function takesSession(contract: Contract, op: ContractOperation): boolean {
  return ((op.op.security ?? contract.doc.security ?? []) as Json[]).some((s) => 'memberSession' in s);
}

/** Every (operationId, status) pair that the contract documents, for coverage. */
export function documentedPairs(contract: Contract): { operationId: string; method: string; path: string; status: string }[] {
  return contract.operations.flatMap((o) =>
    o.statuses.map((status) => ({ operationId: o.operationId, method: o.method.toUpperCase(), path: o.path, status })),
  );
}
