// Transcriptions: 1 − character error rate per field or region (common.ts textSimilarity: the
// edit distance over the longer text's length, case kept).
//   transcription          each of `fields` by text; `repeatable_fields` rows matched one to one
//                          (Hungarian on the mean of their keys' agreement; a key with choices is
//                          exact) and scored Σ matched / the larger row count; every field and each
//                          repeatable key weighs one
//   audiotranscription     the transcript (the segments' texts joined when it is absent)
//   documenttranscription  regions matched one to one within page, region type and feature label
//                          (Hungarian on box IoU; unlabelled regions need IoU ≥ the threshold,
//                          labelled ones any overlap); score Σ text agreement of the matched
//                          regions / the larger region count
import {
  asRecord,
  bestPairs,
  clamp01,
  type FieldResult,
  fieldsResult,
  fixed,
  type Json,
  matchItems,
  num,
  records,
  type ScoreResult,
  type Settings,
  str,
  textSimilarity,
} from './common.ts';

/** Rows (or answers) matched one to one: Σ similarity of the pairs / the larger count (1 when both are empty). */
export function setAgreement<T>(a: readonly T[], b: readonly T[], similarity: (x: T, y: T) => number): number {
  if (a.length === 0 && b.length === 0) return 1;
  const sim = a.map((x) => b.map((y) => clamp01(similarity(x, y))));
  const total = bestPairs(sim).reduce((s, [i, j]) => s + (sim[i]?.[j] ?? 0), 0);
  return total / Math.max(a.length, b.length);
}

export function transcription(params: Json, a: Json, b: Json): ScoreResult {
  const fields: FieldResult[] = [];
  const [fa, fb] = [asRecord(a.fields), asRecord(b.fields)];
  for (const key of [...new Set([...Object.keys(fa), ...Object.keys(fb)])].sort()) {
    const [x, y] = [fa[key], fb[key]];
    fields.push(
      x === undefined || y === undefined
        ? { path: `fields.${key}`, measure: 'missing', score: 0, a: x, b: y }
        : { path: `fields.${key}`, measure: 'text', score: textSimilarity(str(x), str(y)), a: x, b: y },
    );
  }
  const described = asRecord(params.repeatable_fields);
  const [ra, rb] = [records(a.repeatable_fields), records(b.repeatable_fields)];
  const rowKeys = [...new Set([...Object.keys(described), ...ra.flatMap(Object.keys), ...rb.flatMap(Object.keys)])].sort();
  if (rowKeys.length > 0 && (ra.length > 0 || rb.length > 0)) {
    const constrained = (key: string) => Array.isArray(asRecord(described[key]).choices);
    const rowSimilarity = (x: Json, y: Json) =>
      rowKeys.reduce((s, key) => {
        if (x[key] === undefined && y[key] === undefined) return s + 1;
        if (constrained(key)) return s + (x[key] === y[key] ? 1 : 0);
        return s + textSimilarity(str(x[key]), str(y[key]));
      }, 0) / rowKeys.length;
    const score = setAgreement(ra, rb, rowSimilarity);
    // The repeatable section weighs as many fields as its rows have keys.
    for (const key of rowKeys) fields.push({ path: `repeatable_fields[].${key}`, measure: 'set', score, a: ra.length, b: rb.length });
  }
  return fieldsResult(fields);
}

export function audioTranscription(_params: Json, a: Json, b: Json): ScoreResult {
  const transcript = (answer: Json) =>
    typeof answer.transcript === 'string'
      ? answer.transcript
      : records(answer.segments)
          .map((s) => str(s.text))
          .join(' ');
  const [x, y] = [transcript(a), transcript(b)];
  const result = fieldsResult([{ path: 'transcript', measure: 'text', score: textSimilarity(x, y) }]);
  const segments = `${records(a.segments).length} and ${records(b.segments).length} segments`;
  return { ...result, details: { ...result.details, summary: `transcript 1 − CER ${fixed(result.score)} (${segments})` } };
}

function regionIoU(x: Json, y: Json): number {
  const [xl, xt, xw, xh] = [num(x.left), num(x.top), num(x.width), num(x.height)];
  const [yl, yt, yw, yh] = [num(y.left), num(y.top), num(y.width), num(y.height)];
  const inter = Math.max(0, Math.min(xl + xw, yl + yw) - Math.max(xl, yl)) * Math.max(0, Math.min(xt + xh, yt + yh) - Math.max(xt, yt));
  const union = xw * xh + yw * yh - inter;
  if (union <= 0) return xl === yl && xt === yt && xw === yw && xh === yh ? 1 : 0;
  return inter / union;
}

export function documentTranscription(_params: Json, a: Json, b: Json, settings: Settings): ScoreResult {
  const [ra, rb] = [records(a.annotations), records(b.annotations)];
  const keyOf = (r: Json) => JSON.stringify([num(r.page, 1), str(r.type), r.label === undefined ? null : str(r.label)]);
  const labelled = (key: string) => (JSON.parse(key) as unknown[])[2] !== null;
  const matching = matchItems(ra, rb, keyOf, regionIoU, (key) => (labelled(key) ? Number.MIN_VALUE : settings.threshold));
  const groups = matching.groups.map((g) => ({
    ...g,
    matches: g.matches.map((m) => ({ ...m, value: textSimilarity(str(ra[m.a]?.text), str(rb[m.b]?.text)) })),
  }));
  const pairs = groups.flatMap((g) => g.matches);
  const larger = Math.max(ra.length, rb.length);
  const score = larger === 0 ? 1 : clamp01(pairs.reduce((s, m) => s + (m.value ?? 0), 0) / larger);
  return {
    score,
    details: {
      kind: 'matching',
      summary:
        `${pairs.length} of ${ra.length} regions in a and ${rb.length} in b matched by place; ` +
        `mean text agreement (1 − CER) over the larger count: ${fixed(score)}`,
      threshold: settings.threshold,
      f1: ra.length + rb.length === 0 ? 1 : (2 * pairs.length) / (ra.length + rb.length),
      meanSimilarity: pairs.length === 0 ? 1 : pairs.reduce((s, m) => s + m.similarity, 0) / pairs.length,
      groups,
    },
  };
}
