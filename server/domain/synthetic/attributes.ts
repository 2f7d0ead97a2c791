// Test mode's synthetic answers (synthetic.ts): annotation attributes (API description 2.8),
// values for each annotation, in an order that lets attribute conditions refer to attributes
// declared after them.
import type { Json } from '../model.ts';
import { asBoolean, asRecord, asString, distinctStrings, isRecord, records } from '../../../shared/json.ts';
import type { Size } from './geometry.ts';
import { decideInDependencyOrder } from './order.ts';
import { phrase, type SeededRandom } from './random.ts';

type AttributeValue = string | number | string[];
type AttributeValues = Record<string, AttributeValue>;

interface AttributeDefinition {
  name: string;
  kind: 'category' | 'number' | 'angle' | 'text' | 'offset' | 'linked';
  choices: string[];
  allowMultiple: boolean;
  labelCondition: string | undefined;
  attributeConditions: Json[];
}

function attributeDefinitions(value: unknown): AttributeDefinition[] {
  const kinds = ['category', 'number', 'angle', 'text', 'offset', 'linked'] as const;
  return Object.entries(asRecord(value)).flatMap(([name, raw]): AttributeDefinition[] => {
    if (!isRecord(raw)) return [];
    const kind = kinds.find((k) => k === raw.type) ?? 'category';
    const conditions = asRecord(raw.conditions);
    return [
      {
        name,
        kind,
        choices: distinctStrings(raw.choices),
        allowMultiple: asBoolean(raw.allow_multiple, false),
        labelCondition: asString(asRecord(conditions.label_condition).label),
        attributeConditions: records(conditions.attribute_conditions),
      },
    ];
  });
}

/** What an attribute value may depend on besides the other attributes. */
interface AttributeTarget {
  label: string;
  /** The box, for `offset` attributes (which apply to boxes only). */
  box: Size | undefined;
  /** What a `linked` attribute may refer to: the other annotations' uuids, or indexes in the older types. */
  linkable: readonly (string | number)[];
}

/**
 * The attribute values of one annotation. Conditions compare as text: form bodies carry numbers
 * as strings (`attribute_conditions[0][count]=3`), so `"3"` and `3` name the same value.
 */
function attributeValuesFor(rng: SeededRandom, definitions: readonly AttributeDefinition[], target: AttributeTarget): AttributeValues {
  // Keyed by names the client chose: a Map, so that a name like `constructor` finds nothing inherited.
  const values = new Map<string, AttributeValue>();
  const holds = (definition: AttributeDefinition) =>
    (definition.labelCondition === undefined || definition.labelCondition === target.label) &&
    definition.attributeConditions.every((condition) =>
      Object.entries(condition).every(([name, wanted]) => {
        const have = values.get(name);
        const options = Array.isArray(have) ? have : have === undefined ? [] : [have];
        return options.some((option) => String(option) === String(wanted));
      }),
    );
  decideInDependencyOrder(
    definitions,
    (definition) => [definition.name],
    (definition) => definition.attributeConditions.flatMap((condition) => Object.keys(condition)),
    (definition, ready) => {
      if (!ready || !holds(definition)) return;
      const value = attributeValue(rng, definition, target);
      if (value !== undefined) values.set(definition.name, value);
    },
  );
  return Object.fromEntries(values);
}

/** One attribute's value, or undefined when it cannot apply (an offset off a box, a link with nothing to link). */
function attributeValue(rng: SeededRandom, definition: AttributeDefinition, target: AttributeTarget): AttributeValue | undefined {
  switch (definition.kind) {
    case 'category':
      if (definition.choices.length === 0) return undefined;
      return definition.allowMultiple
        ? rng.sample(definition.choices, rng.int(1, definition.choices.length))
        : rng.pick(definition.choices);
    case 'number':
      return rng.int(0, 10);
    case 'angle':
      return rng.int(0, 359);
    case 'text':
      return phrase(rng, 1, 4);
    case 'offset':
      return target.box ? rng.int(0, Math.floor(Math.min(target.box.width, target.box.height))) : undefined;
    case 'linked':
      return target.linkable.length > 0 ? rng.pick(target.linkable) : undefined;
  }
}

/**
 * Adds `attributes` to each element when the task has annotation attributes. `linkRef(i)` is how
 * a linked attribute names element i; `boxOf` gives the box an offset measures.
 */
export function withAttributes<T extends { label: string }>(
  rng: SeededRandom,
  annotationAttributes: unknown,
  elements: readonly T[],
  linkRef: (element: T, index: number) => string | number,
  boxOf: (element: T) => Size | undefined,
): Array<T & { attributes?: AttributeValues }> {
  const definitions = attributeDefinitions(annotationAttributes);
  if (definitions.length === 0) return [...elements];
  const refs = elements.map(linkRef);
  return elements.map((element, i) => ({
    ...element,
    attributes: attributeValuesFor(rng, definitions, {
      label: element.label,
      box: boxOf(element),
      linkable: refs.filter((_, j) => j !== i),
    }),
  }));
}
