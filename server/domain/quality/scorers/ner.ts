// namedentityrecognition: span F1, with relationships counted alongside.
// Overlap rule: two spans are the same entity when their labels are equal and they overlap by at
// least the threshold (0.5 by default) as Jaccard over code points (shared code points / code points
// in either span); spans pair one to one, maximizing the total overlap (Hungarian). An exact-match
// F1 is the threshold 1. A relationship of a is found in b when b has one of the same name joining
// the spans matched to its source and target (either way round when the task's definition of that
// name is not directed). The score is the F1 over spans and relationships together:
// 2 × (matched spans + matched relationships) / (spans and relationships of a + of b).
import { fixed, type Json, type Match, matchItems, num, records, type ScoreResult, type Settings, str } from './common.ts';

const spanOverlap = (x: Json, y: Json): number => {
  const [s1, e1, s2, e2] = [num(x.start), num(x.end), num(y.start), num(y.end)];
  const inter = Math.max(0, Math.min(e1, e2) - Math.max(s1, s2));
  const union = e1 - s1 + (e2 - s2) - inter;
  return union <= 0 ? (s1 === s2 && e1 === e2 ? 1 : 0) : inter / union;
};

/** Names of the task's relationships that are undirected (is_directed false). */
function undirectedNames(params: Json): Set<string> {
  const out = new Set<string>();
  for (const d of records(params.relationships)) {
    const directed = d.is_directed === true || str(d.is_directed).toLowerCase() === 'true';
    if (!directed && typeof d.name === 'string') out.add(d.name);
  }
  return out;
}

export function namedEntityRecognition(params: Json, a: Json, b: Json, settings: Settings): ScoreResult {
  const [spansA, spansB] = [records(a.annotations), records(b.annotations)];
  const spans = matchItems(spansA, spansB, (s) => str(s.label), spanOverlap, settings.threshold);
  // Each of a's span ids → the id of the b span matched to it.
  const partner = new Map<string, string>();
  for (const m of spans.matched) partner.set(str(spansA[m.a]?.id), str(spansB[m.b]?.id));
  const undirected = undirectedNames(params);
  const [relsA, relsB] = [records(a.relationships), records(b.relationships)];
  const used = new Set<number>();
  const relMatches: Match[] = [];
  relsA.forEach((r, i) => {
    const source = partner.get(str(r.source_ref));
    const target = partner.get(str(r.target_ref));
    if (source === undefined || target === undefined) return;
    const name = str(r.name);
    const j = relsB.findIndex(
      (q, k) =>
        !used.has(k) &&
        str(q.name) === name &&
        ((str(q.source_ref) === source && str(q.target_ref) === target) ||
          (undirected.has(name) && str(q.source_ref) === target && str(q.target_ref) === source)),
    );
    if (j >= 0) {
      used.add(j);
      relMatches.push({ a: i, b: j, similarity: 1 });
    }
  });
  const found = spans.matched.length + relMatches.length;
  const total = spansA.length + spansB.length + relsA.length + relsB.length;
  const score = total === 0 ? 1 : (2 * found) / total;
  const spanF1 = spansA.length + spansB.length === 0 ? 1 : (2 * spans.matched.length) / (spansA.length + spansB.length);
  return {
    score,
    details: {
      kind: 'matching',
      summary:
        `${spans.matched.length} of ${spansA.length} spans in a and ${spansB.length} in b matched (same label, overlap ≥ ${settings.threshold}), ` +
        `span F1 ${fixed(spanF1)}; ${relMatches.length} of ${relsA.length} relationships in a and ${relsB.length} in b matched: F1 ${fixed(score)}`,
      threshold: settings.threshold,
      f1: score,
      meanSimilarity: spans.matched.length === 0 ? 1 : spans.matched.reduce((s, m) => s + m.similarity, 0) / spans.matched.length,
      groups: [
        ...spans.groups.map((g) => ({ ...g, key: `span ${g.key}` })),
        {
          key: 'relationships',
          matches: relMatches,
          onlyInA: relsA.flatMap((_, i) => (relMatches.some((m) => m.a === i) ? [] : [i])),
          onlyInB: relsB.flatMap((_, j) => (used.has(j) ? [] : [j])),
        },
      ],
    },
  };
}
