// Test mode's synthetic responses (server/domain/synthetic.ts), property-based: for every task type,
// arbitrary valid params (test/support/task-params.ts; checked here against `<Type>Params`, so the
// arbitraries cannot drift from the contract) and arbitrary task ids give a response that is valid
// against `<Type>Response` and that respects the task's own params, checked here independently of
// the generator.
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
import { checkAnswer } from '../../shared/answer-rules.ts';
import { makeValidator } from '../support/spec.ts';
import {
  type AttributeParams,
  type AudioParams,
  type BoxParams,
  type CategorizationParams,
  type ChoiceValue,
  type ComparisonParams,
  type ConditionSet,
  type DataCollectionParams,
  type DatePart,
  type DocumentParams,
  type FieldSetParam,
  type Geometries,
  type GeometryKind,
  type GeometrySpec,
  type ImageAnnotationParams,
  type LeafField,
  type LidarParams,
  type NerParams,
  type NerRelationship,
  type PointParams,
  type SegmentParams,
  type TextCollectionParams,
  type TopField,
  type TranscriptionParams,
  type VertexParams,
  type VideoParams,
  allEntityLabels,
  audioParams,
  boxParams,
  categorizationParams,
  comparisonParams,
  dataCollectionParams,
  documentParams,
  imageAnnotationParams,
  leafValues,
  lidarParams,
  nerParams,
  pointParams,
  segmentParams,
  taskIds,
  textCollectionParams,
  transcriptionParams,
  vertexParams,
  videoParams,
} from '../support/task-params.ts';

type Schemas = components['schemas'];
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

type AttributeValues = Record<string, string | number | string[]>;

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

describeType<BoxParams>({
  type: 'annotation',
  prefix: 'Annotation',
  story:
    'draws boxes inside the image, at least min_width × min_height, one or more per object to annotate, with the attributes that apply',
  params: boxParams,
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

describeType<PointParams>({
  type: 'pointannotation',
  prefix: 'PointAnnotation',
  story: 'places points inside the image, each labeled with one of objects_to_annotate, every object at least once',
  params: pointParams,
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

describeType<SegmentParams>({
  type: 'segmentannotation',
  prefix: 'SegmentAnnotation',
  story: 'returns one mask per label and one per instance found, distinct colors and indexes 1.., and no unlabeled mask unless allowed',
  params: segmentParams,
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

describeType<CategorizationParams>({
  type: 'categorization',
  prefix: 'Categorization',
  story: 'answers one of the categories (several with allow_multiple), with the matching category ids when the task gave ids',
  params: categorizationParams,
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

describeType<ComparisonParams>({
  type: 'comparison',
  prefix: 'Comparison',
  story: 'picks one of the choices when the task has choices, and fills in every field when it has fields',
  params: comparisonParams,
  check(params, response) {
    const { choice, fields } = response as { choice?: string; fields?: Record<string, string> };
    if (params.choices) expect(params.choices).toContain(choice);
    else expect(choice).toBeUndefined();
    if (params.fields) expect(Object.keys(fields ?? {}).sort()).toEqual(Object.keys(params.fields).sort());
    else expect(fields).toBeUndefined();
  },
});

describeType<DataCollectionParams>({
  type: 'datacollection',
  prefix: 'DataCollection',
  story: 'collects a value for every key of fields and reports the seconds spent',
  params: dataCollectionParams,
  check(params, response) {
    const { fields, time_spent_in_seconds } = response as Schemas['DataCollectionResponse'];
    expect(Object.keys(fields).sort()).toEqual(Object.keys(params.fields).sort());
    expect(Number.isInteger(time_spent_in_seconds) && time_spent_in_seconds >= 0).toBe(true);
  },
});

describeType<TranscriptionParams>({
  type: 'transcription',
  prefix: 'Transcription',
  story: 'transcribes every field once and every repeatable field per occurrence, picking from its choices when it has choices',
  params: transcriptionParams,
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

describeType<AudioParams>({
  type: 'audiotranscription',
  prefix: 'AudioTranscription',
  story: 'returns a transcript made of consecutive, non-overlapping timed segments within the audio',
  params: audioParams,
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

describeType<ImageAnnotationParams>({
  type: 'imageannotation',
  prefix: 'ImageAnnotation',
  story: 'draws only the geometries the task gives, each with its own labels and bounds, inside the image, with unique uuids',
  params: imageAnnotationParams,
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

type Track = { uuid: string; type: GeometryKind; label: string; attributes?: AttributeValues; frames: Array<Json & { frame: number }> };

describeType<VideoParams>({
  type: 'videoplaybackannotation',
  prefix: 'VideoPlaybackAnnotation',
  story: 'tracks objects through frames that exist (frame images, or the nominal video at frame_rate) and marks each event to annotate',
  params: videoParams,
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

describeType<DocumentParams>({
  type: 'documenttranscription',
  prefix: 'DocumentTranscription',
  story: 'transcribes each feature (labeled with its name) and the other text in reading order, inside the page',
  params: documentParams,
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

describeType<LidarParams>({
  type: 'lidarsegmentation',
  prefix: 'LidarSegmentation',
  story: 'labels the points of every frame, one entry per attachment, as indexes into the task labels or -1',
  params: lidarParams,
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
