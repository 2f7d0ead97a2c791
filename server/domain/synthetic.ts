// Synthetic responses of test mode (docs/decisions/0003-tasks.md). No person works on a test task: the server
// completes it at once with an answer a careful worker could have given. The answer validates
// against the type's `<Type>Response` schema and respects the task's own params (labels from its
// label lists, shapes inside the image, answers within each field's bounds, spans inside the
// text). It is a pure function of (type, params, seed): the server passes the task_id, or
// `${task_id}:${times_redone}` for a redo, so a task reads the same on every retrieval and a
// redo gets a new answer.
import type { components } from '../../generated/current.ts';

type Schemas = components['schemas'];
export type TaskType = Schemas['TaskType'];
type Params = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Nominal media. Test mode fetches nothing, so the real size of an image, the length of a video
// or audio file and the points of a lidar frame are unknown. Every synthetic answer assumes these
// stand-ins instead.

/** Images (and video frames) are taken to be 1024×768 pixels, a common 4:3 frame size. */
export const NOMINAL_IMAGE = { width: 1024, height: 768 } as const;
/** A PDF page is taken to be US Letter at 72 dpi, i.e. 612×792 PDF points (documenttranscription's unit for PDFs). */
export const NOMINAL_PDF_PAGE = { width: 612, height: 792 } as const;
/** A video attachment is taken to last 10 seconds; its frames are sampled at the task's `frame_rate`. */
export const NOMINAL_VIDEO_SECONDS = 10;
/** An audio attachment is taken to last 30 seconds. */
export const NOMINAL_AUDIO_SECONDS = 30;
/** A lidar frame is taken to hold 32 points (the response labels each point of the frame file, which is not read). */
export const NOMINAL_LIDAR_POINTS = 32;
/**
 * Where segmentation masks "live". Test mode paints no masks, so no URL could point at a real
 * file; a host under `.invalid` (RFC 6761) says so plainly: it never resolves, cannot collide with
 * anyone's server, and our own service treats a `.invalid` attachment as a failed fetch, so a mask
 * passed on as another test task's attachment fails honestly instead of fetching something else.
 */
export const SYNTHETIC_MASK_ORIGIN = 'https://synthetic-masks.humantask.invalid';

/** The test-mode `response` of a task of `type` with these stored `params`, the same for the same `seed`. */
export function syntheticResponse(type: TaskType, params: Record<string, unknown>, seed: string): Record<string, unknown> {
  const generate = generators[type] as Generator | undefined;
  if (!generate) throw new Error(`no synthetic response for task type "${String(type)}"`);
  return generate(params, new SeededRandom(seed), seed);
}

type Generator = (params: Params, rng: SeededRandom, seed: string) => Record<string, unknown>;

// One generator per type, each defined below next to the helpers it uses.
const generators: { [T in TaskType]: Generator } = {
  annotation: boxAnnotationResponse,
  pointannotation: pointAnnotationResponse,
  lineannotation: lineAnnotationResponse,
  polygonannotation: polygonAnnotationResponse,
  segmentannotation: segmentAnnotationResponse,
  categorization: categorizationResponse,
  comparison: comparisonResponse,
  datacollection: dataCollectionResponse,
  transcription: transcriptionResponse,
  audiotranscription: audioTranscriptionResponse,
  imageannotation: imageAnnotationResponse,
  textcollection: textCollectionResponse,
  namedentityrecognition: namedEntityRecognitionResponse,
  documenttranscription: documentTranscriptionResponse,
  videoplaybackannotation: videoPlaybackAnnotationResponse,
  lidarsegmentation: lidarSegmentationResponse,
};

// ---------------------------------------------------------------------------------------------
// Seeded randomness: FNV-1a hashes the seed into a 32-bit state, mulberry32 steps it. Tiny, fast
// and good enough to make picks look varied; never Math.random or the clock, which would make a
// task's answer change between reads.

class SeededRandom {
  private state: number;

  constructor(seed: string) {
    let hash = 0x811c9dc5;
    for (let i = 0; i < seed.length; i++) {
      hash ^= seed.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    this.state = hash >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer from `min` to `max`, both included (`min` when the range is empty). */
  int(min: number, max: number): number {
    return max <= min ? min : min + Math.floor(this.next() * (max - min + 1));
  }

  /** A number from `min` to `max` with one decimal place, inside the bounds. */
  decimal(min: number, max: number): number {
    return clamp(round1(min + this.next() * (max - min)), min, max);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** `count` distinct items, in their original order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set(this.shuffle(items.map((_, i) => i)).slice(0, count));
    return items.filter((_, i) => chosen.has(i));
  }

  /** A random (version 4 shaped) UUID. */
  uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(0, 15).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${this.pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading stored params. They are validated on creation and numbers and booleans are coerced, but
// a project may have supplied part of them: read defensively, fall back to the contract's default.

function isRecord(value: unknown): value is Params {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const asRecord = (value: unknown): Params => (isRecord(value) ? value : {});
const asRecords = (value: unknown): Params[] => (Array.isArray(value) ? value.filter(isRecord) : []);
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
/** How many entries a list has (attachment lists: two frames may share a URL, each still counts). */
const listLength = (value: unknown): number => (Array.isArray(value) ? value.length : 0);

/** The strings of a list, first occurrence kept (a repeated label names the same kind of object). */
function asStrings(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return [...new Set(value.filter((v): v is string => typeof v === 'string' && v.length > 0))];
}

/** A finite number; numeric strings too, in case a value reached params uncoerced. */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(value)) return Number(value);
  return undefined;
}

/** A whole number of at least `min`, or `fallback` (the contract's default) when absent. */
function asCount(value: unknown, fallback: number, min = 0): number {
  const n = asNumber(value);
  return n === undefined ? fallback : Math.max(min, Math.ceil(n));
}

function asBoolean(value: unknown, fallback: boolean): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return fallback;
}

type ChoiceValue = string | number;
const isChoiceValue = (value: unknown): value is ChoiceValue =>
  (typeof value === 'string' && value.length > 0) || (typeof value === 'number' && Number.isFinite(value));

// ---------------------------------------------------------------------------------------------
// Small shared helpers.

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
const round1 = (value: number) => Math.round(value * 10) / 10;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * `count` labels drawn from `labels`: each label at least once when `count` allows it, the rest
 * repeats, in random order.
 */
function coveringLabels(rng: SeededRandom, labels: readonly string[], count: number): string[] {
  if (labels.length === 0) return [];
  const chosen = rng.shuffle(labels).slice(0, count);
  while (chosen.length < count) chosen.push(rng.pick(labels));
  return rng.shuffle(chosen);
}

const WORDS = [
  'amber',
  'harbor',
  'quiet',
  'river',
  'signal',
  'orchard',
  'copper',
  'meadow',
  'lantern',
  'granite',
  'willow',
  'summit',
  'canvas',
  'ember',
  'falcon',
  'glacier',
  'horizon',
  'island',
  'kernel',
  'lotus',
  'marble',
  'nectar',
  'pebble',
  'quartz',
  'raven',
  'saffron',
  'timber',
  'velvet',
  'harvest',
  'beacon',
] as const;

/** A few plain words: the text a synthetic worker writes. */
function phrase(rng: SeededRandom, minWords: number, maxWords: number): string {
  return Array.from({ length: rng.int(minWords, maxWords) }, () => rng.pick(WORDS)).join(' ');
}

/** `text` cut to at most `maxCharacters` code points, never empty and without a trailing space. */
function truncate(text: string, maxCharacters: number): string {
  const cut = Array.from(text).slice(0, Math.max(1, maxCharacters)).join('').trimEnd();
  return cut.length > 0 ? cut : 'x';
}

// ---------------------------------------------------------------------------------------------
// Geometry: shapes inside a canvas, in pixels from its top-left corner, rounded to 0.1 px.

interface Size {
  width: number;
  height: number;
}
interface Point {
  x: number;
  y: number;
}
interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}
type CuboidCorner = Schemas['CuboidVertex']['description'];
interface CuboidVertex extends Point {
  description: CuboidCorner;
}
interface Ellipse extends Point {
  rx: number;
  ry: number;
  rotation: number;
}
type GeometryKind = Schemas['ImageAnnotationElement']['type'];
const GEOMETRY_KINDS: readonly GeometryKind[] = ['box', 'polygon', 'line', 'point', 'cuboid', 'ellipse'];

type Shape =
  | ({ type: 'box' } & Box)
  | { type: 'polygon'; vertices: Point[] }
  | { type: 'line'; vertices: Point[] }
  | ({ type: 'point' } & Point)
  | { type: 'cuboid'; vertices: CuboidVertex[] }
  | ({ type: 'ellipse' } & Ellipse);

/** The size and vertex bounds of one geometry (older types: the task's; newer: the GeometrySpec's). */
interface ShapeBounds {
  minWidth: number;
  minHeight: number;
  minVertices: number;
  maxVertices: number | undefined;
}

function shapeBounds(spec: Params): ShapeBounds {
  const maxVertices = asNumber(spec.max_vertices);
  return {
    minWidth: asCount(spec.min_width, 0),
    minHeight: asCount(spec.min_height, 0),
    minVertices: asCount(spec.min_vertices, 1, 1),
    maxVertices: maxVertices === undefined ? undefined : Math.max(1, Math.floor(maxVertices)),
  };
}

/**
 * The image boxes are drawn on: the nominal image, widened or heightened when the task asks for
 * boxes larger than it (then the real image must be at least that large). The size bounds apply
 * to boxes only, so every other shape stays on the nominal image.
 */
function canvasFor(kind: GeometryKind, bounds: Pick<ShapeBounds, 'minWidth' | 'minHeight'>): Size {
  if (kind !== 'box') return NOMINAL_IMAGE;
  return {
    width: Math.max(NOMINAL_IMAGE.width, bounds.minWidth),
    height: Math.max(NOMINAL_IMAGE.height, bounds.minHeight),
  };
}

/** A vertex count in the task's inclusive bounds, near `preferred` when the bounds allow. */
function vertexCount(rng: SeededRandom, bounds: ShapeBounds, preferred: readonly [number, number]): number {
  const max = Math.max(bounds.maxVertices ?? Number.POSITIVE_INFINITY, bounds.minVertices);
  return clamp(rng.int(preferred[0], preferred[1]), bounds.minVertices, max);
}

/** An axis-aligned box of at least the minimum size, whole pixels, inside the canvas. */
function randomBox(rng: SeededRandom, canvas: Size, bounds: ShapeBounds): Box {
  const side = (min: number, extent: number) => {
    const lo = Math.max(min, Math.min(16, extent));
    return rng.int(lo, clamp(Math.floor(extent / 2), lo, extent));
  };
  const width = side(bounds.minWidth, canvas.width);
  const height = side(bounds.minHeight, canvas.height);
  return { left: rng.int(0, canvas.width - width), top: rng.int(0, canvas.height - height), width, height };
}

function randomPoint(rng: SeededRandom, canvas: Size): Point {
  return { x: rng.decimal(0, canvas.width), y: rng.decimal(0, canvas.height) };
}

/** A star-shaped (so never self-crossing) polygon: corners at increasing angles around a centre. */
function randomPolygon(rng: SeededRandom, canvas: Size, count: number): Point[] {
  const cx = rng.decimal(canvas.width * 0.25, canvas.width * 0.75);
  const cy = rng.decimal(canvas.height * 0.25, canvas.height * 0.75);
  const reach = Math.min(cx, canvas.width - cx, cy, canvas.height - cy) * 0.9; // Stryker disable next-line all: the random first angle; every start gives a valid polygon
  const start = rng.next() * 2 * Math.PI;
  const step = (2 * Math.PI) / count;
  return range(count).map((i) => {
    const angle = start + step * (i + (rng.next() - 0.5) * 0.6);
    const radius = reach * (0.5 + rng.next() * 0.5);
    return {
      x: clamp(round1(cx + radius * Math.cos(angle)), 0, canvas.width),
      y: clamp(round1(cy + radius * Math.sin(angle)), 0, canvas.height),
    };
  });
}

/** A polyline running from left to right with random heights. */
function randomPolyline(rng: SeededRandom, canvas: Size, count: number): Point[] {
  const x0 = rng.decimal(0, canvas.width / 2);
  const x1 = rng.decimal(x0, canvas.width);
  return range(count).map((i) => ({
    x: clamp(round1(count === 1 ? x0 : x0 + ((x1 - x0) * i) / (count - 1)), 0, canvas.width),
    y: rng.decimal(0, canvas.height),
  }));
}

/** The projection of a 3D box: a front face, plus the side's two corners when a side shows. */
function randomCuboid(rng: SeededRandom, canvas: Size): CuboidVertex[] {
  const depthX = rng.int(0, Math.floor(canvas.width * 0.1));
  const depthY = rng.int(0, Math.floor(canvas.height * 0.1));
  const face = randomBox(rng, { width: canvas.width - depthX, height: canvas.height - depthY }, shapeBounds({}));
  const top = face.top + depthY;
  const right = face.left + face.width;
  const bottom = top + face.height;
  const vertices: CuboidVertex[] = [
    { description: 'face-topleft', x: face.left, y: top },
    { description: 'face-bottomleft', x: face.left, y: bottom },
    { description: 'face-topright', x: right, y: top },
    { description: 'face-bottomright', x: right, y: bottom },
  ]; // Stryker disable next-line all: whether a side shows is the random draw; both answers are valid
  if (rng.chance(0.7)) {
    vertices.push(
      { description: 'side-topcorner', x: right + depthX, y: top - depthY },
      { description: 'side-bottomcorner', x: right + depthX, y: bottom - depthY },
    );
  }
  return vertices;
}

/** An ellipse whose every rotation stays inside the canvas (its radii fit the nearest edge). */
function randomEllipse(rng: SeededRandom, canvas: Size): Ellipse {
  const x = rng.decimal(canvas.width * 0.2, canvas.width * 0.8);
  const y = rng.decimal(canvas.height * 0.2, canvas.height * 0.8);
  const reach = Math.floor(Math.min(x, canvas.width - x, y, canvas.height - y));
  return { x, y, rx: rng.int(Math.ceil(reach * 0.2), reach), ry: rng.int(Math.ceil(reach * 0.2), reach), rotation: rng.int(0, 359) };
}

function randomShape(rng: SeededRandom, kind: GeometryKind, canvas: Size, bounds: ShapeBounds): Shape {
  switch (kind) {
    case 'box':
      return { type: 'box', ...randomBox(rng, canvas, bounds) };
    case 'polygon':
      return { type: 'polygon', vertices: randomPolygon(rng, canvas, vertexCount(rng, bounds, [3, 8])) };
    case 'line':
      return { type: 'line', vertices: randomPolyline(rng, canvas, vertexCount(rng, bounds, [2, 6])) };
    case 'point':
      return { type: 'point', ...randomPoint(rng, canvas) };
    case 'cuboid':
      return { type: 'cuboid', vertices: randomCuboid(rng, canvas) };
    case 'ellipse':
      return { type: 'ellipse', ...randomEllipse(rng, canvas) };
  }
}

/** The smallest axis-aligned rectangle holding the shape (an ellipse at any rotation). */
function extentOf(shape: Shape): { minX: number; minY: number; maxX: number; maxY: number } {
  switch (shape.type) {
    case 'box':
      return { minX: shape.left, minY: shape.top, maxX: shape.left + shape.width, maxY: shape.top + shape.height };
    case 'point':
      return { minX: shape.x, minY: shape.y, maxX: shape.x, maxY: shape.y };
    case 'ellipse': {
      const r = Math.max(shape.rx, shape.ry);
      return { minX: shape.x - r, minY: shape.y - r, maxX: shape.x + r, maxY: shape.y + r };
    }
    default: {
      // A loop, not Math.min(...xs): a task may ask for more vertices than a call takes arguments.
      const extent = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
      for (const { x, y } of shape.vertices) {
        extent.minX = Math.min(extent.minX, x);
        extent.minY = Math.min(extent.minY, y);
        extent.maxX = Math.max(extent.maxX, x);
        extent.maxY = Math.max(extent.maxY, y);
      }
      return extent;
    }
  }
}

/** The shape moved by (dx, dy) whole pixels, the move shortened so that it stays inside the canvas. */
function moveWithin(shape: Shape, dx: number, dy: number, canvas: Size): Shape {
  const extent = extentOf(shape);
  const mx = clamp(dx, Math.ceil(-extent.minX), Math.floor(canvas.width - extent.maxX));
  const my = clamp(dy, Math.ceil(-extent.minY), Math.floor(canvas.height - extent.maxY));
  const x = (v: number) => clamp(round1(v + mx), 0, canvas.width);
  const y = (v: number) => clamp(round1(v + my), 0, canvas.height);
  switch (shape.type) {
    case 'box':
      return { ...shape, left: x(shape.left), top: y(shape.top) };
    case 'point':
    case 'ellipse':
      return { ...shape, x: x(shape.x), y: y(shape.y) };
    case 'cuboid':
      return { ...shape, vertices: shape.vertices.map((v) => ({ ...v, x: x(v.x), y: y(v.y) })) };
    default:
      return { ...shape, vertices: shape.vertices.map((v) => ({ x: x(v.x), y: y(v.y) })) };
  }
}

// ---------------------------------------------------------------------------------------------
// Annotation attributes (API description 2.8): values for each annotation, in an order that lets
// attribute conditions refer to attributes declared after them.

type AttributeValue = string | number | string[];
type AttributeValues = Record<string, AttributeValue>;

interface AttributeDefinition {
  name: string;
  kind: 'category' | 'number' | 'angle' | 'text' | 'offset' | 'linked';
  choices: string[];
  allowMultiple: boolean;
  labelCondition: string | undefined;
  attributeConditions: Params[];
}

function attributeDefinitions(value: unknown): AttributeDefinition[] {
  const kinds = ['category', 'number', 'angle', 'text', 'offset', 'linked'] as const;
  return Object.entries(asRecord(value)).flatMap(([name, raw]): AttributeDefinition[] => {
    if (!isRecord(raw)) return [];
    const kind = kinds.find((k) => k === raw.type) ?? 'category';
    const conditions = asRecord(raw.conditions);
    return [
      {
        name,
        kind,
        choices: asStrings(raw.choices),
        allowMultiple: asBoolean(raw.allow_multiple, false),
        labelCondition: asString(asRecord(conditions.label_condition).label),
        attributeConditions: asRecords(conditions.attribute_conditions),
      },
    ];
  });
}

/** What an attribute value may depend on besides the other attributes. */
interface AttributeTarget {
  label: string;
  /** The box, for `offset` attributes (which apply to boxes only). */
  box: Size | undefined;
  /** What a `linked` attribute may refer to: the other annotations' uuids, or indexes in the older types. */
  linkable: readonly (string | number)[];
}

/**
 * The attribute values of one annotation. Conditions compare as text: form bodies carry numbers
 * as strings (`attribute_conditions[0][count]=3`), so `"3"` and `3` name the same value.
 */
function attributeValuesFor(rng: SeededRandom, definitions: readonly AttributeDefinition[], target: AttributeTarget): AttributeValues {
  // Keyed by names the client chose: a Map, so that a name like `constructor` finds nothing inherited.
  const values = new Map<string, AttributeValue>();
  const holds = (definition: AttributeDefinition) =>
    (definition.labelCondition === undefined || definition.labelCondition === target.label) &&
    definition.attributeConditions.every((condition) =>
      Object.entries(condition).every(([name, wanted]) => {
        const have = values.get(name);
        const options = Array.isArray(have) ? have : have === undefined ? [] : [have];
        return options.some((option) => String(option) === String(wanted));
      }),
    );
  decideInDependencyOrder(
    definitions,
    (definition) => [definition.name],
    (definition) => definition.attributeConditions.flatMap((condition) => Object.keys(condition)),
    (definition, ready) => {
      if (!ready || !holds(definition)) return;
      const value = attributeValue(rng, definition, target);
      if (value !== undefined) values.set(definition.name, value);
    },
  );
  return Object.fromEntries(values);
}

/** One attribute's value, or undefined when it cannot apply (an offset off a box, a link with nothing to link). */
function attributeValue(rng: SeededRandom, definition: AttributeDefinition, target: AttributeTarget): AttributeValue | undefined {
  switch (definition.kind) {
    case 'category':
      if (definition.choices.length === 0) return undefined;
      return definition.allowMultiple
        ? rng.sample(definition.choices, rng.int(1, definition.choices.length))
        : rng.pick(definition.choices);
    case 'number':
      return rng.int(0, 10);
    case 'angle':
      return rng.int(0, 359);
    case 'text':
      return phrase(rng, 1, 4);
    case 'offset':
      return target.box ? rng.int(0, Math.floor(Math.min(target.box.width, target.box.height))) : undefined;
    case 'linked':
      return target.linkable.length > 0 ? rng.pick(target.linkable) : undefined;
  }
}

/**
 * Adds `attributes` to each element when the task has annotation attributes. `linkRef(i)` is how
 * a linked attribute names element i; `boxOf` gives the box an offset measures.
 */
function withAttributes<T extends { label: string }>(
  rng: SeededRandom,
  annotationAttributes: unknown,
  elements: readonly T[],
  linkRef: (element: T, index: number) => string | number,
  boxOf: (element: T) => Size | undefined,
): Array<T & { attributes?: AttributeValues }> {
  const definitions = attributeDefinitions(annotationAttributes);
  if (definitions.length === 0) return [...elements];
  const refs = elements.map(linkRef);
  return elements.map((element, i) => ({
    ...element,
    attributes: attributeValuesFor(rng, definitions, {
      label: element.label,
      box: boxOf(element),
      linkable: refs.filter((_, j) => j !== i),
    }),
  }));
}

// ---------------------------------------------------------------------------------------------
// Conditions shared by text-collection fields and annotation attributes: decide items after the
// items they refer to, whatever the order of declaration.

/**
 * Calls `decide` once per item, each after the other items owning an id it needs. Items caught in
 * a cycle cannot have their conditions evaluated: they are decided last with `ready` false and
 * treated as not shown.
 */
function decideInDependencyOrder<T>(
  items: readonly T[],
  owns: (item: T) => readonly string[],
  needs: (item: T) => readonly string[],
  decide: (item: T, ready: boolean) => void,
): void {
  let pending = [...items];
  while (pending.length > 0) {
    const ownedByPending = new Set(pending.flatMap(owns));
    const ready = pending.filter((item) => {
      const own = owns(item);
      return needs(item).every((id) => own.includes(id) || !ownedByPending.has(id));
    });
    if (ready.length === 0) {
      for (const item of pending) decide(item, false);
      return;
    }
    for (const item of ready) decide(item, true);
    pending = pending.filter((item) => !ready.includes(item));
  }
}

// ---------------------------------------------------------------------------------------------
// Older image types: annotation, pointannotation, lineannotation, polygonannotation.

/**
 * The labels of the shapes drawn: every entry of `objects_to_annotate` at least once, a few more.
 * Without `with_labels` the worker draws one kind at a time, so shapes come grouped by kind.
 */
function drawnLabels(rng: SeededRandom, params: Params): string[] {
  const objects = asStrings(params.objects_to_annotate);
  const labels = coveringLabels(rng, objects, objects.length + rng.int(0, 2));
  if (asBoolean(params.with_labels, false)) return labels;
  return labels.sort((a, b) => objects.indexOf(a) - objects.indexOf(b));
}

// A linked attribute of the older types names the linked annotation by its index (AnnotationAttribute).
const byIndex = <T>(_element: T, index: number) => index;

function boxAnnotationResponse(params: Params, rng: SeededRandom): Schemas['AnnotationResponse'] {
  const bounds = shapeBounds(params);
  const canvas = canvasFor('box', bounds);
  const boxes = drawnLabels(rng, params).map((label) => ({ ...randomBox(rng, canvas, bounds), label }));
  return { annotations: withAttributes(rng, params.annotation_attributes, boxes, byIndex, (box) => box) };
}

function pointAnnotationResponse(params: Params, rng: SeededRandom): Schemas['PointAnnotationResponse'] {
  const points = drawnLabels(rng, params).map((label) => ({ label, ...randomPoint(rng, NOMINAL_IMAGE) }));
  return { annotations: withAttributes(rng, params.annotation_attributes, points, byIndex, () => undefined) };
}

function lineAnnotationResponse(params: Params, rng: SeededRandom): Schemas['LineAnnotationResponse'] {
  const bounds = shapeBounds(params);
  const spline = asBoolean(params.splines, false);
  const lines = drawnLabels(rng, params).map((label) => ({
    label,
    vertices: randomPolyline(rng, NOMINAL_IMAGE, vertexCount(rng, bounds, [2, 6])),
    ...(spline ? { spline: true } : {}),
  }));
  return { annotations: withAttributes(rng, params.annotation_attributes, lines, byIndex, () => undefined) };
}

function polygonAnnotationResponse(params: Params, rng: SeededRandom): Schemas['PolygonAnnotationResponse'] {
  const bounds = shapeBounds(params);
  const polygons = drawnLabels(rng, params).map((label) => ({
    label,
    vertices: randomPolygon(rng, NOMINAL_IMAGE, vertexCount(rng, bounds, [3, 8])),
  }));
  return { annotations: withAttributes(rng, params.annotation_attributes, polygons, byIndex, () => undefined) };
}

// ---------------------------------------------------------------------------------------------
// segmentannotation

/** `#rrggbb` of a combined-mask index: an odd multiplier permutes 24-bit values, so no two indexes share a color. */
function maskColor(index: number): string {
  return `#${(Math.imul(index, 0x9e3779) & 0xffffff).toString(16).padStart(6, '0')}`;
}

function segmentAnnotationResponse(params: Params, rng: SeededRandom, seed: string): Schemas['SegmentAnnotationResponse'] {
  const maskUrl = (name: string) => `${SYNTHETIC_MASK_ORIGIN}/${encodeURIComponent(seed)}/${name}.png`;
  const labels = asStrings(params.labels);
  // A name in both lists is rejected on creation; should one get here, its plain mask wins.
  const instanceLabels = asStrings(params.instance_labels).filter((label) => !labels.includes(label));
  // Combined-mask indexes count from 1: the labels in order, then each instance (SegmentLabelMappingEntry).
  const plainIndexes = labels.map((_, i) => i + 1);
  let lastIndex = labels.length;
  const instanceIndexes = instanceLabels.map(() => range(rng.int(0, 3)).map(() => (lastIndex += 1)));
  const entry = (index: number) => ({ color: maskColor(index), index });
  const mask = (index: number) => maskUrl(`mask-${index}`);
  // Keyed by labels the client chose, so built with fromEntries (a label may even be `__proto__`).
  const byLabel = <T>(plain: (index: number) => T, instance: (indexes: number[]) => T) =>
    Object.fromEntries([
      ...labels.map((label, i) => [label, plain(plainIndexes[i] as number)] as const),
      ...instanceLabels.map((label, i) => [label, instance(instanceIndexes[i] ?? [])] as const),
    ]);
  const leftUnlabeled = asBoolean(params.allow_unlabeled, false) && rng.chance(0.5);
  return {
    annotations: {
      unlabeled: leftUnlabeled ? maskUrl('unlabeled') : null,
      labeled: byLabel<string | string[]>(mask, (indexes) => indexes.map(mask)),
      combined: { image: maskUrl('combined'), indexedImage: maskUrl('combined-indexed') },
    },
    labelMapping: byLabel<Schemas['SegmentLabelMappingEntry'] | Schemas['SegmentLabelMappingEntry'][]>(entry, (indexes) =>
      indexes.map(entry),
    ),
    instances: Object.fromEntries(instanceLabels.map((label, i) => [label, instanceIndexes[i]?.length ?? 0])),
  };
}

// ---------------------------------------------------------------------------------------------
// categorization, comparison, datacollection, transcription, audiotranscription

function categorizationResponse(params: Params, rng: SeededRandom): Schemas['CategorizationResponse'] {
  const categories = asStrings(params.categories);
  const ids = Object.entries(asRecord(params.category_ids));
  const idOf = (category: string) => ids.find(([, named]) => named === category)?.[0];
  const hasIds = ids.length > 0;
  if (asBoolean(params.allow_multiple, false)) {
    const chosen = rng.sample(categories, rng.int(1, categories.length));
    const chosenIds = chosen.map(idOf).filter((id): id is string => id !== undefined);
    return { category: chosen, ...(hasIds ? { category_id: chosenIds } : {}) };
  }
  const category = categories.length > 0 ? rng.pick(categories) : '';
  const id = idOf(category);
  return { category, ...(hasIds && id !== undefined ? { category_id: id } : {}) };
}

/** A free-text answer for each key of a FieldDescriptions dictionary. */
function fillIn(rng: SeededRandom, descriptions: unknown): Record<string, string> {
  return Object.fromEntries(Object.keys(asRecord(descriptions)).map((key) => [key, phrase(rng, 1, 4)]));
}

// The generated types of these two responses collapse to `unknown` (their schemas end in anyOf),
// so the shapes are spelled out here.
type ComparisonResponse = { choice?: string; fields?: Record<string, string> };
type TranscriptionResponse = { fields?: Record<string, string>; repeatable_fields?: Array<Record<string, string>> };

function comparisonResponse(params: Params, rng: SeededRandom): ComparisonResponse {
  const choices = asStrings(params.choices);
  const hasFields = isRecord(params.fields);
  return {
    ...(choices.length > 0 ? { choice: rng.pick(choices) } : {}),
    // The response needs one of the two; a task with neither (rejected on creation) gets empty fields.
    ...(hasFields || choices.length === 0 ? { fields: fillIn(rng, params.fields) } : {}),
  };
}

function dataCollectionResponse(params: Params, rng: SeededRandom): Schemas['DataCollectionResponse'] {
  return { fields: fillIn(rng, params.fields), time_spent_in_seconds: rng.int(30, 600) };
}

function transcriptionResponse(params: Params, rng: SeededRandom): TranscriptionResponse {
  const hasFields = isRecord(params.fields);
  const repeatable = isRecord(params.repeatable_fields) ? Object.entries(params.repeatable_fields) : undefined;
  // Each repeatable key is described by text (free answer) or by {description, choices} (pick one).
  const occurrence = (entries: [string, unknown][]) =>
    Object.fromEntries(
      entries.map(([key, described]) => {
        const choices = asStrings(asRecord(described).choices);
        return [key, choices.length > 0 ? rng.pick(choices) : phrase(rng, 1, 3)];
      }),
    );
  return {
    ...(hasFields || !repeatable ? { fields: fillIn(rng, params.fields) } : {}),
    ...(repeatable ? { repeatable_fields: range(rng.int(0, 3)).map(() => occurrence(repeatable)) } : {}),
  };
}

function audioTranscriptionResponse(_params: Params, rng: SeededRandom): Schemas['AudioTranscriptionResponse'] {
  const count = rng.int(1, 4);
  const slot = NOMINAL_AUDIO_SECONDS / count;
  const segments = range(count).map((i) => {
    const start = round1(i * slot + rng.next() * slot * 0.2);
    return { start_seconds: start, end_seconds: round1(start + slot * (0.5 + rng.next() * 0.3)), text: `${phrase(rng, 3, 8)}.` };
  });
  return { transcript: segments.map((s) => s.text).join(' '), segments };
}

// ---------------------------------------------------------------------------------------------
// imageannotation and videoplaybackannotation: several geometries, each with its own labels.

interface GeometryPlan {
  kind: GeometryKind;
  label: string;
  bounds: ShapeBounds;
}

/** Which shapes to draw: for each geometry given, each of its labels at least once, a few more. */
function geometryPlans(rng: SeededRandom, geometries: unknown): GeometryPlan[] {
  const given = asRecord(geometries);
  return GEOMETRY_KINDS.flatMap((kind) => {
    const spec = given[kind];
    if (!isRecord(spec)) return [];
    const labels = asStrings(spec.objects_to_annotate);
    const bounds = shapeBounds(spec);
    return coveringLabels(rng, labels, labels.length + rng.int(0, 1)).map((label) => ({ kind, label, bounds }));
  });
}

/** The box an `offset` attribute measures: box shapes only. */
const boxOfShape = (shape: Shape): Size | undefined => (shape.type === 'box' ? shape : undefined);

function imageAnnotationResponse(params: Params, rng: SeededRandom): Schemas['ImageAnnotationResponse'] {
  const drawn = geometryPlans(rng, params.geometries).map((plan) => {
    const shape = randomShape(rng, plan.kind, canvasFor(plan.kind, plan.bounds), plan.bounds);
    return { uuid: rng.uuid(), label: plan.label, shape };
  });
  const annotations = withAttributes(
    rng,
    params.annotation_attributes,
    drawn,
    (a) => a.uuid,
    (a) => boxOfShape(a.shape),
  );
  return {
    annotations: annotations.map(({ uuid, label, attributes, shape }) => ({
      uuid,
      label,
      ...(attributes ? { attributes } : {}),
      ...shape,
    })),
  };
}

/** How many frames the worker sees: one per frame image, or the nominal video sampled at `frame_rate`. */
function frameCount(params: Params): number {
  const frames = listLength(params.attachments);
  if (frames > 0 && params.attachment_type !== 'video' && typeof params.attachment !== 'string') return frames;
  return NOMINAL_VIDEO_SECONDS * clamp(asCount(params.frame_rate, 1, 1), 1, 60);
}

/** Vertices one track carries over its frames at most, beyond the first frame's shape. */
const TRACK_VERTICES = 1000;

/**
 * A run of consecutive frames in which the object is visible, moving a little from frame to
 * frame (moving keeps its size, so the first frame's box is the box of the whole track).
 */
function trackFrames(rng: SeededRandom, plan: GeometryPlan, frames: number): { start: Shape; frames: Schemas['VideoFrameGeometry'][] } {
  const canvas = canvasFor(plan.kind, plan.bounds);
  const first = rng.int(0, frames - 1);
  // A track of large shapes stays short: the answer is bounded whatever min_vertices asks.
  const visible = rng.int(1, Math.min(5, frames - first, Math.max(1, Math.floor(TRACK_VERTICES / plan.bounds.minVertices))));
  const start = randomShape(rng, plan.kind, canvas, plan.bounds);
  const [vx, vy] = [rng.int(-8, 8), rng.int(-8, 8)];
  return {
    start,
    frames: range(visible).map((i) => {
      const { type: _kind, ...geometry } = moveWithin(start, vx * i, vy * i, canvas);
      return { frame: first + i, ...geometry };
    }),
  };
}

function videoPlaybackAnnotationResponse(params: Params, rng: SeededRandom): Schemas['VideoPlaybackAnnotationResponse'] {
  const frames = frameCount(params);
  const tracks = geometryPlans(rng, params.geometries).map((plan) => ({
    uuid: rng.uuid(),
    type: plan.kind,
    label: plan.label,
    ...trackFrames(rng, plan, frames),
  }));
  const annotations = withAttributes(
    rng,
    params.annotation_attributes,
    tracks,
    (t) => t.uuid,
    (t) => boxOfShape(t.start),
  ).map(({ start: _start, ...track }) => track);
  const events = asStrings(params.events_to_annotate)
    .map((label) => {
      const start = rng.int(0, frames - 1);
      return { label, start, end: rng.int(start, Math.min(frames - 1, start + 5)) };
    })
    .sort((a, b) => a.start - b.start);
  return { annotations, events };
}

// ---------------------------------------------------------------------------------------------
// textcollection

type FieldAnswer = Schemas['TextCollectionFieldResponse'];

interface FieldDefinition {
  type: string;
  id: string;
  definition: Params;
  minResponses: number;
  maxResponses: number;
  /** The fields of a form (FieldSets flattened: their fields answer under their own ids). */
  children: FieldDefinition[];
}

function fieldDefinitions(value: unknown): FieldDefinition[] {
  return asRecords(value).flatMap((definition): FieldDefinition[] => {
    if (definition.type === 'fieldset') return fieldDefinitions(definition.fields);
    const type = asString(definition.type);
    const id = asString(definition.field_id);
    if (type === undefined || id === undefined) return [];
    const maxResponses = asCount(definition.max_responses_required, 1, 1);
    return [
      {
        type,
        id,
        definition,
        minResponses: Math.min(asCount(definition.min_responses_required, 1, 1), maxResponses),
        maxResponses,
        children: type === 'form' ? fieldDefinitions(definition.fields) : [],
      },
    ];
  });
}

/** The answers given so far, visible to conditions and to `choices_from_field`; a form answer opens a child scope. */
class AnswerScope {
  private readonly answers = new Map<string, FieldAnswer[]>();

  constructor(private readonly parent?: AnswerScope) {}

  record(fieldId: string, answers: readonly FieldAnswer[]): void {
    this.answers.set(fieldId, [...(this.answers.get(fieldId) ?? []), ...answers]);
  }

  /** A field's answers: this scope's when it decided the field (hidden = none), else the outer scope's. */
  answersOf(fieldId: string): readonly FieldAnswer[] {
    return this.answers.get(fieldId) ?? this.parent?.answersOf(fieldId) ?? [];
  }

  ownAnswersOf(fieldId: string): readonly FieldAnswer[] {
    return this.answers.get(fieldId) ?? [];
  }

  /** The plain values in a field's answers: selected choices of a category field, or options for a select. */
  valuesOf(fieldId: string): ChoiceValue[] {
    const values = this.answersOf(fieldId).flatMap((answer): unknown[] => (Array.isArray(answer) ? answer : [answer]));
    return [...new Set(values.filter(isChoiceValue))];
  }
}

/**
 * Whether a field with these `conditions` is shown (FieldConditions): one condition set holds
 * (OR), every key of it (AND), a value or list of values selected, or with `not` none of them.
 */
export function conditionsHold(conditions: unknown, selectedIn: (fieldId: string) => readonly ChoiceValue[]): boolean {
  if (!Array.isArray(conditions) || conditions.length === 0) return true;
  const anySelected = (wanted: unknown, selected: readonly ChoiceValue[]) =>
    (Array.isArray(wanted) ? wanted : [wanted]).some((value) => selected.includes(value as ChoiceValue));
  return conditions.some(
    (set) =>
      isRecord(set) &&
      Object.entries(set).every(([fieldId, wanted]) =>
        isRecord(wanted) && 'not' in wanted ? !anySelected(wanted.not, selectedIn(fieldId)) : anySelected(wanted, selectedIn(fieldId)),
      ),
  );
}

/** The ids a field's answer (or a form's answers) depends on: condition keys and `choices_from_field`. */
function fieldNeeds(field: FieldDefinition): string[] {
  const own = [
    ...asRecords(field.definition.conditions).flatMap((set) => Object.keys(set)),
    ...(typeof field.definition.choices_from_field === 'string' ? [field.definition.choices_from_field] : []),
  ];
  return [...own, ...field.children.flatMap(fieldNeeds)];
}

const fieldOwns = (field: FieldDefinition): string[] => [field.id, ...field.children.map((child) => child.id)];

interface TextCollectionContext {
  rng: SeededRandom;
  attachmentCount: number;
}

/**
 * Answers every shown field (a test task fills in the whole form, optional fields included);
 * fields hidden by their conditions, and a select with no option to pick, are left out.
 */
function answerFields(
  context: TextCollectionContext,
  fields: readonly FieldDefinition[],
  scope: AnswerScope,
): Record<string, FieldAnswer | FieldAnswer[]> {
  const annotations = new Map<string, FieldAnswer | FieldAnswer[]>();
  // A field left out still shadows the outer scope: in a second filling of a form, a hidden
  // sibling has no answer, whatever the first filling chose.
  const leaveOut = (field: FieldDefinition) => {
    for (const id of fieldOwns(field)) scope.record(id, []);
  };
  decideInDependencyOrder(fields, fieldOwns, fieldNeeds, (field, ready) => {
    if (!ready || !conditionsHold(field.definition.conditions, (id) => scope.valuesOf(id))) return leaveOut(field);
    const count = field.maxResponses > 1 ? context.rng.int(field.minResponses, Math.min(field.maxResponses, field.minResponses + 2)) : 1;
    const answers: FieldAnswer[] = [];
    for (let i = 0; i < count; i++) {
      const answer = answerField(context, field, scope);
      if (answer === undefined) return leaveOut(field);
      answers.push(answer);
    }
    scope.record(field.id, answers);
    annotations.set(field.id, field.maxResponses > 1 ? answers : (answers[0] as FieldAnswer));
  });
  return Object.fromEntries(annotations);
}

function answerField(context: TextCollectionContext, field: FieldDefinition, scope: AnswerScope): FieldAnswer | undefined {
  const { rng } = context;
  const definition = field.definition;
  switch (field.type) {
    case 'text':
      return truncate(phrase(rng, 2, 8), asCount(definition.max_characters, 1000, 1));
    case 'boolean':
      return rng.chance(0.5);
    case 'number':
      return numberAnswer(rng, definition);
    case 'datetime':
      return datetimeAnswer(rng, asStrings(definition.include), asRecord(definition.defaults));
    case 'category': {
      const leaves = leafChoiceValues(definition.choices);
      const fewest = Math.min(asCount(definition.min_choices, 1, 1), leaves.length);
      // A few more than the fewest at most: the answer stays near the size the task asks for.
      const most = clamp(asCount(definition.max_choices, 1, 1), fewest, Math.min(leaves.length, fewest + 9));
      return leaves.length > 0 ? rng.sample(leaves, rng.int(fewest, most)) : undefined;
    }
    case 'time_range':
      return timeRangeAnswer(rng, definition);
    case 'select': {
      const options = [
        ...new Set([
          ...(Array.isArray(definition.choices) ? definition.choices.filter(isChoiceValue) : []),
          ...(typeof definition.choices_from_field === 'string' ? scope.valuesOf(definition.choices_from_field) : []),
        ]),
      ];
      return options.length > 0 ? [rng.pick(options)] : undefined;
    }
    case 'ranking_order': {
      const ranked = clamp(asCount(definition.num_items_to_rank, context.attachmentCount, 1), 1, context.attachmentCount);
      return rng.shuffle(range(context.attachmentCount)).slice(0, ranked);
    }
    case 'form': {
      const formScope = new AnswerScope(scope);
      const answer = answerFields(context, field.children, formScope);
      // Other fields' conditions may look into this form: they see the choices of every filling.
      for (const child of field.children) scope.record(child.id, formScope.ownAnswersOf(child.id));
      return answer;
    }
    default:
      return undefined;
  }
}

/** The values of the selectable choices: only choices without subchoices can be selected. */
export function leafChoiceValues(choices: unknown): ChoiceValue[] {
  const values = asRecords(choices).flatMap((choice): unknown[] =>
    Array.isArray(choice.subchoices) && choice.subchoices.length > 0 ? leafChoiceValues(choice.subchoices) : [choice.value],
  );
  return [...new Set(values.filter(isChoiceValue))];
}

/** Digits after the decimal point of a number as JavaScript writes it (at most 10). */
function decimalsOf(value: number | undefined): number {
  if (value === undefined) return 0;
  const fraction = String(value).split('.')[1] ?? '';
  return Math.min(10, /e/i.test(String(value)) ? 10 : fraction.length);
}

/** A decimal string `^-?[0-9]+(\.[0-9]+)?$`: no exponent, no trailing zeros, no `-0`. */
function formatDecimal(value: number, decimals: number): string {
  const text = Math.abs(value) >= 1e21 ? BigInt(Math.round(value)).toString() : value.toFixed(decimals);
  const trimmed = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  return trimmed === '-0' ? '0' : trimmed;
}

/**
 * A number answer as a decimal string, within `min` and `max` when given, on the slider's grid
 * (`min` + k·`step`) when there is a lower bound to count from.
 */
function numberAnswer(rng: SeededRandom, definition: Params): string {
  const min = asNumber(definition.min);
  const givenMax = asNumber(definition.max);
  const max = min !== undefined && givenMax !== undefined ? Math.max(min, givenMax) : givenMax;
  const givenStep = asNumber(definition.step);
  const step = givenStep !== undefined && givenStep > 0 ? givenStep : 1;
  const decimals = Math.max(decimalsOf(min), decimalsOf(max), decimalsOf(step));
  if (min === undefined && max === undefined) return String(rng.int(0, 100));
  if (min === undefined) return formatDecimal((max as number) - rng.int(0, 20) * step, decimals);
  const steps = max === undefined ? 20 : Math.min(Math.floor((max - min) / step + 1e-9), 1_000_000);
  let k = rng.int(0, steps);
  // Rounding to the grid's decimals can step over max only through float error; step back then.
  while (k > 0 && max !== undefined && Number(formatDecimal(min + k * step, decimals)) > max) k -= 1;
  return formatDecimal(min + k * step, decimals);
}

const DATE_PARTS = ['year', 'month', 'day', 'hour', 'minute'] as const;
type DatePart = (typeof DATE_PARTS)[number];

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * The included parts of a valid date and time. Pre-filled `defaults` are kept, as a worker would
 * keep them, except a day the month lacks (`{month: 2, day: 31}`), which becomes its last day.
 */
function datetimeAnswer(rng: SeededRandom, include: readonly string[], defaults: Params): Schemas['TextCollectionDatetimeValue'] {
  const preset = (part: DatePart, lo: number, hi: number) => {
    const value = asNumber(defaults[part]);
    return value !== undefined && Number.isInteger(value) && value >= lo && value <= hi && include.includes(part) ? value : undefined;
  };
  // Without a year, month and day are checked against a leap year: a yearless date may be 29 February.
  const year = preset('year', 1, 9999) ?? (include.includes('year') ? rng.int(2000, 2030) : 2000);
  const presetDay = preset('day', 1, 31);
  const longEnough = range(12)
    .map((m) => m + 1)
    .filter((m) => daysInMonth(year, m) >= (presetDay ?? 1));
  const month = preset('month', 1, 12) ?? rng.pick(longEnough);
  const value: Record<DatePart, number> = {
    year,
    month,
    day: Math.min(presetDay ?? rng.int(1, daysInMonth(year, month)), daysInMonth(year, month)),
    hour: preset('hour', 0, 23) ?? rng.int(0, 23),
    minute: preset('minute', 0, 59) ?? rng.int(0, 59),
  };
  return Object.fromEntries(DATE_PARTS.filter((part) => include.includes(part)).map((part) => [part, value[part]]));
}

const SECONDS_PER_DAY = 86400;

/** A range moved from the field's default by whole increments, inside 0..86400 and in order. */
function timeRangeAnswer(rng: SeededRandom, definition: Params): Schemas['TextCollectionTimeRangeValue'] {
  const pair = Array.isArray(definition.default_seconds) ? definition.default_seconds : definition.defaults_seconds;
  const ends = (Array.isArray(pair) ? pair : [0, 0]).map((v) => clamp(asNumber(v) ?? 0, 0, SECONDS_PER_DAY));
  const [from0, to0] = [Math.min(ends[0] ?? 0, ends[1] ?? 0), Math.max(ends[0] ?? 0, ends[1] ?? 0)];
  const step = clamp(asNumber(definition.increment_seconds) ?? 1, 1, 3600);
  const shift = (lo: number, hi: number) => rng.int(Math.max(lo, -5), Math.min(hi, 5));
  const from = from0 + shift(-Math.floor(from0 / step), Math.floor((to0 - from0) / step)) * step;
  const to = to0 + shift(-Math.floor((to0 - from) / step), Math.floor((SECONDS_PER_DAY - to0) / step)) * step;
  const seconds = (v: number) => clamp(Math.round(v * 1000) / 1000, 0, SECONDS_PER_DAY);
  return { from_seconds: seconds(from), to_seconds: Math.max(seconds(from), seconds(to)) };
}

function textCollectionResponse(params: Params, rng: SeededRandom): Schemas['TextCollectionResponse'] {
  const context = { rng, attachmentCount: Math.max(1, asRecords(params.attachments).length) };
  return { annotations: answerFields(context, fieldDefinitions(params.fields), new AnswerScope()) };
}

// ---------------------------------------------------------------------------------------------
// namedentityrecognition

interface EntityLabel {
  name: string;
  /** Attribute name → the option values to pick from. */
  attributes: Array<[string, string[]]>;
}

/** Every label of the tree, parents and children alike (each can be assigned). */
function entityLabels(value: unknown): EntityLabel[] {
  return asRecords(value).flatMap((label): EntityLabel[] => {
    const name = asString(label.name);
    const attributes = Object.entries(asRecord(label.attributes)).map(([attribute, definition]): [string, string[]] => [
      attribute,
      asRecords(asRecord(definition).options)
        .map((o) => asString(o.value))
        .filter((v): v is string => !!v),
    ]);
    return [...(name ? [{ name, attributes }] : []), ...entityLabels(label.children)];
  });
}

/** The words of the text as [start, end) offsets in code points (the unit of NER offsets). */
function wordSpans(codePoints: readonly string[]): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  let start = -1;
  codePoints.forEach((c, i) => {
    const blank = /\s/u.test(c);
    if (!blank && start < 0) start = i;
    if (blank && start >= 0) {
      spans.push({ start, end: i });
      start = -1;
    }
  });
  if (start >= 0) spans.push({ start, end: codePoints.length });
  return spans;
}

function namedEntityRecognitionResponse(params: Params, rng: SeededRandom): Schemas['NamedEntityRecognitionResponse'] {
  const codePoints = Array.from(asString(params.text) ?? '');
  const labels = entityLabels(params.labels);
  const words = wordSpans(codePoints);
  const count = labels.length === 0 ? 0 : Math.min(words.length, Math.max(labels.length, rng.int(1, 3)));
  const chosenWords = rng.sample(words, count);
  const assigned = coveringLabels(
    rng,
    labels.map((l) => l.name),
    count,
  );
  const annotations = chosenWords.map(({ start, end }, i) => {
    const label = labels.find((l) => l.name === assigned[i]) as EntityLabel;
    const attributes = Object.fromEntries(
      label.attributes.filter(([, values]) => values.length > 0).map(([name, values]) => [name, rng.pick(values)]),
    );
    return {
      id: `a${i + 1}`,
      start,
      end,
      text: codePoints.slice(start, end).join(''),
      label: label.name,
      ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
    };
  });

  // One relationship per definition whose ends can be found among the spans (two distinct spans).
  const relationships: Schemas['NamedEntityRecognitionRelationship'][] = [];
  for (const definition of asRecords(params.relationships)) {
    const fits = (wanted: unknown) => annotations.filter((a) => typeof wanted !== 'string' || a.label === wanted);
    const sources = rng.shuffle(fits(definition.source_label));
    const targets = rng.shuffle(fits(definition.target_label));
    const source = sources.find((s) => targets.some((t) => t.id !== s.id));
    const target = targets.find((t) => t.id !== source?.id);
    if (!source || !target) continue;
    const name = asString(definition.name);
    relationships.push({ id: `r${relationships.length + 1}`, source_ref: source.id, target_ref: target.id, ...(name ? { name } : {}) });
  }
  return { annotations, relationships };
}

// ---------------------------------------------------------------------------------------------
// documenttranscription

const PAGE_MARGIN = 36;

function documentTranscriptionResponse(params: Params, rng: SeededRandom): Schemas['DocumentTranscriptionResponse'] {
  const page = params.attachment_type === 'image' ? NOMINAL_IMAGE : NOMINAL_PDF_PAGE;
  // Each feature is transcribed as a region of its `type` (a line by default), labelled with its
  // `label` (or the deprecated `name` of tasks stored before).
  const features = asRecords(params.features).flatMap((f) => {
    const label = asString(f.label ?? f.name);
    const type: 'block' | 'line' | 'word' = f.type === 'block' ? 'block' : f.type === 'word' ? 'word' : 'line';
    return label ? [{ label, type }] : [];
  });
  const bodyLines = range(rng.int(1, 3)).map(() => phrase(rng, 2, 6));
  // The page count is unknown, and every document has a first page: all regions go on page 1,
  // in rows from top to bottom (reading order): one per feature, then a block of body text and its lines.
  const rows = features.length + bodyLines.length;
  const rowHeight = Math.min(20, (page.height - 2 * PAGE_MARGIN) / rows);
  const textHeight = round1(rowHeight * 0.7);
  const maxWidth = page.width - 2 * PAGE_MARGIN;
  const region = (type: 'block' | 'line' | 'word', row: number, text: string, width: number, lines = 1) => ({
    type,
    text,
    page: 1,
    left: PAGE_MARGIN,
    top: round1(PAGE_MARGIN + row * rowHeight),
    width,
    height: round1(rowHeight * (lines - 1) + textHeight),
  });
  const someWidth = () => rng.decimal(maxWidth * 0.3, maxWidth);
  const featureLines = features.map(({ label, type }, row) => ({
    ...region(type, row, `${phrase(rng, 1, 2)} ${rng.int(100, 9999)}`, someWidth()),
    label,
  }));
  const block = region('block', features.length, bodyLines.join('\n'), someWidth(), bodyLines.length);
  const lines = bodyLines.map((text, i) => region('line', features.length + i, text, block.width));
  return { annotations: [...featureLines, block, ...lines] };
}

// ---------------------------------------------------------------------------------------------
// lidarsegmentation

function lidarSegmentationResponse(params: Params, rng: SeededRandom): Schemas['LidarSegmentationResponse'] {
  const labels = asStrings(params.labels);
  const frames = range(listLength(params.attachments)).map((frame) => {
    // Each label once when the frame has room for all of them; the rest random, some unlabeled (-1).
    const covering = range(Math.min(labels.length, NOMINAL_LIDAR_POINTS));
    const rest = range(NOMINAL_LIDAR_POINTS - covering.length).map(() => rng.int(-1, labels.length - 1));
    return { frame, point_labels: rng.shuffle([...covering, ...rest]) };
  });
  return { labels, frames };
}
