// namedentityrecognition: span clustering. Spans of all answers are clustered per label with the
// scorer's matching (overlap ≥ the threshold, one to one); a cluster found by answers of more than
// half the weight is kept. Its boundary is the weighted mode of the members' (start, end), and the
// span (text, attributes, id) is the best-ranked member with that boundary. A relationship is kept
// when answers of more than half the weight draw it (same name, between the same two kept
// clusters; either way round when its definition is undirected). Ids are kept, renumbered only
// where two kept items would share one.
import { num, records, str } from '../scorers/common.ts';
import { type Ballot, byMajority, clusterItems, type Json, vote } from './common.ts';

const spanOverlap = (x: Json, y: Json): number => {
  const [s1, e1, s2, e2] = [num(x.start), num(x.end), num(y.start), num(y.end)];
  const inter = Math.max(0, Math.min(e1, e2) - Math.max(s1, s2));
  const union = e1 - s1 + (e2 - s2) - inter;
  return union <= 0 ? (s1 === s2 && e1 === e2 ? 1 : 0) : inter / union;
};

/** Distinct ids: each item keeps its own unless taken, then the first free `<prefix><n>`. */
function uniqueIds(items: Json[], prefix: string): Json[] {
  const taken = new Set<string>();
  const wanted = new Set(items.map((x) => str(x.id)));
  let n = 1;
  return items.map((item) => {
    let id = str(item.id);
    if (id === '' || taken.has(id)) {
      while (taken.has(`${prefix}${n}`) || wanted.has(`${prefix}${n}`)) n += 1;
      id = `${prefix}${n}`;
    }
    taken.add(id);
    return id === item.id ? item : { ...item, id };
  });
}

export function namedEntityRecognition(ballot: Ballot): Json {
  const { answers, weights, rank, params } = ballot;
  const lists = answers.map((a) => records(a.annotations));
  const clusters = clusterItems(lists, ballot, (s) => str(s.label), spanOverlap, ballot.threshold);
  const kept = clusters.filter((c) => byMajority(c, weights));
  const spans = uniqueIds(
    kept.map((c) => {
      const bounds = new Array<[number, number] | undefined>(answers.length);
      for (const m of c.members) bounds[m.answer] = [num(m.item.start), num(m.item.end)];
      const mode = vote(bounds, weights, rank)?.value;
      const member = c.members.find((m) => num(m.item.start) === mode?.[0] && num(m.item.end) === mode?.[1]) ?? c.members[0];
      return (member as { item: Json }).item;
    }),
    'span-',
  );
  // Each answer's span id → the index of its kept cluster.
  const clusterOf = answers.map(() => new Map<string, number>());
  kept.forEach((c, k) => {
    for (const m of c.members) clusterOf[m.answer]?.set(str(m.item.id), k);
  });
  const undirected = new Set(
    records(params.relationships)
      .filter((d) => !(d.is_directed === true || str(d.is_directed).toLowerCase() === 'true'))
      .map((d) => str(d.name)),
  );
  const tally = new Map<string, { weight: number; first: Json; refs: [number, number] }>();
  for (const i of rank) {
    const seen = new Set<string>();
    for (const r of records(answers[i]?.relationships)) {
      const [s, t] = [clusterOf[i]?.get(str(r.source_ref)), clusterOf[i]?.get(str(r.target_ref))];
      if (s === undefined || t === undefined) continue;
      const name = r.name === undefined ? null : str(r.name);
      const ends: [number, number] = name !== null && undirected.has(name) && t < s ? [t, s] : [s, t];
      const key = JSON.stringify([name, ends]);
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = tally.get(key) ?? { weight: 0, first: r, refs: [s, t] };
      entry.weight += weights[i] ?? 0;
      tally.set(key, entry);
    }
  }
  const relationships = uniqueIds(
    [...tally.values()]
      .filter((e) => byMajority(e, weights))
      .map((e) => ({
        ...e.first,
        source_ref: str(spans[e.refs[0]]?.id),
        target_ref: str(spans[e.refs[1]]?.id),
      })),
    'rel-',
  );
  const best = answers[rank[0] ?? 0] ?? {};
  return { ...best, annotations: spans, ...(relationships.length > 0 || best.relationships !== undefined ? { relationships } : {}) };
}
