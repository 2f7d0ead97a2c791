// categorization: one choice (radio buttons) or several (`allow_multiple`, check boxes) from
// `categories`; the answer carries `category_id` when the task has `category_ids`. Keys 1-9 pick.
import type { components } from '../../generated/workforce.ts';
import type { Shortcut } from '../keys.ts';
import { attachmentView } from './attachment.ts';
import { fieldPinning, showOnly } from './pins.ts';
import { el, type PlayerFactory } from './types.ts';

type Params = components['schemas']['CategorizationParams'];

export const categorization: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Params;
  const categories = params.categories ?? [];
  const multiple = String(params.allow_multiple ?? false).toLowerCase() === 'true';
  const idOf = new Map(Object.entries(params.category_ids ?? {}).map(([id, category]) => [category, id]));
  const saved = draft?.category;
  const chosen = new Set<string>(
    (Array.isArray(saved) ? saved : typeof saved === 'string' ? [saved] : []).filter((c): c is string => categories.includes(c as string)),
  );

  if (params.attachment !== undefined) container.append(attachmentView(params.attachment_type ?? 'text', params.attachment, context.media));
  const group = el(
    'fieldset',
    { role: multiple ? 'group' : 'radiogroup', 'data-field-id': 'category' },
    el('legend', {}, multiple ? 'Choose every category that fits' : 'Choose the category that fits'),
  );
  const inputs = categories.map((category, i) => {
    const input = el('input', { type: multiple ? 'checkbox' : 'radio', name: 'category', value: category, id: `category-${i}` });
    input.checked = chosen.has(category);
    input.addEventListener('change', () => {
      if (!multiple) chosen.clear();
      if (input.checked) chosen.add(category);
      else chosen.delete(category);
      context.changed();
    });
    group.append(
      el('div', { class: 'choice' }, input, el('label', { for: input.id }, i < 9 ? el('kbd', {}, String(i + 1)) : '', ` ${category}`)),
    );
    return input;
  });
  container.append(group);

  const toggle = (i: number) => {
    const input = inputs[i];
    if (!input) return;
    input.checked = multiple ? !input.checked : true;
    input.dispatchEvent(new Event('change'));
    input.focus();
  };
  const shortcuts: Shortcut[] = [
    {
      keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
      label: multiple ? 'Toggle category 1-9' : 'Choose category 1-9',
      run: (e) => toggle(Number(e.key) - 1),
    },
  ];

  const ordered = () => categories.filter((c) => chosen.has(c));
  return {
    shortcuts: context.readOnly ? [] : shortcuts,
    pinning: fieldPinning(container),
    readOnly: context.readOnly ? showOnly(container) : false,
    getDraft: () => ({ category: multiple ? ordered() : (ordered()[0] ?? null) }),
    getResponse() {
      const picked = ordered();
      if (picked.length === 0) return { ok: false, problem: multiple ? 'Choose at least one category.' : 'Choose a category.' };
      const ids = picked.map((c) => idOf.get(c)).filter((id): id is string => id !== undefined);
      if (multiple) return { ok: true, response: { category: picked, ...(idOf.size ? { category_id: ids } : {}) } };
      return { ok: true, response: { category: picked[0] as string, ...(ids[0] !== undefined ? { category_id: ids[0] } : {}) } };
    },
  };
};
