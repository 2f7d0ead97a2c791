// Test mode's synthetic answers (synthetic.ts): namedentityrecognition, labelled spans of the
// task's text and relationships between them.
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import { asRecord, asString, records } from '../../../shared/json.ts';
import { coveringLabels, type SeededRandom } from './random.ts';

type Schemas = components['schemas'];

interface EntityLabel {
  name: string;
  /** Attribute name → the option values to pick from. */
  attributes: Array<[string, string[]]>;
}

/** Every label of the tree, parents and children alike (each can be assigned). */
function entityLabels(value: unknown): EntityLabel[] {
  return records(value).flatMap((label): EntityLabel[] => {
    const name = asString(label.name);
    const attributes = Object.entries(asRecord(label.attributes)).map(([attribute, definition]): [string, string[]] => [
      attribute,
      records(asRecord(definition).options)
        .map((o) => asString(o.value))
        .filter((v): v is string => !!v),
    ]);
    return [...(name ? [{ name, attributes }] : []), ...entityLabels(label.children)];
  });
}

/** The words of the text as [start, end) offsets in code points (the unit of NER offsets). */
function wordSpans(codePoints: readonly string[]): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  let start = -1;
  codePoints.forEach((c, i) => {
    const blank = /\s/u.test(c);
    if (!blank && start < 0) start = i;
    if (blank && start >= 0) {
      spans.push({ start, end: i });
      start = -1;
    }
  });
  if (start >= 0) spans.push({ start, end: codePoints.length });
  return spans;
}

export function namedEntityRecognitionResponse(params: Json, rng: SeededRandom): Schemas['NamedEntityRecognitionResponse'] {
  const codePoints = Array.from(asString(params.text) ?? '');
  const labels = entityLabels(params.labels);
  const words = wordSpans(codePoints);
  const count = labels.length === 0 ? 0 : Math.min(words.length, Math.max(labels.length, rng.int(1, 3)));
  const chosenWords = rng.sample(words, count);
  const assigned = coveringLabels(
    rng,
    labels.map((l) => l.name),
    count,
  );
  const annotations = chosenWords.map(({ start, end }, i) => {
    const label = labels.find((l) => l.name === assigned[i]) as EntityLabel;
    const attributes = Object.fromEntries(
      label.attributes.filter(([, values]) => values.length > 0).map(([name, values]) => [name, rng.pick(values)]),
    );
    return {
      id: `a${i + 1}`,
      start,
      end,
      text: codePoints.slice(start, end).join(''),
      label: label.name,
      ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
    };
  });

  // One relationship per definition whose ends can be found among the spans (two distinct spans).
  const relationships: Schemas['NamedEntityRecognitionRelationship'][] = [];
  for (const definition of records(params.relationships)) {
    const fits = (wanted: unknown) => annotations.filter((a) => typeof wanted !== 'string' || a.label === wanted);
    const sources = rng.shuffle(fits(definition.source_label));
    const targets = rng.shuffle(fits(definition.target_label));
    const source = sources.find((s) => targets.some((t) => t.id !== s.id));
    const target = targets.find((t) => t.id !== source?.id);
    if (!source || !target) continue;
    const name = asString(definition.name);
    relationships.push({ id: `r${relationships.length + 1}`, source_ref: source.id, target_ref: target.id, ...(name ? { name } : {}) });
  }
  return { annotations, relationships };
}
