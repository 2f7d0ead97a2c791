// The arbitrary params of every task type, as the property tests of test mode draw them
// (test/unit/synthetic.test.ts): valid against the contract's `<Type>Params`, with the labels, fields
// and bounds a client may give. Shared by the tests that drive server/domain/synthetic.ts, so that a
// scorer (server/domain/quality/) is exercised over the same tasks as the synthetic answers.
import fc from 'fast-check';
import type { components } from '../../generated/current.ts';
import type { TaskType } from '../../server/domain/synthetic.ts';

type Schemas = components['schemas'];
type Json = Record<string, unknown>;
/**
 * The contract's parameters of a task type (generated/), with the keys this file's arbitraries always
 * give made required (the checks below read them without a guard), and `Narrowed` replacing the keys
 * whose generated type is `unknown` (openapi-typescript's rendering of an anyOf of constraints).
 */
type ParamsOf<Name extends keyof Schemas & `${string}Params`, Given extends keyof Schemas[Name], Narrowed = unknown> = Omit<
  Schemas[Name] & Required<Pick<Schemas[Name], Given>>,
  keyof Narrowed
> &
  Narrowed;

// ---------------------------------------------------------------------------------------------
// Arbitraries shared by the types.

export const taskIds = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 24, maxLength: 24 });
const urls = fc
  .tuple(fc.constantFrom('https', 'http', 'HTTPS'), fc.nat(99999), fc.constantFrom('jpg', 'png', 'pdf', 'mp4', 'json'))
  .map(([scheme, n, ext]) => `${scheme}://example.com/files/${n}.${ext}`);
const texts = fc.string({ minLength: 1, maxLength: 30 });
// Labels are the client's own strings: printable text, and now and then a name that is also an
// Object.prototype member, which a careless implementation would mix up with an inherited key.
const labelText = fc.oneof(
  { weight: 12, arbitrary: fc.string({ minLength: 1, maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString') },
);
const uniqueLabels = (max: number, min = 1) => fc.uniqueArray(labelText, { minLength: min, maxLength: max });
const keys = fc.stringMatching(/^[a-z][a-z0-9_]{0,9}$/);
const descriptions = fc.dictionary(keys, texts, { minKeys: 1, maxKeys: 4 });
const layers = fc.constant<Schemas['Layers']>({ boxes: [{ left: 40, top: 60, width: 120, height: 80, label: 'car' }] });
// min_width / min_height: mostly small, sometimes larger than the nominal image.
const boxSize = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 3000 }) },
);

type AttachmentKind = 'text' | 'image' | 'video' | 'audio' | 'website' | 'pdf';
const attachmentFor = (kind: AttachmentKind) => (kind === 'text' ? texts : urls);

// ---------------------------------------------------------------------------------------------
// Annotation attributes (API description 2.8), shared by the image types.

type AttributeParam = Schemas['AnnotationAttribute'];
type AttributeKind = NonNullable<AttributeParam['type']>;
export type AttributeParams = Schemas['AnnotationAttributes'];

/** The value one time in four, otherwise undefined. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

const attributeDraft = (kinds: readonly AttributeKind[]) =>
  fc.record(
    {
      name: keys,
      kind: fc.constantFrom<AttributeKind | 'default'>('default', ...kinds),
      description: texts,
      choices: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
      allowMultiple: fc.boolean(),
      // Conditions are the exception: most attributes apply to every annotation.
      labelCondition: sometimes(fc.nat()),
      attributeCondition: sometimes(fc.tuple(fc.nat(), fc.nat())),
    },
    { requiredKeys: ['name', 'kind', 'choices', 'labelCondition', 'attributeCondition'] },
  );

/** Attributes whose conditions name labels of the task and other attributes (with their choices). */
function annotationAttributes(labels: readonly string[], kinds: readonly AttributeKind[]): fc.Arbitrary<AttributeParams> {
  return fc.uniqueArray(attributeDraft(kinds), { minLength: 1, maxLength: 4, selector: (d) => d.name }).map((drafts) =>
    Object.fromEntries(
      drafts.map((draft, i): [string, AttributeParam] => {
        const categorical = draft.kind === 'default' || draft.kind === 'category';
        const conditions: NonNullable<AttributeParam['conditions']> = {};
        if (draft.labelCondition !== undefined)
          conditions.label_condition = { label: labels[draft.labelCondition % labels.length] as string };
        if (draft.attributeCondition !== undefined && drafts.length > 1) {
          const [which, value] = draft.attributeCondition;
          const other = drafts[(i + 1 + (which % (drafts.length - 1))) % drafts.length];
          if (other) {
            const otherCategorical = other.kind === 'default' || other.kind === 'category';
            conditions.attribute_conditions = [
              { [other.name]: otherCategorical ? (other.choices[value % other.choices.length] as string) : value % 11 },
            ];
          }
        }
        return [
          draft.name,
          {
            ...(draft.kind === 'default' ? {} : { type: draft.kind }),
            ...(draft.description !== undefined ? { description: draft.description } : {}),
            ...(categorical ? { choices: draft.choices } : {}),
            ...(categorical && draft.allowMultiple !== undefined ? { allow_multiple: draft.allowMultiple } : {}),
            ...(Object.keys(conditions).length > 0 ? { conditions } : {}),
          },
        ];
      }),
    ),
  );
}

const ALL_ATTRIBUTE_KINDS: readonly AttributeKind[] = ['category', 'number', 'angle', 'text', 'offset', 'linked'];
// `offset` measures a box: the older point, line and polygon types reject it (AnnotationAttribute).
const NON_BOX_ATTRIBUTE_KINDS: readonly AttributeKind[] = ['category', 'number', 'angle', 'text', 'linked'];

// ---------------------------------------------------------------------------------------------
// annotation

export type BoxParams = ParamsOf<'AnnotationParams', 'attachment' | 'objects_to_annotate'>;

export const boxParams: fc.Arbitrary<BoxParams> = uniqueLabels(6).chain((objects) =>
  fc.record(
    {
      attachment: urls,
      attachment_type: fc.constant('image' as const),
      objects_to_annotate: fc.constant(objects),
      with_labels: fc.boolean(),
      min_width: boxSize,
      min_height: boxSize,
      layers,
      annotation_attributes: annotationAttributes(objects, ALL_ATTRIBUTE_KINDS),
    },
    { requiredKeys: ['attachment', 'objects_to_annotate'] },
  ),
);

// ---------------------------------------------------------------------------------------------
// pointannotation

export type PointParams = ParamsOf<'PointAnnotationParams', 'attachment' | 'objects_to_annotate'>;

export const pointParams: fc.Arbitrary<PointParams> = uniqueLabels(6).chain((objects) =>
  fc.record(
    {
      attachment: urls,
      attachment_type: fc.constant('image' as const),
      objects_to_annotate: fc.constant(objects),
      with_labels: fc.boolean(),
      layers,
      annotation_attributes: annotationAttributes(objects, NON_BOX_ATTRIBUTE_KINDS),
    },
    { requiredKeys: ['attachment', 'objects_to_annotate'] },
  ),
);

// ---------------------------------------------------------------------------------------------
// lineannotation, polygonannotation

export type VertexParams = ParamsOf<'LineAnnotationParams', 'attachment' | 'objects_to_annotate'>;

const vertexBounds = fc
  .integer({ min: 1, max: 12 })
  .chain((min) =>
    fc.record(
      { min_vertices: fc.constant(min), max_vertices: fc.oneof(fc.constant(null), fc.integer({ min, max: min + 10 })) },
      { requiredKeys: [] },
    ),
  );

export const vertexParams = (maxObjects: number, withSplines: boolean): fc.Arbitrary<VertexParams> =>
  fc.tuple(uniqueLabels(maxObjects), vertexBounds).chain(([objects, bounds]) =>
    fc
      .record(
        {
          attachment: urls,
          attachment_type: fc.constant('image' as const),
          objects_to_annotate: fc.constant(objects),
          with_labels: fc.boolean(),
          splines: fc.boolean(),
          layers,
          annotation_attributes: annotationAttributes(objects, NON_BOX_ATTRIBUTE_KINDS),
        },
        { requiredKeys: ['attachment', 'objects_to_annotate'] },
      )
      .map(({ splines, ...rest }) => ({ ...rest, ...bounds, ...(withSplines && splines !== undefined ? { splines } : {}) })),
  );

// ---------------------------------------------------------------------------------------------
// segmentannotation

export type SegmentParams = ParamsOf<'SegmentAnnotationParams', 'attachment' | 'labels'>;

export const segmentParams: fc.Arbitrary<SegmentParams> = uniqueLabels(50).chain((labels) =>
  fc.record(
    {
      attachment: urls,
      attachment_type: fc.constant('image' as const),
      labels: fc.constant(labels),
      instance_labels: fc.uniqueArray(labelText, { maxLength: 10 }).map((names) => names.filter((n) => !labels.includes(n))),
      allow_unlabeled: fc.boolean(),
    },
    { requiredKeys: ['attachment', 'labels'] },
  ),
);

const attachmentKinds = fc.constantFrom<AttachmentKind>('text', 'image', 'video', 'audio', 'website', 'pdf');

// ---------------------------------------------------------------------------------------------
// categorization

export type CategorizationParams = ParamsOf<'CategorizationParams', 'attachment_type' | 'attachment' | 'categories'>;

export const categorizationParams: fc.Arbitrary<CategorizationParams> = fc
  .tuple(attachmentKinds, uniqueLabels(6))
  .chain(([kind, categories]) =>
    fc.record(
      {
        attachment_type: fc.constant(kind),
        attachment: attachmentFor(kind),
        categories: fc.constant(categories),
        category_ids: fc
          .subarray(categories, { minLength: 1 })
          .chain((named) =>
            fc
              .uniqueArray(keys, { minLength: named.length, maxLength: named.length })
              .map((ids) => Object.fromEntries(ids.map((id, i) => [id, named[i] as string]))),
          ),
        allow_multiple: fc.boolean(),
        ...(kind === 'image' ? { layers } : {}),
      },
      { requiredKeys: ['attachment_type', 'attachment', 'categories'] },
    ),
  );

// ---------------------------------------------------------------------------------------------
// comparison

export type ComparisonParams = ParamsOf<'ComparisonParams', 'attachment_type' | 'attachments'>;

export const comparisonParams: fc.Arbitrary<ComparisonParams> = attachmentKinds.chain((kind) =>
  fc
    .record({
      attachment_type: fc.constant(kind),
      attachments: fc.array(attachmentFor(kind), { minLength: 1, maxLength: 3 }),
      asked: fc.oneof(
        fc.record({ choices: uniqueLabels(4) }),
        fc.record({ fields: descriptions }),
        fc.record({ choices: uniqueLabels(4), fields: descriptions }),
      ),
    })
    .map(({ asked, ...rest }) => ({ ...rest, ...asked })),
);

// ---------------------------------------------------------------------------------------------
// datacollection

export type DataCollectionParams = ParamsOf<'DataCollectionParams', 'attachment_type' | 'attachment' | 'fields'>;

export const dataCollectionParams: fc.Arbitrary<DataCollectionParams> = fc
  .constantFrom('text' as const, 'image' as const, 'website' as const)
  .chain((kind) => fc.record({ attachment_type: fc.constant(kind), attachment: attachmentFor(kind), fields: descriptions }));

// ---------------------------------------------------------------------------------------------
// transcription

const repeatableFields = fc.dictionary(
  keys,
  fc.oneof(
    texts,
    fc.record({ description: texts, choices: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }) }),
  ),
  { minKeys: 1, maxKeys: 4 },
);

export type TranscriptionParams = ParamsOf<'TranscriptionParams', 'attachment_type' | 'attachment'>;

export const transcriptionParams: fc.Arbitrary<TranscriptionParams> = fc
  .record({
    attachment_type: fc.constantFrom('image' as const, 'pdf' as const, 'website' as const),
    attachment: urls,
    asked: fc.oneof(
      fc.record({ fields: descriptions }),
      fc.record({ repeatable_fields: repeatableFields }),
      fc.record({ fields: descriptions, repeatable_fields: repeatableFields }),
    ),
  })
  .map(({ asked, ...rest }) => ({ ...rest, ...asked }));

// ---------------------------------------------------------------------------------------------
// audiotranscription

export type AudioParams = ParamsOf<'AudioTranscriptionParams', 'attachment'>;

export const audioParams: fc.Arbitrary<AudioParams> = fc.record(
  { attachment: urls, attachment_type: fc.constant('audio' as const), language: fc.constantFrom('en', 'en-US', 'pt-BR', 'de') },
  { requiredKeys: ['attachment'] },
);

// ---------------------------------------------------------------------------------------------
// imageannotation, videoplaybackannotation

export type GeometryKind = Schemas['ImageAnnotationResponse']['annotations'][number]['type'];
const GEOMETRY_KINDS: readonly GeometryKind[] = ['box', 'polygon', 'line', 'point', 'cuboid', 'ellipse'];
export type GeometrySpec = Schemas['GeometrySpec'];
// The contract's Geometries (at least one key, an anyOf of required keys) is generated as unknown.
export type Geometries = Partial<Record<GeometryKind, GeometrySpec>>;

const geometrySpec: fc.Arbitrary<GeometrySpec> = fc
  .tuple(
    fc.record(
      // No uniqueItems in GeometrySpec: a repeated label is allowed here.
      { objects_to_annotate: fc.array(labelText, { minLength: 1, maxLength: 4 }), min_width: boxSize, min_height: boxSize },
      { requiredKeys: ['objects_to_annotate'] },
    ),
    fc
      .integer({ min: 1, max: 10 })
      .chain((min) => fc.record({ min_vertices: fc.constant(min), max_vertices: fc.integer({ min, max: min + 8 }) }, { requiredKeys: [] })),
  )
  .map(([spec, bounds]) => ({ ...spec, ...bounds }));

const geometries: fc.Arbitrary<Geometries> = fc
  .uniqueArray(fc.constantFrom(...GEOMETRY_KINDS), { minLength: 1, maxLength: 6 })
  .chain((kinds) =>
    fc.tuple(...kinds.map(() => geometrySpec)).map((specs) => Object.fromEntries(kinds.map((k, i) => [k, specs[i]])) as Geometries),
  );

const labelsOf = (given: Geometries) => [...new Set(Object.values(given).flatMap((spec) => spec.objects_to_annotate))];

export type ImageAnnotationParams = ParamsOf<'ImageAnnotationParams', 'attachment', { geometries: Geometries }>;

export const imageAnnotationParams: fc.Arbitrary<ImageAnnotationParams> = geometries.chain((given) =>
  fc.record(
    {
      attachment: urls,
      attachment_type: fc.constant('image' as const),
      geometries: fc.constant(given),
      annotation_attributes: annotationAttributes(labelsOf(given), ALL_ATTRIBUTE_KINDS),
      layers,
    },
    { requiredKeys: ['attachment', 'geometries'] },
  ),
);

export type VideoParams = ParamsOf<'VideoPlaybackAnnotationParams', never, { geometries: Geometries }>;

export const videoParams: fc.Arbitrary<VideoParams> = geometries.chain((given) =>
  fc
    .record(
      {
        media: fc.oneof(
          fc.record({ attachment: urls, attachment_type: fc.constant('video' as const) }, { requiredKeys: ['attachment'] }),
          fc.record(
            { attachments: fc.array(urls, { minLength: 1, maxLength: 8 }), attachment_type: fc.constant('image' as const) },
            { requiredKeys: ['attachments'] },
          ),
        ),
        geometries: fc.constant(given),
        frame_rate: fc.integer({ min: 1, max: 60 }),
        events_to_annotate: fc.array(labelText, { minLength: 1, maxLength: 4 }),
        annotation_attributes: annotationAttributes(labelsOf(given), ALL_ATTRIBUTE_KINDS),
      },
      { requiredKeys: ['media', 'geometries'] },
    )
    .map(({ media, ...rest }) => ({ ...media, ...rest })),
);

// ---------------------------------------------------------------------------------------------
// textcollection

export type ChoiceValue = string | number;
export type DatePart = 'year' | 'month' | 'day' | 'hour' | 'minute';
const DATE_PARTS: readonly DatePart[] = ['year', 'month', 'day', 'hour', 'minute'];
interface ChoiceParam {
  label: string;
  value: ChoiceValue;
  hint?: string;
  subchoices?: ChoiceParam[];
}
type ConditionValue = ChoiceValue | ChoiceValue[] | { not: ChoiceValue | ChoiceValue[] };
export type ConditionSet = Record<string, ConditionValue>;

interface FieldCommon {
  field_id: string;
  title: string;
  description?: string;
  required?: boolean;
  min_responses_required?: number;
  max_responses_required?: number;
  conditions?: ConditionSet[];
}
export type LeafField = FieldCommon &
  (
    | { type: 'text'; max_characters?: number }
    | { type: 'boolean' }
    | { type: 'number'; use_slider?: boolean; min?: number; max?: number; step?: number }
    | { type: 'datetime'; include: DatePart[]; defaults?: Partial<Record<DatePart, number>> }
    | { type: 'category'; choices: ChoiceParam[]; min_choices?: number; max_choices?: number }
    | {
        type: 'time_range';
        default_seconds?: number[];
        defaults_seconds?: number[];
        increment_seconds?: number;
        default_from_field?: string;
      }
    | { type: 'select'; choices?: ChoiceValue[]; choices_from_field?: string }
    | { type: 'ranking_order'; first_label?: string; last_label?: string; num_items_to_rank?: number }
  );
export interface FieldSetParam {
  type: 'fieldset';
  incline: true;
  title?: string;
  fields: LeafField[];
}
type FormFieldParam = FieldCommon & { type: 'form'; fields: Array<LeafField | FieldSetParam> };
export type TopField = LeafField | FormFieldParam;

// The contract's UnitField (a union with the form field) is generated as unknown: the fields this
// file makes are typed above.
export type TextCollectionParams = ParamsOf<'TextCollectionParams', 'attachments', { fields: TopField[] }>;

/** Only choices without subchoices can be selected. */
export const leafValues = (choices: readonly ChoiceParam[]): ChoiceValue[] =>
  choices.flatMap((c) => (c.subchoices ? leafValues(c.subchoices) : [c.value]));

// A field is drafted without its id and its links to other fields; `wireFields` adds them.
type LeafDraft = { type: LeafField['type']; extra: Json };
type ChoiceDraft = { label: string; numeric: boolean; hint?: string; sub?: Array<{ label: string; numeric: boolean }> };

const decimals = fc.integer({ min: -10000, max: 10000 }).map((n) => n / 100);
const leafDrafts: fc.Arbitrary<LeafDraft> = fc.oneof(
  fc.record({ max_characters: fc.integer({ min: 1, max: 80 }) }, { requiredKeys: [] }).map((extra) => ({ type: 'text' as const, extra })),
  fc.constant({ type: 'boolean' as const, extra: {} }),
  fc
    .record(
      {
        slider: fc.boolean(),
        min: decimals,
        span: fc.integer({ min: 0, max: 2000 }),
        step: fc.constantFrom(0.01, 0.1, 0.25, 0.5, 1, 2, 5, 7),
      },
      { requiredKeys: ['slider'] },
    )
    .map(({ slider, min, span, step }) => {
      const lower = min ?? (slider ? 0 : undefined);
      const upper = span === undefined && !slider ? undefined : Math.round(((lower ?? 0) + (span ?? 100) / 10) * 100) / 100;
      return {
        type: 'number' as const,
        extra: {
          ...(slider ? { use_slider: true } : {}),
          ...(lower !== undefined ? { min: lower } : {}),
          ...(upper !== undefined ? { max: upper } : {}),
          ...(step !== undefined ? { step } : {}),
        },
      };
    }),
  fc
    .record(
      {
        include: fc.uniqueArray(fc.constantFrom(...DATE_PARTS), { minLength: 1, maxLength: 5 }),
        defaults: fc.record(
          {
            year: fc.integer({ min: 1, max: 9999 }),
            month: fc.integer({ min: 1, max: 12 }),
            day: fc.integer({ min: 1, max: 31 }),
            hour: fc.integer({ min: 0, max: 23 }),
            minute: fc.integer({ min: 0, max: 59 }),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: ['include'] },
    )
    .map((extra) => ({ type: 'datetime' as const, extra })),
  fc
    .record(
      {
        choices: fc.array(
          fc.record(
            {
              label: texts,
              numeric: fc.boolean(),
              hint: texts,
              sub: fc.array(fc.record({ label: texts, numeric: fc.boolean() }), { minLength: 1, maxLength: 3 }),
            },
            { requiredKeys: ['label', 'numeric'] },
          ),
          { minLength: 1, maxLength: 4 },
        ),
        min: fc.integer({ min: 1, max: 3 }),
        extra: fc.integer({ min: 0, max: 3 }),
      },
      { requiredKeys: ['choices'] },
    )
    .map(({ choices, min, extra }) => ({
      type: 'category' as const,
      extra: {
        choiceDrafts: choices,
        ...(min !== undefined ? { min_choices: min } : {}),
        ...(extra !== undefined ? { max_choices: (min ?? 1) + extra } : {}),
      },
    })),
  fc
    .record(
      {
        ends: fc
          .tuple(fc.integer({ min: 0, max: 172800 }), fc.integer({ min: 0, max: 172800 }))
          .map((pair) => pair.map((n) => n / 2).sort((a, b) => a - b)),
        spelling: fc.constantFrom('default_seconds', 'defaults_seconds'),
        increment: fc.oneof(fc.integer({ min: 1, max: 3600 }), fc.constantFrom(1.5, 2.5, 7.25)),
        fromField: fc.boolean(),
      },
      { requiredKeys: ['ends', 'spelling', 'fromField'] },
    )
    .map(({ ends, spelling, increment, fromField }) => ({
      type: 'time_range' as const,
      extra: { [spelling]: ends, ...(increment !== undefined ? { increment_seconds: increment } : {}), fromField },
    })),
  fc
    .record(
      {
        choices: fc.uniqueArray(fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), fc.integer({ min: -50, max: 50 })), {
          minLength: 1,
          maxLength: 4,
        }),
        fromField: fc.boolean(),
      },
      { requiredKeys: ['fromField'] },
    )
    .map(({ choices, fromField }) => ({ type: 'select' as const, extra: { ...(choices ? { choices } : {}), fromField } })),
  fc
    .record({ first_label: texts, last_label: texts, rank: fc.nat() }, { requiredKeys: [] })
    .map(({ rank, ...labels }) => ({ type: 'ranking_order' as const, extra: { ...labels, ...(rank !== undefined ? { rank } : {}) } })),
);

const commonDrafts = fc.record(
  {
    title: texts,
    description: texts,
    required: fc.boolean(),
    responses: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 2 }), fc.boolean()),
  },
  { requiredKeys: ['title'] },
);
type CommonDraft = typeof commonDrafts extends fc.Arbitrary<infer T> ? T : never;

/** How a field links to earlier fields: a condition on an earlier category field, options from an earlier field. */
const links = fc.record(
  { conditional: fc.boolean(), target: fc.nat(), pick: fc.nat(), op: fc.constantFrom('is', 'any', 'not', 'or') },
  { requiredKeys: ['conditional', 'target', 'pick', 'op'] },
);
type Link = typeof links extends fc.Arbitrary<infer T> ? T : never;

class FieldIds {
  private n = 0;
  next(): string {
    this.n += 1;
    return `field_${this.n}`;
  }
  nextValue(numeric: boolean): ChoiceValue {
    this.n += 1;
    return numeric ? this.n : `v${this.n}`;
  }
}

function commonPart(draft: CommonDraft, fieldId: string): FieldCommon {
  const [min, extra, onlyMax] = draft.responses ?? [1, 0, false];
  return {
    field_id: fieldId,
    title: draft.title,
    ...(draft.description !== undefined ? { description: draft.description } : {}),
    ...(draft.required !== undefined ? { required: draft.required } : {}),
    ...(draft.responses
      ? onlyMax
        ? { max_responses_required: min + extra }
        : { min_responses_required: min, max_responses_required: min + extra }
      : {}),
  };
}

/** A condition on one of `categories` (earlier category fields), or none. */
function conditionOn(link: Link, categories: ReadonlyArray<{ field_id: string; choices: ChoiceParam[] }>): ConditionSet[] | undefined {
  if (!link.conditional || categories.length === 0) return undefined;
  const target = categories[link.target % categories.length] as { field_id: string; choices: ChoiceParam[] };
  const leaves = leafValues(target.choices);
  const value = leaves[link.pick % (leaves.length + 1)] ?? 'never-offered';
  const other = leaves[(link.pick + 1) % leaves.length] ?? value;
  switch (link.op) {
    case 'is':
      return [{ [target.field_id]: value }];
    case 'any':
      return [{ [target.field_id]: [value, other] }];
    case 'not':
      return [{ [target.field_id]: { not: value } }];
    default:
      return [{ [target.field_id]: value }, { [target.field_id]: { not: [other] } }];
  }
}

/** Ids, conditions and cross-field references for one list of sibling fields (valid by construction). */
function wireFields(drafts: ReadonlyArray<[CommonDraft, LeafDraft, Link]>, ids: FieldIds, attachmentCount: number): LeafField[] {
  const wired: LeafField[] = [];
  for (const [common, draft, link] of drafts) {
    const base = commonPart(common, ids.next());
    const categories = wired.filter((f): f is Extract<LeafField, { type: 'category' }> => f.type === 'category');
    const conditions = conditionOn(link, categories);
    const withConditions = { ...base, ...(conditions ? { conditions } : {}) };
    const { fromField, choiceDrafts, rank, ...extra } = draft.extra as Json & {
      fromField?: boolean;
      choiceDrafts?: ChoiceDraft[];
      rank?: number;
    };
    const earlier = wired[link.target % Math.max(1, wired.length)];
    switch (draft.type) {
      case 'category': {
        const choices = (choiceDrafts ?? []).map(
          (c): ChoiceParam => ({
            label: c.label,
            value: ids.nextValue(c.numeric),
            ...(c.hint !== undefined ? { hint: c.hint } : {}),
            ...(c.sub ? { subchoices: c.sub.map((s) => ({ label: s.label, value: ids.nextValue(s.numeric) })) } : {}),
          }),
        );
        wired.push({ ...withConditions, type: 'category', choices, ...(extra as { min_choices?: number; max_choices?: number }) });
        break;
      }
      case 'select': {
        const from = fromField && earlier ? { choices_from_field: earlier.field_id } : {};
        const choices = (extra as { choices?: ChoiceValue[] }).choices;
        wired.push({
          ...withConditions,
          type: 'select',
          ...(choices || !('choices_from_field' in from) ? { choices: choices ?? ['only option'] } : {}),
          ...from,
        });
        break;
      }
      case 'time_range': {
        const earlierRange = wired.find((f) => f.type === 'time_range');
        wired.push({
          ...withConditions,
          type: 'time_range',
          ...extra,
          ...(fromField && earlierRange ? { default_from_field: earlierRange.field_id } : {}),
        });
        break;
      }
      case 'ranking_order':
        wired.push({
          ...withConditions,
          type: 'ranking_order',
          ...extra,
          ...(rank !== undefined ? { num_items_to_rank: 1 + (rank % attachmentCount) } : {}),
        });
        break;
      default:
        wired.push({ ...withConditions, type: draft.type, ...extra } as LeafField);
    }
  }
  return wired;
}

const leafFieldDrafts = (max: number) => fc.array(fc.tuple(commonDrafts, leafDrafts, links), { minLength: 1, maxLength: max });

const formDrafts = fc.array(
  fc.record(
    { common: commonDrafts, children: leafFieldDrafts(4), fieldset: fc.tuple(texts, leafFieldDrafts(2)), link: links },
    { requiredKeys: ['common', 'children', 'link'] },
  ),
  { minLength: 1, maxLength: 3 },
);

function wireForms(
  drafts: typeof formDrafts extends fc.Arbitrary<infer T> ? T : never,
  ids: FieldIds,
  attachmentCount: number,
): FormFieldParam[] {
  const forms: FormFieldParam[] = [];
  for (const draft of drafts) {
    const base = commonPart(draft.common, ids.next());
    // A form may be shown depending on a category answered in an earlier form.
    const earlierCategories = forms
      .flatMap((f) => f.fields.flatMap((c) => (c.type === 'fieldset' ? c.fields : [c])))
      .filter((f): f is Extract<LeafField, { type: 'category' }> => f.type === 'category');
    const conditions = conditionOn(draft.link, earlierCategories);
    // FieldSet children are siblings of the form's other children (they answer under their own ids).
    const all = wireFields([...draft.children, ...(draft.fieldset?.[1] ?? [])], ids, attachmentCount);
    const children = all.slice(0, draft.children.length);
    const grouped = all.slice(draft.children.length);
    forms.push({
      ...base,
      ...(conditions ? { conditions } : {}),
      type: 'form',
      fields: [
        ...children,
        ...(grouped.length > 0
          ? [{ type: 'fieldset' as const, incline: true as const, title: draft.fieldset?.[0] ?? 'Group', fields: grouped }]
          : []),
      ],
    });
  }
  return forms;
}

export const textCollectionParams: fc.Arbitrary<TextCollectionParams> = fc.integer({ min: 1, max: 4 }).chain((attachmentCount) =>
  fc
    .record(
      {
        fields: fc.oneof(
          leafFieldDrafts(7).map((drafts): TopField[] => wireFields(drafts, new FieldIds(), attachmentCount)),
          formDrafts.map((drafts): TopField[] => wireForms(drafts, new FieldIds(), attachmentCount)),
        ),
        attachments: fc.array(
          fc.tuple(
            fc.constantFrom('text', 'markdown', 'image', 'video', 'audio', 'website', 'pdf'),
            texts,
            urls,
            fc.option(fc.nat(), { nil: undefined }),
          ),
          { minLength: attachmentCount, maxLength: attachmentCount },
        ),
        title: texts,
        description: texts,
      },
      { requiredKeys: ['fields', 'attachments'] },
    )
    .map(({ fields, attachments, ...rest }) => {
      const formIds = fields.filter((f) => f.type === 'form').map((f) => f.field_id);
      return {
        ...rest,
        fields,
        attachments: attachments.map(([type, text, url, form]) => ({
          type,
          content: type === 'text' || type === 'markdown' ? text : url,
          ...(form !== undefined && formIds.length > 0 ? { forms: [formIds[form % formIds.length] as string] } : {}),
        })),
      };
    }),
);

// ---------------------------------------------------------------------------------------------
// namedentityrecognition

type NerLabel = Schemas['NamedEntityRecognitionLabel'];
export type NerRelationship = Schemas['NamedEntityRecognitionRelationshipDefinition'];
// The contract's relationships (a list, or its older forms) are generated as unknown.
export type NerParams = ParamsOf<'NamedEntityRecognitionParams', 'text' | 'labels', { relationships?: NerRelationship[] }>;

const nerAttributes = fc.dictionary(
  keys,
  fc.record(
    {
      type: fc.constant('select' as const),
      display_name: texts,
      options: fc.uniqueArray(
        fc.record({ value: fc.string({ minLength: 1, maxLength: 8 }), display_name: texts }, { requiredKeys: ['value'] }),
        {
          minLength: 1,
          maxLength: 3,
          selector: (o) => o.value,
        },
      ),
    },
    { requiredKeys: ['options'] },
  ),
  { minKeys: 1, maxKeys: 2 },
);
const entityBases = fc.constantFrom('PERSON', 'ORG', 'CITY', 'COUNTRY', 'DATE', 'MONEY', '__proto__');
const labelDrafts = fc.array(
  fc.record(
    {
      base: entityBases,
      attributes: nerAttributes,
      children: fc.array(fc.record({ base: entityBases, attributes: nerAttributes }, { requiredKeys: ['base'] }), {
        minLength: 1,
        maxLength: 3,
      }),
    },
    { requiredKeys: ['base'] },
  ),
  { minLength: 1, maxLength: 4 },
);

const word = fc.oneof(
  fc.stringMatching(/^[A-Za-z][a-z]{0,8}[.,]?$/),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }).filter((w) => !/\s/u.test(w)),
);
const nerTexts = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .array(fc.tuple(word, fc.constantFrom(' ', ' ', '  ', '\n', '\t', '\u00a0')), { minLength: 1, maxLength: 25 })
      .map((parts) => parts.map(([w, s]) => w + s).join('')),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }) },
);

export const allEntityLabels = (labels: readonly NerLabel[]): NerLabel[] =>
  labels.flatMap((l) => [l, ...allEntityLabels(l.children ?? [])]);

export const nerParams: fc.Arbitrary<NerParams> = labelDrafts
  .map((drafts): NerLabel[] => {
    let n = 0;
    const name = (base: string) => {
      n += 1;
      return `${base}_${n}`;
    };
    return drafts.map((d) => ({
      name: name(d.base),
      ...(d.attributes ? { attributes: d.attributes } : {}),
      ...(d.children
        ? { children: d.children.map((c) => ({ name: name(c.base), ...(c.attributes ? { attributes: c.attributes } : {}) })) }
        : {}),
    }));
  })
  .chain((labels) => {
    const names = allEntityLabels(labels).map((l) => l.name);
    const ends = fc.record({ source_label: fc.constantFrom(...names), target_label: fc.constantFrom(...names) }, { requiredKeys: [] });
    const named = fc.uniqueArray(
      fc
        .tuple(keys, ends, fc.record({ is_directed: fc.boolean(), display_name: texts }, { requiredKeys: [] }))
        .map(([relName, e, more]) => ({ name: relName, ...e, ...more })),
      { maxLength: 3, selector: (r) => r.name },
    );
    const unnamed = fc.array(
      fc.tuple(ends, fc.option(texts, { nil: undefined })).map(([e, display]) => ({ ...e, ...(display ? { display_name: display } : {}) })),
      { maxLength: 3 },
    );
    return fc.record(
      { text: nerTexts, labels: fc.constant(labels), relationships: fc.oneof(named, unnamed) },
      { requiredKeys: ['text', 'labels'] },
    );
  });

// ---------------------------------------------------------------------------------------------
// documenttranscription

export type DocumentParams = ParamsOf<
  'DocumentTranscriptionParams',
  'attachment',
  { features?: Array<{ name: string; description?: string }> }
>;

export const documentParams: fc.Arbitrary<DocumentParams> = fc.record(
  {
    attachment: urls,
    attachment_type: fc.constantFrom('pdf' as const, 'image' as const),
    features: fc.uniqueArray(fc.record({ name: labelText, description: texts }, { requiredKeys: ['name'] }), {
      minLength: 1,
      maxLength: 40,
      selector: (f) => f.name,
    }),
  },
  { requiredKeys: ['attachment'] },
);

// ---------------------------------------------------------------------------------------------
// lidarsegmentation

export type LidarParams = ParamsOf<'LidarSegmentationParams', 'attachments' | 'labels'>;

export const lidarParams: fc.Arbitrary<LidarParams> = fc.record(
  {
    attachments: fc.array(urls, { minLength: 1, maxLength: 5 }),
    attachment_type: fc.constant('json' as const),
    labels: uniqueLabels(40),
  },
  { requiredKeys: ['attachments', 'labels'] },
);

// ---------------------------------------------------------------------------------------------
// Every type

/** Arbitrary valid params of each task type (what a client may send). */
export const paramsArbitraries: { [T in TaskType]: fc.Arbitrary<Record<string, unknown>> } = {
  annotation: boxParams,
  pointannotation: pointParams,
  lineannotation: vertexParams(3, true),
  polygonannotation: vertexParams(6, false),
  segmentannotation: segmentParams,
  categorization: categorizationParams,
  comparison: comparisonParams,
  datacollection: dataCollectionParams,
  transcription: transcriptionParams,
  audiotranscription: audioParams,
  imageannotation: imageAnnotationParams,
  textcollection: textCollectionParams,
  namedentityrecognition: nerParams,
  documenttranscription: documentParams,
  videoplaybackannotation: videoParams,
  lidarsegmentation: lidarParams,
} as { [T in TaskType]: fc.Arbitrary<Record<string, unknown>> };
