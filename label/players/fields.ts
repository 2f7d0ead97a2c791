// datacollection and transcription: one labelled text box per key of `fields`, and for
// `repeatable_fields` a table with one row per occurrence (free text, or a list when the key has
// `choices`), rows added with Alt+Enter or the button and removed with each row's button.
// datacollection answers carry `time_spent_in_seconds`, from the measured active time.
import type { Shortcut } from '../keys.ts';
import { attachmentView, type AttachmentType } from './attachment.ts';
import { fieldPinning, showOnly } from './pins.ts';
import { el, type PlayerFactory } from './types.ts';

type Repeatable = Record<string, string | { description: string; choices: string[] }>;
interface Params {
  attachment_type?: AttachmentType;
  attachment?: string;
  fields?: Record<string, string>;
  repeatable_fields?: Repeatable;
}
type Row = Record<string, string>;

const strings = (v: unknown): Record<string, string> =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : {};

export const fields: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Params;
  const keys = Object.keys(params.fields ?? {});
  const repeatable = params.repeatable_fields;
  const repeatKeys = Object.keys(repeatable ?? {});
  /** What a repeated key is called for people: its description (the key only when it has none). */
  const repeatTitle = (key: string) => {
    const spec = repeatable?.[key];
    return (typeof spec === 'string' ? spec : spec?.description) || key;
  };
  const values: Row = strings(draft?.fields);
  let rows: Row[] = Array.isArray(draft?.repeatable_fields) ? (draft.repeatable_fields as unknown[]).map(strings) : [];
  let ids = 0;

  if (params.attachment)
    container.append(
      attachmentView(
        params.attachment_type ?? (assignment.task.type === 'transcription' ? 'image' : 'text'),
        params.attachment,
        context.media,
      ),
    );
  if (keys.length) {
    const set = el('fieldset', {}, el('legend', {}, 'Fields'));
    for (const key of keys) {
      const id = `field-${ids++}`;
      const input = el('input', { id, type: 'text', name: key, 'aria-describedby': `${id}-key` });
      input.value = values[key] ?? '';
      input.addEventListener('input', () => {
        values[key] = input.value;
        context.changed();
      });
      set.append(
        el(
          'div',
          { class: 'field', 'data-field-id': key },
          el('label', { for: id }, params.fields?.[key] ?? key),
          ' ',
          el('code', { id: `${id}-key` }, key),
          el('br'),
          input,
        ),
      );
    }
    container.append(set);
  }

  const body = el('tbody');
  const table = el(
    'table',
    { class: 'rows' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...repeatKeys.map((k) => el('th', { scope: 'col', 'data-key': k }, repeatTitle(k))),
        el('th', {}, el('span', { class: 'sr-only' }, 'Remove')),
      ),
    ),
    body,
  );
  const addRow = () => {
    rows.push(Object.fromEntries(repeatKeys.map((k) => [k, ''])));
    drawRows();
    context.changed();
    body.querySelector<HTMLElement>('tr:last-child input, tr:last-child select')?.focus();
  };
  function drawRows() {
    body.replaceChildren(
      ...rows.map((row, r) => {
        const cells = repeatKeys.map((key) => {
          const spec = repeatable?.[key];
          const label = `${repeatTitle(key)} (row ${r + 1})`;
          let input: HTMLInputElement | HTMLSelectElement;
          if (spec && typeof spec === 'object') {
            input = el(
              'select',
              { 'aria-label': label },
              el('option', { value: '' }, '—'),
              ...spec.choices.map((c) => el('option', { value: c }, c)),
            );
          } else input = el('input', { type: 'text', 'aria-label': label });
          input.value = row[key] ?? '';
          input.addEventListener('input', () => {
            row[key] = input.value;
            context.changed();
          });
          return el('td', {}, input);
        });
        const remove = el('button', { type: 'button', 'aria-label': `Remove row ${r + 1}` }, '✕');
        remove.addEventListener('click', () => {
          rows = rows.filter((x) => x !== row);
          drawRows();
          context.changed();
        });
        return el('tr', {}, ...cells, el('td', {}, remove));
      }),
    );
  }
  const shortcuts: Shortcut[] = [];
  if (repeatKeys.length) {
    const add = el('button', { type: 'button' }, 'Add a row ', el('kbd', {}, 'Alt+Enter'));
    add.addEventListener('click', addRow);
    container.append(el('fieldset', {}, el('legend', {}, 'Repeated values (one row per occurrence)'), table, add));
    drawRows();
    shortcuts.push({ keys: ['Alt+Enter'], label: 'Add a row of repeated values', run: addRow });
  }

  const answerFields = () => Object.fromEntries(keys.map((k) => [k, values[k] ?? '']));
  return {
    shortcuts: context.readOnly ? [] : shortcuts,
    pinning: fieldPinning(container),
    readOnly: context.readOnly ? showOnly(container) : false,
    getDraft: () => ({ fields: answerFields(), repeatable_fields: rows }),
    getResponse() {
      const missing = keys.filter((k) => !(values[k] ?? '').trim());
      if (missing.length) return { ok: false, problem: `Fill in: ${missing.map((k) => params.fields?.[k] || k).join(', ')}.` };
      const badRow = rows.findIndex((row) => repeatKeys.some((k) => !(row[k] ?? '').trim()));
      if (badRow >= 0) return { ok: false, problem: `Row ${badRow + 1} of the repeated values is incomplete.` };
      if (assignment.task.type === 'datacollection')
        return { ok: true, response: { fields: answerFields(), time_spent_in_seconds: Math.round(context.activeMs() / 1000) } };
      return {
        ok: true,
        response: { ...(keys.length ? { fields: answerFields() } : {}), ...(repeatKeys.length ? { repeatable_fields: rows } : {}) },
      };
    },
  };
};
