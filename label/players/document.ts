// documenttranscription: the document's pages (an image, or a PDF's pages drawn by pdf.js), one
// at a time, each with a box per region the person finds, labelled with the task feature it
// transcribes (or "other text" for text of no feature, whose kind the person picks), and its text
// typed in a text area. Each page is the image player (boxes, zoom, pan, select, move, resize,
// undo, attributes of the selected shape) with the feature labels as box labels and the text and
// kind as attributes; the answer turns every page's boxes into the contract's regions, in reading
// order, with their page and the feature's region type.
import { checkAnswer } from '../../shared/answer-rules.ts';
import { isRecord, records } from '../../shared/json.ts';
import { imagePlayer } from './imageannotation.ts';
import type { Params } from './image/model.ts';
import { uuidV4 } from './image/uuid.ts';
import type { Draft } from '../api.ts';
import type { Shortcut } from '../keys.ts';
import { el, type PlayerFactory } from './types.ts';
import { imageSource, pdfSource, type PageSource } from './pdf.ts';

const kinds = ['block', 'line', 'word'] as const;
type RegionKind = (typeof kinds)[number];
const kindOf = (v: unknown): RegionKind => kinds.find((k) => k === v) ?? 'line';

interface Feature {
  label: string;
  type: RegionKind;
  description: string | undefined;
  attributes: Record<string, unknown> | undefined;
}

export const documentTranscription: PlayerFactory = (container, assignment, draft, context) => {
  const params = assignment.task.params as Record<string, unknown>;
  const features: Feature[] = records(params.features).flatMap((f) => {
    const label = typeof f.label === 'string' ? f.label : typeof f.name === 'string' ? f.name : undefined;
    return label === undefined
      ? []
      : [
          {
            label,
            type: kindOf(f.type),
            description: typeof f.description === 'string' ? f.description : undefined,
            attributes: isRecord(f.attributes) ? f.attributes : undefined,
          },
        ];
  });
  const byLabel = new Map(features.map((f) => [f.label, f]));
  /** The box label of text that belongs to no feature (a name no feature has). */
  let other = 'other text';
  while (byLabel.has(other)) other = `(${other})`;

  // The features, described, above the page.
  if (features.length)
    container.append(
      el(
        'details',
        { class: 'doc-features', open: '' },
        el('summary', {}, `Features to transcribe (${features.length})`),
        el(
          'dl',
          {},
          ...features.flatMap((f) => [
            el('dt', {}, f.label, el('span', { class: 'muted' }, ` · ${f.type}`)),
            el(
              'dd',
              {},
              f.description ?? '',
              f.attributes
                ? el(
                    'span',
                    { class: 'muted' },
                    ` ${Object.entries(f.attributes)
                      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
                      .join(' · ')}`,
                  )
                : '',
            ),
          ]),
        ),
      ),
    );

  const hypothesis = records(isRecord(params.hypothesis) ? params.hypothesis.annotations : undefined);
  const asBox = (a: Record<string, unknown>) => {
    const feature = typeof a.label === 'string' ? byLabel.get(a.label) : undefined;
    return {
      uuid: uuidV4(),
      type: 'box',
      label: feature ? feature.label : other,
      left: a.left,
      top: a.top,
      width: a.width,
      height: a.height,
      attributes: {
        ...(typeof a.text === 'string' && a.text !== '' ? { text: a.text } : {}),
        ...(feature ? {} : { kind: kindOf(a.type) }),
      },
    };
  };
  /** The image player's params for one page (its image URL). */
  const pageParams = (page: number, url: string) =>
    ({
      attachment: url,
      attachment_type: 'image',
      geometries: { box: { objects_to_annotate: [...features.map((f) => f.label), other] } },
      annotation_attributes: {
        text: { type: 'text', description: 'Text (as printed; lines of a block on lines of their own)', multiline: true },
        kind: { type: 'category', description: 'Kind of region', choices: [...kinds], conditions: { label_condition: { label: other } } },
      },
      hypothesis: { annotations: hypothesis.filter((a) => (a.page ?? 1) === page).map(asBox) },
    }) as unknown as Params;

  /** A region of the answer from a box of the image player (its answer or its draft), or what it lacks. */
  function region(page: number, b: Record<string, unknown>): { ok: true; region: Region } | { ok: false; problem: string } {
    const feature = typeof b.label === 'string' ? byLabel.get(b.label) : undefined;
    const attributes = isRecord(b.attributes) ? b.attributes : {};
    if (typeof attributes.text !== 'string' || attributes.text === '') return { ok: false, problem: 'type its text' };
    if (!feature && !kinds.includes(attributes.kind as RegionKind)) return { ok: false, problem: 'choose its kind of region' };
    return {
      ok: true,
      region: {
        type: feature ? feature.type : kindOf(attributes.kind),
        ...(feature ? { label: feature.label } : {}),
        text: attributes.text,
        page,
        left: Number(b.left),
        top: Number(b.top),
        width: Number(b.width),
        height: Number(b.height),
      },
    };
  }

  // ---- pages ---------------------------------------------------------------------------------
  const saved = isRecord(draft) && isRecord(draft.pages) ? draft.pages : {};
  /** The image player's draft of each page not shown now. */
  const drafts = new Map<number, Draft>(
    Object.entries(saved).flatMap(([k, v]) => (Number.isInteger(Number(k)) && isRecord(v) ? [[Number(k), v as Draft] as const] : [])),
  );
  let page = isRecord(draft) && typeof draft.page === 'number' ? draft.page : 1;
  let pages = 1;
  let inner: ReturnType<PlayerFactory> | null = null;
  const shortcuts: Shortcut[] = [];
  const pageText = el('span', { class: 'doc-page', 'aria-live': 'polite' }, 'Loading the document…');
  const prev = el('button', { type: 'button', 'aria-label': 'Previous page' }, el('kbd', {}, 'PgUp'), ' ◀');
  const next = el('button', { type: 'button', 'aria-label': 'Next page' }, '▶ ', el('kbd', {}, 'PgDn'));
  const pageBar = el('div', { class: 'doc-pages', role: 'toolbar', 'aria-label': 'Pages' }, prev, pageText, next);
  const host = el('div', { class: 'doc-page-host' });
  container.append(pageBar, host);
  let source: PageSource | null = null;
  let turning = Promise.resolve();

  const pageShortcuts: Shortcut[] = [
    { keys: ['PageDown'], label: 'Next page of the document', run: () => void turn(page + 1) },
    { keys: ['PageUp'], label: 'Previous page of the document', run: () => void turn(page - 1) },
  ];
  prev.addEventListener('click', () => void turn(page - 1));
  next.addEventListener('click', () => void turn(page + 1));

  function show(n: number, url: string) {
    if (inner) {
      drafts.set(page, inner.getDraft());
      inner.destroy?.();
    }
    host.replaceChildren();
    page = n;
    inner = imagePlayer(host, pageParams(n, url), drafts.get(n), context);
    drafts.delete(n);
    shortcuts.splice(0, shortcuts.length, ...pageShortcuts, ...inner.shortcuts);
    pageText.textContent = `Page ${n} of ${pages}`;
    prev.disabled = n <= 1;
    next.disabled = n >= pages;
  }
  /** Shows page n (within the document), the current one's work kept. */
  function turn(n: number): Promise<void> {
    turning = turning.then(async () => {
      if (!source || n < 1 || n > pages || n === page) return;
      try {
        show(n, await source.page(n));
        context.changed();
      } catch (e) {
        pageText.textContent = `Page ${n} could not be shown: ${e instanceof Error ? e.message : String(e)}`;
      }
    });
    return turning;
  }

  void (async () => {
    try {
      source =
        params.attachment_type === 'image'
          ? imageSource(String(params.attachment ?? ''))
          : await pdfSource(context.media(String(params.attachment ?? '')));
      pages = source.pages;
      page = Math.min(Math.max(1, page), pages);
      show(page, await source.page(page));
    } catch (e) {
      pageText.textContent = '';
      host.replaceChildren(
        el(
          'p',
          { class: 'notice bad' },
          `The document could not be loaded (${e instanceof Error ? e.message : String(e)}). Skip the task with a reason if it does not come back.`,
        ),
      );
    }
  })();

  return {
    shortcuts,
    getDraft: () => ({
      page,
      pages: Object.fromEntries([...drafts, ...(inner ? [[page, inner.getDraft()] as const] : [])].map(([k, v]) => [String(k), v])),
    }),
    destroy() {
      inner?.destroy?.();
      source?.close();
    },
    getResponse() {
      if (!inner) return { ok: false, problem: 'The document is not shown yet.' };
      const got = inner.getResponse();
      if (!got.ok) return { ok: false, problem: `Page ${page}: ${got.problem}` };
      const all: Region[] = [];
      const boxesOf = (p: number, value: unknown) => records(isRecord(value) ? value.annotations : undefined).map((b) => [p, b] as const);
      for (const [p, b] of [...[...drafts].flatMap(([p, d]) => boxesOf(p, d)), ...boxesOf(page, got.response)]) {
        const r = region(p, b);
        if (!r.ok)
          return {
            ok: false,
            problem: `Page ${p}, the ${String(b.label)} region at ${Math.round(Number(b.left))}, ${Math.round(Number(b.top))}: ${r.problem}.`,
          };
        all.push(r.region);
      }
      // Reading order: page by page, top to bottom, then left to right.
      all.sort((a, b) => a.page - b.page || a.top - b.top || a.left - b.left);
      const response = { annotations: all };
      const [rule] = checkAnswer({ type: 'documenttranscription', params }, response);
      if (rule) return { ok: false, problem: rule };
      return { ok: true, response: response as never };
    },
  };
};

interface Region {
  type: RegionKind;
  label?: string;
  text: string;
  page: number;
  left: number;
  top: number;
  width: number;
  height: number;
}
