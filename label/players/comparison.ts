// comparison: the attachments side by side (each shown as what it is), one of `choices` picked
// with the mouse or keys 1-9, and a text box per key of `fields`. The answer carries `choice` when
// the task has choices and `fields` when it has fields.
import type { components } from '../../generated/workforce.ts';
import type { Shortcut } from '../keys.ts';
import { attachmentView } from './attachment.ts';
import { fieldPinning, showOnly } from './pins.ts';
import { el, type PlayerFactory } from './types.ts';

type Params = components['schemas']['ComparisonParams'];

export const comparison: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Params;
  const items = params.attachments ?? [];
  const choices = params.choices ?? [];
  const keys = Object.keys(params.fields ?? {});
  let choice = typeof draft?.choice === 'string' && choices.includes(draft.choice) ? draft.choice : null;
  const values: Record<string, string> = {};
  const savedFields = draft?.fields && typeof draft.fields === 'object' ? (draft.fields as Record<string, unknown>) : {};
  for (const k of keys) values[k] = typeof savedFields[k] === 'string' ? (savedFields[k] as string) : '';

  container.append(
    el(
      'div',
      { class: 'compare', style: `--columns: ${Math.min(Math.max(items.length, 1), 3)}` },
      ...items.map((item, i) => {
        const view = attachmentView(params.attachment_type ?? 'text', item, context.media);
        view.prepend(el('figcaption', {}, `${i + 1} of ${items.length}`));
        return view;
      }),
    ),
  );

  const inputs: HTMLInputElement[] = [];
  if (choices.length) {
    const group = el('fieldset', { role: 'radiogroup', 'data-field-id': 'choice' }, el('legend', {}, 'Your answer'));
    choices.forEach((c, i) => {
      const input = el('input', { type: 'radio', name: 'choice', id: `choice-${i}`, value: c });
      input.checked = c === choice;
      input.addEventListener('change', () => {
        if (input.checked) choice = c;
        context.changed();
      });
      inputs.push(input);
      group.append(
        el('div', { class: 'choice' }, input, el('label', { for: input.id }, i < 9 ? el('kbd', {}, String(i + 1)) : '', ` ${c}`)),
      );
    });
    container.append(group);
  }
  if (keys.length) {
    const set = el('fieldset', {}, el('legend', {}, 'Fields'));
    keys.forEach((key, i) => {
      const id = `compare-field-${i}`;
      const input = el('textarea', { id, name: key, rows: '2' });
      input.value = values[key] ?? '';
      input.addEventListener('input', () => {
        values[key] = input.value;
        context.changed();
      });
      set.append(
        el('div', { class: 'field', 'data-field-id': key }, el('label', { for: id }, params.fields?.[key] ?? key), el('br'), input),
      );
    });
    container.append(set);
  }

  const shortcuts: Shortcut[] = choices.length
    ? [
        {
          keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
          label: 'Choose answer 1-9',
          run: (e) => {
            const input = inputs[Number(e.key) - 1];
            if (!input) return;
            input.checked = true;
            input.dispatchEvent(new Event('change'));
            input.focus();
          },
        },
      ]
    : [];
  const answerFields = () => Object.fromEntries(keys.map((k) => [k, (values[k] ?? '').trim()]));
  return {
    shortcuts: context.readOnly ? [] : shortcuts,
    pinning: fieldPinning(container),
    readOnly: context.readOnly ? showOnly(container) : false,
    getDraft: () => ({ choice, fields: answerFields() }),
    getResponse() {
      if (choices.length && choice === null) return { ok: false, problem: 'Choose an answer.' };
      const missing = keys.filter((k) => !(values[k] ?? '').trim());
      if (missing.length) return { ok: false, problem: `Fill in: ${missing.map((k) => params.fields?.[k] ?? k).join('; ')}` };
      return {
        ok: true,
        response: { ...(choices.length ? { choice: choice as string } : {}), ...(keys.length ? { fields: answerFields() } : {}) },
      };
    },
  };
};
