// Test mode's synthetic answers (synthetic.ts): the types answered by filling in the task's
// fields or picking from its lists: categorization, comparison, datacollection, transcription.
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import { asBoolean, asRecord, distinctStrings, isRecord } from '../../../shared/json.ts';
import { phrase, range, type SeededRandom } from './random.ts';

type Schemas = components['schemas'];

export function categorizationResponse(params: Json, rng: SeededRandom): Schemas['CategorizationResponse'] {
  const categories = distinctStrings(params.categories);
  const ids = Object.entries(asRecord(params.category_ids));
  const idOf = (category: string) => ids.find(([, named]) => named === category)?.[0];
  const hasIds = ids.length > 0;
  if (asBoolean(params.allow_multiple, false)) {
    const chosen = rng.sample(categories, rng.int(1, categories.length));
    const chosenIds = chosen.map(idOf).filter((id): id is string => id !== undefined);
    return { category: chosen, ...(hasIds ? { category_id: chosenIds } : {}) };
  }
  const category = categories.length > 0 ? rng.pick(categories) : '';
  const id = idOf(category);
  return { category, ...(hasIds && id !== undefined ? { category_id: id } : {}) };
}

/** A free-text answer for each key of a FieldDescriptions dictionary. */
function fillIn(rng: SeededRandom, descriptions: unknown): Record<string, string> {
  return Object.fromEntries(Object.keys(asRecord(descriptions)).map((key) => [key, phrase(rng, 1, 4)]));
}

// The generated types of these two responses collapse to `unknown` (their schemas end in anyOf),
// so the shapes are spelled out here.
type ComparisonResponse = { choice?: string; fields?: Record<string, string> };
type TranscriptionResponse = { fields?: Record<string, string>; repeatable_fields?: Array<Record<string, string>> };

export function comparisonResponse(params: Json, rng: SeededRandom): ComparisonResponse {
  const choices = distinctStrings(params.choices);
  const hasFields = isRecord(params.fields);
  return {
    ...(choices.length > 0 ? { choice: rng.pick(choices) } : {}),
    // The response needs one of the two; a task with neither (rejected on creation) gets empty fields.
    ...(hasFields || choices.length === 0 ? { fields: fillIn(rng, params.fields) } : {}),
  };
}

export function dataCollectionResponse(params: Json, rng: SeededRandom): Schemas['DataCollectionResponse'] {
  return { fields: fillIn(rng, params.fields), time_spent_in_seconds: rng.int(30, 600) };
}

export function transcriptionResponse(params: Json, rng: SeededRandom): TranscriptionResponse {
  const hasFields = isRecord(params.fields);
  const repeatable = isRecord(params.repeatable_fields) ? Object.entries(params.repeatable_fields) : undefined;
  // Each repeatable key is described by text (free answer) or by {description, choices} (pick one).
  const occurrence = (entries: [string, unknown][]) =>
    Object.fromEntries(
      entries.map(([key, described]) => {
        const choices = distinctStrings(asRecord(described).choices);
        return [key, choices.length > 0 ? rng.pick(choices) : phrase(rng, 1, 3)];
      }),
    );
  return {
    ...(hasFields || !repeatable ? { fields: fillIn(rng, params.fields) } : {}),
    ...(repeatable ? { repeatable_fields: range(rng.int(0, 3)).map(() => occurrence(repeatable)) } : {}),
  };
}
