// Annotation attributes (the task's `annotation_attributes`): which apply to a shape (its label
// condition AND every attribute condition, compared as text as the server does), a small form for
// the selected shape, and the values that go out (those of attributes that apply, nothing else).
import { el } from '../types.ts';
import { describe, type AttributeValue, type Shape } from './model.ts';
import { isRecord } from '../../../shared/json.ts';

export interface AttributeDef {
  name: string;
  kind: 'category' | 'number' | 'angle' | 'text' | 'offset' | 'linked';
  question: string;
  choices: string[];
  multiple: boolean;
  label: string | undefined;
  conditions: Record<string, unknown>[];
  /** A text asked in a text area (the document player's transcriptions; not a contract attribute option). */
  multiline?: boolean;
}

const kinds = ['category', 'number', 'angle', 'text', 'offset', 'linked'] as const;

export function attributeDefs(value: unknown): AttributeDef[] {
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([name, raw]): AttributeDef[] => {
    if (!isRecord(raw)) return [];
    const conditions = isRecord(raw.conditions) ? raw.conditions : {};
    const label = isRecord(conditions.label_condition) ? conditions.label_condition.label : undefined;
    return [
      {
        name,
        kind: kinds.find((k) => k === raw.type) ?? 'category',
        question: typeof raw.description === 'string' ? raw.description : name,
        choices: Array.isArray(raw.choices) ? raw.choices.filter((c): c is string => typeof c === 'string') : [],
        multiple: raw.allow_multiple === true || String(raw.allow_multiple).toLowerCase() === 'true',
        label: typeof label === 'string' ? label : undefined,
        conditions: Array.isArray(conditions.attribute_conditions) ? conditions.attribute_conditions.filter(isRecord) : [],
        ...(raw.multiline === true ? { multiline: true } : {}),
      },
    ];
  });
}

/** The attributes asked of this shape now: its label fits, and every named attribute (itself asked) has the wanted value. */
export function applicable(defs: readonly AttributeDef[], shape: Shape): AttributeDef[] {
  let asked = defs.filter((d) => (d.label === undefined || d.label === shape.label) && (d.kind !== 'offset' || shape.type === 'box'));
  for (;;) {
    const names = new Set(asked.map((d) => d.name));
    const values = shape.attributes ?? {};
    const next = asked.filter((d) =>
      d.conditions.every((c) =>
        Object.entries(c).every(([name, wanted]) => {
          if (!names.has(name)) return false;
          const have = values[name];
          const options = Array.isArray(have) ? have : have === undefined ? [] : [have];
          return options.some((o) => String(o) === String(wanted));
        }),
      ),
    );
    if (next.length === asked.length) return next;
    asked = next;
  }
}

const answered = (v: AttributeValue | undefined) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);

/** The `attributes` that go out for the shape: only those asked; undefined when the task has none. */
export function attributesOut(defs: readonly AttributeDef[], shape: Shape): Record<string, AttributeValue> | undefined {
  if (!defs.length) return undefined;
  const values = shape.attributes ?? {};
  return Object.fromEntries(
    applicable(defs, shape).flatMap((d) => {
      const v = values[d.name];
      return answered(v) ? [[d.name, v as AttributeValue]] : [];
    }),
  );
}

/** The first attribute asked of the shape that has no answer yet (a link is optional: there may be nothing to link to). */
export function missingAttribute(defs: readonly AttributeDef[], shape: Shape): AttributeDef | undefined {
  return applicable(defs, shape).find((d) => d.kind !== 'linked' && !answered(shape.attributes?.[d.name]));
}

/**
 * The form of the attributes asked of `shape`. `set` changes one value (undefined clears it);
 * `begin` is called once before the first change of each input, for undo.
 */
export function attributeForm(
  defs: readonly AttributeDef[],
  shape: Shape,
  others: readonly Shape[],
  begin: () => void,
  set: (name: string, value: AttributeValue | undefined) => void,
): HTMLElement {
  const form = el('div', { class: 'attributes', role: 'group', 'aria-label': 'Attributes of the selected shape' });
  const values = shape.attributes ?? {};
  for (const d of applicable(defs, shape)) {
    const id = `attr-${d.name.replace(/[^a-z0-9_-]/gi, '_')}`;
    let started = false;
    const touch = () => {
      if (!started) begin();
      started = true;
    };
    if (d.kind === 'category' && d.choices.length <= 12) {
      const box = el('fieldset', { class: 'attribute' }, el('legend', {}, d.question));
      const have = values[d.name];
      const chosen = new Set(Array.isArray(have) ? have : have === undefined ? [] : [String(have)]);
      d.choices.forEach((choice, i) => {
        const input = el('input', { type: d.multiple ? 'checkbox' : 'radio', name: id, id: `${id}-${i}`, value: choice });
        input.checked = chosen.has(choice);
        input.addEventListener('change', () => {
          touch();
          if (!d.multiple) set(d.name, choice);
          else {
            const all = [...form.querySelectorAll<HTMLInputElement>(`input[name="${id}"]:checked`)].map((c) => c.value);
            set(d.name, all.length ? all : undefined);
          }
        });
        box.append(el('label', { class: 'choice', for: `${id}-${i}` }, input, choice));
      });
      form.append(box);
      continue;
    }
    let input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    if (d.kind === 'category' || d.kind === 'linked') {
      const options =
        d.kind === 'category'
          ? d.choices.map((c) => ({ value: c, text: c }))
          : others.filter((o) => o.uuid !== shape.uuid).map((o, i) => ({ value: o.uuid, text: `${i + 1}. ${o.label}, ${describe(o)}` }));
      const select = el(
        'select',
        { id, ...(d.multiple && d.kind === 'category' ? { multiple: '' } : {}) },
        el('option', { value: '' }, '—'),
      );
      const have = values[d.name];
      for (const o of options) {
        const option = el('option', { value: o.value }, o.text);
        option.selected = Array.isArray(have) ? have.includes(o.value) : have === o.value;
        select.append(option);
      }
      select.addEventListener('change', () => {
        touch();
        const picked = [...select.selectedOptions].map((o) => o.value).filter(Boolean);
        set(d.name, d.multiple && d.kind === 'category' ? (picked.length ? picked : undefined) : picked[0] || undefined);
      });
      input = select;
    } else {
      const numeric = d.kind !== 'text';
      const bounds: Record<string, string> =
        d.kind === 'angle'
          ? { min: '0', max: '360', step: 'any' }
          : d.kind === 'offset' && shape.type === 'box'
            ? { min: '0', max: String(Math.max(shape.width, shape.height)), step: 'any' }
            : d.kind === 'number'
              ? { step: '1' }
              : {};
      const field = d.multiline ? el('textarea', { id, rows: '3' }) : el('input', { id, type: numeric ? 'number' : 'text', ...bounds });
      const have = values[d.name];
      field.value = have === undefined ? '' : String(have);
      field.addEventListener('input', () => {
        touch();
        if (!numeric) set(d.name, field.value === '' ? undefined : field.value);
        else if (field.value !== '' && Number.isFinite(Number(field.value))) {
          const n = Number(field.value);
          set(d.name, d.kind === 'number' ? Math.round(n) : n);
        } else set(d.name, undefined);
      });
      field.addEventListener('blur', () => {
        started = false;
      });
      input = field;
    }
    form.append(el('div', { class: 'field attribute' }, el('label', { for: id }, d.question), input));
  }
  if (!form.childElementCount) form.append(el('p', { class: 'muted' }, 'No attribute is asked for this shape.'));
  return form;
}
