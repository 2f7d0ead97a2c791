// Creation bodies may carry numbers and booleans as strings (form bodies always do; JSON may:
// `"min_width": "30"`), and a form's single repeated key is a one-entry list. This gives every
// value the type its schema asks for, before validation, so that the rules see typed values.
import type { Json } from './contract.ts';

type Resolve = (node: Json | undefined) => Json | undefined;

// Leading zeros too (`"0100"`): the contract's patterns accept them, and a value left a string
// would escape the schema's `maximum`.
const numeric = /^-?[0-9]+(\.[0-9]+)?$/;
const boolean = /^(true|false)$/i;

function types(schema: Json): string[] {
  return Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
}

// The contract's schema objects live as long as the process: their lookups are kept.
const lookups = new WeakMap<Json, Map<string, Json[]>>();

/** propertySchemas, remembered per schema object and key (every creation request asks the same). */
function schemasOfProperty(schema: Json, key: string, resolve: Resolve): Json[] {
  let byKey = lookups.get(schema);
  if (!byKey) lookups.set(schema, (byKey = new Map()));
  let found = byKey.get(key);
  if (!found) {
    found = propertySchemas(schema, key, resolve);
    // Stryker disable next-line all: the cache's bound (keys are the client's, metadata takes any: a bounded memory); answers are the same
    if (byKey.size < 512) byKey.set(key, found);
  }
  return found;
}

/** The schemas that apply to an object's property `key`, across composition keywords. */
function propertySchemas(schema: Json | undefined, key: string, resolve: Resolve, out: Json[] = []): Json[] {
  const s = resolve(schema);
  if (!s) return out;
  const direct = s.properties?.[key] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
  if (direct) out.push(resolve(direct)!);
  for (const sub of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? []), s.then, s.else]) propertySchemas(sub, key, resolve, out);
  return out;
}

function itemSchemas(schemas: Json[], resolve: Resolve): Json[] {
  return schemas.flatMap((s) => (s.items ? [resolve(s.items)!] : []));
}

/**
 * Whether a string may become a `kind` value for these schemas: when a schema wants that kind and
 * no string, or when its string branch is the contract's lenient form (`type: [integer, string]`
 * with a `pattern`). A true union such as CategoryChoiceValue (`[string, number]`, no pattern)
 * keeps `"3"` as the string it is.
 */
function mayBecome(schemas: Json[], kind: 'number' | 'boolean'): boolean {
  return schemas.some((s) => {
    const t = types(s);
    const wants = kind === 'number' ? t.includes('integer') || t.includes('number') : t.includes('boolean');
    return wants && (!t.includes('string') || typeof s.pattern === 'string');
  });
}

function coerceValue(value: unknown, schemas: Json[], resolve: Resolve, form: boolean): unknown {
  if (schemas.length === 0) return value;
  const wanted = new Set(schemas.flatMap(types));
  if (typeof value === 'string') {
    if (numeric.test(value) && mayBecome(schemas, 'number')) return Number(value);
    if (boolean.test(value) && mayBecome(schemas, 'boolean')) return value.toLowerCase() === 'true';
    // A form's single repeated key arrives as a string; JSON keeps its types.
    if (form && wanted.has('array') && !wanted.has('string')) return [coerceValue(value, itemSchemas(schemas, resolve), resolve, form)];
    return value;
  }
  if (Array.isArray(value)) {
    const items = itemSchemas(schemas, resolve);
    return value.map((v) => coerceValue(v, items, resolve, form));
  }
  if (value && typeof value === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) {
      out[k] = coerceValue(v, schemas.length === 1 ? schemasOfProperty(schemas[0]!, k, resolve) : schemas.flatMap((s) => schemasOfProperty(s, k, resolve)), resolve, form);
    }
    return out;
  }
  return value;
}

export function coerceBody(body: unknown, schema: Json, resolve: Resolve, form: boolean): unknown {
  return coerceValue(body, [resolve(schema)!], resolve, form);
}
