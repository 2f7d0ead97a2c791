// JSON Schema (2020-12, as the contract writes it) → fast-check arbitraries. Covers what the contract
// uses: $ref, type (also type lists), enum, const, properties/required, additionalProperties,
// propertyNames, min/maxProperties, items, min/maxItems, uniqueItems, min/maxLength, pattern,
// formats (uri, email, date-time, date, uuid), minimum/maximum (exclusive too), oneOf/anyOf/allOf.
// Keywords that relate values (if/then/else, not, dependentRequired, unevaluatedProperties) are not
// generated for: callers keep only what the contract's validator accepts.
import fc from 'fast-check';
import type { Json } from './contract.ts';

export interface ArbitraryOptions {
  /** Follows a local `$ref`. */
  resolve: (node: Json) => Json;
  /** Nesting depth after which arrays and objects are kept minimal. */
  softDepth?: number;
  /** Nesting depth after which generation gives up (an invalid null, filtered out by the caller). */
  hardDepth?: number;
}

const asList = (t: unknown): string[] => (Array.isArray(t) ? t.map(String) : typeof t === 'string' ? [t] : []);

/** `allOf` and sibling `$ref`s folded into one schema (structural keywords only). */
export function flatten(schema: Json | boolean | undefined, resolve: (n: Json) => Json): Json {
  if (schema === true || schema === undefined) return {};
  if (schema === false) return { not: {} };
  let s: Json = schema;
  if (typeof s.$ref === 'string') {
    const { $ref: _ref, ...rest } = s;
    s = merge(flatten(resolve({ $ref: s.$ref }), resolve), rest);
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    s = (allOf as Json[]).reduce((acc: Json, sub) => merge(acc, flatten(sub, resolve)), rest);
  }
  return s;
}

/** Two schemas that must both hold, as one (close enough for generation; the validator decides). */
export function merge(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const mine = out[k];
    if (mine === undefined) {
      out[k] = v;
      continue;
    }
    switch (k) {
      case 'properties': {
        const props: Json = { ...mine };
        for (const [name, sub] of Object.entries<Json>(v)) props[name] = props[name] ? { allOf: [props[name], sub] } : sub;
        out.properties = props;
        break;
      }
      case 'required':
        out.required = [...new Set([...(mine as string[]), ...(v as string[])])];
        break;
      case 'type': {
        const both = asList(mine).filter((t) => asList(v).includes(t) || (t === 'integer' && asList(v).includes('number')));
        const other = asList(v).filter((t) => t === 'integer' && asList(mine).includes('number'));
        out.type = [...new Set([...both, ...other])];
        break;
      }
      case 'enum':
        out.enum = (mine as unknown[]).filter((x) => (v as unknown[]).some((y) => JSON.stringify(x) === JSON.stringify(y)));
        break;
      case 'minimum':
      case 'exclusiveMinimum':
      case 'minLength':
      case 'minItems':
      case 'minProperties':
        out[k] = Math.max(mine, v);
        break;
      case 'maximum':
      case 'exclusiveMaximum':
      case 'maxLength':
      case 'maxItems':
      case 'maxProperties':
        out[k] = Math.min(mine, v);
        break;
      case 'items':
        out.items = { allOf: [mine, v] };
        break;
      case 'additionalProperties':
      case 'unevaluatedProperties':
        out[k] = mine === false || v === false ? false : { allOf: [mine, v] };
        break;
      case 'oneOf':
      case 'anyOf':
        // Two alternatives lists: the second one is left to the validator.
        break;
      default:
        // description, title, examples, pattern, format, if/then ...: the first one is kept.
        break;
    }
  }
  return out;
}

const epoch = { min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2099-12-31T23:59:59.999Z'), noInvalidDate: true };

/** The times a service stores (PostgreSQL has no year 0; ISO strings past 9999 need a sign). */
const firstStored = Date.parse('0001-01-01T00:00:00.000Z');
const lastStored = Date.parse('9999-12-31T23:59:59.999Z');
const day = 86_400_000;

/** `YYYY-MM-DDTHH:MM:SS.mmm` of an instant, in UTC (toISOString without the zone; years 0-9999). */
const isoLocal = (ms: number) => new Date(ms).toISOString().slice(0, 23);

/**
 * A time-filter value in one of the forms the contract's `TimeFilter` accepts, for an instant
 * within the stored years: mostly of this century, sometimes within two days of the edges (year
 * 0001, year 9999). Forms: a plain date, `Z` or `z`, minutes only, an offset `+01:00`, `+0100` or
 * the hour alone `+01` (a local time that may fall in year 0000 or stay before 10000), Python's
 * `str(datetime)` (a space, microseconds, no offset) and nine fraction digits. Issue 22 rule 8:
 * these are the values on which a server and its contract were found to disagree.
 */
const timeFilterValue = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: fc.date(epoch).map((d) => d.getTime()) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 * day }).map((n) => firstStored + n) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 * day }).map((n) => lastStored - n) },
    ),
    fc.constantFrom('date', 'z', 'lower-z', 'minutes', 'offset', 'compact', 'hour', 'python', 'nanos'),
    fc.integer({ min: -12, max: 14 }),
  )
  .map(([ms, form, hours]) => {
    const utc = isoLocal(ms);
    switch (form) {
      case 'date':
        return utc.slice(0, 10);
      case 'z':
        return `${utc}Z`;
      case 'lower-z':
        return `${utc.slice(0, 19)}z`;
      case 'minutes':
        return utc.slice(0, 16);
      case 'python':
        return `${utc.replace('T', ' ')}456`;
      case 'nanos':
        return `${utc}123456Z`;
    }
    // The same instant written in a clock `hours` away from UTC, whole hours: the local time must
    // still have four year digits (an instant near 9999-12-31 keeps UTC).
    const local = ms + hours * 3_600_000;
    if (local > lastStored || local < Date.parse('0000-01-01T00:00:00.000Z')) return `${utc}Z`;
    const sign = hours < 0 ? '-' : '+';
    const hh = String(Math.abs(hours)).padStart(2, '0');
    const text = isoLocal(local).slice(0, 19);
    return form === 'offset' ? `${text}${sign}${hh}:00` : form === 'compact' ? `${text}${sign}${hh}00` : `${text.slice(0, 16)}${sign}${hh}`;
  });

/** Text: mostly printable ASCII, sometimes any code point (controls and astral characters included). */
function text(min: number, max: number): fc.Arbitrary<string> {
  const upper = Math.max(min, Math.min(max, min + 24));
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: upper }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: upper }) },
  );
}

/**
 * Numbers within the schema's bounds. Without an upper bound they stay within 1000 of the lower
 * one: the values of a request, not a load test (a vertex count of a million is valid, and makes a
 * server build a response of many megabytes).
 */
function numberArbitrary(s: Json, integer: boolean): fc.Arbitrary<number> {
  const lower = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : typeof s.minimum === 'number' ? s.minimum : undefined;
  const upper = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : typeof s.maximum === 'number' ? s.maximum : undefined;
  const lo = lower ?? (upper !== undefined ? upper - 1000 : -1000);
  const hi = upper ?? lo + 1000;
  if (integer) {
    const min = Math.ceil(typeof s.exclusiveMinimum === 'number' ? lo + 1e-9 : lo);
    const max = Math.floor(typeof s.exclusiveMaximum === 'number' ? hi - 1e-9 : hi);
    return fc.integer({ min, max: Math.max(min, max) });
  }
  return fc.oneof(
    fc.integer({ min: Math.ceil(lo), max: Math.max(Math.ceil(lo), Math.floor(hi)) }),
    fc.double({
      min: lo,
      max: hi,
      noNaN: true,
      noDefaultInfinity: true,
      minExcluded: s.exclusiveMinimum !== undefined,
      maxExcluded: s.exclusiveMaximum !== undefined,
    }),
  );
}

/** The contract's pattern of text: anything but U+0000, which no string the service stores may hold. */
const noNul = '^[^\\u0000]*$';

function stringArbitrary(s: Json): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? 2048;
  const fitting = (a: fc.Arbitrary<string>) => a.filter((x) => [...x].length >= min && [...x].length <= max);
  switch (s.format) {
    case 'date-time':
      return fc.date(epoch).map((d) => d.toISOString());
    case 'date':
      return fc.date(epoch).map((d) => d.toISOString().slice(0, 10));
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fitting(fc.emailAddress());
    case 'uri':
    case 'url':
      return fitting(fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true }));
  }
  if (s.pattern === noNul) return text(min, max).filter((x) => !x.includes('\0'));
  if (typeof s.pattern === 'string') {
    // Time filters: a pattern can allow 2026-02-30, the contract's rule does not.
    if (s.pattern.startsWith('^[0-9]{4}-')) return timeFilterValue;
    return fitting(fc.stringMatching(new RegExp(s.pattern, 'u')));
  }
  return text(min, max);
}

/** A boolean as the contract's lenient creation parameters accept it: `true`, or `"True"`, `"FALSE"` ... */
const lenientBoolean = fc.oneof(
  { weight: 3, arbitrary: fc.boolean() },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.boolean(), fc.constantFrom('lower', 'upper', 'title'))
      .map(([b, c]) => (c === 'lower' ? String(b) : c === 'upper' ? String(b).toUpperCase() : b ? 'True' : 'False')),
  },
);

/** The arbitrary of one schema. */
export function schemaArbitrary(schema: Json | boolean | undefined, options: ArbitraryOptions, depth = 0): fc.Arbitrary<unknown> {
  const hard = options.hardDepth ?? 12;
  if (depth > hard) return fc.constant(null);
  const s = flatten(schema, options.resolve);
  const next = (sub: Json | boolean | undefined) =>
    // Built on demand: recursive schemas (form fields, ontology choices) would never end otherwise.
    fc.constant(null).chain(() => schemaArbitrary(sub, options, depth + 1));

  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return s.enum.length ? fc.constantFrom(...s.enum) : fc.constant(null);
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(s[key])) {
      const { [key]: branches, ...rest } = s;
      return fc.oneof(
        ...(branches as Json[]).map((b) =>
          fc.constant(null).chain(() => schemaArbitrary(merge(rest, flatten(b, options.resolve)), options, depth + 1)),
        ),
      );
    }
  }

  let types = asList(s.type);
  if (types.length === 0) types = s.properties || s.additionalProperties ? ['object'] : s.items ? ['array'] : [];
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });

  // The contract's lenient numbers and booleans: `type: [integer, string]` + pattern (creation bodies).
  const numeric = types.find((t) => t === 'integer' || t === 'number');
  if (numeric && types.includes('string') && typeof s.pattern === 'string') {
    const n = numberArbitrary(s, numeric === 'integer');
    const asText = n
      .filter((x) => Number.isInteger(x) || numeric === 'number')
      .map((x) => (Number.isInteger(x) ? String(x) : x.toFixed(3)));
    const value = fc.oneof({ weight: 3, arbitrary: n as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: asText as fc.Arbitrary<unknown> });
    return types.includes('null') ? fc.oneof(value, fc.constant(null)) : value;
  }
  if (types.includes('boolean') && types.includes('string') && typeof s.pattern === 'string') return lenientBoolean;

  const one = (t: string): fc.Arbitrary<unknown> => {
    const soft = depth >= (options.softDepth ?? 5);
    switch (t) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return numberArbitrary(s, true);
      case 'number':
        return numberArbitrary(s, false);
      case 'string':
        return stringArbitrary(s);
      case 'array': {
        const min = s.minItems ?? 0;
        const max = soft ? min : Math.min(s.maxItems ?? min + 4, min + 4);
        const item = next(s.items);
        return s.uniqueItems
          ? fc.uniqueArray(item, { minLength: min, maxLength: max, selector: (x) => JSON.stringify(x) })
          : fc.array(item, { minLength: min, maxLength: max });
      }
      case 'object': {
        const props: Json = s.properties ?? {};
        const required = new Set<string>(s.required ?? []);
        const model: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, sub] of Object.entries<Json>(props)) {
          // `name: false` forbids the key (a oneOf branch saying which keys go together).
          if ((sub as unknown) === false || (soft && !required.has(name))) continue;
          model[name] = next(sub);
        }
        // Required names that only a sibling keyword defines (e.g. `required` without `properties`).
        for (const name of required) model[name] ??= fc.jsonValue({ maxDepth: 1 });
        const record = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
        const extra = s.additionalProperties;
        if (extra && typeof extra === 'object' && !soft) {
          const minKeys = Math.max(0, (s.minProperties ?? 0) - required.size);
          const keys = s.propertyNames
            ? (next(s.propertyNames) as fc.Arbitrary<string>).filter((k) => typeof k === 'string' && !(k in props))
            : fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in props));
          const dict = fc.dictionary(keys, next(extra), {
            minKeys,
            maxKeys: Math.max(minKeys, Math.min(s.maxProperties ?? minKeys + 3, minKeys + 3)),
            noNullPrototype: true,
          });
          return fc.tuple(record, dict).map(([r, d]) => ({ ...d, ...r }));
        }
        if (extra === true || (extra === undefined && s.unevaluatedProperties === undefined && Object.keys(props).length === 0)) {
          // An open object without declared properties (metadata): any small JSON map.
          return fc
            .tuple(
              record,
              fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), {
                maxKeys: 4,
                noNullPrototype: true,
              }),
            )
            .map(([r, d]) => ({ ...d, ...r }));
        }
        return record;
      }
      default:
        return fc.constant(null);
    }
  };
  return types.length === 1 ? one(types[0]!) : fc.oneof(...types.map(one));
}
