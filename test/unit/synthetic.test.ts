// Test mode's synthetic responses (server/domain/synthetic.ts), property-based: for every task type,
// arbitrary valid params (checked against `<Type>Params`, so the arbitraries cannot drift from the
// contract) and arbitrary task ids give a response that is valid against `<Type>Response` and that
// respects the task's own params, checked here independently of the generator.
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { components } from '../../generated/current.ts';
import {
  NOMINAL_AUDIO_SECONDS,
  NOMINAL_IMAGE,
  NOMINAL_LIDAR_POINTS,
  NOMINAL_PDF_PAGE,
  NOMINAL_VIDEO_SECONDS,
  SYNTHETIC_MASK_ORIGIN,
  syntheticResponse,
  type TaskType,
} from '../../server/domain/synthetic.ts';
import { checkAnswer } from '../../server/domain/answer-rules.ts';
import { makeValidator } from '../support/spec.ts';

type Schemas = components['schemas'];
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
/** The prefixes `X` for which the contract has both `XParams` and `XResponse`. */
type TypePrefix = {
  [K in keyof Schemas]: K extends `${infer X}Params` ? (`${X}Response` extends keyof Schemas ? X : never) : never;
}[keyof Schemas];
/** A number as the contract takes it: form bodies send it as text. */
type Num = number | string;
const num = (value: Num | null | undefined): number | undefined => (value === undefined || value === null ? undefined : Number(value));
/** A boolean as the contract takes it: form bodies send `true` or `false` as text. */
const flag = (value: boolean | string | undefined): boolean => String(value ?? false).toLowerCase() === 'true';
type Json = Record<string, unknown>;

const SEED = 20261121;
const RUNS = { numRuns: 100, seed: SEED };

const validator = makeValidator('current');

function expectValid(schema: string, value: unknown, what: string): void {
  const validate = validator(`#/components/schemas/${schema}`);
  if (!validate(value)) {
    throw new Error(
      `expected ${what} to validate against ${schema}: ${JSON.stringify(validate.errors?.slice(0, 4))}\n${JSON.stringify(value)}`,
    );
  }
}

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const codePoints = (text: string) => Array.from(text);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// ---------------------------------------------------------------------------------------------
// Arbitraries shared by the types.

const taskIds = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 24, maxLength: 24 });
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
type AttributeParams = Schemas['AnnotationAttributes'];
type AttributeValues = Record<string, string | number | string[]>;

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

/**
 * Every attribute that applies to an annotation is there with a value of its kind, and only those
 * (conditions compare as text, as the generator documents).
 */
function checkAttributes(
  definitions: AttributeParams | undefined,
  annotations: ReadonlyArray<{ label: string; attributes?: AttributeValues }>,
  linkRefOf: (index: number) => string | number,
  boxOf: (index: number) => { width: number; height: number } | undefined,
): void {
  annotations.forEach((annotation, index) => {
    if (!definitions) {
      expect(annotation.attributes, 'no attributes on a task without annotation_attributes').toBeUndefined();
      return;
    }
    const values = new Map(Object.entries(annotation.attributes ?? {}));
    for (const name of values.keys()) expect(Object.hasOwn(definitions, name), `attribute ${name} is defined`).toBe(true);
    const others = annotations.map((_, i) => linkRefOf(i)).filter((_, i) => i !== index);
    for (const [name, definition] of Object.entries(definitions)) {
      const kind = definition.type ?? 'category';
      const conditions = definition.conditions ?? {};
      const holds =
        (conditions.label_condition === undefined || conditions.label_condition.label === annotation.label) &&
        (conditions.attribute_conditions ?? []).every((set) =>
          Object.entries(set).every(([other, wanted]) => {
            const have = values.get(other);
            return (Array.isArray(have) ? have : have === undefined ? [] : [have]).some((v) => String(v) === String(wanted));
          }),
        );
      const value = values.get(name);
      if (value === undefined) {
        const impossible = (kind === 'offset' && !boxOf(index)) || (kind === 'linked' && others.length === 0);
        expect(holds && !impossible, `attribute ${name} applies to annotation ${index} but is missing`).toBe(false);
        continue;
      }
      expect(holds, `attribute ${name} is given only where its conditions hold`).toBe(true);
      const choices = definition.choices ?? [];
      switch (kind) {
        case 'category':
          if (definition.allow_multiple) {
            expect(Array.isArray(value) && value.length > 0 && new Set(value).size === value.length).toBe(true);
            for (const v of value as string[]) expect(choices).toContain(v);
          } else {
            expect(choices).toContain(value);
          }
          break;
        case 'number':
          expect(Number.isInteger(value)).toBe(true);
          break;
        case 'angle':
          expect(typeof value === 'number' && value >= 0 && value <= 360).toBe(true);
          break;
        case 'text':
          expect(typeof value).toBe('string');
          break;
        case 'offset': {
          const box = boxOf(index);
          expect(box, 'offset only on boxes').toBeDefined();
          expect(typeof value === 'number' && value >= 0 && value <= Math.max(box?.width ?? 0, box?.height ?? 0)).toBe(true);
          break;
        }
        case 'linked':
          expect(others, 'a linked attribute names another annotation').toContain(value);
          break;
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Geometry checks.

interface Size {
  width: number;
  height: number;
}
interface XY {
  x: number;
  y: number;
}

/** The image the contract's rules put shapes in: the nominal image, widened for boxes larger than it. */
const boxCanvas = (minWidth?: Num, minHeight?: Num): Size => ({
  width: Math.max(NOMINAL_IMAGE.width, num(minWidth) ?? 0),
  height: Math.max(NOMINAL_IMAGE.height, num(minHeight) ?? 0),
});

function expectInside(point: XY, canvas: Size, what: string): void {
  expect(
    point.x >= 0 && point.x <= canvas.width && point.y >= 0 && point.y <= canvas.height,
    `${what} ${JSON.stringify(point)} inside ${canvas.width}×${canvas.height}`,
  ).toBe(true);
}

function expectBoxInside(
  box: { left: number; top: number; width: number; height: number },
  canvas: Size,
  minWidth?: Num,
  minHeight?: Num,
): void {
  expectInside({ x: box.left, y: box.top }, canvas, 'box corner');
  expectInside({ x: box.left + box.width, y: box.top + box.height }, canvas, 'box corner');
  expect(box.width, 'box width ≥ min_width').toBeGreaterThanOrEqual(num(minWidth) ?? 0);
  expect(box.height, 'box height ≥ min_height').toBeGreaterThanOrEqual(num(minHeight) ?? 0);
}

function expectVertexCount(vertices: readonly unknown[], minVertices?: Num, maxVertices?: Num | null): void {
  expect(vertices.length).toBeGreaterThanOrEqual(num(minVertices) ?? 1);
  const max = num(maxVertices);
  if (max !== undefined) expect(vertices.length).toBeLessThanOrEqual(max);
}

/** Labels drawn: from objects_to_annotate, each at least once; without with_labels, one kind at a time. */
function checkDrawnLabels(objects: readonly string[], drawn: readonly string[], withLabels: boolean | string | undefined): void {
  for (const label of drawn) expect(objects).toContain(label);
  expect(new Set(drawn)).toEqual(new Set(objects));
  if (!flag(withLabels)) {
    const order = drawn.map((label) => objects.indexOf(label));
    expect(order, 'grouped by kind in the order of objects_to_annotate').toEqual([...order].sort((a, b) => a - b));
  }
}

// ---------------------------------------------------------------------------------------------
// The harness: one describe per type.

interface TypeCase<P extends object> {
  type: TaskType;
  /** Schema name prefix: `<prefix>Params`, `<prefix>Response` (both in the contract). */
  prefix: TypePrefix;
  /** What a client sees, in one sentence. */
  story: string;
  params: fc.Arbitrary<P>;
  check: (params: P, response: Json) => void;
}

function describeType<P extends object>(c: TypeCase<P>): void {
  describe(`${c.type} in test mode`, () => {
    it(c.story, () => {
      fc.assert(
        fc.property(c.params, taskIds, (params, taskId) => {
          expectValid(`${c.prefix}Params`, params, 'the generated params');
          const before = structuredClone(params);
          const response = syntheticResponse(c.type, params as Json, taskId);
          expectValid(`${c.prefix}Response`, response, 'the synthetic response');
          c.check(params, response);
          // A worker's answer is held to the same rules: the synthetic one passes them (answer-rules.ts).
          expect(checkAnswer({ type: c.type, params: params as Json }, response), 'the workforce answer rules accept it').toEqual([]);
          expect(params, 'the task params are left as they were').toEqual(before);
        }),
        RUNS,
      );
    });

    it('reads the same on every retrieval: same task id, same response, whatever the clock or Math.random say', () => {
      for (const [params, taskId] of fc.sample(fc.tuple(c.params, taskIds), { numRuns: 20, seed: SEED })) {
        const first = syntheticResponse(c.type, params as Json, taskId);
        vi.useFakeTimers({ now: new Date('2031-02-03T04:05:06.000Z') });
        vi.spyOn(Math, 'random').mockReturnValue(0.5);
        try {
          expect(syntheticResponse(c.type, params as Json, taskId)).toEqual(first);
        } finally {
          vi.useRealTimers();
          vi.restoreAllMocks();
        }
      }
    });

    it('varies with the task id: another task, or a redo, gets a new answer (unless the params leave nothing to choose)', () => {
      const samples = fc.sample(c.params, { numRuns: 30, seed: SEED });
      const varied = samples.filter((params) => {
        const seeds = ['65f1c0a2b3c4d5e6f7a8b9c0', '65f1c0a2b3c4d5e6f7a8b9c1', '65f1c0a2b3c4d5e6f7a8b9c0:1', '0123456789abcdef01234567'];
        return new Set(seeds.map((seed) => JSON.stringify(syntheticResponse(c.type, params as Json, seed)))).size > 1;
      });
      // A few params leave nothing to choose (one category, no fields); most do not.
      expect(varied.length).toBeGreaterThanOrEqual(samples.length * 0.6);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// annotation

type BoxParams = ParamsOf<'AnnotationParams', 'attachment' | 'objects_to_annotate'>;

describeType<BoxParams>({
  type: 'annotation',
  prefix: 'Annotation',
  story:
    'draws boxes inside the image, at least min_width × min_height, one or more per object to annotate, with the attributes that apply',
  params: uniqueLabels(6).chain((objects) =>
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
  ),
  check(params, response) {
    const { annotations } = response as Schemas['AnnotationResponse'];
    const canvas = boxCanvas(params.min_width, params.min_height);
    checkDrawnLabels(
      params.objects_to_annotate,
      annotations.map((a) => a.label),
      params.with_labels,
    );
    for (const box of annotations) expectBoxInside(box, canvas, params.min_width, params.min_height);
    checkAttributes(
      params.annotation_attributes,
      annotations,
      (i) => i,
      (i) => annotations[i],
    );
  },
});

// ---------------------------------------------------------------------------------------------
// pointannotation, lineannotation, polygonannotation

type PointParams = ParamsOf<'PointAnnotationParams', 'attachment' | 'objects_to_annotate'>;

describeType<PointParams>({
  type: 'pointannotation',
  prefix: 'PointAnnotation',
  story: 'places points inside the image, each labeled with one of objects_to_annotate, every object at least once',
  params: uniqueLabels(6).chain((objects) =>
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
  ),
  check(params, response) {
    const { annotations } = response as Schemas['PointAnnotationResponse'];
    checkDrawnLabels(
      params.objects_to_annotate,
      annotations.map((a) => a.label),
      params.with_labels,
    );
    for (const point of annotations) expectInside(point, NOMINAL_IMAGE, 'point');
    checkAttributes(
      params.annotation_attributes,
      annotations,
      (i) => i,
      () => undefined,
    );
  },
});

type VertexParams = ParamsOf<'LineAnnotationParams', 'attachment' | 'objects_to_annotate'>;

const vertexBounds = fc
  .integer({ min: 1, max: 12 })
  .chain((min) =>
    fc.record(
      { min_vertices: fc.constant(min), max_vertices: fc.oneof(fc.constant(null), fc.integer({ min, max: min + 10 })) },
      { requiredKeys: [] },
    ),
  );

const vertexParams = (maxObjects: number, withSplines: boolean): fc.Arbitrary<VertexParams> =>
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

describeType<VertexParams>({
  type: 'lineannotation',
  prefix: 'LineAnnotation',
  story: 'traces lines inside the image with min_vertices..max_vertices points, marked as splines when the task asks for splines',
  params: vertexParams(3, true),
  check(params, response) {
    const { annotations } = response as Schemas['LineAnnotationResponse'];
    checkDrawnLabels(
      params.objects_to_annotate,
      annotations.map((a) => a.label),
      params.with_labels,
    );
    for (const line of annotations) {
      expectVertexCount(line.vertices, params.min_vertices, params.max_vertices);
      for (const v of line.vertices) expectInside(v, NOMINAL_IMAGE, 'vertex');
      expect(line.spline, 'spline: true exactly when splines').toBe(params.splines ? true : undefined);
    }
    checkAttributes(
      params.annotation_attributes,
      annotations,
      (i) => i,
      () => undefined,
    );
  },
});

describeType<VertexParams>({
  type: 'polygonannotation',
  prefix: 'PolygonAnnotation',
  story: 'outlines polygons inside the image with min_vertices..max_vertices corners, one or more per object to annotate',
  params: vertexParams(6, false),
  check(params, response) {
    const { annotations } = response as Schemas['PolygonAnnotationResponse'];
    checkDrawnLabels(
      params.objects_to_annotate,
      annotations.map((a) => a.label),
      params.with_labels,
    );
    for (const polygon of annotations) {
      expectVertexCount(polygon.vertices, params.min_vertices, params.max_vertices);
      for (const v of polygon.vertices) expectInside(v, NOMINAL_IMAGE, 'vertex');
    }
    checkAttributes(
      params.annotation_attributes,
      annotations,
      (i) => i,
      () => undefined,
    );
  },
});

// ---------------------------------------------------------------------------------------------
// segmentannotation

type SegmentParams = ParamsOf<'SegmentAnnotationParams', 'attachment' | 'labels'>;

describeType<SegmentParams>({
  type: 'segmentannotation',
  prefix: 'SegmentAnnotation',
  story: 'returns one mask per label and one per instance found, distinct colors and indexes 1.., and no unlabeled mask unless allowed',
  params: uniqueLabels(50).chain((labels) =>
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
  ),
  check(params, response) {
    const { annotations, labelMapping, instances } = response as Schemas['SegmentAnnotationResponse'];
    const instanceLabels = params.instance_labels ?? [];
    expect(Object.keys(annotations.labeled).sort()).toEqual([...params.labels, ...instanceLabels].sort());
    expect(Object.keys(labelMapping).sort()).toEqual([...params.labels, ...instanceLabels].sort());
    expect(Object.keys(instances).sort()).toEqual([...instanceLabels].sort());
    const entries: Array<Schemas['SegmentLabelMappingEntry']> = [];
    for (const label of params.labels) {
      expect(typeof annotations.labeled[label]).toBe('string');
      entries.push(labelMapping[label] as Schemas['SegmentLabelMappingEntry']);
    }
    for (const label of instanceLabels) {
      const masks = annotations.labeled[label];
      const mapping = labelMapping[label];
      expect(Array.isArray(masks) && Array.isArray(mapping)).toBe(true);
      expect((masks as string[]).length).toBe(instances[label]);
      expect((mapping as unknown[]).length).toBe(instances[label]);
      entries.push(...(mapping as Array<Schemas['SegmentLabelMappingEntry']>));
    }
    // Indexes count from 1 in the order of labels, then instances; colors are told apart.
    expect(entries.map((e) => e.index)).toEqual(entries.map((_, i) => i + 1));
    expect(new Set(entries.map((e) => e.color)).size).toBe(entries.length);
    if (!params.allow_unlabeled) expect(annotations.unlabeled).toBeNull();
    // Test mode paints no masks: every URL says so by pointing at a host that never resolves.
    const maskUrls = [
      ...Object.values(annotations.labeled).flat(),
      annotations.combined.image,
      annotations.combined.indexedImage,
      ...(annotations.unlabeled ? [annotations.unlabeled] : []),
    ];
    for (const url of maskUrls) expect(url.startsWith(`${SYNTHETIC_MASK_ORIGIN}/`)).toBe(true);
    expect(new Set(maskUrls).size).toBe(maskUrls.length);
  },
});

// ---------------------------------------------------------------------------------------------
// categorization

type CategorizationParams = ParamsOf<'CategorizationParams', 'attachment_type' | 'attachment' | 'categories'>;

const attachmentKinds = fc.constantFrom<AttachmentKind>('text', 'image', 'video', 'audio', 'website', 'pdf');

describeType<CategorizationParams>({
  type: 'categorization',
  prefix: 'Categorization',
  story: 'answers one of the categories (several with allow_multiple), with the matching category ids when the task gave ids',
  params: fc.tuple(attachmentKinds, uniqueLabels(6)).chain(([kind, categories]) =>
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
  ),
  check(params, response) {
    const { category, category_id } = response as Schemas['CategorizationResponse'];
    const ids = Object.entries(params.category_ids ?? {});
    const idOf = (c: string) => ids.find(([, named]) => named === c)?.[0];
    const chosen = params.allow_multiple ? (category as string[]) : [category as string];
    expect(Array.isArray(category)).toBe(params.allow_multiple === true);
    expect(chosen.length).toBeGreaterThanOrEqual(1);
    expect(new Set(chosen).size).toBe(chosen.length);
    for (const c of chosen) expect(params.categories).toContain(c);
    const expectedIds = chosen.map(idOf).filter((id) => id !== undefined);
    if (ids.length === 0) expect(category_id).toBeUndefined();
    else if (params.allow_multiple) expect(category_id).toEqual(expectedIds);
    else expect(category_id).toBe(expectedIds[0]);
  },
});

// ---------------------------------------------------------------------------------------------
// comparison, datacollection, transcription, audiotranscription

type ComparisonParams = ParamsOf<'ComparisonParams', 'attachment_type' | 'attachments'>;

describeType<ComparisonParams>({
  type: 'comparison',
  prefix: 'Comparison',
  story: 'picks one of the choices when the task has choices, and fills in every field when it has fields',
  params: attachmentKinds.chain((kind) =>
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
  ),
  check(params, response) {
    const { choice, fields } = response as { choice?: string; fields?: Record<string, string> };
    if (params.choices) expect(params.choices).toContain(choice);
    else expect(choice).toBeUndefined();
    if (params.fields) expect(Object.keys(fields ?? {}).sort()).toEqual(Object.keys(params.fields).sort());
    else expect(fields).toBeUndefined();
  },
});

type DataCollectionParams = ParamsOf<'DataCollectionParams', 'attachment_type' | 'attachment' | 'fields'>;

describeType<DataCollectionParams>({
  type: 'datacollection',
  prefix: 'DataCollection',
  story: 'collects a value for every key of fields and reports the seconds spent',
  params: fc
    .constantFrom('text' as const, 'image' as const, 'website' as const)
    .chain((kind) => fc.record({ attachment_type: fc.constant(kind), attachment: attachmentFor(kind), fields: descriptions })),
  check(params, response) {
    const { fields, time_spent_in_seconds } = response as Schemas['DataCollectionResponse'];
    expect(Object.keys(fields).sort()).toEqual(Object.keys(params.fields).sort());
    expect(Number.isInteger(time_spent_in_seconds) && time_spent_in_seconds >= 0).toBe(true);
  },
});

type TranscriptionParams = ParamsOf<'TranscriptionParams', 'attachment_type' | 'attachment'>;

const repeatableFields = fc.dictionary(
  keys,
  fc.oneof(
    texts,
    fc.record({ description: texts, choices: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }) }),
  ),
  { minKeys: 1, maxKeys: 4 },
);

describeType<TranscriptionParams>({
  type: 'transcription',
  prefix: 'Transcription',
  story: 'transcribes every field once and every repeatable field per occurrence, picking from its choices when it has choices',
  params: fc
    .record({
      attachment_type: fc.constantFrom('image' as const, 'pdf' as const, 'website' as const),
      attachment: urls,
      asked: fc.oneof(
        fc.record({ fields: descriptions }),
        fc.record({ repeatable_fields: repeatableFields }),
        fc.record({ fields: descriptions, repeatable_fields: repeatableFields }),
      ),
    })
    .map(({ asked, ...rest }) => ({ ...rest, ...asked })),
  check(params, response) {
    const { fields, repeatable_fields } = response as {
      fields?: Record<string, string>;
      repeatable_fields?: Array<Record<string, string>>;
    };
    if (params.fields) expect(Object.keys(fields ?? {}).sort()).toEqual(Object.keys(params.fields).sort());
    else expect(fields).toBeUndefined();
    if (!params.repeatable_fields) {
      expect(repeatable_fields).toBeUndefined();
      return;
    }
    const described = Object.entries(params.repeatable_fields);
    expect(Array.isArray(repeatable_fields)).toBe(true);
    for (const occurrence of repeatable_fields ?? []) {
      expect(Object.keys(occurrence).sort()).toEqual(described.map(([key]) => key).sort());
      for (const [key, how] of described) if (typeof how !== 'string') expect(how.choices).toContain(occurrence[key]);
    }
  },
});

type AudioParams = ParamsOf<'AudioTranscriptionParams', 'attachment'>;

describeType<AudioParams>({
  type: 'audiotranscription',
  prefix: 'AudioTranscription',
  story: 'returns a transcript made of consecutive, non-overlapping timed segments within the audio',
  params: fc.record(
    { attachment: urls, attachment_type: fc.constant('audio' as const), language: fc.constantFrom('en', 'en-US', 'pt-BR', 'de') },
    { requiredKeys: ['attachment'] },
  ),
  check(_params, response) {
    const { transcript, segments } = response as Schemas['AudioTranscriptionResponse'];
    expect(transcript).toBe(segments.map((s) => s.text).join(' '));
    segments.forEach((segment, i) => {
      expect(segment.start_seconds).toBeLessThanOrEqual(segment.end_seconds);
      expect(segment.end_seconds).toBeLessThanOrEqual(NOMINAL_AUDIO_SECONDS);
      const next = segments[i + 1];
      if (next) expect(segment.end_seconds, 'segments do not overlap').toBeLessThanOrEqual(next.start_seconds);
    });
  },
});

// ---------------------------------------------------------------------------------------------
// imageannotation and videoplaybackannotation

type GeometryKind = Schemas['ImageAnnotationResponse']['annotations'][number]['type'];
const GEOMETRY_KINDS: readonly GeometryKind[] = ['box', 'polygon', 'line', 'point', 'cuboid', 'ellipse'];
type GeometrySpec = Schemas['GeometrySpec'];
// The contract's Geometries (at least one key, an anyOf of required keys) is generated as unknown.
type Geometries = Partial<Record<GeometryKind, GeometrySpec>>;

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

/** One shape (an annotation, or a track's frame) fits its geometry's bounds and the image. */
function checkShape(kind: GeometryKind, shape: Json, spec: GeometrySpec): void {
  const canvas = kind === 'box' ? boxCanvas(spec.min_width, spec.min_height) : NOMINAL_IMAGE;
  const vertices = (shape.vertices ?? []) as Array<XY & { description?: string }>;
  switch (kind) {
    case 'box':
      expectBoxInside(shape as unknown as Schemas['BoxAnnotation'], canvas, spec.min_width, spec.min_height);
      break;
    case 'polygon':
    case 'line':
      expectVertexCount(vertices, spec.min_vertices, spec.max_vertices ?? null);
      for (const v of vertices) expectInside(v, canvas, `${kind} vertex`);
      break;
    case 'point':
      expectInside(shape as unknown as XY, canvas, 'point');
      break;
    case 'cuboid': {
      const corners = vertices.map((v) => v.description);
      expect(new Set(corners).size, 'each corner once').toBe(corners.length);
      expect(corners).toEqual(expect.arrayContaining(['face-topleft', 'face-bottomleft', 'face-topright', 'face-bottomright']));
      for (const v of vertices) expectInside(v, canvas, 'cuboid vertex');
      break;
    }
    case 'ellipse': {
      const { x, y, rx, ry } = shape as unknown as { x: number; y: number; rx: number; ry: number };
      const r = Math.max(rx, ry);
      expectInside({ x: x - r, y: y - r }, canvas, 'ellipse extent');
      expectInside({ x: x + r, y: y + r }, canvas, 'ellipse extent');
      break;
    }
  }
}

/** Every (geometry, label) pair the task asks for is drawn at least once, and nothing else. */
function checkGeometryCoverage(given: Geometries, drawn: ReadonlyArray<{ type: GeometryKind; label: string }>): void {
  for (const { type, label } of drawn) expect(given[type]?.objects_to_annotate, `${type} is a geometry of the task`).toContain(label);
  const pairs = new Set(drawn.map(({ type, label }) => JSON.stringify([type, label])));
  for (const [kind, spec] of Object.entries(given)) {
    for (const label of spec.objects_to_annotate) expect(pairs.has(JSON.stringify([kind, label])), `a ${kind} labeled ${label}`).toBe(true);
  }
}

type ImageAnnotationParams = ParamsOf<'ImageAnnotationParams', 'attachment', { geometries: Geometries }>;

describeType<ImageAnnotationParams>({
  type: 'imageannotation',
  prefix: 'ImageAnnotation',
  story: 'draws only the geometries the task gives, each with its own labels and bounds, inside the image, with unique uuids',
  params: geometries.chain((given) =>
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
  ),
  check(params, response) {
    const { annotations } = response as Schemas['ImageAnnotationResponse'];
    checkGeometryCoverage(params.geometries, annotations);
    for (const annotation of annotations)
      checkShape(annotation.type, annotation as unknown as Json, params.geometries[annotation.type] as GeometrySpec);
    expect(new Set(annotations.map((a) => a.uuid)).size).toBe(annotations.length);
    checkAttributes(
      params.annotation_attributes,
      annotations,
      (i) => annotations[i]?.uuid ?? '',
      (i) => {
        const a = annotations[i];
        return a?.type === 'box' ? a : undefined;
      },
    );
  },
});

type VideoParams = ParamsOf<'VideoPlaybackAnnotationParams', never, { geometries: Geometries }>;

type Track = { uuid: string; type: GeometryKind; label: string; attributes?: AttributeValues; frames: Array<Json & { frame: number }> };

describeType<VideoParams>({
  type: 'videoplaybackannotation',
  prefix: 'VideoPlaybackAnnotation',
  story: 'tracks objects through frames that exist (frame images, or the nominal video at frame_rate) and marks each event to annotate',
  params: geometries.chain((given) =>
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
  ),
  check(params, response) {
    const { annotations, events } = response as { annotations: Track[]; events: Schemas['VideoEvent'][] };
    const frameCount = params.attachments ? params.attachments.length : NOMINAL_VIDEO_SECONDS * (num(params.frame_rate) ?? 1);
    checkGeometryCoverage(params.geometries, annotations);
    expect(new Set(annotations.map((t) => t.uuid)).size).toBe(annotations.length);
    for (const track of annotations) {
      const frames = track.frames.map((f) => f.frame);
      expect(frames, 'ascending, each frame once').toEqual([...new Set(frames)].sort((a, b) => a - b));
      for (const { frame, ...shape } of track.frames) {
        expect(frame >= 0 && frame < frameCount, `frame ${frame} of ${frameCount}`).toBe(true);
        checkShape(track.type, shape, params.geometries[track.type] as GeometrySpec);
      }
    }
    checkAttributes(
      params.annotation_attributes,
      annotations,
      (i) => annotations[i]?.uuid ?? '',
      (i) => {
        const track = annotations[i];
        return track?.type === 'box' ? (track.frames[0] as unknown as Size) : undefined;
      },
    );
    const wanted = [...new Set(params.events_to_annotate ?? [])];
    expect(events.map((e) => e.label).sort()).toEqual([...wanted].sort());
    expect(events.map((e) => e.start)).toEqual(events.map((e) => e.start).sort((a, b) => a - b));
    for (const event of events) expect(0 <= event.start && event.start <= event.end && event.end < frameCount).toBe(true);
  },
});

// ---------------------------------------------------------------------------------------------
// textcollection

type ChoiceValue = string | number;
type DatePart = 'year' | 'month' | 'day' | 'hour' | 'minute';
const DATE_PARTS: readonly DatePart[] = ['year', 'month', 'day', 'hour', 'minute'];
interface ChoiceParam {
  label: string;
  value: ChoiceValue;
  hint?: string;
  subchoices?: ChoiceParam[];
}
type ConditionValue = ChoiceValue | ChoiceValue[] | { not: ChoiceValue | ChoiceValue[] };
type ConditionSet = Record<string, ConditionValue>;

interface FieldCommon {
  field_id: string;
  title: string;
  description?: string;
  required?: boolean;
  min_responses_required?: number;
  max_responses_required?: number;
  conditions?: ConditionSet[];
}
type LeafField = FieldCommon &
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
interface FieldSetParam {
  type: 'fieldset';
  incline: true;
  title?: string;
  fields: LeafField[];
}
type FormFieldParam = FieldCommon & { type: 'form'; fields: Array<LeafField | FieldSetParam> };
type TopField = LeafField | FormFieldParam;

// The contract's UnitField (a union with the form field) is generated as unknown: the fields this
// file makes are typed above.
type TextCollectionParams = ParamsOf<'TextCollectionParams', 'attachments', { fields: TopField[] }>;

/** Only choices without subchoices can be selected. */
const leafValues = (choices: readonly ChoiceParam[]): ChoiceValue[] =>
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

const textCollectionParams: fc.Arbitrary<TextCollectionParams> = fc.integer({ min: 1, max: 4 }).chain((attachmentCount) =>
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

/** The plain values in an answer (deeply): what conditions and `choices_from_field` look at. */
const valuesIn = (answer: unknown): ChoiceValue[] =>
  Array.isArray(answer)
    ? answer.flatMap(valuesIn)
    : (typeof answer === 'string' && answer.length > 0) || typeof answer === 'number'
      ? [answer]
      : [];

function conditionsHold(conditions: ConditionSet[] | undefined, selectedIn: (fieldId: string) => ChoiceValue[]): boolean {
  if (!conditions) return true;
  const any = (wanted: ChoiceValue | ChoiceValue[], selected: ChoiceValue[]) =>
    (Array.isArray(wanted) ? wanted : [wanted]).some((w) => selected.includes(w));
  return conditions.some((set) =>
    Object.entries(set).every(([id, wanted]) =>
      isRecord(wanted) ? !any(wanted.not as ChoiceValue | ChoiceValue[], selectedIn(id)) : any(wanted, selectedIn(id)),
    ),
  );
}

const flattenFieldSets = (fields: ReadonlyArray<LeafField | FieldSetParam>): LeafField[] =>
  fields.flatMap((f) => (f.type === 'fieldset' ? f.fields : [f]));
const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * Every shown field is answered within its bounds (a test task fills in the whole form), every
 * hidden field is absent; `outer` gives the selections of fields outside this list.
 */
function checkFieldAnswers(
  fields: ReadonlyArray<TopField>,
  answers: Json,
  outer: (fieldId: string) => ChoiceValue[],
  attachmentCount: number,
): void {
  const local = (id: string) => (fields.some((f) => f.field_id === id) ? valuesIn(answers[id]) : outer(id));
  for (const id of Object.keys(answers))
    expect(
      fields.map((f) => f.field_id),
      'answers only name fields',
    ).toContain(id);
  for (const field of fields) {
    const shown = conditionsHold(field.conditions, local);
    const present = Object.hasOwn(answers, field.field_id);
    if (!shown) {
      expect(present, `${field.field_id} is hidden by its conditions, so it has no answer`).toBe(false);
      continue;
    }
    const options =
      field.type === 'select' ? [...(field.choices ?? []), ...(field.choices_from_field ? local(field.choices_from_field) : [])] : [];
    if (field.type === 'select' && options.length === 0) {
      expect(present, `${field.field_id} has nothing to select`).toBe(false);
      continue;
    }
    expect(present, `${field.field_id} is shown, so test mode answers it`).toBe(true);
    const max = field.max_responses_required ?? 1;
    const min = field.min_responses_required ?? 1;
    const answer = answers[field.field_id];
    let each: unknown[] = [answer];
    if (max > 1) {
      expect(Array.isArray(answer), 'several answers come as an array').toBe(true);
      each = answer as unknown[];
      expect(each.length >= min && each.length <= max, `${each.length} answers within ${min}..${max}`).toBe(true);
    }
    for (const one of each) checkOneAnswer(field, one, options, outer, attachmentCount);
  }
}

function checkOneAnswer(
  field: TopField,
  answer: unknown,
  options: ChoiceValue[],
  outer: (fieldId: string) => ChoiceValue[],
  attachmentCount: number,
): void {
  switch (field.type) {
    case 'text':
      expect(typeof answer).toBe('string');
      expect(codePoints(answer as string).length).toBeGreaterThanOrEqual(1);
      expect(codePoints(answer as string).length).toBeLessThanOrEqual(field.max_characters ?? 1000);
      break;
    case 'boolean':
      expect(typeof answer).toBe('boolean');
      break;
    case 'number': {
      expect(answer).toMatch(/^-?[0-9]+(\.[0-9]+)?$/);
      const value = Number(answer);
      if (field.min !== undefined) expect(value).toBeGreaterThanOrEqual(field.min);
      if (field.max !== undefined) expect(value).toBeLessThanOrEqual(field.max);
      if (field.use_slider && field.min !== undefined) {
        const steps = (value - field.min) / (field.step ?? 1);
        expect(Math.abs(steps - Math.round(steps)), `${value} is on the slider's grid`).toBeLessThan(1e-6);
      }
      break;
    }
    case 'datetime': {
      const value = answer as Partial<Record<DatePart, number>>;
      expect(Object.keys(value).sort()).toEqual([...field.include].sort());
      if (value.month !== undefined && value.day !== undefined) {
        expect(value.day, 'a day the month has').toBeLessThanOrEqual(daysInMonth(value.year ?? 2000, value.month));
      }
      for (const part of field.include) {
        const preset = field.defaults?.[part];
        // A pre-filled day the month lacks (31 February) cannot be kept.
        const dayDoesNotFit = part === 'day' && preset !== undefined && preset > daysInMonth(value.year ?? 2000, value.month ?? 1);
        if (preset !== undefined && !dayDoesNotFit) expect(value[part], `pre-filled ${part} kept`).toBe(preset);
      }
      break;
    }
    case 'category': {
      const leaves = leafValues(field.choices);
      const selected = answer as ChoiceValue[];
      expect(new Set(selected).size).toBe(selected.length);
      for (const v of selected) expect(leaves, 'only leaf choices are selectable').toContain(v);
      const fewest = Math.min(field.min_choices ?? 1, leaves.length);
      const most = Math.max(fewest, Math.min(field.max_choices ?? 1, leaves.length));
      expect(selected.length >= fewest && selected.length <= most, `${selected.length} choices within ${fewest}..${most}`).toBe(true);
      break;
    }
    case 'time_range': {
      const { from_seconds, to_seconds } = answer as Schemas['TextCollectionTimeRangeValue'];
      expect(0 <= from_seconds && from_seconds <= to_seconds && to_seconds <= 86400).toBe(true);
      break;
    }
    case 'select':
      expect(Array.isArray(answer) && answer.length === 1).toBe(true);
      expect(options).toContain((answer as ChoiceValue[])[0]);
      break;
    case 'ranking_order': {
      const ranked = answer as number[];
      expect(ranked.length).toBe(field.num_items_to_rank ?? attachmentCount);
      expect(new Set(ranked).size).toBe(ranked.length);
      for (const i of ranked) expect(Number.isInteger(i) && i >= 0 && i < attachmentCount).toBe(true);
      break;
    }
    case 'form':
      expect(isRecord(answer)).toBe(true);
      checkFieldAnswers(flattenFieldSets(field.fields), answer as Json, outer, attachmentCount);
      break;
  }
}

describeType<TextCollectionParams>({
  type: 'textcollection',
  prefix: 'TextCollection',
  story: 'answers every shown field within its bounds and leaves out the fields its conditions hide',
  params: textCollectionParams,
  check(params, response) {
    const { annotations } = response as { annotations: Json };
    // Outside a form, a field id answers for its selections wherever it was answered (every filling of a form).
    const everywhere = (id: string): ChoiceValue[] => [
      ...valuesIn(annotations[id]),
      ...Object.values(annotations)
        .flatMap((a) => (Array.isArray(a) ? a : [a]))
        .filter(isRecord)
        .flatMap((filling) => valuesIn(filling[id])),
    ];
    checkFieldAnswers(params.fields, annotations, everywhere, params.attachments.length);
  },
});

// Two cases the random forms reach too rarely, written out.
describe('textcollection in test mode: forms filled several times, pre-filled dates', () => {
  const taskIdsFor = (count: number) => range(count).map((n) => `65f1c0a2b3c4d5e6f7a8b9${n.toString(16).padStart(2, '0')}`);

  it("in each filling of a form, a child's conditions look at that filling's answers, not at earlier fillings", () => {
    const params: TextCollectionParams = {
      attachments: [{ type: 'text', content: 'Receipt 1041' }],
      fields: [
        {
          type: 'form',
          field_id: 'item',
          title: 'Item',
          min_responses_required: 3,
          max_responses_required: 3,
          fields: [
            {
              type: 'category',
              field_id: 'kind',
              title: 'Kind',
              choices: [
                { label: 'Food', value: 'food' },
                { label: 'Other', value: 'other' },
              ],
            },
            {
              type: 'category',
              field_id: 'diet',
              title: 'Diet',
              choices: [{ label: 'Vegan', value: 'vegan' }],
              conditions: [{ kind: 'food' }],
            },
            { type: 'boolean', field_id: 'certified', title: 'Certified vegan', conditions: [{ diet: 'vegan' }] },
          ],
        },
      ],
    };
    expectValid('TextCollectionParams', params, 'the example params');
    let mixedTasks = 0;
    for (const taskId of taskIdsFor(40)) {
      const response = syntheticResponse('textcollection', params as unknown as Json, taskId);
      expectValid('TextCollectionResponse', response, 'the synthetic response');
      const fillings = (response.annotations as Json).item as Json[];
      for (const filling of fillings) expect('certified' in filling, JSON.stringify(filling)).toBe('diet' in filling);
      if (fillings.some((f) => 'diet' in f) && fillings.some((f) => !('diet' in f))) mixedTasks += 1;
    }
    expect(mixedTasks, 'some tasks mix fillings with and without the conditional child').toBeGreaterThan(0);
  });

  it('keeps pre-filled date parts, but a pre-filled day the month lacks becomes its last day', () => {
    const dateField = (field_id: string, include: DatePart[], defaults: Partial<Record<DatePart, number>>): LeafField => ({
      type: 'datetime',
      field_id,
      title: field_id,
      include,
      defaults,
    });
    const params: TextCollectionParams = {
      attachments: [{ type: 'text', content: 'Diary' }],
      fields: [
        dateField('yearless', ['month', 'day'], { month: 2, day: 31 }),
        dateField('in_2027', ['year', 'month', 'day'], { year: 2027, month: 2, day: 30 }),
        dateField('kept', ['year', 'month', 'day', 'hour'], { year: 2026, month: 11, day: 21, hour: 10 }),
      ],
    };
    expectValid('TextCollectionParams', params, 'the example params');
    for (const taskId of taskIdsFor(5)) {
      const { annotations } = syntheticResponse('textcollection', params as unknown as Json, taskId) as { annotations: Json };
      expect(annotations.yearless, 'a date without a year may be 29 February').toEqual({ month: 2, day: 29 });
      expect(annotations.in_2027).toEqual({ year: 2027, month: 2, day: 28 });
      expect(annotations.kept).toEqual({ year: 2026, month: 11, day: 21, hour: 10 });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// namedentityrecognition

type NerLabel = Schemas['NamedEntityRecognitionLabel'];
type NerRelationship = Schemas['NamedEntityRecognitionRelationshipDefinition'];
// The contract's relationships (a list, or its older forms) are generated as unknown.
type NerParams = ParamsOf<'NamedEntityRecognitionParams', 'text' | 'labels', { relationships?: NerRelationship[] }>;

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

const allEntityLabels = (labels: readonly NerLabel[]): NerLabel[] => labels.flatMap((l) => [l, ...allEntityLabels(l.children ?? [])]);

const nerParams: fc.Arbitrary<NerParams> = labelDrafts
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

describeType<NerParams>({
  type: 'namedentityrecognition',
  prefix: 'NamedEntityRecognition',
  story:
    'labels spans inside the text (text equals the slice start..end in code points) and relates existing spans as the definitions allow',
  params: nerParams,
  check(params, response) {
    const { annotations, relationships } = response as Schemas['NamedEntityRecognitionResponse'];
    const text = codePoints(params.text);
    const labels = allEntityLabels(params.labels);
    let previousEnd = 0;
    for (const a of annotations) {
      expect(0 <= a.start && a.start < a.end && a.end <= text.length, `span ${a.start}..${a.end} inside ${text.length} code points`).toBe(
        true,
      );
      expect(a.start, 'spans in order of start, not overlapping').toBeGreaterThanOrEqual(previousEnd);
      previousEnd = a.end;
      expect(a.text).toBe(text.slice(a.start, a.end).join(''));
      const label = labels.find((l) => l.name === a.label);
      expect(label, `${a.label} is a label of the task`).toBeDefined();
      for (const [attribute, value] of Object.entries(a.attributes ?? {})) {
        const definition = label?.attributes?.[attribute];
        expect(definition, `${attribute} is an attribute of ${a.label}`).toBeDefined();
        expect(definition?.options.map((o) => o.value)).toContain(value);
      }
    }
    expect(new Set(annotations.map((a) => a.id)).size).toBe(annotations.length);
    const words = params.text.split(/\s+/u).filter((w) => w.length > 0).length;
    if (words >= labels.length)
      expect(new Set(annotations.map((a) => a.label)).size, 'every label used when there are enough words').toBe(labels.length);

    const labelOf = new Map(annotations.map((a) => [a.id, a.label]));
    const definitions = params.relationships ?? [];
    for (const r of relationships) {
      expect(r.source_ref).not.toBe(r.target_ref);
      const source = labelOf.get(r.source_ref);
      const target = labelOf.get(r.target_ref);
      expect(source !== undefined && target !== undefined, 'relationships join existing spans').toBe(true);
      const fits = (d: NerRelationship, from = source, to = target) => (d.source_label ?? from) === from && (d.target_label ?? to) === to;
      const allowed = definitions
        .filter((d) => d.name === r.name)
        .some((d) => fits(d) || (!flag(d.is_directed) && fits(d, target, source)));
      expect(allowed, `relationship ${JSON.stringify(r)} matches a definition`).toBe(true);
    }
    expect(new Set(relationships.map((r) => r.id)).size).toBe(relationships.length);
  },
});

// ---------------------------------------------------------------------------------------------
// documenttranscription

// The contract's DocumentTranscriptionFeature (label or its older alias name) is generated as unknown.
type DocumentParams = ParamsOf<'DocumentTranscriptionParams', 'attachment', { features?: Array<{ name: string; description?: string }> }>;

describeType<DocumentParams>({
  type: 'documenttranscription',
  prefix: 'DocumentTranscription',
  story: 'transcribes each feature (labeled with its name) and the other text in reading order, inside the page',
  params: fc.record(
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
  ),
  check(params, response) {
    const { annotations } = response as Schemas['DocumentTranscriptionResponse'];
    const page = params.attachment_type === 'image' ? NOMINAL_IMAGE : NOMINAL_PDF_PAGE;
    const names = (params.features ?? []).map((f) => f.name);
    const labels = annotations.flatMap((a) => (a.label === undefined ? [] : [a.label]));
    for (const label of labels) expect(names).toContain(label);
    expect(new Set(labels)).toEqual(new Set(names));
    expect(
      annotations.map((a) => a.top),
      'reading order: top to bottom',
    ).toEqual(annotations.map((a) => a.top).sort((a, b) => a - b));
    for (const region of annotations) {
      expect(region.page).toBe(1);
      expectBoxInside(region, page);
    }
  },
});

// ---------------------------------------------------------------------------------------------
// lidarsegmentation

type LidarParams = ParamsOf<'LidarSegmentationParams', 'attachments' | 'labels'>;

describeType<LidarParams>({
  type: 'lidarsegmentation',
  prefix: 'LidarSegmentation',
  story: 'labels the points of every frame, one entry per attachment, as indexes into the task labels or -1',
  params: fc.record(
    {
      attachments: fc.array(urls, { minLength: 1, maxLength: 5 }),
      attachment_type: fc.constant('json' as const),
      labels: uniqueLabels(40),
    },
    { requiredKeys: ['attachments', 'labels'] },
  ),
  check(params, response) {
    const { labels, frames } = response as Schemas['LidarSegmentationResponse'];
    expect(labels).toEqual(params.labels);
    expect(frames.map((f) => f.frame)).toEqual(params.attachments.map((_, i) => i));
    for (const { point_labels } of frames) {
      expect(point_labels.length).toBe(NOMINAL_LIDAR_POINTS);
      for (const index of point_labels) expect(Number.isInteger(index) && index >= -1 && index < labels.length).toBe(true);
      if (labels.length <= NOMINAL_LIDAR_POINTS)
        expect(new Set(point_labels.filter((i) => i >= 0)).size, 'every label used').toBe(labels.length);
    }
  },
});
