// The fields of a textcollection form as the contract defines them, read alike by the synthetic
// generator (which answers them) and the answer rules (which check a worker's answers): which
// choices a field offers, when its conditions show it, which days a date may name.
import { isRecord, records } from './json.ts';

/** A choice's value, as a category or select field offers it (`"3"` and `3` are different values). */
export type ChoiceValue = string | number;

export const isChoiceValue = (value: unknown): value is ChoiceValue =>
  (typeof value === 'string' && value.length > 0) || (typeof value === 'number' && Number.isFinite(value));

/**
 * Whether a field with these `conditions` is shown (FieldConditions): one condition set holds
 * (OR), every key of it (AND), a value or list of values selected, or with `not` none of them.
 */
export function conditionsHold(conditions: unknown, selectedIn: (fieldId: string) => readonly ChoiceValue[]): boolean {
  if (!Array.isArray(conditions) || conditions.length === 0) return true;
  const anySelected = (wanted: unknown, selected: readonly ChoiceValue[]) =>
    (Array.isArray(wanted) ? wanted : [wanted]).some((value) => selected.includes(value as ChoiceValue));
  return conditions.some(
    (set) =>
      isRecord(set) &&
      Object.entries(set).every(([fieldId, wanted]) =>
        isRecord(wanted) && 'not' in wanted ? !anySelected(wanted.not, selectedIn(fieldId)) : anySelected(wanted, selectedIn(fieldId)),
      ),
  );
}

/** The values of the selectable choices: only choices without subchoices can be selected. */
export function leafChoiceValues(choices: unknown): ChoiceValue[] {
  const values = records(choices).flatMap((choice): unknown[] =>
    Array.isArray(choice.subchoices) && choice.subchoices.length > 0 ? leafChoiceValues(choice.subchoices) : [choice.value],
  );
  return [...new Set(values.filter(isChoiceValue))];
}

/** The days of a month (1–12) of a year: a datetime field's day is one of them. */
export const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** A time_range field's seconds run from 0 to the length of a day. */
export const SECONDS_PER_DAY = 86_400;
