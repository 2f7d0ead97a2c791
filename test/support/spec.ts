// The bundled contracts as data, and ajv validators over them (JSON Schema 2020-12, as OpenAPI 3.1).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const generations = ['current', 'legacy'] as const;
export type Generation = (typeof generations)[number];
export const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;

// Loose views of the OpenAPI document: the tests walk it generically.
export type Json = Record<string, any>;

export function loadBundle(gen: Generation): Json {
  return parse(readFileSync(path.join(root, 'generated', `${gen}.openapi.yaml`), 'utf8')) as Json;
}

export interface OperationRef {
  gen: Generation;
  path: string;
  method: (typeof methods)[number];
  op: Json;
  pointer: string;
}

const escape = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

/** Every operation under `paths` (webhooks excluded), in document order. */
export function operations(gen: Generation, doc = loadBundle(gen)): OperationRef[] {
  const out: OperationRef[] = [];
  for (const [p, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of methods) {
      if (item[method]) out.push({ gen, path: p, method, op: item[method], pointer: `#/paths/${escape(p)}/${method}` });
    }
  }
  return out;
}

/** Follows a local `$ref` (as left by the bundler) to its target. */
export function deref<T = Json>(doc: Json, node: T): T {
  let n: any = node;
  while (n && typeof n === 'object' && typeof n.$ref === 'string' && n.$ref.startsWith('#/')) {
    n = n.$ref
      .slice(2)
      .split('/')
      .map((s: string) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((acc: any, key: string) => acc?.[key], doc);
  }
  return n as T;
}

/** One ajv instance per generation holding the whole bundled document under `$id: <gen>`. */
export function makeValidator(gen: Generation, doc = loadBundle(gen)) {
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
  return '#/' + parts.map(escape).join('/');
}
