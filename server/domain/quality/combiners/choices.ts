// Choices and forms: categorization, comparison, datacollection, textcollection.
//   categorization   single: the category of the largest total weight; multiple: every category
//                    chosen by more than half the weight (at least the heaviest one); category_id
//                    from the task's category_ids
//   comparison       the choice by weighted majority; each free-text field by its medoid text
//   datacollection   each field by its medoid text; time_spent_in_seconds the weighted median
//   textcollection   each field by its type: free text (and forms) by the medoid value, every other
//                    value (booleans, numbers, selections, dates, rankings, ranges, lists of answers)
//                    by weighted majority of the whole value; a field is kept when answers of more
//                    than half the weight give it (so fields hidden by conditions stay hidden)
import { asRecord, isRecord, num, records, str, textSimilarity } from '../scorers/common.ts';
import { type Ballot, byMajority, type Json, medoidOf, total, vote } from './common.ts';

export function categorization({ params, answers, weights, rank }: Ballot): Json {
  const best = answers[rank[0] ?? 0] ?? {};
  const ids = Object.entries(asRecord(params.category_ids));
  const idOf = (category: string) => ids.find(([, named]) => named === category)?.[0];
  const withIds = answers.some((a) => a.category_id !== undefined);
  if (!Array.isArray(best.category)) {
    const category = vote(
      answers.map((a) => (typeof a.category === 'string' ? a.category : undefined)),
      weights,
      rank,
    )?.value;
    if (category === undefined) return best;
    const id = idOf(category);
    return { category, ...(withIds && id !== undefined ? { category_id: id } : {}) };
  }
  const tally = new Map<string, number>();
  for (const i of rank) {
    const chosen = answers[i]?.category;
    for (const c of new Set(Array.isArray(chosen) ? chosen.filter((x): x is string => typeof x === 'string') : []))
      tally.set(c, (tally.get(c) ?? 0) + (weights[i] ?? 0));
  }
  let chosen = [...tally].filter(([, weight]) => byMajority({ weight }, weights)).map(([c]) => c);
  if (chosen.length === 0) {
    const heaviest = [...tally].reduce<[string, number] | undefined>((b, e) => (!b || e[1] > b[1] ? e : b), undefined);
    chosen = heaviest ? [heaviest[0]] : [];
  }
  return {
    category: chosen,
    ...(withIds ? { category_id: chosen.map(idOf).filter((id): id is string => id !== undefined) } : {}),
  };
}

/** The value of a field with the largest weighted sum of text agreement with the others' (free text). */
function medoidValue(values: ReadonlyArray<unknown>, ballot: Ballot, similarity: (x: unknown, y: unknown) => number): unknown {
  const given = ballot.rank.filter((i) => values[i] !== undefined);
  const pick = medoidOf(
    given.map((i) => values[i]),
    given.map((i) => ballot.weights[i] ?? 0),
    similarity,
  );
  return values[given[pick] as number];
}

const freeText = (x: unknown, y: unknown) => textSimilarity(str(x), str(y), true);

/** A FieldDescriptions dictionary answered field by field: each key of the best-ranked answer, its medoid text. */
function textFields(ballot: Ballot): Json | undefined {
  const best = ballot.answers[ballot.rank[0] ?? 0] ?? {};
  if (!isRecord(best.fields)) return undefined;
  const out: Json = {};
  for (const key of Object.keys(best.fields)) {
    out[key] = medoidValue(
      ballot.answers.map((a) => asRecord(a.fields)[key]),
      ballot,
      freeText,
    );
  }
  return out;
}

export function comparison(ballot: Ballot): Json {
  const best = ballot.answers[ballot.rank[0] ?? 0] ?? {};
  const choice =
    best.choice === undefined
      ? undefined
      : vote(
          ballot.answers.map((a) => a.choice),
          ballot.weights,
          ballot.rank,
        )?.value;
  const fields = textFields(ballot);
  return { ...(choice !== undefined ? { choice } : {}), ...(fields ? { fields } : {}) };
}

export function dataCollection(ballot: Ballot): Json {
  // The time: the weighted median of the answers' times (each was measured, not typed).
  const times = ballot.rank
    .map((i) => ({ t: num(ballot.answers[i]?.time_spent_in_seconds), w: ballot.weights[i] ?? 0 }))
    .sort((x, y) => x.t - y.t);
  const half = total(ballot.weights) / 2;
  let seen = 0;
  let median = times[0]?.t ?? 0;
  for (const x of times) {
    median = x.t;
    seen += x.w;
    if (seen >= half) break;
  }
  return { fields: textFields(ballot) ?? {}, time_spent_in_seconds: Math.round(median) };
}

/** The types of a textcollection task's fields by id (forms included; fieldsets opened). */
function fieldTypes(value: unknown, out = new Map<string, string>()): Map<string, string> {
  for (const f of records(value)) {
    if (f.type === 'fieldset') fieldTypes(f.fields, out);
    else if (typeof f.field_id === 'string') out.set(f.field_id, str(f.type));
  }
  return out;
}

export function textCollection(ballot: Ballot): Json {
  const types = fieldTypes(ballot.params.fields);
  const given = ballot.answers.map((a) => asRecord(a.annotations));
  const ids = [...new Set(ballot.rank.flatMap((i) => Object.keys(given[i] ?? {})))];
  const out: Json = {};
  for (const id of ids) {
    const values = given.map((g) => (Object.hasOwn(g, id) ? g[id] : undefined));
    const weight = total(values.map((v, i) => (v === undefined ? 0 : (ballot.weights[i] ?? 0))));
    if (!byMajority({ weight }, ballot.weights)) continue;
    const type = types.get(id);
    const text = (type === 'text' || type === 'form') && !values.some(Array.isArray);
    out[id] = text
      ? medoidValue(
          values,
          ballot,
          type === 'text' ? freeText : (x, y) => ballot.score({ annotations: { [id]: x } }, { annotations: { [id]: y } }),
        )
      : vote(values, ballot.weights, ballot.rank)?.value;
  }
  return { annotations: out };
}
