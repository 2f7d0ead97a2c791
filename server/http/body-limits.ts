// What a request body may be before any handler sees it: at most 10 MB, JSON nested at most
// MAX_JSON_DEPTH levels (checked on the raw bytes, before JSON.parse), and, once parsed, text that
// PostgreSQL can store (no U+0000, no lone UTF-16 surrogate) and numbers that JSON can hold (no
// 1e309 read as Infinity). The parsers run after authentication (see app.ts), so a caller without a
// valid key costs no parsing at all.
import express, { type RequestHandler } from 'express';
import type { Contract, ContractName, Json } from './contract.ts';
import { HttpError } from './errors.ts';

const MAX_BODY = '10mb';
/** Deepest nesting of arrays and objects in a JSON body; deeper → 400 (the contract's "Limits"). */
export const MAX_JSON_DEPTH = 64;

/** Throws a 400 when the raw JSON nests deeper than MAX_JSON_DEPTH (strings skipped, one pass). */
export function checkJsonDepth(buf: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next byte is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH)
        throw new HttpError(400, `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels, the limit.`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/**
 * The body parsers of a generation: JSON always, forms where the contract accepts them. `limit`
 * (bytes; 10 MB by default) is checked against Content-Length before anything is read, and while
 * reading a body sent without one.
 */
export function bodyParsers(acceptsForms: boolean, limit: number | string = MAX_BODY): RequestHandler[] {
  return [
    express.json({ limit, verify: (_req, _res, buf) => checkJsonDepth(buf) }),
    // qs nests form keys at most 5 levels (`a[b][c]...`) and reads at most 1000 parameters.
    ...(acceptsForms ? [express.urlencoded({ extended: true, limit: MAX_BODY })] : []),
  ];
}

/** Whether a parsed value can be taken as it is (refusedIn, without building where each value is). */
function storable(value: unknown): boolean {
  if (typeof value === 'string') return !text.test(value);
  if (typeof value === 'number') return Number.isFinite(value);
  if (value && typeof value === 'object') {
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      if (text.test(k) || !storable(Reflect.get(value, k))) return false;
    }
  }
  return true;
}

/** Why a parsed value cannot be taken, naming where (`body.a.b`), or null when it can. */
function refusedIn(value: unknown, where: string): string | null {
  if (typeof value === 'string') return textProblem(value, where);
  if (typeof value === 'number') {
    return Number.isFinite(value)
      ? null
      : `${where} is a number too large for JSON (it reads as infinity); send at most ${Number.MAX_VALUE}.`;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const inKey = textProblem(k, `${where} (a key)`);
      if (inKey) return inKey;
      const found = refusedIn(v, `${where}.${k}`);
      if (found) return found;
    }
  }
  return null;
}

// In `u` mode a surrogate pair is one code point, so only a lone surrogate matches.
const LONE_SURROGATE = /\p{Cs}/u;
/** Text that textProblem refuses: U+0000 or a lone surrogate. */
const text = /\0|\p{Cs}/u;

function textProblem(text: string, where: string): string | null {
  // PostgreSQL stores no U+0000 in text or JSON, and no lone surrogate in UTF-8.
  if (text.includes('\0')) return `${where} contains the character U+0000, which is not accepted in text.`;
  if (LONE_SURROGATE.test(text))
    return `${where} contains a lone UTF-16 surrogate (such as \\ud800), which is not text; send a complete surrogate pair.`;
  return null;
}

/** A numeric query value beyond what a number can hold (`1e309`, 400 digits), naming it. */
function hugeQueryNumber(query: unknown, numeric: ReadonlySet<string>): string | null {
  for (const [name, value] of Object.entries(query && typeof query === 'object' ? query : {})) {
    if (!numeric.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string' && v.trim() !== '' && !Number.isFinite(Number(v)))
        return `query.${name} is a number too large (it reads as infinity).`;
    }
  }
  return null;
}

/** The names of the contract's numeric query parameters (`limit`, `offset`, ...). */
function numericQueryParams(contract: Contract<ContractName>): Set<string> {
  const names = new Set<string>();
  for (const item of Object.values<Json>(contract.doc.paths)) {
    for (const op of Object.values<Json>(item)) {
      for (const ref of Array.isArray(op?.parameters) ? op.parameters : []) {
        const param = contract.resolve(ref);
        const types = [param?.schema?.type].flat();
        if (param?.in === 'query' && (types.includes('integer') || types.includes('number'))) names.add(param.name);
      }
    }
  }
  return names;
}

/** Why a parsed body cannot be stored (U+0000, a lone surrogate, infinity), naming where; null when it can. */
export const unstorable = (body: unknown): string | null => (storable(body) ? null : refusedIn(body, 'body'));

/**
 * Refuses (400, naming where) a body or query that holds what cannot be stored, a numeric query
 * value beyond any number, or a path with %00.
 */
export function storableInput(contract: Contract<ContractName>): RequestHandler {
  const numeric = numericQueryParams(contract);
  return (req, _res, next) => {
    const problem =
      unstorable(req.body) ??
      (storable(req.query) ? null : refusedIn(req.query, 'query')) ??
      hugeQueryNumber(req.query, numeric) ??
      (/%00/.test(req.path) ? 'the path contains the character U+0000, which is not accepted in text.' : null);
    next(problem ? new HttpError(400, problem) : undefined);
  };
}
