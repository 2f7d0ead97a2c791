// What a training answer got wrong, read from the scorer's details (the contract's
// TrainingDifference): expected items the answer lacks (`missing`), items it has that were not
// expected (`extra`), and matched items, fields or classes that differ (`mismatch`). The scorer
// is called with the expected answer as `a` and the worker's as `b`.
import type { FieldResult, ScoreDetails } from './score.ts';

export interface TrainingDifference {
  kind: 'missing' | 'extra' | 'mismatch';
  region_id?: string;
  field?: string;
  label?: string;
  score?: number;
  message: string;
}

/** At most this many differences are shown (the contract's maxItems), the worst first. */
const maxDifferences = 1000;
const percent = (x: number) => `${Math.round(x * 100)} %`;
const short = (text: string) => (text.length > 255 ? `${text.slice(0, 254)}…` : text);

/** A matching group's key as a person reads it: `car`, or the parts of a composite key. */
function labelOf(key: string): string {
  if (!key.startsWith('[')) return short(key);
  try {
    const parts = JSON.parse(key) as unknown;
    if (Array.isArray(parts)) return short(parts.filter((p) => p !== null && p !== '').join(' '));
  } catch {
    // Not JSON after all: shown as it is.
  }
  return short(key);
}

function leaves(fields: FieldResult[]): FieldResult[] {
  return fields.flatMap((f) => (f.fields?.length ? leaves(f.fields) : [f]));
}

function collect(details: ScoreDetails, out: TrainingDifference[]): void {
  switch (details.kind) {
    case 'matching':
      for (const g of details.groups) {
        const label = labelOf(g.key);
        for (const i of g.onlyInA)
          out.push({
            kind: 'missing',
            region_id: String(i),
            label,
            score: 0,
            message: `Expected ${label} #${i} is missing from the answer.`,
          });
        for (const j of g.onlyInB)
          out.push({ kind: 'extra', region_id: String(j), label, score: 0, message: `The answer's ${label} #${j} was not expected.` });
        for (const m of g.matches) {
          if (m.similarity >= 0.999) continue;
          out.push({
            kind: 'mismatch',
            region_id: String(m.b),
            label,
            score: m.similarity,
            message: `The answer's ${label} #${m.b} matches expected #${m.a} at ${percent(m.similarity)}.`,
          });
        }
      }
      return;
    case 'fields':
      for (const f of leaves(details.fields)) {
        if (f.score >= 0.999) continue;
        out.push({
          kind: f.measure === 'missing' ? 'missing' : 'mismatch',
          field: short(f.path),
          score: f.score,
          message: short(`${f.path}: ${percent(f.score)} of the expected answer (compared by ${f.measure}).`),
        });
      }
      return;
    case 'classes':
      for (const c of details.classes) {
        if (c.iou >= 0.999) continue;
        out.push({
          kind: 'mismatch',
          label: short(c.label),
          score: c.iou,
          message: short(`${c.label}: overlaps the expected area at ${percent(c.iou)}.`),
        });
      }
      return;
    case 'parts':
      for (const p of details.parts) collect(p.details, out);
      return;
  }
}

/** The differences a scorer's details show, the worst first, at most 1000. */
export function trainingDifferences(details: ScoreDetails): TrainingDifference[] {
  const out: TrainingDifference[] = [];
  collect(details, out);
  return out.sort((x, y) => (x.score ?? 0) - (y.score ?? 0)).slice(0, maxDifferences);
}
