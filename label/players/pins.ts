// The pinning hook (types.ts) for players whose fields are elements carrying `data-field-id`:
// a field is a part a remark can point at (the contract's `scope.field`), named by its label; a
// click or focus in it picks it; a remark shows as a note under the field's label.
import { el, sameScope, type Pinning } from './types.ts';

const nameOf = (field: HTMLElement): string =>
  field.querySelector('.title, legend, label, h3')?.textContent?.trim() || (field.dataset.fieldId ?? '');

export function fieldPinning(container: HTMLElement): Pinning {
  /** The first element of each field id (a form filled several times repeats its fields). */
  const fields = () => {
    const seen = new Map<string, HTMLElement>();
    for (const f of container.querySelectorAll<HTMLElement>('[data-field-id]'))
      if (f.dataset.fieldId && !seen.has(f.dataset.fieldId)) seen.set(f.dataset.fieldId, f);
    return seen;
  };
  return {
    targets: () => [...fields()].map(([field, e]) => ({ scope: { field }, label: `Field: ${nameOf(e)}` })),
    onPick(pick) {
      const picked = (e: Event) => {
        const field = e.target instanceof Element ? e.target.closest<HTMLElement>('[data-field-id]') : null;
        if (field?.dataset.fieldId) pick({ field: field.dataset.fieldId });
      };
      container.addEventListener('focusin', picked);
      container.addEventListener('click', picked);
    },
    show(pins) {
      for (const note of container.querySelectorAll('.pin-note')) note.remove();
      for (const [field, e] of fields()) {
        const notes = pins.filter((p) => sameScope(p.scope, { field }));
        e.classList.toggle('pinned', notes.length > 0);
        const heading = e.querySelector('.title, legend, label, h3');
        const at = heading?.parentElement === e ? heading : null;
        const nodes = notes.map((p) => el('p', { class: 'pin-note', role: 'note' }, el('strong', {}, `${p.title}: `), p.text));
        if (at) at.after(...nodes);
        else e.prepend(...nodes);
      }
    },
  };
}

/**
 * Read-only for a form player (types.ts' `readOnly`): text boxes become read-only (they still take
 * focus, so that a click picks their field), every other control is disabled. Call it once the
 * controls are made; it returns true for the player's `readOnly`.
 */
export function showOnly(container: HTMLElement): true {
  for (const c of container.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | HTMLButtonElement>(
    'input, textarea, select, button',
  )) {
    if ((c instanceof HTMLInputElement && /^(text|number|email|url|search|tel)$/.test(c.type)) || c instanceof HTMLTextAreaElement)
      c.readOnly = true;
    else c.disabled = true;
  }
  return true;
}
