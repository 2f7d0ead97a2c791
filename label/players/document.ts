// documenttranscription: the document's page with a box per region the person finds, each labelled
// with the task feature it transcribes (or "other text" for text of no feature, whose kind the
// person picks), and its text typed in a text area. It is the image player (boxes, zoom, pan,
// select, move, resize, undo, attributes of the selected shape) with the feature labels as box
// labels and the text and kind as attributes; the answer turns its boxes into the contract's
// regions, in reading order, with the page and the feature's region type.
import { checkAnswer } from '../../server/domain/answer-rules.ts';
import { isRecord, records } from '../../server/domain/json.ts';
import { imagePlayer } from './imageannotation.ts';
import type { Params } from './image/model.ts';
import { uuidV4 } from './image/uuid.ts';
import { el, type PlayerFactory } from './types.ts';

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

  if (params.attachment_type !== 'image') {
    container.append(
      el(
        'p',
        { class: 'notice bad' },
        'This document is a PDF, and this app shows only image documents yet. Skip the task with a reason, or release it.',
      ),
    );
    return {
      shortcuts: [],
      getDraft: () => (isRecord(draft) ? draft : {}),
      getResponse: () => ({ ok: false, problem: 'PDF documents cannot be transcribed in this app yet: skip or release the task.' }),
    };
  }

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

  const hypothesis = isRecord(params.hypothesis) ? params.hypothesis : {};
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
  const imageParams = {
    attachment: params.attachment,
    attachment_type: 'image',
    geometries: { box: { objects_to_annotate: [...features.map((f) => f.label), other] } },
    annotation_attributes: {
      text: { type: 'text', description: 'Text (as printed; lines of a block on lines of their own)', multiline: true },
      kind: { type: 'category', description: 'Kind of region', choices: [...kinds], conditions: { label_condition: { label: other } } },
    },
    hypothesis: {
      annotations: records(hypothesis.annotations)
        .filter((a) => (a.page ?? 1) === 1)
        .map(asBox),
    },
  } as unknown as Params;
  const inner = imagePlayer(container, imageParams, draft, context);

  return {
    shortcuts: inner.shortcuts,
    getDraft: inner.getDraft,
    ...(inner.destroy ? { destroy: inner.destroy } : {}),
    getResponse() {
      const got = inner.getResponse();
      if (!got.ok) return got;
      const boxes = records((got.response as { annotations?: unknown }).annotations);
      const annotations = boxes
        .map((b) => {
          const feature = typeof b.label === 'string' ? byLabel.get(b.label) : undefined;
          const attributes = isRecord(b.attributes) ? b.attributes : {};
          return {
            type: feature ? feature.type : kindOf(attributes.kind),
            ...(feature ? { label: feature.label } : {}),
            text: typeof attributes.text === 'string' ? attributes.text : '',
            page: 1,
            left: Number(b.left),
            top: Number(b.top),
            width: Number(b.width),
            height: Number(b.height),
          };
        })
        // Reading order: page by page, top to bottom, then left to right.
        .sort((a, b) => a.page - b.page || a.top - b.top || a.left - b.left);
      const response = { annotations };
      const [rule] = checkAnswer({ type: 'documenttranscription', params }, response);
      if (rule) return { ok: false, problem: rule };
      return { ok: true, response: response as never };
    },
  };
};
