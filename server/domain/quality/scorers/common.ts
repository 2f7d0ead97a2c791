// What every scorer shares: reading answers defensively, the assignment problem (one-to-one
// matching of two lists of items), text similarity from the edit distance, and set measures.
import { distance } from 'fastest-levenshtein';
import { munkres } from 'munkres';
import type { Json } from '../../model.ts';

export type { Json };

// ---------------------------------------------------------------------------------------------
// What a scorer returns. Every details object carries a one-line `summary` a person can read.

/** Two items matched one to one: their indexes in answer a's and answer b's list, and how alike they are. */
export interface Match {
  a: number;
  b: number;
  /** IoU, closeness of points or lines, span overlap, track agreement: in [0, 1]. */
  similarity: number;
  /**
   * A second measure of the pair where the type has one, not part of `similarity`: the text
   * agreement of two matched document regions (part of the score), or the share of annotation
   * attributes two matched shapes agree on (shown only: attributes do not change the score).
   */
  value?: number;
}

/** The items of one label (and geometry): which matched, and which only one answer has. */
export interface MatchGroup {
  key: string;
  matches: Match[];
  onlyInA: number[];
  onlyInB: number[];
}

/** One field (or part) of an answer compared: how, and the result. */
export interface FieldResult {
  path: string;
  /** `exact`, `text` (1 − edit distance / longer length), `jaccard`, `set` (matched answers), `range`, `parts`, `ranking`, `missing`, `form`. */
  measure: string;
  score: number;
  a?: unknown;
  b?: unknown;
  /** The fields of a form, or the rows of a repeatable section. */
  fields?: FieldResult[];
}

/** One class of a label map or point cloud: how many pixels or points each answer gives it, and their IoU. */
export interface ClassResult {
  label: string;
  iou: number;
  intersection: number;
  union: number;
}

export type ScoreDetails =
  | { kind: 'matching'; summary: string; threshold: number; f1: number; meanSimilarity: number; groups: MatchGroup[] }
  | { kind: 'fields'; summary: string; fields: FieldResult[] }
  | { kind: 'classes'; summary: string; classes: ClassResult[]; unscored: string[] }
  | { kind: 'parts'; summary: string; parts: Array<{ name: string; weight: number; score: number; details: ScoreDetails }> };

export interface ScoreResult {
  /** In [0, 1]: 1 when the two answers agree completely. */
  score: number;
  details: ScoreDetails;
}

/** A decoded binary mask: `data[y * width + x]` non-zero where the label is painted. */
export interface Mask {
  width: number;
  height: number;
  data: ArrayLike<number>;
}

export interface ScoreOptions {
  /** How alike two shapes (or spans, tracks, events) must be to count as the same object. Default 0.5. */
  matchThreshold?: number;
  /** Pixels at which two points, or two lines on average, stop counting as close (similarity 0). Default 32. */
  distanceTolerance?: number;
  /** segmentannotation: the decoded masks by URL (scorers fetch nothing). Labels whose masks are missing are left unscored. */
  masks?: ReadonlyMap<string, Mask>;
}

export interface Settings {
  threshold: number;
  tolerance: number;
  masks: ReadonlyMap<string, Mask>;
}

export const settingsOf = (options: ScoreOptions = {}): Settings => ({
  threshold: options.matchThreshold ?? 0.5,
  tolerance: options.distanceTolerance ?? 32,
  masks: options.masks ?? new Map(),
});

export type Scorer = (params: Json, a: Json, b: Json, settings: Settings) => ScoreResult;

// ---------------------------------------------------------------------------------------------
// Reading answers: a worker's answer has passed the contract and the answer rules, but the expected
// answer of an old task may not have; read defensively.

export const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);
export const asRecord = (value: unknown): Json => (isRecord(value) ? value : {});
export const num = (value: unknown, fallback = 0): number => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);
/** A value as text: strings as they are, nothing as '', other values as JSON (never throws). */
export function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

export const mean = (values: readonly number[]): number => (values.length === 0 ? 1 : values.reduce((s, v) => s + v, 0) / values.length);
export const clamp01 = (value: number): number => (Number.isNaN(value) ? 0 : Math.min(1, Math.max(0, value)));
export const fixed = (value: number, digits = 3): string => String(Math.round(value * 10 ** digits) / 10 ** digits);

/** Deep equality of JSON values (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Text: 1 − character error rate, with the longer text as the denominator (so the measure is
// symmetric and stays in [0, 1]). Texts are compared as Unicode NFC code points, with runs of white
// space read as one space and the ends trimmed; `caseless` also folds case (free-text fields).

export function textSimilarity(a: string, b: string, caseless = false): number {
  const norm = (s: string) => {
    const t = s.normalize('NFC').replace(/\s+/gu, ' ').trim();
    return Array.from(caseless ? t.toLocaleLowerCase('und') : t);
  };
  const x = norm(a);
  const y = norm(b);
  const longer = Math.max(x.length, y.length);
  if (longer === 0) return 1;
  // fastest-levenshtein compares UTF-16 code units: give each distinct code point one BMP unit.
  const units = new Map<string, string>();
  const encode = (points: string[]) =>
    points
      .map((p) => {
        let unit = units.get(p);
        if (unit === undefined) {
          unit = String.fromCharCode(0x100 + (units.size % 0xfe00));
          units.set(p, unit);
        }
        return unit;
      })
      .join('');
  return 1 - distance(encode(x), encode(y)) / longer;
}

/** |A ∩ B| / |A ∪ B| of two sets of values (1 when both are empty). */
export function jaccard(a: readonly unknown[], b: readonly unknown[]): number {
  const keyOf = (v: unknown) => JSON.stringify(v);
  const x = new Set(a.map(keyOf));
  const y = new Set(b.map(keyOf));
  const union = new Set([...x, ...y]).size;
  if (union === 0) return 1;
  let shared = 0;
  for (const v of x) if (y.has(v)) shared += 1;
  return shared / union;
}

/** Overlap of two intervals [s, e]: intersection / union of their lengths; two equal empty ones agree. */
export function intervalIoU(s1: number, e1: number, s2: number, e2: number): number {
  const inter = Math.max(0, Math.min(e1, e2) - Math.max(s1, s2));
  const union = e1 - s1 + (e2 - s2) - inter;
  if (union <= 0) return s1 === s2 && e1 === e2 ? 1 : 0;
  return inter / union;
}

// ---------------------------------------------------------------------------------------------
// The assignment problem: munkres (Hungarian algorithm) on a rectangular cost matrix.

/**
 * One-to-one pairs [row, column] maximizing the total similarity (pairs of similarity 0 are left
 * out). The Hungarian algorithm takes cubic time, so it runs on each connected group of rows and
 * columns (linked by a similarity above 0) on its own: a crowded image's shapes each overlap few
 * others, and 500 boxes of one label become many small problems instead of one 500 × 500 one.
 */
export function bestPairs(similarity: readonly (readonly number[])[]): Array<[number, number]> {
  const rows = similarity.length;
  const cols = similarity[0]?.length ?? 0;
  if (rows === 0 || cols === 0) return [];
  // Union-find over rows (0..rows-1) and columns (rows..rows+cols-1).
  const parent = Array.from({ length: rows + cols }, (_, i) => i);
  const find = (i: number): number => {
    let root = i;
    while (parent[root] !== root) root = parent[root] as number;
    while (parent[i] !== root) [i, parent[i]] = [parent[i] as number, root];
    return root;
  };
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) if ((similarity[r]?.[c] ?? 0) > 0) parent[find(r)] = find(rows + c);
  const groups = new Map<number, { rows: number[]; cols: number[] }>();
  const groupOf = (i: number) => {
    const root = find(i);
    let group = groups.get(root);
    if (!group) {
      group = { rows: [], cols: [] };
      groups.set(root, group);
    }
    return group;
  };
  for (let r = 0; r < rows; r++) groupOf(r).rows.push(r);
  for (let c = 0; c < cols; c++) groupOf(rows + c).cols.push(c);
  const pairs: Array<[number, number]> = [];
  for (const group of groups.values()) {
    if (group.rows.length === 0 || group.cols.length === 0) continue;
    const cost = group.rows.map((r) => group.cols.map((c) => 1 - (similarity[r]?.[c] ?? 0)));
    for (const [i, j] of munkres(cost) as Array<[number, number]>) {
      const [r, c] = [group.rows[i] as number, group.cols[j] as number];
      if ((similarity[r]?.[c] ?? 0) > 0) pairs.push([r, c]);
    }
  }
  return pairs.sort((x, y) => x[0] - y[0]);
}

export interface Matching {
  groups: MatchGroup[];
  sizeA: number;
  sizeB: number;
  /** The pairs counted as the same object (similarity at least the threshold). */
  matched: Match[];
}

/**
 * Matches the items of two answers one to one, within groups of the same key (a label, a geometry
 * and label, a page and type): Hungarian on similarity, where a pair below `threshold` is worth
 * nothing. Symmetric: the two answers are put in a fixed order before matching and swapped back, so
 * swapping a and b swaps the indexes and nothing else, whatever the ties.
 */
export function matchItems<T>(
  a: readonly T[],
  b: readonly T[],
  keyOf: (item: T) => string,
  similarity: (x: T, y: T) => number,
  threshold: number | ((key: string) => number),
): Matching {
  if (JSON.stringify(a) > JSON.stringify(b)) {
    const swapped = matchItems(b, a, keyOf, (x, y) => similarity(y, x), threshold);
    const flip = (m: Match): Match => ({ ...m, a: m.b, b: m.a });
    return {
      sizeA: swapped.sizeB,
      sizeB: swapped.sizeA,
      matched: swapped.matched.map(flip),
      groups: swapped.groups.map((g) => ({ key: g.key, matches: g.matches.map(flip), onlyInA: g.onlyInB, onlyInB: g.onlyInA })),
    };
  }
  const keys = [...new Set([...a.map(keyOf), ...b.map(keyOf)])].sort();
  const groups: MatchGroup[] = [];
  const matched: Match[] = [];
  for (const key of keys) {
    const least = typeof threshold === 'function' ? threshold(key) : threshold;
    const rows = a.flatMap((item, i) => (keyOf(item) === key ? [i] : []));
    const cols = b.flatMap((item, j) => (keyOf(item) === key ? [j] : []));
    const sim = rows.map((i) =>
      cols.map((j) => {
        const s = clamp01(similarity(a[i] as T, b[j] as T));
        return s >= least && s > 0 ? s : 0;
      }),
    );
    const matches = bestPairs(sim).map(([r, c]): Match => ({ a: rows[r] as number, b: cols[c] as number, similarity: sim[r]?.[c] ?? 0 }));
    matches.sort((x, y) => x.a - y.a);
    const inA = new Set(matches.map((m) => m.a));
    const inB = new Set(matches.map((m) => m.b));
    groups.push({ key, matches, onlyInA: rows.filter((i) => !inA.has(i)), onlyInB: cols.filter((j) => !inB.has(j)) });
    matched.push(...matches);
  }
  return { groups, sizeA: a.length, sizeB: b.length, matched };
}

/** F1 of a matching: 2 × matched / (items of a + items of b); 1 when neither answer has any. */
const f1Of = (m: Matching): number => (m.sizeA + m.sizeB === 0 ? 1 : (2 * m.matched.length) / (m.sizeA + m.sizeB));

/** Score = F1 at the threshold × mean similarity of the matched pairs (the geometry rule). */
export function matchingResult(m: Matching, threshold: number, noun: string): ScoreResult {
  const f1 = f1Of(m);
  const meanSimilarity = mean(m.matched.map((x) => x.similarity));
  const score = clamp01(f1 * meanSimilarity);
  return {
    score,
    details: {
      kind: 'matching',
      summary:
        `${m.matched.length} of ${m.sizeA} ${noun} in a and ${m.sizeB} in b matched at ≥ ${threshold} ` +
        `(F1 ${fixed(f1)}), mean matched similarity ${fixed(meanSimilarity)}: score ${fixed(score)}`,
      threshold,
      f1,
      meanSimilarity,
      groups: m.groups,
    },
  };
}

/** A weighted mean of parts (weights 0 ignored; 1 when no part weighs anything). */
export function partsResult(parts: Array<{ name: string; weight: number; result: ScoreResult }>): ScoreResult {
  const counted = parts.filter((p) => p.weight > 0);
  const total = counted.reduce((s, p) => s + p.weight, 0);
  const score = total === 0 ? 1 : clamp01(counted.reduce((s, p) => s + p.weight * p.result.score, 0) / total);
  return {
    score,
    details: {
      kind: 'parts',
      summary: `${counted.map((p) => `${p.name} ${fixed(p.result.score)} (weight ${p.weight})`).join(', ') || 'nothing to compare'}: score ${fixed(score)}`,
      parts: parts.map((p) => ({ name: p.name, weight: p.weight, score: p.result.score, details: p.result.details })),
    },
  };
}

/** The mean of field results (1 when no field is compared). */
export function fieldsResult(fields: FieldResult[], noun = 'fields'): ScoreResult {
  const score = clamp01(mean(fields.map((f) => f.score)));
  const agreeing = fields.filter((f) => f.score === 1).length;
  return {
    score,
    details: { kind: 'fields', summary: `${agreeing} of ${fields.length} ${noun} agree fully: score ${fixed(score)}`, fields },
  };
}
