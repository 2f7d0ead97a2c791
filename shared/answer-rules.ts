// A worker's answer checked against the task's own params: the rules test mode's synthetic answers
// obey (synthetic.ts), one family per type: labels from the task's label lists, shapes of at least
// the minimum size with the allowed vertex counts and no negative coordinates, categories and
// choices from the task's lists, exactly the fields the task asks for, entity spans inside the
// text. The type's response schema (the contract) is checked separately, before these.
/// <reference path="./sweepline-intersections.d.ts" />
import findIntersections from 'sweepline-intersections';
import { type ChoiceValue, conditionsHold, daysInMonth, leafChoiceValues, SECONDS_PER_DAY } from './form-fields.ts';
import { asBoolean, asRecord, DECIMAL, finiteNumber, isRecord, type Json, list, records, show, strings } from './json.ts';

type Rule = (params: Json, response: Json) => string[];

/** Label names of a label list: strings, or objects naming one (`choice`, `name`) with nested lists. */
function labelNames(value: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const item of list) {
      if (typeof item === 'string') out.add(item);
      else if (isRecord(item)) {
        for (const key of ['choice', 'name', 'label']) if (typeof item[key] === 'string') out.add(item[key] as string);
        walk(item.subchoices);
        walk(item.children);
      }
    }
  };
  walk(value);
  return out;
}

function labelProblem(where: string, label: unknown, allowed: Set<string>, list: string): string | null {
  if (typeof label !== 'string' || !allowed.has(label)) return `${where}.label ${show(String(label))} is not one of the task's ${list}.`;
  return null;
}

interface ShapeSpec {
  minWidth: number;
  minHeight: number;
  minVertices: number;
  maxVertices: number | undefined;
}

const shapeSpec = (p: Json): ShapeSpec => ({
  minWidth: finiteNumber(p.min_width) ?? 0,
  minHeight: finiteNumber(p.min_height) ?? 0,
  minVertices: finiteNumber(p.min_vertices) ?? 1,
  maxVertices: finiteNumber(p.max_vertices),
});

/**
 * Why a polygon's outline is not simple, or null: two vertices at one place (a vertex clicked twice,
 * the first one repeated at the end), or edges that cross or touch (a bow-tie). Such an outline has
 * no single inside: its area, and so any score or mask made from it, is not what was meant. The
 * crossings are found by a sweep line (sweepline-intersections), in n log n for the outlines people
 * draw, so a large polygon costs no quadratic time.
 */
export function polygonProblem(vertices: { x: number; y: number }[]): string | null {
  const seen = new Map<string, number>();
  for (const [i, v] of vertices.entries()) {
    const key = `${v.x},${v.y}`;
    const first = seen.get(key);
    if (first !== undefined) return `has vertices ${first} and ${i} at the same place (${v.x}, ${v.y})`;
    seen.set(key, i);
  }
  if (vertices.length < 3) return null;
  const ring = [...vertices, vertices[0]!].map((v) => [v.x, v.y]);
  const [crossing] = findIntersections({ type: 'Polygon', coordinates: [ring] });
  return crossing ? `crosses itself at (${round2(crossing[0])}, ${round2(crossing[1])})` : null;
}
const round2 = (n: number) => Math.round(n * 100) / 100;

/** The shape rules of one annotation (`kind`: box, point, line, polygon, cuboid, ellipse). */
function shapeProblems(where: string, kind: string, a: Json, spec: ShapeSpec): string[] {
  const out: string[] = [];
  const coordinate = (name: string, value: unknown) => {
    const n = finiteNumber(value);
    if (n !== undefined && n < 0) out.push(`${where}.${name} is ${n}: coordinates lie inside the image (0 or more).`);
  };
  if (kind === 'box') {
    coordinate('left', a.left);
    coordinate('top', a.top);
    if ((finiteNumber(a.width) ?? 0) < spec.minWidth)
      out.push(`${where}.width is ${String(a.width)}, less than the task's min_width ${spec.minWidth}.`);
    if ((finiteNumber(a.height) ?? 0) < spec.minHeight)
      out.push(`${where}.height is ${String(a.height)}, less than the task's min_height ${spec.minHeight}.`);
  } else if (kind === 'point') {
    coordinate('x', a.x);
    coordinate('y', a.y);
  } else if (kind === 'ellipse') {
    coordinate('x', a.x);
    coordinate('y', a.y);
  } else {
    const vertices = records(a.vertices);
    vertices.forEach((v, i) => {
      coordinate(`vertices[${i}].x`, v.x);
      coordinate(`vertices[${i}].y`, v.y);
    });
    if (kind === 'line' || kind === 'polygon') {
      if (vertices.length < spec.minVertices)
        out.push(`${where} has ${vertices.length} vertices, fewer than the task's min_vertices ${spec.minVertices}.`);
      if (spec.maxVertices !== undefined && vertices.length > spec.maxVertices)
        out.push(`${where} has ${vertices.length} vertices, more than the task's max_vertices ${spec.maxVertices}.`);
    }
    const points = vertices.map((v) => ({ x: finiteNumber(v.x), y: finiteNumber(v.y) }));
    if (kind === 'polygon' && points.every((v): v is { x: number; y: number } => v.x !== undefined && v.y !== undefined)) {
      const bad = polygonProblem(points);
      if (bad) out.push(`${where} (a polygon) ${bad}: a polygon's outline may not cross or touch itself.`);
    }
  }
  return out;
}

/** The older single-shape types: every annotation's label from objects_to_annotate, its shape in bounds. */
const labelledShapes =
  (kind: string): Rule =>
  (params, response) => {
    const allowed = labelNames(params.objects_to_annotate);
    const spec = shapeSpec(params);
    return records(response.annotations).flatMap((a, i) => {
      const where = `response.annotations[${i}]`;
      const bad = labelProblem(where, a.label, allowed, 'objects_to_annotate');
      return [...(bad ? [bad] : []), ...shapeProblems(where, kind, a, spec)];
    });
  };

/**
 * An annotation of a task with `geometries` (imageannotation, videoplaybackannotation): its type is
 * one of them, its label one of that geometry's labels. The geometry's spec, when it is one.
 */
function geometryProblems(where: string, geometries: Json, a: Json): { spec?: Json; problems: string[] } {
  const kind = String(a.type);
  const spec = geometries[kind];
  if (!isRecord(spec))
    return { problems: [`${where}.type ${show(kind)} is not one of the task's geometries (${Object.keys(geometries).join(', ')}).`] };
  const bad = labelProblem(where, a.label, labelNames(spec.objects_to_annotate), `geometries.${kind}.objects_to_annotate`);
  return { spec, problems: bad ? [bad] : [] };
}

const imageAnnotation: Rule = (params, response) => {
  const geometries = asRecord(params.geometries);
  return records(response.annotations).flatMap((a, i) => {
    const where = `response.annotations[${i}]`;
    const { spec, problems } = geometryProblems(where, geometries, a);
    return spec ? [...problems, ...shapeProblems(where, String(a.type), a, shapeSpec(spec))] : problems;
  });
};

const categorization: Rule = (params, response) => {
  const categories = new Set(strings(params.categories));
  const multiple = params.allow_multiple === true;
  const chosen = Array.isArray(response.category) ? response.category : [response.category];
  const out: string[] = [];
  if (multiple !== Array.isArray(response.category)) {
    out.push(
      multiple
        ? 'response.category must be a list of categories (the task allows several).'
        : 'response.category must be one category (the task does not allow several).',
    );
  }
  if (multiple && chosen.length === 0) out.push('response.category names no category: choose at least one.');
  for (const c of chosen)
    if (typeof c !== 'string' || !categories.has(c)) out.push(`response.category ${show(String(c))} is not one of the task's categories.`);
  if (new Set(chosen).size !== chosen.length) out.push('response.category names a category twice.');
  return out;
};

/** Exactly the fields of a FieldDescriptions dictionary, each a string. */
function fieldProblems(where: string, asked: unknown, given: unknown): string[] {
  const answers = asRecord(given);
  // A task that asks for no fields takes none (what it was not asked would reach the customer).
  if (!isRecord(asked)) return Object.keys(answers).length > 0 ? [`${where} is given, but the task has no fields.`] : [];
  const out: string[] = [];
  for (const key of Object.keys(asked))
    if (typeof answers[key] !== 'string') out.push(`${where}.${key} is missing: the task asks for this field.`);
  for (const key of Object.keys(answers)) if (!Object.hasOwn(asked, key)) out.push(`${where}.${key} is not a field of the task.`);
  return out;
}

const comparison: Rule = (params, response) => {
  const choices = strings(params.choices);
  const out: string[] = [];
  if (choices.length > 0) {
    if (response.choice === undefined) out.push(`response.choice is missing: choose one of ${choices.map(show).join(', ')}.`);
    else if (typeof response.choice !== 'string' || !choices.includes(response.choice))
      out.push(`response.choice ${show(response.choice)} is not one of the task's choices.`);
  } else if (response.choice !== undefined) out.push('response.choice is given, but the task has no choices.');
  return [...out, ...fieldProblems('response.fields', params.fields, response.fields)];
};

const fields: Rule = (params, response) => fieldProblems('response.fields', params.fields, response.fields);

const transcription: Rule = (params, response) => [
  ...fieldProblems('response.fields', params.fields, response.fields),
  ...(isRecord(params.repeatable_fields)
    ? records(response.repeatable_fields).flatMap((row, i) =>
        fieldProblems(`response.repeatable_fields[${i}]`, params.repeatable_fields, row),
      )
    : []),
];

const namedEntityRecognition: Rule = (params, response) => {
  const text = Array.from(typeof params.text === 'string' ? params.text : '');
  const allowed = labelNames(params.labels);
  const out: string[] = [];
  const ids = new Set<string>();
  records(response.annotations).forEach((a, i) => {
    const where = `response.annotations[${i}]`;
    const start = finiteNumber(a.start);
    const end = finiteNumber(a.end);
    if (start === undefined || end === undefined || start < 0 || end > text.length || start >= end) {
      out.push(`${where} spans ${String(a.start)}..${String(a.end)}, not inside the text (0..${text.length}, start before end).`);
    } else if (typeof a.text === 'string' && a.text !== text.slice(start, end).join('')) {
      out.push(`${where}.text ${show(a.text)} is not the text at ${start}..${end}.`);
    }
    const bad = labelProblem(where, a.label, allowed, 'labels');
    if (bad) out.push(bad);
    if (typeof a.id === 'string') ids.add(a.id);
  });
  records(response.relationships).forEach((r, i) => {
    for (const end of ['source_ref', 'target_ref']) {
      if (typeof r[end] !== 'string' || !ids.has(r[end] as string))
        out.push(`response.relationships[${i}].${end} names no annotation of the response.`);
    }
  });
  return out;
};

const segmentAnnotation: Rule = (params, response) => {
  const labels = [...strings(params.labels), ...strings(params.instance_labels)];
  const annotations = asRecord(response.annotations);
  const labeled = asRecord(annotations.labeled);
  const out: string[] = [];
  for (const label of labels)
    if (!Object.hasOwn(labeled, label)) out.push(`response.annotations.labeled has no mask for the task's label ${show(label)}.`);
  for (const key of Object.keys(labeled))
    if (!labels.includes(key)) out.push(`response.annotations.labeled.${key} is not one of the task's labels.`);
  if (annotations.unlabeled !== null && annotations.unlabeled !== undefined && params.allow_unlabeled !== true) {
    out.push('response.annotations.unlabeled is given, but the task does not allow unlabeled regions (allow_unlabeled).');
  }
  return out;
};

/** Tracks as image annotations (a geometry of the task, one of its labels), events from events_to_annotate. */
const videoPlaybackAnnotation: Rule = (params, response) => {
  const geometries = asRecord(params.geometries);
  const events = new Set(strings(params.events_to_annotate));
  const out = records(response.annotations).flatMap((a, i) => geometryProblems(`response.annotations[${i}]`, geometries, a).problems);
  records(response.events).forEach((e, i) => {
    if (typeof e.label !== 'string' || !events.has(e.label))
      out.push(`response.events[${i}].label ${show(String(e.label))} is not one of the task's events_to_annotate.`);
    if ((finiteNumber(e.start) ?? 0) > (finiteNumber(e.end) ?? Infinity))
      out.push(`response.events[${i}] ends (frame ${String(e.end)}) before it starts (frame ${String(e.start)}).`);
  });
  return out;
};

/** The task's labels in order, one frame per attachment, each point's label an index into them (or -1). */
const lidarSegmentation: Rule = (params, response) => {
  const labels = strings(params.labels);
  const frames = list(params.attachments).length;
  const out: string[] = [];
  if (JSON.stringify(response.labels) !== JSON.stringify(labels))
    out.push("response.labels must be the task's labels, in the task's order.");
  records(response.frames).forEach((f, i) => {
    const frame = finiteNumber(f.frame);
    if (frame === undefined || frame < 0 || frame >= frames)
      out.push(`response.frames[${i}].frame ${String(f.frame)} is not a frame of the task (0..${frames - 1}).`);
    const badPoint = list(f.point_labels).findIndex((l) => typeof l !== 'number' || l < -1 || l >= labels.length);
    if (badPoint >= 0)
      out.push(`response.frames[${i}].point_labels[${badPoint}] is not a label index (0..${labels.length - 1}, or -1 for none).`);
  });
  return out;
};

/** Segments that end after they start. */
const audioTranscription: Rule = (_params, response) =>
  records(response.segments).flatMap((seg, i) =>
    (finiteNumber(seg.end_seconds) ?? 0) < (finiteNumber(seg.start_seconds) ?? 0)
      ? [`response.segments[${i}] ends (${String(seg.end_seconds)} s) before it starts (${String(seg.start_seconds)} s).`]
      : [],
  );

// textcollection: the field rules of test mode (synthetic.ts) for a worker's form. A field its
// conditions hide has no answer; a shown one is answered when `required` (within min/max_responses_required, as is an optional one that is answered), each
// answer within the field's bounds; a form's fillings are checked field by field.

const choiceValues = (answer: unknown): ChoiceValue[] =>
  Array.isArray(answer)
    ? answer.flatMap(choiceValues)
    : (typeof answer === 'string' && answer !== '') || typeof answer === 'number'
      ? [answer]
      : [];
const flatFields = (fields: unknown): Json[] => records(fields).flatMap((f) => (f.type === 'fieldset' ? records(f.fields) : [f]));

function fieldAnswerProblems(
  where: string,
  fields: Json[],
  answers: Json,
  outer: (id: string) => ChoiceValue[],
  attachments: number,
): string[] {
  const ids = fields.map((f) => String(f.field_id));
  const local = (id: string) => (ids.includes(id) ? choiceValues(answers[id]) : outer(id));
  const out = Object.keys(answers)
    .filter((id) => !ids.includes(id))
    .map((id) => `${where}.${id} is not a field of the task.`);
  for (const field of fields) {
    const id = String(field.field_id);
    const at = `${where}.${id}`;
    const present = Object.hasOwn(answers, id);
    if (!conditionsHold(field.conditions, local)) {
      if (present) out.push(`${at} is answered, but its conditions hide it.`);
      continue;
    }
    // A select's choices are plain values, added to by the selections of `choices_from_field`.
    const options =
      field.type === 'select'
        ? [...choiceValues(field.choices), ...(typeof field.choices_from_field === 'string' ? local(field.choices_from_field) : [])]
        : [];
    if (field.type === 'select' && options.length === 0) {
      if (present) out.push(`${at} is answered, but it has nothing to select.`);
      continue;
    }
    if (!present) {
      // Only a required field must be answered (UnitFieldCommon.required, default false).
      if (asBoolean(field.required, false)) out.push(`${at} is missing: the field is required and shown, so it needs an answer.`);
      continue;
    }
    const max = Math.max(1, finiteNumber(field.max_responses_required) ?? 1);
    const min = Math.min(Math.max(1, finiteNumber(field.min_responses_required) ?? 1), max);
    let each: unknown[] = [answers[id]];
    if (max > 1) {
      if (!Array.isArray(answers[id])) {
        out.push(`${at} must be a list of answers (${min} to ${max}).`);
        continue;
      }
      each = answers[id] as unknown[];
      if (each.length < min || each.length > max) out.push(`${at} has ${each.length} answers; the field takes ${min} to ${max}.`);
    }
    for (const [i, one] of each.entries())
      out.push(...oneAnswerProblems(max > 1 ? `${at}[${i}]` : at, field, one, options, outer, attachments));
  }
  return out;
}

function oneAnswerProblems(
  at: string,
  field: Json,
  answer: unknown,
  options: ChoiceValue[],
  outer: (id: string) => ChoiceValue[],
  attachments: number,
): string[] {
  switch (field.type) {
    case 'text': {
      const length = typeof answer === 'string' ? Array.from(answer).length : 0;
      const most = finiteNumber(field.max_characters) ?? 1000;
      return length < 1 || length > most ? [`${at} has ${length} characters; the field takes 1 to ${most}.`] : [];
    }
    case 'number': {
      const value = typeof answer === 'string' && DECIMAL.test(answer) ? Number(answer) : NaN;
      if (Number.isNaN(value)) return [`${at} is not a number written in digits.`];
      const min = finiteNumber(field.min);
      const max = finiteNumber(field.max);
      if ((min !== undefined && value < min) || (max !== undefined && value > max))
        return [`${at} is ${value}, outside the field's ${min ?? '-∞'}..${max ?? '∞'}.`];
      return [];
    }
    case 'datetime': {
      const value = asRecord(answer);
      const include = strings(field.include);
      const parts = Object.keys(value);
      if (parts.some((p) => !include.includes(p)) || include.some((p) => !parts.includes(p)))
        return [`${at} must give exactly the parts ${include.join(', ')}.`];
      const month = finiteNumber(value.month);
      const day = finiteNumber(value.day);
      if (month !== undefined && day !== undefined && day > daysInMonth(finiteNumber(value.year) ?? 2000, month))
        return [`${at}.day ${day} is not a day of month ${month}.`];
      return [];
    }
    case 'category': {
      const leaves = leafChoiceValues(field.choices);
      const selected = list(answer);
      const fewest = Math.min(finiteNumber(field.min_choices) ?? 1, leaves.length);
      const most = Math.max(fewest, Math.min(finiteNumber(field.max_choices) ?? 1, leaves.length));
      const out = selected
        .filter((v) => !leaves.includes(v as ChoiceValue))
        .map((v) => `${at} selects ${show(String(v))}, not a (leaf) choice of the field.`);
      if (new Set(selected).size !== selected.length) out.push(`${at} selects a choice twice.`);
      if (selected.length < fewest || selected.length > most)
        out.push(`${at} selects ${selected.length} choices; the field takes ${fewest} to ${most}.`);
      return out;
    }
    case 'time_range': {
      const r = asRecord(answer);
      const from = finiteNumber(r.from_seconds) ?? -1;
      const to = finiteNumber(r.to_seconds) ?? -1;
      return 0 <= from && from <= to && to <= SECONDS_PER_DAY
        ? []
        : [`${at} is not a time range within the day (0 ≤ from_seconds ≤ to_seconds ≤ 86400).`];
    }
    case 'select':
      return Array.isArray(answer) && answer.length === 1 && options.includes(answer[0] as ChoiceValue)
        ? []
        : [`${at} must select one of the field's options.`];
    case 'ranking_order': {
      const ranked = list(answer);
      const count = finiteNumber(field.num_items_to_rank) ?? attachments;
      const bad =
        ranked.some((i) => !Number.isInteger(i) || (i as number) < 0 || (i as number) >= attachments) ||
        new Set(ranked).size !== ranked.length;
      return ranked.length !== count || bad ? [`${at} must rank ${count} distinct attachments by index (0..${attachments - 1}).`] : [];
    }
    case 'form':
      return isRecord(answer)
        ? fieldAnswerProblems(at, flatFields(field.fields), answer, outer, attachments)
        : [`${at} must be a filling of the form (an object).`];
    default:
      return [];
  }
}

const textCollection: Rule = (params, response) => {
  const annotations = asRecord(response.annotations);
  // Outside a form, a field's selections count wherever it was answered (in every filling of a form).
  const everywhere = (id: string): ChoiceValue[] => [
    ...choiceValues(annotations[id]),
    ...Object.values(annotations)
      .flatMap((a) => (Array.isArray(a) ? a : [a]))
      .filter(isRecord)
      .flatMap((filling) => choiceValues(filling[id])),
  ];
  const attachments = list(params.attachments).length;
  return fieldAnswerProblems('response.annotations', flatFields(params.fields), annotations, everywhere, attachments);
};

/** Labelled regions name a feature of the task (its `label`, or the `name` of tasks stored before); no negative coordinates. */
const documentTranscription: Rule = (params, response) => {
  const features = new Set(records(params.features).flatMap((f) => [f.label, f.name].filter((x): x is string => typeof x === 'string')));
  return records(response.annotations).flatMap((a, i) => {
    const where = `response.annotations[${i}]`;
    const out =
      a.label !== undefined && (typeof a.label !== 'string' || !features.has(a.label))
        ? [`${where}.label ${show(String(a.label))} is not one of the task's features.`]
        : [];
    return [...out, ...shapeProblems(where, 'box', a, { minWidth: 0, minHeight: 0, minVertices: 1, maxVertices: undefined })];
  });
};

const rules: Record<string, Rule> = {
  annotation: labelledShapes('box'),
  pointannotation: labelledShapes('point'),
  lineannotation: labelledShapes('line'),
  polygonannotation: labelledShapes('polygon'),
  imageannotation: imageAnnotation,
  categorization,
  comparison,
  datacollection: fields,
  transcription,
  namedentityrecognition: namedEntityRecognition,
  segmentannotation: segmentAnnotation,
  videoplaybackannotation: videoPlaybackAnnotation,
  lidarsegmentation: lidarSegmentation,
  audiotranscription: audioTranscription,
  textcollection: textCollection,
  documenttranscription: documentTranscription,
};

/** The problems of an answer to this task (empty: none), each naming the response part and the rule. */
export function checkAnswer(task: { type: string; params: Json }, response: Json): string[] {
  return rules[task.type]?.(task.params, response) ?? [];
}
