// Reading JSON values whose shape is not guaranteed (task params, a worker's answer, a project's
// parameters): the one place for the small readers the rule modules share (param-rules, the
// synthetic generator, answer-rules). Each returns a safe empty value or undefined instead of
// throwing, so a rule reads defensively and says what is wrong itself.
/** A JSON object as the rules read it (a task's params, an answer). */
export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A record, or an empty one. */
export const asRecord = (value: unknown): Json => (isRecord(value) ? value : {});
/** A list, or an empty one. */
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
/** The records of a list (other items left out). */
export const records = (value: unknown): Json[] => list(value).filter(isRecord);
/** The entries of a record, or none. */
export const entries = (value: unknown): [string, unknown][] => (isRecord(value) ? Object.entries(value) : []);
export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
/** The strings of a list, as they are (empty ones and repeats kept). */
export const strings = (value: unknown): string[] => list(value).filter((v): v is string => typeof v === 'string');

/** The non-empty strings of a list, first occurrence kept (a repeated label names the same kind of object). */
export function distinctStrings(value: unknown): string[] {
  return [...new Set(strings(value).filter((v) => v.length > 0))];
}

/** A value as JSON, for a message (`"car"`, `3`). */
export const show = (value: unknown) => JSON.stringify(value);

// Numbers. Three readers, because the rules read numbers from different places, and each keeps
// what its rules have always accepted: an answer (typed by its schema), a request's parameters (a
// project may keep the form a client sent: any numeric string), and stored params read by the
// synthetic generator (only plain decimals).

/** A finite number (a numeric string is not one). */
export const finiteNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** A number, also from a numeric string as `Number` reads it (`" 5 "`, `"1e3"`). */
export function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

/** A number written in digits: `-12`, `3.5` (no exponent, no sign `+`, no blanks). */
export const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

/** A finite number; a decimal string (DECIMAL) too, in case a value reached params uncoerced. */
export function decimalNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && DECIMAL.test(value)) return Number(value);
  return undefined;
}

/** A whole number of at least `min` (a decimalNumber rounded up), or `fallback` (the contract's default) when absent. */
export function asCount(value: unknown, fallback: number, min = 0): number {
  const n = decimalNumber(value);
  return n === undefined ? fallback : Math.max(min, Math.ceil(n));
}

/** A boolean, or its spelling `true`/`false` in any case; `fallback` otherwise. */
export function asBoolean(value: unknown, fallback: boolean): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return fallback;
}

/**
 * A deep copy of a parsed JSON (or form) value: plain objects, arrays and primitives. A tenth of
 * what structuredClone costs on a request body; a `__proto__` key stays an own property, as JSON.parse made it.
 */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const copy: Json = {};
  for (const key of Object.keys(value)) {
    const v = cloneJson((value as Json)[key]);
    if (key === '__proto__') Object.defineProperty(copy, key, { value: v, enumerable: true, writable: true, configurable: true });
    else copy[key] = v;
  }
  return copy as T;
}

/** Control characters and lone surrogates, which an error text must not carry (the contract's strings refuse U+0000). */
const unprintable = /\p{Cc}|\p{Cs}/gu;

/**
 * What is wrong with a request body JSON.parse refused, for the error text: the parser's words, with
 * the characters of the quoted input that an error text must not carry written as `\u0000`.
 */
export function notValidJson(err: unknown, what = 'The request body'): string {
  const reason = err instanceof Error ? err.message : String(err);
  const printable = reason.replaceAll(unprintable, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${what} is not valid JSON: ${printable}`;
}
