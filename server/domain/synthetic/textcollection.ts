// Test mode's synthetic answers (synthetic.ts): textcollection, a form filled in as a careful
// worker would: every shown field answered within its bounds, conditions and choices from other
// fields followed, forms filled several times.
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import {
  conditionsHold,
  daysInMonth,
  isChoiceValue,
  leafChoiceValues,
  SECONDS_PER_DAY,
  type ChoiceValue,
} from '../../../shared/form-fields.ts';
import { asCount, asRecord, asString, decimalNumber, distinctStrings, records } from '../../../shared/json.ts';
import { decideInDependencyOrder } from './order.ts';
import { clamp, phrase, range, type SeededRandom, truncate } from './random.ts';

type Schemas = components['schemas'];

type FieldAnswer = Schemas['TextCollectionFieldResponse'];

interface FieldDefinition {
  type: string;
  id: string;
  definition: Json;
  minResponses: number;
  maxResponses: number;
  /** The fields of a form (FieldSets flattened: their fields answer under their own ids). */
  children: FieldDefinition[];
}

function fieldDefinitions(value: unknown): FieldDefinition[] {
  return records(value).flatMap((definition): FieldDefinition[] => {
    if (definition.type === 'fieldset') return fieldDefinitions(definition.fields);
    const type = asString(definition.type);
    const id = asString(definition.field_id);
    if (type === undefined || id === undefined) return [];
    const maxResponses = asCount(definition.max_responses_required, 1, 1);
    return [
      {
        type,
        id,
        definition,
        minResponses: Math.min(asCount(definition.min_responses_required, 1, 1), maxResponses),
        maxResponses,
        children: type === 'form' ? fieldDefinitions(definition.fields) : [],
      },
    ];
  });
}

/** The answers given so far, visible to conditions and to `choices_from_field`; a form answer opens a child scope. */
class AnswerScope {
  private readonly answers = new Map<string, FieldAnswer[]>();

  constructor(private readonly parent?: AnswerScope) {}

  record(fieldId: string, answers: readonly FieldAnswer[]): void {
    this.answers.set(fieldId, [...(this.answers.get(fieldId) ?? []), ...answers]);
  }

  /** A field's answers: this scope's when it decided the field (hidden = none), else the outer scope's. */
  answersOf(fieldId: string): readonly FieldAnswer[] {
    return this.answers.get(fieldId) ?? this.parent?.answersOf(fieldId) ?? [];
  }

  ownAnswersOf(fieldId: string): readonly FieldAnswer[] {
    return this.answers.get(fieldId) ?? [];
  }

  /** The plain values in a field's answers: selected choices of a category field, or options for a select. */
  valuesOf(fieldId: string): ChoiceValue[] {
    const values = this.answersOf(fieldId).flatMap((answer): unknown[] => (Array.isArray(answer) ? answer : [answer]));
    return [...new Set(values.filter(isChoiceValue))];
  }
}

/** The ids a field's answer (or a form's answers) depends on: condition keys and `choices_from_field`. */
function fieldNeeds(field: FieldDefinition): string[] {
  const own = [
    ...records(field.definition.conditions).flatMap((set) => Object.keys(set)),
    ...(typeof field.definition.choices_from_field === 'string' ? [field.definition.choices_from_field] : []),
  ];
  return [...own, ...field.children.flatMap(fieldNeeds)];
}

const fieldOwns = (field: FieldDefinition): string[] => [field.id, ...field.children.map((child) => child.id)];

interface TextCollectionContext {
  rng: SeededRandom;
  attachmentCount: number;
}

/**
 * Answers every shown field (a test task fills in the whole form, optional fields included);
 * fields hidden by their conditions, and a select with no option to pick, are left out.
 */
function answerFields(
  context: TextCollectionContext,
  fields: readonly FieldDefinition[],
  scope: AnswerScope,
): Record<string, FieldAnswer | FieldAnswer[]> {
  const annotations = new Map<string, FieldAnswer | FieldAnswer[]>();
  // A field left out still shadows the outer scope: in a second filling of a form, a hidden
  // sibling has no answer, whatever the first filling chose.
  const leaveOut = (field: FieldDefinition) => {
    for (const id of fieldOwns(field)) scope.record(id, []);
  };
  decideInDependencyOrder(fields, fieldOwns, fieldNeeds, (field, ready) => {
    if (!ready || !conditionsHold(field.definition.conditions, (id) => scope.valuesOf(id))) return leaveOut(field);
    const count = field.maxResponses > 1 ? context.rng.int(field.minResponses, Math.min(field.maxResponses, field.minResponses + 2)) : 1;
    const answers: FieldAnswer[] = [];
    for (let i = 0; i < count; i++) {
      const answer = answerField(context, field, scope);
      if (answer === undefined) return leaveOut(field);
      answers.push(answer);
    }
    scope.record(field.id, answers);
    annotations.set(field.id, field.maxResponses > 1 ? answers : (answers[0] as FieldAnswer));
  });
  return Object.fromEntries(annotations);
}

function answerField(context: TextCollectionContext, field: FieldDefinition, scope: AnswerScope): FieldAnswer | undefined {
  const { rng } = context;
  const definition = field.definition;
  switch (field.type) {
    case 'text':
      return truncate(phrase(rng, 2, 8), asCount(definition.max_characters, 1000, 1));
    case 'boolean':
      return rng.chance(0.5);
    case 'number':
      return numberAnswer(rng, definition);
    case 'datetime':
      return datetimeAnswer(rng, distinctStrings(definition.include), asRecord(definition.defaults));
    case 'category': {
      const leaves = leafChoiceValues(definition.choices);
      const fewest = Math.min(asCount(definition.min_choices, 1, 1), leaves.length);
      // A few more than the fewest at most: the answer stays near the size the task asks for.
      const most = clamp(asCount(definition.max_choices, 1, 1), fewest, Math.min(leaves.length, fewest + 9));
      return leaves.length > 0 ? rng.sample(leaves, rng.int(fewest, most)) : undefined;
    }
    case 'time_range':
      return timeRangeAnswer(rng, definition);
    case 'select': {
      const options = [
        ...new Set([
          ...(Array.isArray(definition.choices) ? definition.choices.filter(isChoiceValue) : []),
          ...(typeof definition.choices_from_field === 'string' ? scope.valuesOf(definition.choices_from_field) : []),
        ]),
      ];
      return options.length > 0 ? [rng.pick(options)] : undefined;
    }
    case 'ranking_order': {
      const ranked = clamp(asCount(definition.num_items_to_rank, context.attachmentCount, 1), 1, context.attachmentCount);
      return rng.shuffle(range(context.attachmentCount)).slice(0, ranked);
    }
    case 'form': {
      const formScope = new AnswerScope(scope);
      const answer = answerFields(context, field.children, formScope);
      // Other fields' conditions may look into this form: they see the choices of every filling.
      for (const child of field.children) scope.record(child.id, formScope.ownAnswersOf(child.id));
      return answer;
    }
    default:
      return undefined;
  }
}

/** Digits after the decimal point of a number as JavaScript writes it (at most 10). */
function decimalsOf(value: number | undefined): number {
  if (value === undefined) return 0;
  const fraction = String(value).split('.')[1] ?? '';
  return Math.min(10, /e/i.test(String(value)) ? 10 : fraction.length);
}

/** A decimal string `^-?[0-9]+(\.[0-9]+)?$`: no exponent, no trailing zeros, no `-0`. */
function formatDecimal(value: number, decimals: number): string {
  const text = Math.abs(value) >= 1e21 ? BigInt(Math.round(value)).toString() : value.toFixed(decimals);
  const trimmed = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  return trimmed === '-0' ? '0' : trimmed;
}

/**
 * A number answer as a decimal string, within `min` and `max` when given, on the slider's grid
 * (`min` + k·`step`) when there is a lower bound to count from.
 */
function numberAnswer(rng: SeededRandom, definition: Json): string {
  const min = decimalNumber(definition.min);
  const givenMax = decimalNumber(definition.max);
  const max = min !== undefined && givenMax !== undefined ? Math.max(min, givenMax) : givenMax;
  const givenStep = decimalNumber(definition.step);
  const step = givenStep !== undefined && givenStep > 0 ? givenStep : 1;
  const decimals = Math.max(decimalsOf(min), decimalsOf(max), decimalsOf(step));
  if (min === undefined && max === undefined) return String(rng.int(0, 100));
  if (min === undefined) return formatDecimal((max as number) - rng.int(0, 20) * step, decimals);
  const steps = max === undefined ? 20 : Math.min(Math.floor((max - min) / step + 1e-9), 1_000_000);
  let k = rng.int(0, steps);
  // Rounding to the grid's decimals can step over max only through float error; step back then.
  while (k > 0 && max !== undefined && Number(formatDecimal(min + k * step, decimals)) > max) k -= 1;
  return formatDecimal(min + k * step, decimals);
}

const DATE_PARTS = ['year', 'month', 'day', 'hour', 'minute'] as const;
type DatePart = (typeof DATE_PARTS)[number];

/**
 * The included parts of a valid date and time. Pre-filled `defaults` are kept, as a worker would
 * keep them, except a day the month lacks (`{month: 2, day: 31}`), which becomes its last day.
 */
function datetimeAnswer(rng: SeededRandom, include: readonly string[], defaults: Json): Schemas['TextCollectionDatetimeValue'] {
  const preset = (part: DatePart, lo: number, hi: number) => {
    const value = decimalNumber(defaults[part]);
    return value !== undefined && Number.isInteger(value) && value >= lo && value <= hi && include.includes(part) ? value : undefined;
  };
  // Without a year, month and day are checked against a leap year: a yearless date may be 29 February.
  const year = preset('year', 1, 9999) ?? (include.includes('year') ? rng.int(2000, 2030) : 2000);
  const presetDay = preset('day', 1, 31);
  const longEnough = range(12)
    .map((m) => m + 1)
    .filter((m) => daysInMonth(year, m) >= (presetDay ?? 1));
  const month = preset('month', 1, 12) ?? rng.pick(longEnough);
  const value: Record<DatePart, number> = {
    year,
    month,
    day: Math.min(presetDay ?? rng.int(1, daysInMonth(year, month)), daysInMonth(year, month)),
    hour: preset('hour', 0, 23) ?? rng.int(0, 23),
    minute: preset('minute', 0, 59) ?? rng.int(0, 59),
  };
  return Object.fromEntries(DATE_PARTS.filter((part) => include.includes(part)).map((part) => [part, value[part]]));
}

/** A range moved from the field's default by whole increments, inside 0..86400 and in order. */
function timeRangeAnswer(rng: SeededRandom, definition: Json): Schemas['TextCollectionTimeRangeValue'] {
  const pair = Array.isArray(definition.default_seconds) ? definition.default_seconds : definition.defaults_seconds;
  const ends = (Array.isArray(pair) ? pair : [0, 0]).map((v) => clamp(decimalNumber(v) ?? 0, 0, SECONDS_PER_DAY));
  const [from0, to0] = [Math.min(ends[0] ?? 0, ends[1] ?? 0), Math.max(ends[0] ?? 0, ends[1] ?? 0)];
  const step = clamp(decimalNumber(definition.increment_seconds) ?? 1, 1, 3600);
  const shift = (lo: number, hi: number) => rng.int(Math.max(lo, -5), Math.min(hi, 5));
  const from = from0 + shift(-Math.floor(from0 / step), Math.floor((to0 - from0) / step)) * step;
  const to = to0 + shift(-Math.floor((to0 - from) / step), Math.floor((SECONDS_PER_DAY - to0) / step)) * step;
  const seconds = (v: number) => clamp(Math.round(v * 1000) / 1000, 0, SECONDS_PER_DAY);
  return { from_seconds: seconds(from), to_seconds: Math.max(seconds(from), seconds(to)) };
}

export function textCollectionResponse(params: Json, rng: SeededRandom): Schemas['TextCollectionResponse'] {
  const context = { rng, attachmentCount: Math.max(1, records(params.attachments).length) };
  return { annotations: answerFields(context, fieldDefinitions(params.fields), new AnswerScope()) };
}
