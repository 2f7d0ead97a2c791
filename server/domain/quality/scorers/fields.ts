// Choices and forms: categorization, comparison, datacollection, textcollection.
//   categorization   exact match of the category (single); Jaccard of the chosen sets (allow_multiple)
//   comparison       the choice exactly, each free-text field by normalized text agreement; mean
//   datacollection   each field by normalized text agreement (time_spent_in_seconds is not an answer)
//   textcollection   each field by its type: exact for constrained values (boolean, number, select),
//                    per-part for dates, Jaccard for category selections, overlap for time ranges,
//                    positions for rankings, normalized text for free text, forms field by field;
//                    a field that takes several answers is a set: answers matched one to one
//                    (Hungarian), Σ agreement / the larger count. A field only one answer gives
//                    scores 0; one neither gives (hidden by its conditions) does not count.
// "Normalized text" is textSimilarity with case folded: 1 − edit distance / longer length.
import {
  asRecord,
  type FieldResult,
  fieldsResult,
  intervalIoU,
  type Json,
  jaccard,
  num,
  records,
  type ScoreResult,
  sameJson,
  str,
  textSimilarity,
} from './common.ts';
import { setAgreement } from './transcription.ts';

export function categorization(_params: Json, a: Json, b: Json): ScoreResult {
  const [x, y] = [a.category, b.category];
  const field: FieldResult =
    Array.isArray(x) || Array.isArray(y)
      ? { path: 'category', measure: 'jaccard', score: jaccard(Array.isArray(x) ? x : [x], Array.isArray(y) ? y : [y]), a: x, b: y }
      : { path: 'category', measure: 'exact', score: x === y ? 1 : 0, a: x, b: y };
  return fieldsResult([field]);
}

/** Free-text fields of a FieldDescriptions dictionary (comparison, datacollection). */
function freeTextFields(a: Json, b: Json): FieldResult[] {
  const [fa, fb] = [asRecord(a.fields), asRecord(b.fields)];
  return [...new Set([...Object.keys(fa), ...Object.keys(fb)])].sort().map((key): FieldResult => {
    const [x, y] = [fa[key], fb[key]];
    if (x === undefined || y === undefined) return { path: `fields.${key}`, measure: 'missing', score: 0, a: x, b: y };
    return { path: `fields.${key}`, measure: 'text', score: textSimilarity(str(x), str(y), true), a: x, b: y };
  });
}

export function comparison(_params: Json, a: Json, b: Json): ScoreResult {
  const choice: FieldResult[] =
    a.choice === undefined && b.choice === undefined
      ? []
      : [{ path: 'choice', measure: 'exact', score: a.choice === b.choice ? 1 : 0, a: a.choice, b: b.choice }];
  return fieldsResult([...choice, ...freeTextFields(a, b)]);
}

export const dataCollection = (_params: Json, a: Json, b: Json): ScoreResult => fieldsResult(freeTextFields(a, b));

// ---------------------------------------------------------------------------------------------
// textcollection

interface FieldDef {
  id: string;
  type: string;
  multiple: boolean;
  children: FieldDef[];
}

function fieldDefs(value: unknown): FieldDef[] {
  return records(value).flatMap((f): FieldDef[] => {
    if (f.type === 'fieldset') return fieldDefs(f.fields);
    if (typeof f.field_id !== 'string') return [];
    return [{ id: f.field_id, type: str(f.type), multiple: num(f.max_responses_required, 1) > 1, children: fieldDefs(f.fields) }];
  });
}

/** One answer of a field against another: a score and how it was measured. */
function oneAnswer(def: FieldDef, x: unknown, y: unknown, path: string): FieldResult {
  switch (def.type) {
    case 'text':
      return { path, measure: 'text', score: textSimilarity(str(x), str(y), true), a: x, b: y };
    case 'number': {
      // Numbers are written as text (`40`, `40.0`): equal when they name the same value.
      const value = (v: unknown) => (typeof v === 'number' || typeof v === 'string' ? Number(v) : Number.NaN);
      return { path, measure: 'exact', score: value(x) === value(y) && str(x).trim() !== '' ? 1 : 0, a: x, b: y };
    }
    case 'datetime': {
      const [px, py] = [asRecord(x), asRecord(y)];
      const parts = [...new Set([...Object.keys(px), ...Object.keys(py)])];
      const same = parts.filter((p) => px[p] === py[p]).length;
      return { path, measure: 'parts', score: parts.length === 0 ? 1 : same / parts.length, a: x, b: y };
    }
    case 'category':
      return { path, measure: 'jaccard', score: jaccard(Array.isArray(x) ? x : [x], Array.isArray(y) ? y : [y]), a: x, b: y };
    case 'time_range': {
      const [rx, ry] = [asRecord(x), asRecord(y)];
      const score = intervalIoU(num(rx.from_seconds), num(rx.to_seconds), num(ry.from_seconds), num(ry.to_seconds));
      return { path, measure: 'range', score, a: x, b: y };
    }
    case 'ranking_order': {
      const [lx, ly] = [Array.isArray(x) ? x : [], Array.isArray(y) ? y : []];
      const longer = Math.max(lx.length, ly.length);
      const same = lx.filter((v, i) => v === ly[i]).length;
      return { path, measure: 'ranking', score: longer === 0 ? 1 : same / longer, a: x, b: y };
    }
    case 'form': {
      const fields = compareFields(def.children, asRecord(x), asRecord(y), path);
      return { path, measure: 'form', score: fieldsResult(fields).score, fields };
    }
    default:
      // boolean, select (a list of one option) and anything newer: the same value.
      return { path, measure: 'exact', score: sameJson(x, y) ? 1 : 0, a: x, b: y };
  }
}

function compareFields(defs: FieldDef[], a: Json, b: Json, prefix: string): FieldResult[] {
  const out: FieldResult[] = [];
  for (const def of defs) {
    const path = prefix ? `${prefix}.${def.id}` : def.id;
    const [has1, has2] = [Object.hasOwn(a, def.id), Object.hasOwn(b, def.id)];
    if (!has1 && !has2) continue;
    const [x, y] = [a[def.id], b[def.id]];
    if (!has1 || !has2) {
      out.push({ path, measure: 'missing', score: 0, a: x, b: y });
    } else if (def.multiple && Array.isArray(x) && Array.isArray(y)) {
      const score = setAgreement(x, y, (p, q) => oneAnswer(def, p, q, path).score);
      out.push({ path, measure: 'set', score, a: x, b: y });
    } else {
      out.push(oneAnswer(def, x, y, path));
    }
  }
  return out;
}

export function textCollection(params: Json, a: Json, b: Json): ScoreResult {
  const [ax, bx] = [asRecord(a.annotations), asRecord(b.annotations)];
  const defs = fieldDefs(params.fields);
  // Answers to fields the params do not describe (an older task's) are compared as exact values.
  const known = new Set(defs.map((d) => d.id));
  const extra = [...new Set([...Object.keys(ax), ...Object.keys(bx)])]
    .filter((id) => !known.has(id))
    .map((id): FieldDef => ({ id, type: 'exact', multiple: false, children: [] }));
  return fieldsResult(compareFields([...defs, ...extra], ax, bx, ''));
}
