// What every combiner shares: the answers with their weights and ranks, weighted votes, the
// medoid, weighted means, and clustering of items (shapes, spans) across answers with the
// scorers' one-to-one matching.
import { type Json, matchItems, sameJson } from '../scorers/common.ts';

export type { Json };

/** The answers being combined, as every combiner receives them. */
export interface Ballot {
  params: Json;
  answers: Json[];
  /** One weight per answer (> 0). */
  weights: number[];
  /** Answer indexes, the most representative first (highest weighted agreement with the others): ties go to it. */
  rank: number[];
  /** How alike two items must be to be the same object (the scorers' matchThreshold). */
  threshold: number;
  /** The scorers' distance tolerance for points and lines, in pixels. */
  tolerance: number;
  /** The type's scorer on two answers. */
  score(a: Json, b: Json): number;
}

export type Combiner = (ballot: Ballot) => Json;

export const total = (weights: readonly number[]): number => weights.reduce((s, w) => s + w, 0);

/**
 * The value with the largest total weight among `values` (undefined: no vote), compared by JSON
 * equality. Ties go to the value of the best-ranked answer.
 */
export function vote<T>(
  values: ReadonlyArray<T | undefined>,
  weights: readonly number[],
  rank: readonly number[],
): { value: T; weight: number } | undefined {
  const tally: Array<{ value: T; weight: number; first: number }> = [];
  rank.forEach((i, position) => {
    const value = values[i];
    if (value === undefined) return;
    const entry = tally.find((t) => sameJson(t.value, value));
    if (entry) entry.weight += weights[i] ?? 0;
    else tally.push({ value, weight: weights[i] ?? 0, first: position });
  });
  let best: (typeof tally)[number] | undefined;
  for (const t of tally) if (!best || t.weight > best.weight) best = t;
  return best && { value: best.value, weight: best.weight };
}

/** The index (into `items`) whose weighted sum of similarity to the others is largest; ties: the earliest. */
export function medoidOf<T>(items: readonly T[], weights: readonly number[], similarity: (x: T, y: T) => number): number {
  let best = 0;
  let bestSum = Number.NEGATIVE_INFINITY;
  items.forEach((x, i) => {
    let sum = 0;
    items.forEach((y, j) => {
      if (i !== j) sum += (weights[j] ?? 0) * similarity(x, y);
    });
    if (sum > bestSum + 1e-12) {
      best = i;
      bestSum = sum;
    }
  });
  return best;
}

/** The weighted mean of numbers; the value itself when they are all equal (no rounding error). */
export function weightedMean(values: readonly number[], weights: readonly number[]): number {
  if (values.every((v) => v === values[0])) return values[0] ?? 0;
  const sum = total(weights);
  return sum === 0 ? (values[0] ?? 0) : values.reduce((s, v, i) => s + v * (weights[i] ?? 0), 0) / sum;
}

/** One object found across answers: each answer's item matched to it (one at most per answer). */
export interface Cluster<T> {
  members: Array<{ answer: number; item: T }>;
  /** The total weight of the answers that found it. */
  weight: number;
}

/**
 * Clusters the items of every answer: answers are taken in rank order, and each one's items are
 * matched one to one (Hungarian, within the same key, at the threshold) to the clusters found so
 * far, represented by their first member; an item left unmatched starts a cluster. Clusters come
 * out in the order they were started (the best-ranked answer's items first, in its order).
 */
export function clusterItems<T>(
  lists: readonly (readonly T[])[],
  ballot: Pick<Ballot, 'weights' | 'rank'>,
  keyOf: (item: T) => string,
  similarity: (x: T, y: T) => number,
  threshold: number,
): Cluster<T>[] {
  const clusters: Cluster<T>[] = [];
  for (const answer of ballot.rank) {
    const items = lists[answer] ?? [];
    const weight = ballot.weights[answer] ?? 0;
    const reps = clusters.map((c) => (c.members[0] as { item: T }).item);
    const matching = matchItems(reps, items, keyOf, similarity, threshold);
    const matched = new Set<number>();
    for (const m of matching.matched) {
      const cluster = clusters[m.a] as Cluster<T>;
      cluster.members.push({ answer, item: items[m.b] as T });
      cluster.weight += weight;
      matched.add(m.b);
    }
    items.forEach((item, j) => {
      if (!matched.has(j)) clusters.push({ members: [{ answer, item }], weight });
    });
  }
  return clusters;
}

/** Whether a cluster was found by more than half of the total weight. */
export const byMajority = (cluster: { weight: number }, weights: readonly number[]): boolean => cluster.weight > total(weights) / 2 + 1e-12;
