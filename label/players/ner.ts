// namedentityrecognition: label spans of the text. With the mouse: choose a label (buttons or keys
// 1-9), then select text (drag, or double-click a word): the span gets the label. With the keyboard:
// focus the text, move with the arrows (Ctrl+arrows by word, Home/End), extend with Shift, and press
// Enter (or a label's number) to label the selection. Clicking a span, or [ and ], selects it; a
// number relabels it and Delete removes it; its attributes are set in the list of spans. A click in
// the text puts the caret there. Ctrl+Z undoes a change of the spans or relationships, Ctrl+Shift+Z
// (or Ctrl+Y) redoes it.
// Relationships between spans are added from three lists (source, kind, target), checked against
// the task's definitions. Offsets count Unicode code points, as the contract does (an emoji is one,
// a combining accent is one more); the caret moves by whole graphemes.
import type { components } from '../../generated/workforce.ts';
import type { Shortcut } from '../keys.ts';
import { el, type PlayerFactory } from './types.ts';
import { Undo, undoKeys } from '../undo.ts';
import { isRecord } from '../../shared/json.ts';

type Params = components['schemas']['NamedEntityRecognitionParams'];
type LabelDef = components['schemas']['NamedEntityRecognitionLabel'];
interface RelationDef {
  name?: string;
  display_name?: string;
  is_directed?: boolean | string;
  source_label?: string;
  target_label?: string;
}
interface Span {
  id: string;
  start: number;
  end: number;
  label: string;
  attributes: Record<string, string>;
}
interface Relation {
  id: string;
  source_ref: string;
  target_ref: string;
  name?: string;
}

const colors = ['#ffd0d0', '#c8f0c8', '#cfe0ff', '#ffe2b0', '#e8d0ff', '#bff0f5', '#ffd0f0', '#e6d6c0', '#c8e6df'];

export const ner: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Params;
  const text = params.text ?? '';
  const chars = Array.from(text);
  const n = chars.length;
  // UTF-16 offset → code point index (a DOM selection counts UTF-16 code units).
  const toCp = new Int32Array(text.length + 1);
  {
    let u = 0;
    chars.forEach((c, i) => {
      for (let j = 0; j < c.length; j++) toCp[u + j] = i + (j ? 1 : 0);
      u += c.length;
    });
    toCp[u] = n;
  }
  const cpOf = (units: number) => toCp[Math.max(0, Math.min(units, text.length))] as number;
  // Grapheme and word boundaries, in code points: the caret never splits "é" written as e + accent.
  const boundaries = (granularity: 'grapheme' | 'word') => {
    const out = [0];
    const Segmenter = (
      Intl as unknown as { Segmenter?: new (l?: string, o?: object) => { segment(s: string): Iterable<{ index: number }> } }
    ).Segmenter;
    if (Segmenter) {
      for (const s of new Segmenter(undefined, { granularity }).segment(text)) out.push(cpOf(s.index));
    } else {
      for (let i = 1; i < n; i++) out.push(i);
    }
    out.push(n);
    return [...new Set(out)].sort((a, b) => a - b);
  };
  const graphemes = boundaries('grapheme');
  const words = boundaries('word');
  const step = (list: number[], from: number, by: -1 | 1) =>
    by > 0 ? (list.find((b) => b > from) ?? n) : ([...list].reverse().find((b) => b < from) ?? 0);

  // The labels, parents and children alike, in tree order.
  const labels: { def: LabelDef; depth: number }[] = [];
  const walk = (list: LabelDef[] | undefined, depth: number) => {
    for (const def of list ?? []) {
      labels.push({ def, depth });
      walk(def.children, depth + 1);
    }
  };
  walk(params.labels, 0);
  const labelOf = (name: string) => labels.find((l) => l.def.name === name)?.def;
  const colorOf = (name: string) =>
    colors[
      Math.max(
        0,
        labels.findIndex((l) => l.def.name === name),
      ) % colors.length
    ] as string;
  const shown = (name: string) => labelOf(name)?.display_name ?? name;
  const defs = (Array.isArray(params.relationships) ? params.relationships : []) as RelationDef[];
  const named = defs.some((d) => d.name !== undefined);

  // ---- state -----------------------------------------------------------------------------------
  let spans: Span[] = (Array.isArray(draft?.annotations) ? draft.annotations : []).filter(isRecord).flatMap((a) =>
    typeof a.id === 'string' && typeof a.start === 'number' && typeof a.end === 'number' && typeof a.label === 'string'
      ? [
          {
            id: a.id,
            start: a.start,
            end: a.end,
            label: a.label,
            attributes: isRecord(a.attributes) ? (a.attributes as Record<string, string>) : {},
          },
        ]
      : [],
  );
  let relations: Relation[] = (Array.isArray(draft?.relationships) ? draft.relationships : [])
    .filter(isRecord)
    .flatMap((r) =>
      typeof r.id === 'string' && typeof r.source_ref === 'string' && typeof r.target_ref === 'string'
        ? [{ id: r.id, source_ref: r.source_ref, target_ref: r.target_ref, ...(typeof r.name === 'string' ? { name: r.name } : {}) }]
        : [],
    );
  const serial = (list: { id: string }[]) => Math.max(0, ...list.map((x) => Number(x.id.slice(1)) || 0));
  let spanSerial = serial(spans);
  let relSerial = serial(relations);
  let current = labels[0]?.def.name ?? '';
  let selected: string | null = null;
  let anchor = 0;
  let caret = 0;
  let keyboard = false;
  const spanText = (s: Span) => chars.slice(s.start, s.end).join('');
  // Undo and redo over the spans and the relationships: each change of the person's one step.
  const history = Undo.snapshot(
    () => ({ spans, relations }),
    (state) => restore(state),
  );
  const remember = () => history.record();
  const ordered = () => [...spans].sort((a, b) => a.start - b.start || a.end - b.end);

  // ---- layout ------------------------------------------------------------------------------------
  const labelBar = el('div', { class: 'labels', role: 'toolbar', 'aria-label': 'Labels' });
  const textBox = el('div', {
    class: 'ner-text',
    tabindex: '0',
    role: 'textbox',
    'aria-readonly': 'true',
    'aria-multiline': 'true',
    'aria-label': 'Text to label',
    'aria-describedby': 'ner-how',
  });
  const how = el(
    'p',
    { class: 'muted', id: 'ner-how' },
    'Select text with the mouse, or in the text move with the arrows and extend with Shift+arrows, then press Enter or a label number.',
  );
  const spanList = el('ol', { class: 'spans', 'aria-label': 'Labeled spans' });
  const relationBox = el('div');
  container.append(
    labelBar,
    how,
    textBox,
    el('div', { class: 'ner-side' }, el('section', { 'aria-label': 'Spans' }, el('h3', {}, 'Spans'), spanList), relationBox),
  );

  function drawLabels() {
    labelBar.replaceChildren(
      ...labels.map(({ def, depth }, i) => {
        const b = el(
          'button',
          {
            type: 'button',
            'aria-pressed': String(def.name === current),
            style: `border-left: 6px solid ${colorOf(def.name)}; margin-left: ${depth * 0.8}rem`,
            ...(def.description ? { title: def.description } : {}),
          },
          i < 9 ? el('kbd', {}, String(i + 1)) : '',
          ` ${def.display_name ?? def.name}`,
        );
        b.addEventListener('click', () => useLabel(def.name));
        return b;
      }),
    );
  }

  function drawText() {
    const [selFrom, selTo] = [Math.min(anchor, caret), Math.max(anchor, caret)];
    const cuts = new Set([0, n, ...spans.flatMap((s) => [s.start, s.end])]);
    if (keyboard) cuts.add(selFrom).add(selTo).add(caret);
    const points = [...cuts].filter((c) => c >= 0 && c <= n).sort((a, b) => a - b);
    const nodes: Node[] = [];
    for (let i = 0; i < points.length; i++) {
      const [a, b] = [points[i] as number, points[i + 1]];
      if (keyboard && a === caret) nodes.push(el('span', { class: 'caret', 'aria-hidden': 'true' }));
      if (b === undefined) break;
      if (a === b) continue;
      const covering = spans.filter((s) => s.start <= a && s.end >= b).sort((x, y) => x.end - x.start - (y.end - y.start));
      const seg = el('span', { 'data-from': String(a) }, chars.slice(a, b).join(''));
      const inner = covering[0];
      if (inner) {
        seg.className = `ent${covering.some((s) => s.id === selected) ? ' chosen' : ''}${covering.length > 1 ? ' nested' : ''}`;
        seg.style.background = colorOf(inner.label);
        seg.dataset.spans = covering.map((s) => s.id).join(' ');
        seg.title = covering.map((s) => shown(s.label)).join(', ');
        const ending = covering.filter((s) => s.end === b);
        if (ending.length) seg.dataset.badge = ending.map((s) => shown(s.label)).join(' · ');
      }
      if (keyboard && a >= selFrom && b <= selTo && selFrom < selTo) seg.classList.add('sel');
      nodes.push(seg);
    }
    textBox.replaceChildren(...nodes);
  }

  function drawSpans() {
    spanList.replaceChildren(
      ...ordered().map((s) => {
        const pick = el(
          'button',
          { type: 'button', class: 'span-pick' },
          `“${spanText(s)}”`,
          ' ',
          el('span', { class: 'tag', style: `background: ${colorOf(s.label)}` }, shown(s.label)),
        );
        pick.addEventListener('click', () => select(s.id));
        const def = labelOf(s.label);
        const attributes = Object.entries(def?.attributes ?? {}).map(([key, attr]) => {
          const select = el(
            'select',
            { 'aria-label': `${attr.display_name ?? key} of “${spanText(s)}”`, ...(attr.description ? { title: attr.description } : {}) },
            el('option', { value: '' }, `${attr.display_name ?? key}: —`),
            ...attr.options.map((o) => el('option', { value: o.value }, `${attr.display_name ?? key}: ${o.display_name ?? o.value}`)),
          );
          select.value = s.attributes[key] ?? '';
          select.addEventListener('change', () => {
            remember();
            if (select.value) s.attributes[key] = select.value;
            else delete s.attributes[key];
            context.changed();
          });
          return select;
        });
        const remove = el('button', { type: 'button', 'aria-label': `Remove “${spanText(s)}”` }, '✕');
        remove.addEventListener('click', () => removeSpan(s.id));
        return el('li', { ...(s.id === selected ? { 'aria-current': 'true' } : {}), 'data-span': s.id }, pick, ...attributes, remove);
      }),
    );
    if (!spans.length) spanList.append(el('li', { class: 'muted' }, 'No span yet.'));
  }

  // Relationships: source, kind, target; the kinds a pair allows follow the definitions' labels.
  const fits = (d: RelationDef, from: Span, to: Span) =>
    (!d.source_label || d.source_label === from.label) && (!d.target_label || d.target_label === to.label);
  const allowed = (d: RelationDef, from: Span, to: Span) =>
    fits(d, from, to) || (!(d.is_directed === true || String(d.is_directed).toLowerCase() === 'true') && fits(d, to, from));
  function drawRelations() {
    if (!defs.length) return;
    const list = ordered();
    const option = (s: Span) => el('option', { value: s.id }, `“${spanText(s)}” (${shown(s.label)})`);
    const source = el('select', { 'aria-label': 'Relationship from' }, el('option', { value: '' }, '—'), ...list.map(option));
    const target = el('select', { 'aria-label': 'Relationship to' }, el('option', { value: '' }, '—'), ...list.map(option));
    const kinds = named ? defs.filter((d) => d.name !== undefined) : [];
    const kind = el(
      'select',
      { 'aria-label': 'Relationship kind' },
      ...(named
        ? kinds.map((d) => el('option', { value: d.name as string }, d.display_name ?? (d.name as string)))
        : [el('option', { value: '' }, 'related to')]),
    );
    if (selected) source.value = selected;
    const error = el('p', { class: 'error', role: 'alert' });
    const add = el('button', { type: 'button' }, 'Add the relationship');
    add.addEventListener('click', () => {
      const from = spans.find((s) => s.id === source.value);
      const to = spans.find((s) => s.id === target.value);
      if (!from || !to || from === to) {
        error.textContent = 'Choose two different spans.';
        return;
      }
      const candidates = named ? kinds.filter((d) => d.name === kind.value) : defs;
      if (!candidates.some((d) => allowed(d, from, to))) {
        error.textContent = `A ${named ? `“${kind.selectedOptions[0]?.textContent}” ` : ''}relationship cannot go from a ${shown(from.label)} to a ${shown(to.label)}.`;
        return;
      }
      const same = relations.find(
        (r) => (r.name ?? '') === (named ? kind.value : '') && r.source_ref === from.id && r.target_ref === to.id,
      );
      if (same) {
        error.textContent = 'That relationship is there already.';
        return;
      }
      remember();
      relations.push({ id: `r${++relSerial}`, source_ref: from.id, target_ref: to.id, ...(named ? { name: kind.value } : {}) });
      drawRelations();
      context.changed();
    });
    const byId = (id: string) => spans.find((s) => s.id === id);
    const items = relations.map((r) => {
      const from = byId(r.source_ref);
      const to = byId(r.target_ref);
      const d = defs.find((x) => x.name === r.name);
      const words = `“${from ? spanText(from) : '?'}” ${r.name ? (d?.display_name ?? r.name) : 'related to'} “${to ? spanText(to) : '?'}”`;
      const remove = el('button', { type: 'button', 'aria-label': `Remove the relationship ${words}` }, '✕');
      remove.addEventListener('click', () => {
        remember();
        relations = relations.filter((x) => x !== r);
        drawRelations();
        context.changed();
      });
      return el('li', {}, words, ' ', remove);
    });
    relationBox.replaceChildren(
      el(
        'section',
        { 'aria-label': 'Relationships' },
        el('h3', {}, 'Relationships'),
        el('div', { class: 'inline' }, source, kind, target, add),
        error,
        el('ol', { class: 'relations' }, ...items),
      ),
    );
  }

  const draw = () => {
    drawLabels();
    drawText();
    drawSpans();
    drawRelations();
  };

  // ---- actions -------------------------------------------------------------------------------------
  function addSpan(start: number, end: number, label: string) {
    while (start < end && /\s/u.test(chars[start] ?? '')) start++;
    while (end > start && /\s/u.test(chars[end - 1] ?? '')) end--;
    if (start >= end || !label) return;
    const existing = spans.find((s) => s.start === start && s.end === end && s.label === label);
    if (existing) return select(existing.id);
    const span: Span = { id: `a${++spanSerial}`, start, end, label, attributes: {} };
    remember();
    spans.push(span);
    selected = span.id;
    anchor = caret = end;
    draw();
    context.changed();
  }
  function select(id: string | null) {
    selected = id;
    draw();
  }
  /** Back to the work as it was before the last change (undo), or after it (redo). */
  function restore(state: { spans: Span[]; relations: Relation[] }) {
    ({ spans, relations } = state);
    if (!spans.some((s) => s.id === selected)) selected = null;
    draw();
    context.changed();
  }
  function removeSpan(id: string) {
    remember();
    spans = spans.filter((s) => s.id !== id);
    relations = relations.filter((r) => r.source_ref !== id && r.target_ref !== id);
    if (selected === id) selected = null;
    draw();
    context.changed();
  }
  function useLabel(name: string) {
    current = name;
    if (keyboard && anchor !== caret) return addSpan(Math.min(anchor, caret), Math.max(anchor, caret), name);
    const span = spans.find((s) => s.id === selected);
    if (span && span.label !== name) {
      remember();
      span.label = name;
      const keep = labelOf(name)?.attributes ?? {};
      span.attributes = Object.fromEntries(Object.entries(span.attributes).filter(([k, v]) => keep[k]?.options.some((o) => o.value === v)));
      // A relationship the new label no longer allows goes.
      relations = relations.filter((r) => {
        const from = spans.find((s) => s.id === r.source_ref);
        const to = spans.find((s) => s.id === r.target_ref);
        const candidates = named ? defs.filter((d) => d.name === r.name) : defs;
        return !!from && !!to && candidates.some((d) => allowed(d, from, to));
      });
      context.changed();
    }
    draw();
  }

  // The mouse: a selection inside the text becomes a span with the current label; a click selects one.
  const offsetOf = (node: Node, offset: number) => {
    const range = document.createRange();
    range.setStart(textBox, 0);
    range.setEnd(node, offset);
    return cpOf(range.toString().length);
  };
  textBox.addEventListener('mousedown', () => {
    if (keyboard) {
      keyboard = false;
      drawText();
    }
  });
  textBox.addEventListener('mouseup', (e) => {
    const sel = getSelection();
    if (sel && !sel.isCollapsed && sel.anchorNode && sel.focusNode && textBox.contains(sel.anchorNode) && textBox.contains(sel.focusNode)) {
      const [a, b] = [offsetOf(sel.anchorNode, sel.anchorOffset), offsetOf(sel.focusNode, sel.focusOffset)];
      sel.removeAllRanges();
      // Whole graphemes only.
      const start = [...graphemes].reverse().find((g) => g <= Math.min(a, b)) ?? 0;
      const end = graphemes.find((g) => g >= Math.max(a, b)) ?? n;
      addSpan(start, end, current);
      return;
    }
    // A click puts the caret where it was (between whole graphemes), for the keyboard to go on from.
    // It shows with the first key: redrawing the text now would lose a double-click's word.
    if (sel?.anchorNode && textBox.contains(sel.anchorNode)) {
      const at = offsetOf(sel.anchorNode, sel.anchorOffset);
      anchor = caret = graphemes.reduce((best, g) => (Math.abs(g - at) < Math.abs(best - at) ? g : best), 0);
    }
    // A click on a span selects it; a click beside the spans deselects.
    const hit = (e.target as HTMLElement).closest<HTMLElement>('[data-spans]');
    const id = hit?.dataset.spans?.split(' ')[0] ?? null;
    if (id !== selected) select(id);
  });

  // The keyboard in the text: a caret, a selection, Enter to label it.
  textBox.addEventListener('keydown', (e) => {
    let to: number | null = null;
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight')
      to = step(e.ctrlKey || e.altKey ? words : graphemes, caret, e.key === 'ArrowLeft' ? -1 : 1);
    else if (e.key === 'Home') to = 0;
    else if (e.key === 'End') to = n;
    else if (e.key === 'Enter' && !e.ctrlKey && !e.altKey && anchor !== caret) {
      e.preventDefault();
      addSpan(Math.min(anchor, caret), Math.max(anchor, caret), current);
      return;
    } else if (e.key === 'Escape' && anchor !== caret) {
      anchor = caret;
      drawText();
      return;
    }
    if (to === null) return;
    e.preventDefault();
    keyboard = true;
    caret = to;
    if (!e.shiftKey) anchor = caret;
    drawText();
    textBox.querySelector('.caret')?.scrollIntoView({ block: 'nearest' });
  });
  textBox.addEventListener('blur', () => {
    if (!keyboard) return;
    keyboard = false;
    drawText();
  });

  const cycle = (by: -1 | 1) => {
    const list = ordered();
    if (!list.length) return;
    const at = list.findIndex((s) => s.id === selected);
    const next = list[at < 0 ? (by > 0 ? 0 : list.length - 1) : (at + by + list.length) % list.length] as Span;
    select(next.id);
  };
  const shortcuts: Shortcut[] = [
    {
      keys: ['1', '2', '3', '4', '5', '6', '7', '8', '9'],
      label: 'Label the selected text (or relabel the selected span) with label 1-9',
      run: (e) => {
        const l = labels[Number(e.key) - 1];
        if (l) useLabel(l.def.name);
      },
    },
    // Keys the text handles itself, listed for the help overlay (these names never match a key press).
    { keys: ['←/→', 'Shift+←/→', 'Ctrl+←/→'], label: 'In the text: move the caret, select, by word', run: () => undefined },
    { keys: ['Enter (in the text)'], label: 'Label the selection with the current label', run: () => undefined },
    { keys: ['[', ']'], label: 'Select the previous or next span', run: (e) => cycle(e.key === '[' ? -1 : 1) },
    {
      keys: ['Escape'],
      label: 'Deselect the span',
      when: () => selected !== null && !document.querySelector('.overlay:not([hidden])'),
      run: () => select(null),
    },
    ...undoKeys(
      () => history.undo(),
      () => history.redo(),
    ),
    {
      keys: ['Delete', 'Backspace'],
      label: 'Remove the selected span',
      when: () => selected !== null,
      run: () => selected && removeSpan(selected),
    },
  ];
  draw();

  const response = () => ({
    annotations: ordered().map((s) => ({
      id: s.id,
      start: s.start,
      end: s.end,
      text: spanText(s),
      label: s.label,
      ...(Object.keys(s.attributes).length ? { attributes: { ...s.attributes } } : {}),
    })),
    relationships: relations.map((r) => ({ ...r })),
  });
  return {
    shortcuts,
    getDraft: () => response(),
    getResponse: () => ({ ok: true, response: response() }),
  };
};
