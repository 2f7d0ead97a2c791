// textcollection: the task's `fields` as a form. All nine field types (text, boolean, number with
// or without a slider, datetime parts, category with nested subchoices, time_range, select with
// `choices_from_field`, ranking_order of the attachments, form with fieldsets), several answers
// where `max_responses_required` is above 1, and several fillings of a form. A field whose
// `conditions` do not hold is hidden and left out of the answer, as the server's rules want
// (shared/answer-rules.ts, run here too before submitting). `hypothesis` fills the form in
// first; a draft wins over it.
import { checkAnswer } from '../../shared/answer-rules.ts';
import { conditionsHold, leafChoiceValues } from '../../shared/form-fields.ts';
import { instructionHtml } from '../instruction.ts';
import type { Shortcut } from '../keys.ts';
import { attachmentView, type AttachmentType } from './attachment.ts';
import { fieldPinning, showOnly } from './pins.ts';
import { el, type PlayerFactory } from './types.ts';
import { asBoolean, isRecord } from '../../shared/json.ts';

type Json = Record<string, unknown>;
type Choice = string | number;
/** A field's in-progress answers (one entry per answer), or a form's fillings, by field_id. */
type Values = Record<string, unknown[]>;
interface Field extends Json {
  type: string;
  field_id: string;
  title: string;
}
interface Attachment {
  type: string;
  content: string;
  forms?: string[];
}

const num = (v: unknown): number | undefined => {
  const x = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
};
const isTrue = (v: unknown) => v === true || String(v).toLowerCase() === 'true';
const required = (f: Field) => asBoolean(f.required, false);
/** An entry nobody filled in: nothing, an empty text, or a form filling or range whose parts are all blank. */
const blank = (entry: unknown): boolean =>
  entry === undefined ||
  entry === null ||
  (typeof entry === 'string' && entry.trim() === '') ||
  (Array.isArray(entry) && entry.every(blank)) ||
  (isRecord(entry) && Object.values(entry).every(blank));
const fieldList = (v: unknown): Field[] => (Array.isArray(v) ? v : []).filter((f): f is Field => isRecord(f) && typeof f.type === 'string');
/** The answerable fields of a list, FieldSets opened. */
const flat = (fields: Field[]): Field[] => fields.flatMap((f) => (f.type === 'fieldset' ? fieldList(f.fields) : [f]));
const bounds = (f: Field) => {
  const max = Math.max(1, num(f.max_responses_required) ?? 1);
  return { min: Math.min(Math.max(1, num(f.min_responses_required) ?? 1), max), max };
};
const codePoints = (s: string) => Array.from(s).length;
const PARTS = ['year', 'month', 'day', 'hour', 'minute'] as const;
const PART_RANGE: Record<string, [number, number]> = { year: [1, 9999], month: [1, 12], day: [1, 31], hour: [0, 23], minute: [0, 59] };
const flatChoices = (v: unknown): Choice[] =>
  Array.isArray(v) ? v.flatMap(flatChoices) : typeof v === 'string' || typeof v === 'number' ? [v] : [];

let uid = 0;
const nextId = () => `tc-${++uid}`;

export const textcollection: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Json;
  const fields = fieldList(params.fields);
  const attachments = (Array.isArray(params.attachments) ? params.attachments : []).filter(
    (a): a is Attachment => isRecord(a) && typeof a.content === 'string',
  );
  const hypothesis = isRecord(params.hypothesis) && isRecord(params.hypothesis.annotations) ? params.hypothesis.annotations : {};

  // ---- the starting values: the draft, else the hypothesis, else each field's defaults ----------
  const timeDefault = (f: Field) => {
    const d = Array.isArray(f.default_seconds) ? f.default_seconds : Array.isArray(f.defaults_seconds) ? f.defaults_seconds : [];
    return { from: d[0] === undefined ? '' : String(d[0]), to: d[1] === undefined ? '' : String(d[1]) };
  };
  const rankCount = (f: Field) => Math.min(num(f.num_items_to_rank) ?? attachments.length, attachments.length);
  const fullOrder = (ranked: unknown) => {
    const head = (Array.isArray(ranked) ? ranked : []).filter(
      (i, k, all): i is number => Number.isInteger(i) && i >= 0 && i < attachments.length && all.indexOf(i) === k,
    );
    return [...head, ...attachments.map((_, i) => i).filter((i) => !head.includes(i))];
  };
  function emptyEntry(f: Field): unknown {
    switch (f.type) {
      case 'text':
        return '';
      case 'number':
        // A slider not yet moved has no value (not its minimum): it answers nothing until moved.
        return '';
      case 'datetime': {
        const defaults = isRecord(f.defaults) ? f.defaults : {};
        const include = (Array.isArray(f.include) ? f.include : []) as string[];
        return Object.fromEntries(include.map((p) => [p, num(defaults[p]) === undefined ? '' : String(num(defaults[p]))]));
      }
      case 'category':
        return [];
      case 'time_range':
        return timeDefault(f);
      case 'ranking_order':
        return fullOrder([]);
      case 'form':
        return emptyFilling(fieldList(f.fields));
      default:
        return null;
    }
  }
  function emptyFilling(children: Field[]): Values {
    return Object.fromEntries(flat(children).map((c) => [c.field_id, Array.from({ length: bounds(c).min }, () => emptyEntry(c))]));
  }
  function fromAnswer(f: Field, answer: unknown): unknown {
    switch (f.type) {
      case 'number':
        return answer === undefined || answer === null ? '' : String(answer);
      case 'datetime':
        return {
          ...(emptyEntry(f) as Json),
          ...Object.fromEntries(Object.entries(isRecord(answer) ? answer : {}).map(([k, v]) => [k, String(v)])),
        };
      case 'category':
        return flatChoices(answer);
      case 'time_range':
        return isRecord(answer) ? { from: String(answer.from_seconds ?? ''), to: String(answer.to_seconds ?? '') } : timeDefault(f);
      case 'select':
        return Array.isArray(answer) ? (answer[0] ?? null) : null;
      case 'ranking_order':
        return fullOrder(answer);
      default:
        return answer;
    }
  }
  /** A field's entries from the hypothesis's pre-annotation (`response`: one entry per answer). */
  function prefilled(f: Field, annotation: unknown): unknown[] | undefined {
    if (!isRecord(annotation) || !Array.isArray(annotation.response) || annotation.response.length === 0) return undefined;
    const { max } = bounds(f);
    return annotation.response.slice(0, max).map((answer) => {
      if (f.type !== 'form') return fromAnswer(f, answer);
      const filling = emptyFilling(fieldList(f.fields));
      const given = isRecord(answer) ? answer : {};
      for (const c of flat(fieldList(f.fields))) {
        const entries = prefilled(c, given[c.field_id]);
        if (entries) filling[c.field_id] = entries;
      }
      return filling;
    });
  }
  /** A field's entries from an answer in the response's shape (a redo starts from the earlier answer). */
  function answered(f: Field, answer: unknown): unknown[] | undefined {
    if (answer === undefined) return undefined;
    const each = bounds(f).max > 1 && Array.isArray(answer) ? answer : [answer];
    return each.map((one) => {
      if (f.type !== 'form') return fromAnswer(f, one);
      const filling = emptyFilling(fieldList(f.fields));
      const given = isRecord(one) ? one : {};
      for (const c of flat(fieldList(f.fields))) filling[c.field_id] = answered(c, given[c.field_id]) ?? filling[c.field_id] ?? [];
      return filling;
    });
  }
  const saved = isRecord(draft?.values) ? (draft.values as Values) : undefined;
  const earlier = !saved && isRecord(draft?.annotations) ? draft.annotations : undefined;
  const top: Values = saved ?? {};
  if (!saved)
    for (const f of flat(fields))
      top[f.field_id] =
        (earlier ? answered(f, earlier[f.field_id]) : prefilled(f, hypothesis[f.field_id])) ??
        Array.from({ length: bounds(f).min }, () => emptyEntry(f));

  // ---- which fields show: the conditions, with a hidden field's choices counting for nothing ----
  /** Field wrappers and select refreshers per scope (the top level, or one filling of a form). */
  const wrappers = new Map<Values, Map<string, HTMLElement>>();
  const refreshers = new Set<() => void>();
  const hidden = new Map<Values, Set<string>>();
  const isHidden = (scope: Values, id: string) => hidden.get(scope)?.has(id) ?? false;
  const categoryIds = new Set<string>();
  const walkIds = (list: Field[]) => {
    for (const f of flat(list)) {
      if (f.type === 'category') categoryIds.add(f.field_id);
      if (f.type === 'form') walkIds(fieldList(f.fields));
    }
  };
  walkIds(fields);
  const selectedIn = (scope: Values, id: string): Choice[] =>
    categoryIds.has(id) && !isHidden(scope, id) ? flatChoices(scope[id] ?? []) : [];
  const forms = () => flat(fields).filter((f) => f.type === 'form' && !isHidden(top, f.field_id));
  const everywhere = (id: string): Choice[] => [
    ...selectedIn(top, id),
    ...forms().flatMap((f) => (top[f.field_id] ?? []).filter(isRecord).flatMap((filling) => selectedIn(filling as Values, id))),
  ];
  const local = (scope: Values, list: Field[]) => {
    const ids = new Set(list.map((f) => f.field_id));
    return (id: string) => (ids.has(id) ? selectedIn(scope, id) : everywhere(id));
  };
  function evaluate() {
    for (let round = 0; round < 20; round++) {
      let changed = false;
      const update = (scope: Values, list: Field[]) => {
        const now = new Set(list.filter((f) => !conditionsHold(f.conditions, local(scope, list))).map((f) => f.field_id));
        const before = hidden.get(scope);
        if (!before || before.size !== now.size || [...now].some((id) => !before.has(id))) changed = true;
        hidden.set(scope, now);
      };
      const topFields = flat(fields);
      update(top, topFields);
      for (const f of forms()) for (const filling of top[f.field_id] ?? []) update(filling as Values, flat(fieldList(f.fields)));
      if (!changed) break;
    }
    for (const [scope, map] of wrappers) for (const [id, node] of map) node.hidden = isHidden(scope, id);
    for (const refresh of refreshers) refresh();
  }
  const changed = () => {
    evaluate();
    context.changed();
  };

  // ---- the controls ----------------------------------------------------------------------------
  const attachmentLabel = (i: number) => {
    const a = attachments[i];
    if (!a) return `Attachment ${i + 1}`;
    const text =
      a.type === 'text'
        ? a.content
        : a.type === 'markdown'
          ? a.content.replace(/[*_#`>[\]]/g, '')
          : (a.content.split('/').pop() ?? a.content);
    return `Attachment ${i + 1}: ${text.length > 60 ? `${text.slice(0, 57)}…` : text}`;
  };
  const showAttachment = (a: Attachment, i: number) => {
    if (a.type === 'markdown') {
      const box = el('figure', { class: 'attachment', 'data-attachment-type': 'markdown' });
      const body = el('div', { class: 'markdown' });
      body.innerHTML = instructionHtml(a.content, context.media);
      box.append(el('figcaption', {}, `Attachment ${i + 1}`), body);
      return box;
    }
    const box = attachmentView(a.type as AttachmentType, a.content, context.media);
    box.prepend(el('figcaption', {}, `Attachment ${i + 1}`));
    return box;
  };

  /** One answer's control. `entries[k]` holds the answer; `name` is the control's accessible name. */
  function control(f: Field, scope: Values, entries: unknown[], k: number, name: string, list: Field[]): HTMLElement {
    const set = (v: unknown) => {
      entries[k] = v;
      changed();
    };
    const value = entries[k];
    switch (f.type) {
      case 'text': {
        const most = num(f.max_characters) ?? 1000;
        // A long answer (a `max_characters` above 200 was asked for) gets a text area, a short one a line.
        const input =
          num(f.max_characters) !== undefined && most > 200
            ? el('textarea', { 'aria-label': name, rows: '3' })
            : el('input', { type: 'text', 'aria-label': name });
        const count = el('span', { class: 'count', 'aria-hidden': 'true' });
        const show = () => {
          count.textContent = `${codePoints(input.value)} / ${most}`;
          count.classList.toggle('over', codePoints(input.value) > most);
        };
        input.value = typeof value === 'string' ? value : '';
        input.addEventListener('input', () => {
          show();
          set(input.value);
        });
        show();
        return el('div', { class: 'tc-textbox' }, input, count);
      }
      case 'boolean': {
        const group = el('div', { role: 'radiogroup', 'aria-label': name, class: 'inline' });
        const radioName = nextId();
        for (const [text, v] of [
          ['Yes', true],
          ['No', false],
        ] as const) {
          const id = nextId();
          const input = el('input', { type: 'radio', id, name: radioName });
          input.checked = value === v;
          input.addEventListener('change', () => set(v));
          group.append(el('span', { class: 'choice' }, input, el('label', { for: id }, text)));
        }
        return group;
      }
      case 'number': {
        if (isTrue(f.use_slider)) {
          const input = el('input', {
            type: 'range',
            'aria-label': name,
            min: String(num(f.min) ?? 0),
            max: String(num(f.max) ?? 100),
            step: String(num(f.step) ?? 1),
          });
          // Untouched, it shows "not set" (its thumb faded, at the minimum) and answers nothing; a move
          // or a click gives the value it shows.
          const given = typeof value === 'string' && value !== '';
          input.value = given ? value : String(num(f.min) ?? 0);
          const out = el('output', {}, given ? input.value : 'not set');
          const mark = (on: boolean) => {
            input.classList.toggle('unset', !on);
            if (on) input.removeAttribute('aria-valuetext');
            else input.setAttribute('aria-valuetext', 'not set');
          };
          mark(given);
          const take = () => {
            mark(true);
            out.textContent = input.value;
            set(input.value);
          };
          input.addEventListener('input', take);
          input.addEventListener('click', take);
          return el('div', { class: 'inline' }, String(num(f.min) ?? 0), input, String(num(f.max) ?? 100), out);
        }
        const input = el('input', { type: 'text', inputmode: 'decimal', 'aria-label': name, class: 'short' });
        input.value = typeof value === 'string' ? value : '';
        input.addEventListener('input', () => set(input.value.trim()));
        const range = [num(f.min), num(f.max)];
        return el(
          'div',
          { class: 'inline' },
          input,
          el(
            'span',
            { class: 'muted' },
            range[0] !== undefined && range[1] !== undefined
              ? `${range[0]} to ${range[1]}`
              : range[0] !== undefined
                ? `at least ${range[0]}`
                : range[1] !== undefined
                  ? `at most ${range[1]}`
                  : '',
          ),
        );
      }
      case 'datetime': {
        const parts = isRecord(value) ? value : {};
        const include = PARTS.filter((p) => (Array.isArray(f.include) ? f.include : []).includes(p));
        return el(
          'div',
          { class: 'inline', role: 'group', 'aria-label': name },
          ...include.map((p) => {
            const [lo, hi] = PART_RANGE[p] as [number, number];
            const id = nextId();
            const input = el('input', { id, type: 'number', min: String(lo), max: String(hi), class: p === 'year' ? 'year' : 'part' });
            input.value = typeof parts[p] === 'string' ? (parts[p] as string) : '';
            input.addEventListener('input', () => set({ ...(isRecord(entries[k]) ? entries[k] : {}), [p]: input.value }));
            return el('span', {}, el('label', { for: id }, p), ' ', input);
          }),
        );
      }
      case 'category': {
        const most = num(f.max_choices) ?? 1;
        const multiple = most > 1;
        const chosen = new Set(flatChoices(value));
        const groupName = nextId();
        const render = (choices: unknown): HTMLElement[] =>
          (Array.isArray(choices) ? choices : []).filter(isRecord).map((c) => {
            const hint = typeof c.hint === 'string' ? c.hint : undefined;
            if (Array.isArray(c.subchoices) && c.subchoices.length > 0) {
              const open = leafChoiceValues(c.subchoices).some((v) => chosen.has(v));
              const details = el('details', {}, el('summary', hint ? { title: hint } : {}, String(c.label)), ...render(c.subchoices));
              details.open = open;
              return details;
            }
            const id = nextId();
            const input = el('input', { type: multiple ? 'checkbox' : 'radio', id, name: groupName });
            const v = c.value as Choice;
            input.checked = chosen.has(v);
            input.addEventListener('change', () => {
              if (!multiple) chosen.clear();
              if (input.checked) chosen.add(v);
              else chosen.delete(v);
              const order = leafChoiceValues(f.choices);
              set(order.filter((x) => chosen.has(x)));
            });
            return el(
              'div',
              { class: 'choice' },
              input,
              el(
                'label',
                { for: id, ...(hint ? { title: hint } : {}) },
                String(c.label),
                hint ? el('span', { class: 'muted' }, ` — ${hint}`) : '',
              ),
            );
          });
        const fewest = num(f.min_choices) ?? 1;
        return el(
          'div',
          { role: multiple ? 'group' : 'radiogroup', 'aria-label': name, class: 'tc-choices' },
          ...(multiple ? [el('div', { class: 'muted' }, fewest === most ? `Choose ${most}.` : `Choose ${fewest} to ${most}.`)] : []),
          ...render(f.choices),
        );
      }
      case 'time_range': {
        const r = isRecord(value) ? value : { from: '', to: '' };
        const step = String(num(f.increment_seconds) ?? 1);
        // With `default_from_field` the range follows that field's answer until the person edits it.
        const source = typeof f.default_from_field === 'string' ? f.default_from_field : undefined;
        let touched = JSON.stringify(value) !== JSON.stringify(timeDefault(f));
        const boxes: HTMLInputElement[] = [];
        const input = (end: 'from' | 'to') => {
          const id = nextId();
          const box = el('input', { id, type: 'number', min: '0', max: '86400', step, class: 'short' });
          box.value = String(r[end] ?? '');
          box.addEventListener('input', () => {
            touched = true;
            set({ ...(isRecord(entries[k]) ? entries[k] : {}), [end]: box.value });
          });
          boxes.push(box);
          return el('span', {}, el('label', { for: id }, end === 'from' ? 'from (s)' : 'to (s)'), ' ', box);
        };
        const group = el('div', { class: 'inline', role: 'group', 'aria-label': name }, input('from'), input('to'));
        if (source) {
          const sourceRange = () => {
            const list = scope[source] ?? top[source] ?? [];
            const found = list[k] ?? list[0];
            return isRecord(found) && (found.from !== '' || found.to !== '') ? found : undefined;
          };
          const copy = (from: Json) => {
            entries[k] = { from: from.from, to: from.to };
            boxes.forEach((box, i) => {
              box.value = String(from[i ? 'to' : 'from'] ?? '');
            });
          };
          const follow = () => {
            const from = sourceRange();
            if (!touched && from && JSON.stringify(from) !== JSON.stringify(entries[k])) copy(from);
          };
          follow();
          refreshers.add(follow);
          const sourceTitle = flat(fields)
            .flatMap((x) => (x.type === 'form' ? flat(fieldList(x.fields)) : [x]))
            .find((x) => x.field_id === source)?.title;
          const button = el('button', { type: 'button' }, `Copy from “${sourceTitle ?? source}”`);
          button.addEventListener('click', () => {
            const from = sourceRange();
            if (!from) return;
            copy(from);
            changed();
          });
          group.append(button);
        }
        return group;
      }
      case 'select': {
        const select = el('select', { 'aria-label': name });
        const source = typeof f.choices_from_field === 'string' ? f.choices_from_field : undefined;
        let options: Choice[] = [];
        const refresh = () => {
          const next = [...new Set([...flatChoices(f.choices), ...(source ? local(scope, list)(source) : [])])];
          if (JSON.stringify(next) === JSON.stringify(options) && select.options.length) return;
          options = next;
          select.replaceChildren(el('option', { value: '' }, '—'), ...options.map((o, i) => el('option', { value: String(i) }, String(o))));
          const at = options.indexOf(entries[k] as Choice);
          select.value = at >= 0 ? String(at) : '';
        };
        refresh();
        refreshers.add(refresh);
        select.addEventListener('change', () => set(select.value === '' ? null : (options[Number(select.value)] ?? null)));
        return select;
      }
      case 'ranking_order': {
        const count = rankCount(f);
        const order = fullOrder(value);
        entries[k] = order;
        const listNode = el('ol', { class: 'ranking', 'aria-label': name });
        const move = (i: number, by: number) => {
          const j = i + by;
          if (j < 0 || j >= order.length) return;
          [order[i], order[j]] = [order[j] as number, order[i] as number];
          draw();
          (listNode.children[j] as HTMLElement | undefined)?.focus();
          set([...order]);
        };
        function draw() {
          listNode.replaceChildren(
            ...order.map((a, i) => {
              const up = el('button', { type: 'button', 'aria-label': `Move ${attachmentLabel(a)} up`, tabindex: '-1' }, '↑');
              const down = el('button', { type: 'button', 'aria-label': `Move ${attachmentLabel(a)} down`, tabindex: '-1' }, '↓');
              up.addEventListener('click', () => move(i, -1));
              down.addEventListener('click', () => move(i, 1));
              const place =
                i === 0
                  ? String(f.first_label ?? 'Best')
                  : i === count - 1
                    ? String(f.last_label ?? 'Worst')
                    : i < count
                      ? ''
                      : 'not ranked';
              const item = el(
                'li',
                { tabindex: '0', class: i < count ? 'ranked' : 'unranked', 'aria-keyshortcuts': 'Alt+ArrowUp Alt+ArrowDown' },
                el('span', { class: 'what' }, attachmentLabel(a)),
                el('span', { class: 'muted' }, place),
                up,
                down,
              );
              item.addEventListener('keydown', (e) => {
                if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
                  e.preventDefault();
                  move(i, e.key === 'ArrowUp' ? -1 : 1);
                }
              });
              return item;
            }),
          );
        }
        draw();
        return el('div', {}, el('div', { class: 'muted' }, 'Focus an item and move it with Alt+↑ / Alt+↓ (or its arrows).'), listNode);
      }
      case 'form': {
        const filling = isRecord(value) ? (value as Values) : emptyFilling(fieldList(f.fields));
        entries[k] = filling;
        const several = name !== f.title;
        const box = renderFields(fieldList(f.fields), filling, several ? ` (${name})` : '');
        if (several) box.prepend(el('h4', { class: 'filling' }, name));
        return box;
      }
      default:
        return el('p', { class: 'muted' }, `A field of type ${f.type} is not supported.`);
    }
  }

  /** A field: its title, description and hint, its answers (adding and removing within its bounds). */
  function renderField(f: Field, scope: Values, suffix: string, list: Field[]): HTMLElement {
    const titleId = nextId();
    // The controls carry the field's name; only a form is a labelled region of its own.
    const wrapper =
      f.type === 'form'
        ? el('section', { class: 'tc-field tc-form', 'aria-labelledby': titleId, 'data-field-id': f.field_id })
        : el('div', { class: `tc-field tc-${f.type}`, 'data-field-id': f.field_id });
    const { min, max } = bounds(f);
    scope[f.field_id] ??= [];
    const entries = scope[f.field_id] as unknown[];
    while (entries.length < min) entries.push(emptyEntry(f));
    const body = el('div', { class: 'answers' });
    const draw = () => {
      body.replaceChildren(
        ...entries.map((_, k) => {
          const name = `${f.title}${max > 1 ? ` ${k + 1}` : ''}${suffix}`;
          const row = el('div', { class: 'answer' }, control(f, scope, entries, k, name, list));
          if (max > 1 && entries.length > min) {
            const remove = el('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${name}` }, '✕');
            remove.addEventListener('click', () => {
              entries.splice(k, 1);
              draw();
              changed();
            });
            row.append(remove);
          }
          return row;
        }),
      );
      if (max > 1 && entries.length < max) {
        const add = el('button', { type: 'button' }, `Add ${f.type === 'form' ? 'a filling' : 'an answer'}: ${f.title}`);
        add.addEventListener('click', () => {
          entries.push(emptyEntry(f));
          draw();
          changed();
          body.querySelector<HTMLElement>('.answer:last-of-type :is(input, select, textarea, li, button)')?.focus();
        });
        body.append(add);
      }
      // The description and hint describe each of the field's controls (a form's children have their own).
      if (described.length && f.type !== 'form')
        for (const c of body.querySelectorAll('[aria-label]:not(button)')) c.setAttribute('aria-describedby', described.join(' '));
      if (required(f) && f.type !== 'form')
        for (const c of body.querySelectorAll('[aria-label]:not(button)')) c.setAttribute('aria-required', 'true');
    };
    const described: string[] = [];
    const descriptionId = nextId();
    const hintId = nextId();
    if (typeof f.description === 'string') described.push(descriptionId);
    if (typeof f.hint === 'string') described.push(hintId);
    draw();
    const mark = required(f) ? [el('span', { class: 'required', title: 'required' }, ' *')] : [];
    const head =
      f.type === 'form'
        ? el('h3', { id: titleId }, f.title, ...mark)
        : el('div', { class: 'title', id: titleId, 'aria-hidden': 'true' }, f.title, ...mark);
    if (typeof f.hint === 'string') head.title = f.hint;
    wrapper.append(
      head,
      ...(typeof f.description === 'string' ? [el('div', { class: 'muted', id: descriptionId }, f.description)] : []),
      ...(typeof f.hint === 'string' ? [el('div', { class: 'hint', id: hintId }, `Hint: ${f.hint}`)] : []),
      // An attachment tied to forms shows with them (the attachment's `forms`).
      ...attachments
        .filter((a) => f.type === 'form' && a.forms?.includes(f.field_id))
        .map((a) => showAttachment(a, attachments.indexOf(a))),
      body,
    );
    const map = wrappers.get(scope) ?? new Map<string, HTMLElement>();
    wrappers.set(scope, map);
    map.set(f.field_id, wrapper);
    return wrapper;
  }

  /** A list of fields (the task's, or a form's), FieldSets laid out side by side. */
  function renderFields(list: Field[], scope: Values, suffix: string): HTMLElement {
    const answerable = flat(list);
    const box = el(
      'div',
      { class: 'tc-fields' },
      ...list.map((f) =>
        f.type === 'fieldset'
          ? el(
              'fieldset',
              { class: 'tc-fieldset' },
              ...(typeof f.title === 'string' ? [el('legend', {}, f.title)] : []),
              ...(typeof f.description === 'string' ? [el('div', { class: 'muted' }, f.description)] : []),
              el('div', { class: 'inline-fields' }, ...fieldList(f.fields).map((c) => renderField(c, scope, suffix, answerable))),
            )
          : renderField(f, scope, suffix, answerable),
      ),
    );
    return box;
  }

  if (typeof params.title === 'string') container.append(el('h2', { class: 'tc-title' }, params.title));
  if (typeof params.description === 'string') container.append(el('p', {}, params.description));
  const general = attachments.filter((a) => !a.forms?.length);
  if (general.length)
    container.append(el('div', { class: 'attachments' }, ...general.map((a) => showAttachment(a, attachments.indexOf(a)))));
  const form = renderFields(fields, top, '');
  container.append(form);
  evaluate();

  // ---- the answer --------------------------------------------------------------------------------
  function answerOne(f: Field, entry: unknown, scope: Values, list: Field[], name: string, problems: string[]): unknown {
    const bad = (why: string) => {
      problems.push(`${name}: ${why}`);
      return undefined;
    };
    switch (f.type) {
      case 'text': {
        const text = typeof entry === 'string' ? entry.trim() : '';
        const most = num(f.max_characters) ?? 1000;
        if (!text) return bad('write an answer.');
        if (codePoints(text) > most) return bad(`at most ${most} characters.`);
        return text;
      }
      case 'boolean':
        return typeof entry === 'boolean' ? entry : bad('choose Yes or No.');
      case 'number': {
        const text = typeof entry === 'string' ? entry.trim() : '';
        if (!text && isTrue(f.use_slider)) return bad('move the slider to the value (it is not set yet).');
        if (!/^-?[0-9]+(\.[0-9]+)?$/.test(text)) return bad('write a number in digits (like 4.5).');
        const [lo, hi] = [num(f.min), num(f.max)];
        if ((lo !== undefined && Number(text) < lo) || (hi !== undefined && Number(text) > hi))
          return bad(`a number from ${lo ?? '…'} to ${hi ?? '…'}.`);
        return text;
      }
      case 'datetime': {
        const parts = isRecord(entry) ? entry : {};
        const out: Record<string, number> = {};
        for (const p of PARTS.filter((x) => (Array.isArray(f.include) ? f.include : []).includes(x))) {
          const v = num(parts[p]);
          const [lo, hi] = PART_RANGE[p] as [number, number];
          if (v === undefined || !Number.isInteger(v) || v < lo || v > hi)
            return bad(`the ${p} is missing or out of range (${lo} to ${hi}).`);
          out[p] = v;
        }
        if (out.month !== undefined && out.day !== undefined && out.day > new Date(Date.UTC(out.year ?? 2000, out.month, 0)).getUTCDate())
          return bad(`month ${out.month} has no day ${out.day}.`);
        return out;
      }
      case 'category': {
        const leaves = leafChoiceValues(f.choices);
        const chosen = flatChoices(entry).filter((v) => leaves.includes(v));
        const fewest = Math.min(num(f.min_choices) ?? 1, leaves.length);
        const most = Math.max(fewest, Math.min(num(f.max_choices) ?? 1, leaves.length));
        if (chosen.length < fewest || chosen.length > most)
          return bad(fewest === most ? `choose ${fewest === 1 ? 'one' : fewest}.` : `choose ${fewest} to ${most}.`);
        return chosen;
      }
      case 'time_range': {
        const r = isRecord(entry) ? entry : {};
        const [from, to] = [num(r.from), num(r.to)];
        if (from === undefined || to === undefined || from < 0 || to > 86_400 || from > to)
          return bad('give a start and an end in seconds (0 to 86400), the start not after the end.');
        return { from_seconds: from, to_seconds: to };
      }
      case 'select': {
        const options = [
          ...flatChoices(f.choices),
          ...(typeof f.choices_from_field === 'string' ? local(scope, list)(f.choices_from_field) : []),
        ];
        return options.includes(entry as Choice) ? [entry] : bad('select an option.');
      }
      case 'ranking_order':
        return fullOrder(entry).slice(0, rankCount(f));
      case 'form':
        return answers(fieldList(f.fields), isRecord(entry) ? (entry as Values) : {}, problems, ` (${name})`);
      default:
        return undefined;
    }
  }
  function answers(list: Field[], scope: Values, problems: string[], suffix: string): Json {
    const answerable = flat(list);
    const out: Json = {};
    for (const f of answerable) {
      if (isHidden(scope, f.field_id)) continue;
      // A select with nothing to choose from (its source field not answered) has no answer.
      if (
        f.type === 'select' &&
        flatChoices(f.choices).length === 0 &&
        (typeof f.choices_from_field !== 'string' || local(scope, answerable)(f.choices_from_field).length === 0)
      )
        continue;
      const { max } = bounds(f);
      // An optional field left blank is left out of the answer (only `required` ones must be given).
      const entries = (scope[f.field_id] ?? []).filter((entry) => required(f) || !blank(entry));
      if (!required(f) && entries.length === 0) continue;
      const given = entries.map((entry, k) =>
        answerOne(f, entry, scope, answerable, `${f.title}${max > 1 ? ` ${k + 1}` : ''}${suffix}`, problems),
      );
      out[f.field_id] = max > 1 ? given : given[0];
    }
    return out;
  }

  const shortcuts: Shortcut[] = [];
  return {
    shortcuts: context.readOnly ? [] : shortcuts,
    pinning: fieldPinning(container),
    readOnly: context.readOnly ? showOnly(container) : false,
    getDraft: () => ({ values: top }),
    getResponse() {
      evaluate();
      const problems: string[] = [];
      const response = { annotations: answers(fields, top, problems, '') };
      if (problems.length) {
        const first = problems[0] as string;
        return { ok: false, problem: problems.length > 1 ? `${first} (and ${problems.length - 1} more)` : first };
      }
      // The server's own rules, so that what it would refuse is said here first.
      const [rule] = checkAnswer({ type: 'textcollection', params }, response);
      if (rule) return { ok: false, problem: rule };
      return { ok: true, response: response as never };
    },
  };
};
