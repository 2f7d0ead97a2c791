// The contract's "Test-mode responses" rules (its info section, both generations): what a
// synthetic answer holds beyond its schema, on stand-in media (1024×768 images, 612×792-point PDF
// pages, 10-second videos, 30-second audio, 32-point lidar frames). One check per creation
// operation: a few tasks whose parameters use every feature of the type, each created several
// times (each task_id draws its own answer), and every rule of the type checked on each answer.
import { loadContract } from '../contract.ts';
import { operationsOfBothGenerations } from '../core-checks.ts';
import { isRecord, operationKind } from '../fixtures.ts';
import { expectThat, type Check } from '../types.ts';
import { createTask, settledTask, SINK } from './helpers.ts';
import { inlineResultFiles } from './result-files.ts';
import { textCollectionProblems } from './test-mode-text-collection.ts';
import { textCollectionCases } from './test-mode-text-collection-cases.ts';

const area = 'Test mode';
type Params = Record<string, any>;
type Rule = { cases: Params[]; problems: (task: any) => string[] };

/** How many tasks of each case are created: each draws its own answer. */
const COPIES = 4;
const IMAGE = { width: 1024, height: 768 };
const PDF_PAGE = { width: 612, height: 792 };
const VIDEO_SECONDS = 10;
const AUDIO_SECONDS = 30;
const LIDAR_POINTS = 32;
const MASK_ORIGIN = 'https://synthetic-masks.humantask.invalid/';

// ---------------------------------------------------------------------------------------------
// Reading params and answers.

const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;
const bool = (v: unknown) => v === true || (typeof v === 'string' && v.toLowerCase() === 'true');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const show = (v: unknown) => JSON.stringify(v);

/** Problems with the labels of `annotations`: each from `labels`, each of `labels` used at least once. */
function labelProblems(at: string, annotations: any[], labels: string[]): string[] {
  const problems: string[] = [];
  for (const [i, a] of annotations.entries())
    if (!labels.includes(a.label)) problems.push(`${at}/${i}/label ${show(a.label)} is not one of ${show(labels)}`);
  for (const label of labels)
    if (!annotations.some((a) => a.label === label))
      problems.push(`${at}: label ${show(label)} is never used (every listed label should be)`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Geometry.

interface Bounds {
  minWidth: number;
  minHeight: number;
  minVertices: number;
  maxVertices: number;
}
function boundsOf(spec: Params): Bounds {
  return {
    minWidth: num(spec.min_width) ?? 0,
    minHeight: num(spec.min_height) ?? 0,
    minVertices: num(spec.min_vertices) ?? 1,
    maxVertices: num(spec.max_vertices) ?? Infinity,
  };
}

function inside(at: string, x: unknown, y: unknown, width = IMAGE.width, height = IMAGE.height): string[] {
  if (typeof x !== 'number' || typeof y !== 'number') return [`${at}: x and y should be numbers`];
  return x >= 0 && x <= width && y >= 0 && y <= height ? [] : [`${at} (${x}, ${y}) lies outside the ${width}×${height} image`];
}

/** A shape's problems: inside the image (a box on a canvas widened by its minimum size), its size and vertex bounds. */
function shapeProblems(at: string, kind: string, s: any, b: Bounds): string[] {
  switch (kind) {
    case 'box': {
      const [w, h] = [Math.max(IMAGE.width, b.minWidth), Math.max(IMAGE.height, b.minHeight)];
      const problems = [
        ...inside(`${at} top-left`, s.left, s.top, w, h),
        ...inside(`${at} bottom-right`, s.left + s.width, s.top + s.height, w, h),
      ];
      if (!(s.width >= b.minWidth && s.height >= b.minHeight))
        problems.push(`${at} is ${s.width}×${s.height}, below min_width × min_height ${b.minWidth}×${b.minHeight}`);
      return problems;
    }
    case 'point':
      return inside(at, s.x, s.y);
    case 'ellipse': {
      const r = Math.max(s.rx, s.ry);
      return s.rx >= 0 && s.ry >= 0
        ? [
            ...inside(`${at} (rotated, top-left reach)`, s.x - r, s.y - r),
            ...inside(`${at} (rotated, bottom-right reach)`, s.x + r, s.y + r),
          ]
        : [`${at}: negative radius`];
    }
    case 'cuboid':
      return [...list(s.vertices).flatMap((v, i) => inside(`${at}/vertices/${i}`, v.x, v.y)), ...cuboidProblems(at, list(s.vertices))];
    default: {
      const vertices = list(s.vertices);
      const problems = vertices.flatMap((v, i) => inside(`${at}/vertices/${i}`, v.x, v.y));
      if (vertices.length < b.minVertices || vertices.length > b.maxVertices)
        problems.push(`${at} has ${vertices.length} vertices, outside min_vertices..max_vertices ${b.minVertices}..${b.maxVertices}`);
      if (kind === 'polygon' && crossesItself(vertices)) problems.push(`${at} crosses itself: ${show(vertices)}`);
      return problems;
    }
  }
}

/** The front face's four corners form an upright rectangle; the side's two corners come together or not at all. */
function cuboidProblems(at: string, vertices: any[]): string[] {
  const corner = (d: string) => vertices.find((v) => v.description === d);
  const [tl, bl, tr, br] = ['face-topleft', 'face-bottomleft', 'face-topright', 'face-bottomright'].map(corner);
  const sides = vertices.filter((v) => String(v.description).startsWith('side-')).length;
  const problems: string[] = [];
  if (!tl || !bl || !tr || !br) return [`${at} lacks a corner of its front face`];
  if (!(tl.x === bl.x && tr.x === br.x && tl.y === tr.y && bl.y === br.y && tl.x < tr.x && tl.y < bl.y))
    problems.push(`${at}: the front face is not an upright rectangle: ${show([tl, bl, tr, br])}`);
  if (!(vertices.length === 4 + sides && (sides === 0 || (sides === 2 && corner('side-topcorner') && corner('side-bottomcorner')))))
    problems.push(`${at} should have the four face corners and both side corners or none: ${show(vertices.map((v) => v.description))}`);
  const [st, sb] = [corner('side-topcorner'), corner('side-bottomcorner')];
  if (st && sb && !(st.x - tr.x === sb.x - br.x && st.y - tr.y === sb.y - br.y))
    problems.push(`${at}: the side's corners should be the face's right corners moved by one offset: ${show({ tr, br, st, sb })}`);
  return problems;
}

/** Whether two edges of the closed polygon that share no vertex intersect. */
function crossesItself(vertices: Array<{ x: number; y: number }>): boolean {
  const n = vertices.length;
  const orient = (a: any, b: any, c: any) => Math.sign((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x));
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (j === i + 1 || (i === 0 && j === n - 1)) continue;
      const [a, b, c, d] = [vertices[i], vertices[(i + 1) % n], vertices[j], vertices[(j + 1) % n]];
      if (orient(a, b, c) * orient(a, b, d) < 0 && orient(c, d, a) * orient(c, d, b) < 0) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Annotation attributes.

/**
 * Problems with each annotation's `attributes`: every attribute that applies (label condition and
 * every attribute condition hold, on the annotation's own values) and can apply (offset: boxes;
 * linked: another annotation exists) has a value of its kind; no other attribute is given.
 */
function attributeProblems(
  at: string,
  definitions: unknown,
  annotations: any[],
  refOf: (a: any, i: number) => unknown,
  boxOf: (a: any) => { width: number; height: number } | undefined,
): string[] {
  if (!isRecord(definitions) || Object.keys(definitions).length === 0) {
    return annotations.flatMap((a, i) =>
      a.attributes !== undefined ? [`${at}/${i}/attributes is given, but the task has no annotation_attributes`] : [],
    );
  }
  const problems: string[] = [];
  const refs = annotations.map(refOf);
  for (const [i, a] of annotations.entries()) {
    const values: Record<string, unknown> = isRecord(a.attributes) ? a.attributes : {};
    const has = (name: string, wanted: unknown) => {
      const value = values[name];
      return (Array.isArray(value) ? value : value === undefined ? [] : [value]).some((v) => String(v) === String(wanted));
    };
    for (const name of Object.keys(values))
      if (!(name in definitions)) problems.push(`${at}/${i}/attributes/${name} is no attribute of the task`);
    for (const [name, d] of Object.entries(definitions as Record<string, any>)) {
      const kind = d.type ?? 'category';
      const wantedLabel = d.conditions?.label_condition?.label;
      const applies =
        (wantedLabel === undefined || wantedLabel === a.label) &&
        list(d.conditions?.attribute_conditions).every((c) => Object.entries(c ?? {}).every(([other, wanted]) => has(other, wanted)));
      const box = boxOf(a);
      const others = refs.filter((_, j) => j !== i);
      const possible = kind === 'offset' ? box !== undefined : kind === 'linked' ? others.length > 0 : true;
      const value = values[name];
      const where = `${at}/${i}/attributes/${name}`;
      if (!(applies && possible)) {
        if (value !== undefined) problems.push(`${where} is given, but the attribute does not apply to this ${show(a.label)} annotation`);
        continue;
      }
      if (value === undefined) {
        problems.push(`${where} is missing, but the attribute applies to this ${show(a.label)} annotation`);
        continue;
      }
      const choices = strings(d.choices);
      const ok = {
        category: () =>
          bool(d.allow_multiple)
            ? Array.isArray(value) && value.length > 0 && new Set(value).size === value.length && value.every((v) => choices.includes(v))
            : typeof value === 'string' && choices.includes(value),
        number: () => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 10,
        angle: () => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 359,
        text: () => typeof value === 'string' && value.length > 0,
        offset: () => typeof value === 'number' && value >= 0 && value <= Math.min(box!.width, box!.height),
        linked: () => others.includes(value),
      }[kind as 'category'];
      if (!ok?.())
        problems.push(
          `${where} ${show(value)} is not a ${kind} value the contract allows${kind === 'linked' ? ` (another annotation: ${show(others)})` : ''}`,
        );
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The older image types.

const attributes = {
  parked: { description: 'Is it parked?', choices: ['Yes', 'No'] },
  colours: { description: 'Which colours?', choices: ['red', 'blue', 'white'], allow_multiple: true },
  heading: { type: 'angle', description: 'Heading?' },
  passengers: { type: 'number', description: 'How many people inside?', conditions: { label_condition: { label: 'bus' } } },
  plate: { type: 'text', description: 'The plate', conditions: { attribute_conditions: [{ parked: 'Yes' }] } },
  towing: { type: 'linked', description: 'What tows it?', conditions: { attribute_conditions: [{ parked: 'No', colours: 'red' }] } },
  never: {
    description: 'Never asked',
    choices: ['x'],
    conditions: { label_condition: { label: 'car' }, attribute_conditions: [{ parked: 'maybe' }] },
  },
};

function olderImageRule(kind: 'box' | 'point' | 'line' | 'polygon', cases: Params[]): Rule {
  return {
    cases,
    problems(task) {
      const p = task.params;
      const annotations = list(task.response?.annotations);
      const labels = strings(p.objects_to_annotate);
      const b = boundsOf(p);
      const problems = [...labelProblems('response/annotations', annotations, labels)];
      annotations.forEach((a, i) => {
        problems.push(...shapeProblems(`response/annotations/${i}`, kind, a, b));
      });
      if (!bool(p.with_labels)) {
        const order = annotations.map((a) => labels.indexOf(a.label));
        if (order.some((o, i) => i > 0 && o < order[i - 1]!))
          problems.push(
            `without with_labels the annotations should come grouped by label in the order of objects_to_annotate; the labels come ${show(annotations.map((a) => a.label))}`,
          );
      }
      if (kind === 'line') {
        for (const [i, a] of annotations.entries())
          if ((a.spline === true) !== bool(p.splines))
            problems.push(`response/annotations/${i}/spline is ${show(a.spline)}, the task's splines is ${show(p.splines ?? false)}`);
      }
      problems.push(
        ...attributeProblems(
          'response/annotations',
          p.annotation_attributes,
          annotations,
          (_, i) => i,
          (a) => (kind === 'box' ? a : undefined),
        ),
      );
      return problems;
    },
  };
}

const image = (name: string) => `https://example.com/conformance/${name}.jpg`;
const vehicles = ['car', 'truck', 'bus'];

// ---------------------------------------------------------------------------------------------
// imageannotation and videoplaybackannotation.

const allGeometries = {
  box: { objects_to_annotate: ['car', 'truck'], min_width: 1100, min_height: 40 },
  // min_width and min_height apply to boxes only: the other shapes stay inside the 1024×768 image.
  polygon: { objects_to_annotate: ['sidewalk'], min_vertices: 5, max_vertices: 6, min_width: 1200, min_height: 900 },
  line: { objects_to_annotate: ['lane'], min_vertices: 2, max_vertices: 3, min_width: 1200, min_height: 900 },
  point: { objects_to_annotate: ['light', 'sign'], min_width: 1200, min_height: 900 },
  cuboid: { objects_to_annotate: ['van', 'crate', 'lorry', 'container'], min_width: 1200, min_height: 900 },
  ellipse: { objects_to_annotate: ['wheel', 'ball', 'lamp'], min_width: 1200, min_height: 900 },
};
const newerAttributes = {
  ...attributes,
  width_seen: { type: 'offset', description: 'Visible width', conditions: { label_condition: { label: 'car' } } },
  passengers: { type: 'number', description: 'How many people inside?', conditions: { label_condition: { label: 'van' } } },
};

/** Problems common to imageannotation and video tracks: kinds and labels per geometry. */
function geometryLabelProblems(at: string, annotations: any[], geometries: Params): string[] {
  const problems: string[] = [];
  for (const [i, a] of annotations.entries()) {
    if (!isRecord(geometries[a.type])) problems.push(`${at}/${i}/type ${show(a.type)} is no geometry of the task`);
    else if (!strings(geometries[a.type].objects_to_annotate).includes(a.label))
      problems.push(`${at}/${i}: label ${show(a.label)} is not one of the ${a.type} geometry's labels`);
  }
  for (const [kind, spec] of Object.entries(geometries)) {
    for (const label of strings(spec?.objects_to_annotate))
      if (!annotations.some((a) => a.type === kind && a.label === label))
        problems.push(`${at}: no ${kind} labelled ${show(label)} (each geometry's labels should each be used)`);
  }
  const uuids = annotations.map((a) => a.uuid);
  if (new Set(uuids).size !== uuids.length) problems.push(`${at}: uuids repeat`);
  return problems;
}

const imageAnnotationRule: Rule = {
  cases: [
    { attachment: image('street'), geometries: allGeometries, annotation_attributes: newerAttributes },
    {
      attachment: image('street-2'),
      geometries: { box: { objects_to_annotate: ['car'] }, ellipse: { objects_to_annotate: ['wheel', 'hub'] } },
      annotation_attributes: { seen: { type: 'offset', description: 'Seen part' } },
    },
  ],
  problems(task) {
    const p = task.params;
    const annotations = list(task.response?.annotations);
    const problems = geometryLabelProblems('response/annotations', annotations, p.geometries);
    for (const [i, a] of annotations.entries())
      problems.push(...shapeProblems(`response/annotations/${i}`, a.type, a, boundsOf(p.geometries?.[a.type] ?? {})));
    problems.push(
      ...attributeProblems(
        'response/annotations',
        p.annotation_attributes,
        annotations,
        (a) => a.uuid,
        (a) => (a.type === 'box' ? a : undefined),
      ),
    );
    return problems;
  },
};

const videoRule: Rule = {
  cases: [
    {
      attachment: 'https://example.com/conformance/drive.mp4',
      attachment_type: 'video',
      frame_rate: 3,
      geometries: allGeometries,
      events_to_annotate: ['lane change', 'stop', 'turn'],
      annotation_attributes: newerAttributes,
    },
    {
      attachments: [image('f0'), image('f1'), image('f2')],
      attachment_type: 'image',
      geometries: { ellipse: { objects_to_annotate: ['ball'] }, box: { objects_to_annotate: ['player'] } },
      events_to_annotate: ['goal'],
    },
  ],
  problems(task) {
    const p = task.params;
    const frameImages = list(p.attachments).length > 0 && p.attachment_type !== 'video' && typeof p.attachment !== 'string';
    const frames = frameImages ? list(p.attachments).length : VIDEO_SECONDS * Math.min(60, Math.max(1, Math.ceil(num(p.frame_rate) ?? 1)));
    const tracks = list(task.response?.annotations);
    const problems = geometryLabelProblems('response/annotations', tracks, p.geometries);
    for (const [i, t] of tracks.entries()) {
      const seen = list(t.frames);
      if (seen.length === 0) problems.push(`response/annotations/${i} has no frame`);
      for (const [j, f] of seen.entries()) {
        const at = `response/annotations/${i}/frames/${j}`;
        if (!(Number.isInteger(f.frame) && f.frame >= 0 && f.frame < frames))
          problems.push(`${at}/frame ${show(f.frame)} is not one of the ${frames} frames (0..${frames - 1})`);
        if (j > 0 && f.frame !== seen[j - 1].frame + 1)
          problems.push(`${at}/frame ${f.frame} does not follow frame ${seen[j - 1].frame}: a track covers consecutive frames`);
        problems.push(...shapeProblems(at, t.type, f, boundsOf(p.geometries?.[t.type] ?? {})));
      }
    }
    problems.push(
      ...attributeProblems(
        'response/annotations',
        p.annotation_attributes,
        tracks,
        (t) => t.uuid,
        (t) => (t.type === 'box' ? t.frames?.[0] : undefined),
      ),
    );
    const events = list(task.response?.events);
    for (const [i, e] of events.entries()) {
      if (!strings(p.events_to_annotate).includes(e.label))
        problems.push(`response/events/${i}/label ${show(e.label)} is not one of events_to_annotate`);
      if (!(Number.isInteger(e.start) && Number.isInteger(e.end) && e.start >= 0 && e.start <= e.end && e.end < frames))
        problems.push(`response/events/${i} [${e.start}, ${e.end}] is not within the ${frames} frames with start ≤ end`);
      if (i > 0 && e.start < events[i - 1].start)
        problems.push(`response/events/${i} starts before the event before it: events are ordered by start`);
    }
    return problems;
  },
};

// ---------------------------------------------------------------------------------------------
// The other types.

/** Problems when `given` does not answer exactly the keys of `fields` with text. */
function fieldsAnswered(at: string, fields: unknown, given: unknown): string[] {
  const keys = isRecord(fields) ? Object.keys(fields) : [];
  const answered = isRecord(given) ? given : {};
  return [
    ...keys
      .filter((k) => !(typeof answered[k] === 'string' && answered[k].length > 0))
      .map((k) => `${at}/${k} is not answered (every key of fields should be)`),
    ...Object.keys(answered)
      .filter((k) => !keys.includes(k))
      .map((k) => `${at}/${k} answers no key of fields`),
  ];
}

const categorizationRule: Rule = {
  cases: [
    {
      attachment_type: 'text',
      attachment: 'My invoice is wrong.',
      categories: ['billing', 'support', 'sales', 'other'],
      allow_multiple: true,
      category_ids: { b: 'billing', s: 'support', x: 'sales' },
    },
    {
      attachment_type: 'text',
      attachment: 'Where is my parcel?',
      categories: ['billing', 'support'],
      category_ids: { b: 'billing', s: 'support' },
    },
  ],
  problems(task) {
    const p = task.params;
    const r = task.response ?? {};
    const categories = strings(p.categories);
    const ids: Record<string, string> = isRecord(p.category_ids) ? (p.category_ids as Record<string, string>) : {};
    const idOf = (c: string) => Object.keys(ids).find((k) => ids[k] === c);
    const chosen: unknown[] = bool(p.allow_multiple) ? (Array.isArray(r.category) ? r.category : [null]) : [r.category];
    const problems: string[] = [];
    if (bool(p.allow_multiple) && !(Array.isArray(r.category) && r.category.length > 0 && new Set(r.category).size === r.category.length))
      problems.push('response/category should be a non-empty list of distinct categories (allow_multiple)');
    if (!chosen.every((c) => categories.includes(c as string)))
      problems.push(`response/category ${show(r.category)} is not from ${show(categories)}`);
    if (Object.keys(ids).length > 0) {
      const wanted = chosen.map((c) => idOf(c as string)).filter((id) => id !== undefined);
      const given = bool(p.allow_multiple) ? r.category_id : r.category_id === undefined ? [] : [r.category_id];
      if (!(Array.isArray(given) && given.length === wanted.length && given.every((id, i) => id === wanted[i])))
        problems.push(`response/category_id ${show(r.category_id)} should be the ids of the chosen categories ${show(wanted)}`);
    } else if (r.category_id !== undefined) problems.push('response/category_id is given, but the task has no category_ids');
    return problems;
  },
};

const comparisonRule: Rule = {
  cases: [
    {
      attachment_type: 'text',
      attachments: ['Hello!', 'What?'],
      choices: ['first', 'second'],
      fields: { why: 'Why?', tone: 'Which tone?' },
    },
  ],
  problems(task) {
    const p = task.params;
    const r = task.response ?? {};
    return [
      ...(strings(p.choices).length > 0 && !strings(p.choices).includes(r.choice)
        ? [`response/choice ${show(r.choice)} is not one of choices`]
        : []),
      ...fieldsAnswered('response/fields', p.fields, r.fields),
    ];
  },
};

const dataCollectionRule: Rule = {
  cases: [
    {
      attachment_type: 'website',
      attachment: 'https://example.com/conformance/shop',
      fields: { phone: 'Phone number', hours: 'Opening hours', owner: 'Owner' },
    },
  ],
  problems: (task) => fieldsAnswered('response/fields', task.params.fields, task.response?.fields),
};

const transcriptionRule: Rule = {
  cases: [
    {
      attachment_type: 'image',
      attachment: image('invoice'),
      fields: { number: 'Invoice number', total: 'Total' },
      repeatable_fields: { item: 'Item', unit: { description: 'Unit', choices: ['piece', 'kg', 'hour'] } },
    },
  ],
  problems(task) {
    const p = task.params;
    const r = task.response ?? {};
    const problems = fieldsAnswered('response/fields', p.fields, r.fields);
    const repeatable: Record<string, any> = isRecord(p.repeatable_fields) ? p.repeatable_fields : {};
    const entries = r.repeatable_fields;
    if (!(Array.isArray(entries) && entries.length <= 3))
      problems.push(`response/repeatable_fields should be a list of 0 to 3 entries, is ${show(entries)}`);
    for (const [i, entry] of list(entries).entries()) {
      for (const [key, described] of Object.entries(repeatable)) {
        const choices = strings(described?.choices);
        const value = entry?.[key];
        if (!(typeof value === 'string' && value.length > 0) || (choices.length > 0 && !choices.includes(value)))
          problems.push(
            `response/repeatable_fields/${i}/${key} ${show(value)} should be ${choices.length ? `one of ${show(choices)}` : 'text'}`,
          );
      }
      for (const key of Object.keys(entry ?? {}))
        if (!(key in repeatable)) problems.push(`response/repeatable_fields/${i}/${key} is no repeatable key`);
    }
    return problems;
  },
};

const audioRule: Rule = {
  cases: [{ attachment_type: 'audio', attachment: 'https://example.com/conformance/call.mp3' }],
  problems(task) {
    const segments = list(task.response?.segments);
    const problems: string[] = [];
    if (segments.length === 0) problems.push('response/segments is empty');
    for (const [i, s] of segments.entries()) {
      if (!(s.start_seconds >= 0 && s.start_seconds < s.end_seconds && s.end_seconds <= AUDIO_SECONDS))
        problems.push(`response/segments/${i} [${s.start_seconds}, ${s.end_seconds}] is not a span inside the ${AUDIO_SECONDS} seconds`);
      const next = segments[i + 1];
      if (next && s.end_seconds > next.start_seconds) problems.push(`response/segments/${i} ends after the next segment starts`);
    }
    const transcript = segments.map((s) => s.text).join(' ');
    if (task.response?.transcript !== transcript)
      problems.push(`response/transcript should be the segments' texts joined by spaces: ${show(transcript)}`);
    return problems;
  },
};

const segmentationRule: Rule = {
  cases: [
    { attachment: image('scene'), labels: ['road', 'sky', 'building'], instance_labels: ['car', 'person'], allow_unlabeled: true },
    { attachment: image('scene-2'), labels: ['water'], instance_labels: ['boat'], allow_unlabeled: false },
  ],
  problems(task) {
    const p = task.params;
    const r = task.response ?? {};
    const labels = strings(p.labels);
    const instanceLabels = strings(p.instance_labels);
    const problems: string[] = [];
    const isMask = (url: unknown) => typeof url === 'string' && url.startsWith(MASK_ORIGIN) && url.length > MASK_ORIGIN.length;
    const a = r.annotations ?? {};
    const urls = [a.unlabeled, a.combined?.image, a.combined?.indexedImage, ...Object.values(a.labeled ?? {}).flat()].filter(
      (u) => u !== null,
    );
    if (new Set(urls).size !== urls.length) problems.push(`response/annotations: each mask should have its own URL, got ${show(urls)}`);
    if (!(bool(p.allow_unlabeled) ? a.unlabeled === null || isMask(a.unlabeled) : a.unlabeled === null))
      problems.push(
        `response/annotations/unlabeled ${show(a.unlabeled)} should be null${bool(p.allow_unlabeled) ? ' or a mask URL' : ' (allow_unlabeled is false)'}`,
      );
    if (!isMask(a.combined?.image) || !isMask(a.combined?.indexedImage))
      problems.push(`response/annotations/combined should hold mask URLs under ${MASK_ORIGIN}`);
    const labeled = a.labeled ?? {};
    const mapping = r.labelMapping ?? {};
    const instances = r.instances ?? {};
    const expectedKeys = [...labels, ...instanceLabels].sort();
    for (const [name, dict] of [
      ['labeled', labeled],
      ['labelMapping', mapping],
    ] as const) {
      if (show(Object.keys(dict).sort()) !== show(expectedKeys))
        problems.push(
          `response/${name === 'labeled' ? 'annotations/labeled' : name} should have a key for each label and instance label: ${show(expectedKeys)}`,
        );
    }
    labels.forEach((label, i) => {
      if (!isMask(labeled[label])) problems.push(`response/annotations/labeled/${label} should be a mask URL`);
      if (mapping[label]?.index !== i + 1)
        problems.push(`response/labelMapping/${label}/index should be ${i + 1} (labels numbered from 1 in their order)`);
    });
    let next = labels.length + 1;
    for (const label of instanceLabels) {
      const masks = labeled[label];
      const entries = mapping[label];
      if (!(Array.isArray(masks) && masks.every(isMask)))
        problems.push(`response/annotations/labeled/${label} should be a list of mask URLs`);
      if (instances[label] !== list(masks).length || list(entries).length !== list(masks).length)
        problems.push(
          `response/instances/${label} ${show(instances[label])} should count the ${list(masks).length} masks, and labelMapping should have as many entries`,
        );
      for (const [j, e] of list(entries).entries())
        if (e?.index !== next++)
          problems.push(`response/labelMapping/${label}/${j}/index should be ${next - 1} (instances numbered after the labels, in order)`);
    }
    const colors = Object.values(mapping)
      .flatMap((e: any) => (Array.isArray(e) ? e : [e]))
      .map((e: any) => e?.color);
    if (!colors.every((c) => typeof c === 'string' && /^#[0-9a-f]{6}$/i.test(c)) || new Set(colors).size !== colors.length)
      problems.push(`response/labelMapping: each entry should have its own #rrggbb color, got ${show(colors)}`);
    return problems;
  },
};

// ---------------------------------------------------------------------------------------------
// namedentityrecognition, documenttranscription, lidarsegmentation (newer types only).

const nerRule: Rule = {
  cases: [
    {
      text: 'Acme  Corp hired Jane Doe 🙂 as CFO in Berlin, Germany.',
      labels: [
        {
          name: 'PERSON',
          display_name: 'Person',
          attributes: {
            role: {
              type: 'select',
              display_name: 'Role',
              options: [
                { value: 'executive', display_name: 'Executive' },
                { value: 'employee', display_name: 'Employee' },
              ],
            },
          },
        },
        { name: 'ORG', display_name: 'Organization' },
        {
          name: 'LOCATION',
          display_name: 'Location',
          children: [
            { name: 'CITY', display_name: 'City' },
            { name: 'COUNTRY', display_name: 'Country' },
          ],
        },
      ],
      relationships: [
        { name: 'works_for', display_name: 'works for', is_directed: true, source_label: 'PERSON', target_label: 'ORG' },
        { name: 'in', display_name: 'in', source_label: 'CITY', target_label: 'COUNTRY' },
        { name: 'near', display_name: 'near' },
      ],
    },
  ],
  problems(task) {
    const text = [...String(task.params.text ?? '')];
    const flat = (labels: any[]): any[] => labels.flatMap((l) => [l, ...flat(list(l.children))]);
    const labels = flat(list(task.params.labels));
    const names = labels.map((l) => l.name);
    const spans = list(task.response?.annotations);
    const problems: string[] = [];
    const blank = (c: string | undefined) => c === undefined || /\s/u.test(c);
    for (const [i, s] of spans.entries()) {
      if (!(blank(text[s.start - 1]) && blank(text[s.end]) && !text.slice(s.start, s.end).some((c) => blank(c))))
        problems.push(`response/annotations/${i} [${s.start}, ${s.end}) is not a whole word of the text`);
      const label = labels.find((l) => l.name === s.label);
      if (!label) problems.push(`response/annotations/${i}/label ${show(s.label)} is no label of the tree`);
      for (const [name, d] of Object.entries<any>(label?.attributes ?? {})) {
        const options = list(d.options).map((o) => o.value);
        if (options.length > 0 && !options.includes(s.attributes?.[name]))
          problems.push(
            `response/annotations/${i}/attributes/${name} ${show(s.attributes?.[name])} is not one of the options ${show(options)}`,
          );
      }
    }
    const words = text.join('').split(/\s+/u).filter(Boolean).length;
    if (words >= names.length)
      for (const name of names)
        if (!spans.some((s) => s.label === name))
          problems.push(`label ${name} is never used, and the text has enough words for every label`);
    const relationships = list(task.response?.relationships);
    for (const d of list(task.params.relationships)) {
      const fits = (wanted: unknown) => spans.filter((s) => typeof wanted !== 'string' || s.label === wanted);
      const possible = fits(d.source_label).some((s) => fits(d.target_label).some((t) => t.id !== s.id));
      const given = relationships.filter((r) => r.name === d.name);
      if (possible && given.length !== 1)
        problems.push(`relationship ${show(d.name)}: ${given.length} given, one expected (there are two spans it can join)`);
      if (!possible && given.length > 0) problems.push(`relationship ${show(d.name)} is given, but no two spans have its labels`);
    }
    return problems;
  },
};

const documentRule: Rule = {
  cases: [
    {
      attachment: 'https://example.com/conformance/invoice.pdf',
      attachment_type: 'pdf',
      features: [{ label: 'invoice_number', description: 'The number' }, { type: 'word', label: 'total' }, { name: 'address' }],
    },
    { attachment: image('receipt'), attachment_type: 'image', features: [{ name: 'total' }] },
  ],
  problems(task) {
    const p = task.params;
    const page = p.attachment_type === 'image' ? IMAGE : PDF_PAGE;
    const regions = list(task.response?.annotations);
    // A feature is named by `label` (`name` is its deprecated alias); its region has its `type`, `line` by default.
    const features = list(p.features).map((f) => ({ label: f.label ?? f.name, type: f.type ?? 'line' }));
    const problems: string[] = [];
    for (const [i, r] of regions.entries()) {
      const at = `response/annotations/${i}`;
      if (r.page !== 1) problems.push(`${at}/page is ${show(r.page)}, every region is on page 1`);
      problems.push(
        ...inside(`${at} top-left`, r.left, r.top, page.width, page.height),
        ...inside(`${at} bottom-right`, r.left + r.width, r.top + r.height, page.width, page.height),
      );
      if (i > 0 && r.top < regions[i - 1].top) problems.push(`${at} lies above the region before it (regions go from top to bottom)`);
    }
    features.forEach(({ label, type }, i) => {
      if (regions[i]?.type !== type || regions[i]?.label !== label)
        problems.push(`response/annotations/${i} should be the ${type} of feature ${show(label)}`);
    });
    const block = regions[features.length];
    const lines = regions.slice(features.length + 1);
    if (block?.type !== 'block') problems.push(`response/annotations/${features.length} should be the block of body text`);
    else {
      if (lines.length === 0 || !lines.every((l) => l.type === 'line' && l.width === block.width))
        problems.push('the block should be followed by its lines, as wide as the block');
      if (block.text !== lines.map((l) => l.text).join('\n'))
        problems.push("the block's text should be its lines' texts joined by newlines");
    }
    return problems;
  },
};

const lidarRule: Rule = {
  cases: [
    {
      attachments: [
        'https://example.com/conformance/0.json',
        'https://example.com/conformance/1.json',
        'https://example.com/conformance/2.json',
      ],
      attachment_type: 'json',
      labels: ['road', 'car', 'tree', 'person'],
    },
  ],
  problems(task) {
    const labels = strings(task.params.labels);
    const frames = list(task.response?.frames);
    const problems: string[] = [];
    if (show(task.response?.labels) !== show(labels)) problems.push("response/labels should be the task's labels");
    if (frames.length !== list(task.params.attachments).length)
      problems.push(
        `response/frames has ${frames.length} entries, one per frame attachment (${list(task.params.attachments).length}) expected`,
      );
    for (const [i, f] of frames.entries()) {
      const points = list(f.point_labels);
      if (f.frame !== i) problems.push(`response/frames/${i}/frame should be ${i}`);
      if (points.length !== LIDAR_POINTS)
        problems.push(`response/frames/${i} labels ${points.length} points, a frame holds ${LIDAR_POINTS}`);
      if (!points.every((l) => Number.isInteger(l) && l >= -1 && l < labels.length))
        problems.push(`response/frames/${i}/point_labels should be indexes into labels or -1`);
      for (const [j, label] of labels.entries())
        if (!points.includes(j)) problems.push(`response/frames/${i}: label ${show(label)} (${j}) is never used`);
    }
    return problems;
  },
};

const rules: Record<string, Rule> = {
  annotation: olderImageRule('box', [
    {
      attachment: image('street'),
      objects_to_annotate: vehicles,
      min_width: 1100,
      min_height: 40,
      annotation_attributes: {
        ...attributes,
        width_seen: { type: 'offset', description: 'Visible width', conditions: { attribute_conditions: [{ parked: 'No' }] } },
      },
    },
    { attachment: image('street-2'), objects_to_annotate: ['car', 'truck'], with_labels: true, min_width: 20, min_height: 20 },
  ]),
  pointannotation: olderImageRule('point', [
    { attachment: image('faces'), objects_to_annotate: vehicles, annotation_attributes: attributes },
  ]),
  lineannotation: olderImageRule('line', [
    { attachment: image('road'), objects_to_annotate: ['lane', 'curb'], splines: true, min_vertices: 3, max_vertices: 4 },
    { attachment: image('road-2'), objects_to_annotate: ['lane'], splines: false, annotation_attributes: attributes },
  ]),
  polygonannotation: olderImageRule('polygon', [
    {
      attachment: image('roofs'),
      objects_to_annotate: ['roof', 'chimney', 'bus'],
      min_vertices: 5,
      max_vertices: 6,
      annotation_attributes: attributes,
    },
  ]),
  imageannotation: imageAnnotationRule,
  videoplaybackannotation: videoRule,
  segmentannotation: segmentationRule,
  categorization: categorizationRule,
  comparison: comparisonRule,
  datacollection: dataCollectionRule,
  transcription: transcriptionRule,
  audiotranscription: audioRule,
  namedentityrecognition: nerRule,
  textcollection: { cases: textCollectionCases(), problems: textCollectionProblems },
  documenttranscription: documentRule,
  lidarsegmentation: lidarRule,
};

export const testModeRuleChecks: Check[] = operationsOfBothGenerations()
  .filter(({ operationId, generations }) => operationKind(loadContract(generations[0]!).byId.get(operationId)!) === 'task-creation')
  .flatMap(({ operationId, generations }) => {
    const type = loadContract(generations[0]!).byId.get(operationId)!.path.split('/').pop()!;
    const rule = rules[type];
    if (!rule) return [];
    return [
      {
        id: `test-mode/rules/${operationId}`,
        area,
        seed: '5 Authentication (3: test mode); the contract\'s "Test-mode responses" rules',
        rule: `A test-mode ${type} task, whatever features its parameters use, completes with an answer that follows the contract's test-mode rules for the type.`,
        kind: 'behaviour' as const,
        generations,
        async run(ctx) {
          const created = [];
          for (const body of rule.cases)
            for (let i = 0; i < COPIES; i++)
              created.push(await createTask(ctx, type, { callback_url: SINK, instruction: 'Follow the test-mode rules.', ...body }));
          for (const [i, { task_id }] of created.entries()) {
            // A response kept as files (a video's, decision record 24) is checked with its files read.
            const task = await inlineResultFiles(ctx, await settledTask(ctx, task_id, ['completed']));
            const problems = rule.problems(task);
            expectThat(problems.length === 0, `case ${Math.floor(i / COPIES) + 1} (task ${task_id}): ${problems.join('; ')}`, {
              params: task.params,
              response: task.response,
            });
          }
        },
      },
    ];
  });
