// Parameter rules (param-rules.ts) of the shapes to draw: vertex bounds, offsets on boxes only
// (the older image types), each geometry's bounds (imageannotation, videoplaybackannotation) and
// imageannotation's pre-labels.
import type { Json } from '../model.ts';
import { asRecord, asString, entries, isRecord, list, numeric, show } from '../../../shared/json.ts';
import { at, first, join, type Problem, seg } from './problems.ts';

/** `max_vertices` (absent or null: no bound) at least `min_vertices` (default 1). */
function vertexBounds(spec: Json, path: string): Problem {
  const max = numeric(spec.max_vertices) ?? Infinity;
  // No max_vertices: no bound, which Infinity is.
  const min = numeric(spec.min_vertices) ?? 1;
  return max < min ? at(`${join(path, 'max_vertices')} (${max}) must be at least min_vertices (${min})`) : null;
}

/**
 * `annotation_attributes` of the older single-geometry types: an `offset` attribute is measured
 * within a box, so only `annotation` (boxes) accepts it.
 */
export function offsetOnlyOnBoxes(params: Json, type: string): Problem {
  for (const [name, attribute] of entries(params.annotation_attributes)) {
    if (isRecord(attribute) && attribute.type === 'offset') {
      return at(
        `annotation_attributes/${seg(name)}/type "offset" is not accepted on ${type} tasks; an offset is measured within a box, so only annotation tasks take it`,
      );
    }
  }
  return null;
}

/** `geometries` (imageannotation, videoplaybackannotation): each geometry's vertex bounds. */
export function geometryBounds(params: Json): Problem {
  for (const [key, spec] of entries(params.geometries)) {
    if (!isRecord(spec)) continue;
    const problem = vertexBounds(spec, join('geometries', seg(key)));
    if (problem) return problem;
  }
  return null;
}

// ---- older image types ------------------------------------------------------------------------

export const lineOrPolygon = (type: string) => (params: Json) =>
  first(
    () => vertexBounds(params, ''),
    () => offsetOnlyOnBoxes(params, type),
  );

// ---- imageannotation ----------------------------------------------------------------------------

/** Pre-labels: each annotation's geometry is given, and its label is one of that geometry's labels. */
export function imageHypothesis(params: Json): Problem {
  if (!isRecord(params.hypothesis)) return null;
  const geometries = asRecord(params.geometries);
  let index = 0;
  for (const annotation of list(params.hypothesis.annotations)) {
    const path = `hypothesis/annotations/${index++}`;
    if (!isRecord(annotation)) continue;
    const type = asString(annotation.type) ?? '';
    const spec = geometries[type];
    if (!isRecord(spec))
      return at(`${path}/type ${show(type)} is not one of the task's geometries (${Object.keys(geometries).join(', ')})`);
    if (!list(spec.objects_to_annotate).includes(annotation.label)) {
      return at(`${path}/label ${show(annotation.label)} is not one of geometries/${seg(type)}/objects_to_annotate`);
    }
  }
  return null;
}

// ---- videoplaybackannotation --------------------------------------------------------------------

/**
 * Pre-labels of a video: each track's geometry is given and its label is one of that geometry's
 * labels, each event's label one of `events_to_annotate` and its end not before its start; with
 * frame images, every frame named is one of them.
 */
export function videoHypothesis(params: Json): Problem {
  if (!isRecord(params.hypothesis)) return null;
  const geometries = asRecord(params.geometries);
  const frames = Array.isArray(params.attachments) ? params.attachments.length : Infinity;
  const frameProblem = (path: string, frame: unknown) =>
    typeof frame === 'number' && frame >= frames
      ? at(`${path} ${frame} is not one of the task's frames (the ${frames} of attachments, numbered from 0)`)
      : null;
  let index = 0;
  for (const track of list(params.hypothesis.annotations)) {
    const path = `hypothesis/annotations/${index++}`;
    if (!isRecord(track)) continue;
    const type = asString(track.type) ?? '';
    const spec = geometries[type];
    if (!isRecord(spec))
      return at(`${path}/type ${show(type)} is not one of the task's geometries (${Object.keys(geometries).join(', ')})`);
    if (!list(spec.objects_to_annotate).includes(track.label)) {
      return at(`${path}/label ${show(track.label)} is not one of geometries/${seg(type)}/objects_to_annotate`);
    }
    let f = 0;
    for (const frame of list(track.frames)) {
      const problem = frameProblem(`${path}/frames/${f++}/frame`, asRecord(frame).frame);
      if (problem) return problem;
    }
  }
  const labels = list(params.events_to_annotate);
  index = 0;
  for (const event of list(params.hypothesis.events)) {
    const path = `hypothesis/events/${index++}`;
    if (!isRecord(event)) continue;
    if (!labels.includes(event.label)) return at(`${path}/label ${show(event.label)} is not one of events_to_annotate`);
    if (typeof event.start === 'number' && typeof event.end === 'number' && event.end < event.start)
      return at(`${path}/end (${event.end}) must be at least start (${event.start})`);
    const problem = frameProblem(`${path}/end`, event.end);
    if (problem) return problem;
  }
  return null;
}
