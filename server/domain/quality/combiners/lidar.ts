// lidarsegmentation: a per-point weighted vote. Labels are compared by name (the answers' label
// lists need not be in the same order); the combined answer lists the task's labels in the task's
// order (then any other an answer names, in rank order). Each point of each frame gets the label (or none, -1)
// of the largest total weight; a tie goes to the best-ranked answer's label when it is among the
// heaviest, else to the first of them in the label list.
import { num, records, str } from '../scorers/common.ts';
import type { Ballot, Json } from './common.ts';

export function lidarSegmentation({ params, answers, weights, rank }: Ballot): Json {
  const names: string[] = [];
  const indexOf = new Map<string, number>();
  for (const labels of [params.labels, ...rank.map((i) => answers[i]?.labels)]) {
    for (const name of Array.isArray(labels) ? labels.map(str) : []) {
      if (!indexOf.has(name)) {
        indexOf.set(name, names.length);
        names.push(name);
      }
    }
  }
  // Per answer: its label index → the combined index (+1, so that 0 is "none").
  const maps = answers.map((a) => (Array.isArray(a.labels) ? a.labels.map((n) => (indexOf.get(str(n)) ?? -1) + 1) : []));
  const frames = answers.map(
    (a) => new Map(records(a.frames).map((f) => [num(f.frame, -1), Array.isArray(f.point_labels) ? f.point_labels : []])),
  );
  const numbers = [...new Set(frames.flatMap((f) => [...f.keys()]))].sort((x, y) => x - y);
  const tally = new Float64Array(names.length + 1);
  const out = numbers.map((frame) => {
    const given = rank.map((i) => ({ labels: frames[i]?.get(frame), map: maps[i] ?? [], weight: weights[i] ?? 0 }));
    const length = given.find((g) => g.labels)?.labels?.length ?? 0;
    const pointLabels = new Array<number>(length);
    for (let p = 0; p < length; p++) {
      tally.fill(0);
      let best = -1;
      for (const g of given) {
        const index = g.labels?.[p];
        if (index === undefined) continue;
        const slot = typeof index === 'number' && index >= 0 ? (g.map[index] ?? 0) : 0;
        tally[slot] = (tally[slot] ?? 0) + g.weight;
        if (best < 0) best = slot;
      }
      for (let slot = 0; slot < tally.length; slot++) if (best >= 0 && (tally[slot] as number) > (tally[best] as number)) best = slot;
      pointLabels[p] = Math.max(best, 0) - 1;
    }
    return { frame, point_labels: pointLabels };
  });
  return { labels: names, frames: out };
}
