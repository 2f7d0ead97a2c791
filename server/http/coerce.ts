// Creation bodies may carry numbers and booleans as strings (form bodies always do; JSON may:
// `"min_width": "30"`), and a form's single repeated key is a one-entry list. This gives every
// value the type its schema asks for, before validation, so that the rules see typed values.
// Every request body, creation or not, also loses the properties sent as `null` that the contract
// does not type as nullable: clients built from typed models send `null` for "not given".
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
const declaredLookups = new WeakMap<Json, Map<string, Json[]>>();

/** propertySchemas, remembered per schema object and key (every creation request asks the same). */
function schemasOfProperty(schema: Json, key: string, resolve: Resolve, declaredOnly = false): Json[] {
  const cache = declaredOnly ? declaredLookups : lookups;
  let byKey = cache.get(schema);
  if (!byKey) {
    byKey = new Map();
    cache.set(schema, byKey);
  }
  let found = byKey.get(key);
  if (!found) {
    found = propertySchemas(schema, key, resolve, [], declaredOnly);
    // Stryker disable next-line all: the cache's bound (keys are the client's, metadata takes any: a bounded memory); answers are the same
    if (byKey.size < 512) byKey.set(key, found);
  }
  return found;
}

/** The schemas that apply to an object's property `key`, across composition keywords. */
function propertySchemas(schema: Json | undefined, key: string, resolve: Resolve, out: Json[] = [], declaredOnly = false): Json[] {
  const s = resolve(schema);
  if (!s) return out;
  const direct = s.properties?.[key] ?? (!declaredOnly && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
  if (direct) out.push(resolve(direct)!);
  for (const sub of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? []), s.then, s.else])
    propertySchemas(sub, key, resolve, out, declaredOnly);
  return out;
}

/** Whether a schema (through composition) takes JSON null; a schema that says nothing takes anything. */
function takesNull(schema: Json | undefined, resolve: Resolve): boolean {
  const s = resolve(schema);
  if (!s || typeof s !== 'object') return true;
  const t = types(s);
  if (t.length > 0 && !t.includes('null')) return false;
  if ('const' in s) return s.const === null;
  if (Array.isArray(s.enum) && !s.enum.includes(null)) return false;
  if (s.allOf && !s.allOf.every((x: Json) => takesNull(x, resolve))) return false;
  for (const alternatives of [s.anyOf, s.oneOf]) if (alternatives && !alternatives.some((x: Json) => takesNull(x, resolve))) return false;
  return true;
}

/**
 * Whether a property sent as `null` counts as not given: the contract declares the property (in
 * `properties`, not as a free-form object's `additionalProperties`, whose nulls are data) and no
 * schema of it takes null.
 */
function nullMeansAbsent(schemas: Json[], key: string, resolve: Resolve): boolean {
  const declared = schemas.flatMap((s) => schemasOfProperty(s, key, resolve, true));
  return declared.length > 0 && !declared.some((d) => takesNull(d, resolve));
}

const itemLookups = new WeakMap<Json[], Json[]>();

/** The item schemas of array schemas, remembered per list (schemasOfProperty's lists are kept). */
function itemSchemas(schemas: Json[], resolve: Resolve): Json[] {
  let items = itemLookups.get(schemas);
  if (!items) {
    items = schemas.flatMap((s) => (s.items ? [resolve(s.items)!] : []));
    itemLookups.set(schemas, items);
  }
  return items;
}

/** The contract's rule for text (no U+0000): it says nothing of numbers. */
const textPattern = '^[^\\u0000]*$';

/**
 * Whether a string may become a `kind` value for these schemas: when a schema wants that kind and
 * no string, or when its string branch is the contract's lenient form (`type: [integer, string]`
 * with a pattern of its digits). A true union such as CategoryChoiceValue (`[string, number]`,
 * whose only pattern is the text rule that refuses U+0000) keeps `"3"` as the string it is.
 */
function mayBecome(schemas: Json[], kind: 'number' | 'boolean'): boolean {
  return schemas.some((s) => {
    const t = types(s);
    const wants = kind === 'number' ? t.includes('integer') || t.includes('number') : t.includes('boolean');
    return wants && (!t.includes('string') || (typeof s.pattern === 'string' && s.pattern !== textPattern));
  });
}

/** How a body is treated: `types` gives strings the types their schemas ask for (creations). */
interface Mode {
  types: boolean;
  form: boolean;
}

function coerceValue(value: unknown, schemas: Json[], resolve: Resolve, mode: Mode): unknown {
  if (schemas.length === 0) return value;
  const { form } = mode;
  if (typeof value === 'string' && mode.types) {
    if (numeric.test(value) && mayBecome(schemas, 'number')) return Number(value);
    if (boolean.test(value) && mayBecome(schemas, 'boolean')) return value.toLowerCase() === 'true';
    // A form's single repeated key arrives as a string; JSON keeps its types.
    if (form) {
      const wanted = new Set(schemas.flatMap(types));
      if (wanted.has('array') && !wanted.has('string')) return [coerceValue(value, itemSchemas(schemas, resolve), resolve, mode)];
    }
    return value;
  }
  if (Array.isArray(value)) {
    const items = itemSchemas(schemas, resolve);
    return value.map((v) => coerceValue(v, items, resolve, mode));
  }
  if (value && typeof value === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === null && nullMeansAbsent(schemas, k, resolve)) continue;
      out[k] = coerceValue(
        v,
        schemas.length === 1 ? schemasOfProperty(schemas[0]!, k, resolve) : schemas.flatMap((s) => schemasOfProperty(s, k, resolve)),
        resolve,
        mode,
      );
    }
    return out;
  }
  return value;
}

/**
 * A creation body with typed values and without its "not given" nulls. A top-level property the
 * contract does not declare carries nothing when sent as `null`, so it is dropped too (clients
 * built from another service's models send them; a documented name a creation does not take is
 * refused only when given a value). `asSent` names top-level properties kept exactly as sent (a
 * training task's answers).
 */
export function coerceBody(body: unknown, schema: Json, resolve: Resolve, form: boolean, asSent?: ReadonlySet<string>): unknown {
  const top = resolve(schema)!;
  const mode = { types: true, form };
  if (!body || typeof body !== 'object' || Array.isArray(body)) return coerceValue(body, [top], resolve, mode);
  const out: Json = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === null && (nullMeansAbsent([top], k, resolve) || schemasOfProperty(top, k, resolve, true).length === 0)) continue;
    out[k] = asSent?.has(k) ? v : coerceValue(v, schemasOfProperty(top, k, resolve), resolve, mode);
  }
  return out;
}

/** Any other request body without its "not given" nulls (values keep their types). */
export function dropAbsentNulls(body: unknown, schema: Json, resolve: Resolve): unknown {
  return coerceValue(body, [resolve(schema)!], resolve, { types: false, form: false });
}
