// Test mode's synthetic answers (synthetic.ts): the image types. The older ones draw one kind of
// shape (annotation, pointannotation, lineannotation, polygonannotation); imageannotation draws
// several geometries, each with its own labels.
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import { asBoolean, distinctStrings } from '../../../shared/json.ts';
import { withAttributes } from './attributes.ts';
import {
  boxOfShape,
  canvasFor,
  geometryPlans,
  randomBox,
  randomPoint,
  randomPolygon,
  randomPolyline,
  randomShape,
  shapeBounds,
  vertexCount,
} from './geometry.ts';
import { NOMINAL_IMAGE } from './nominal.ts';
import { coveringLabels, type SeededRandom } from './random.ts';

type Schemas = components['schemas'];

/**
 * The labels of the shapes drawn: every entry of `objects_to_annotate` at least once, a few more.
 * Without `with_labels` the worker draws one kind at a time, so shapes come grouped by kind.
 */
function drawnLabels(rng: SeededRandom, params: Json): string[] {
  const objects = distinctStrings(params.objects_to_annotate);
  const labels = coveringLabels(rng, objects, objects.length + rng.int(0, 2));
  if (asBoolean(params.with_labels, false)) return labels;
  return labels.sort((a, b) => objects.indexOf(a) - objects.indexOf(b));
}

// A linked attribute of the older types names the linked annotation by its index (AnnotationAttribute).
const byIndex = <T>(_element: T, index: number) => index;

export function boxAnnotationResponse(params: Json, rng: SeededRandom): Schemas['AnnotationResponse'] {
  const bounds = shapeBounds(params);
  const canvas = canvasFor('box', bounds);
  const boxes = drawnLabels(rng, params).map((label) => ({ ...randomBox(rng, canvas, bounds), label }));
  return { annotations: withAttributes(rng, params.annotation_attributes, boxes, byIndex, (box) => box) };
}

export function pointAnnotationResponse(params: Json, rng: SeededRandom): Schemas['PointAnnotationResponse'] {
  const points = drawnLabels(rng, params).map((label) => ({ label, ...randomPoint(rng, NOMINAL_IMAGE) }));
  return { annotations: withAttributes(rng, params.annotation_attributes, points, byIndex, () => undefined) };
}

export function lineAnnotationResponse(params: Json, rng: SeededRandom): Schemas['LineAnnotationResponse'] {
  const bounds = shapeBounds(params);
  const spline = asBoolean(params.splines, false);
  const lines = drawnLabels(rng, params).map((label) => ({
    label,
    vertices: randomPolyline(rng, NOMINAL_IMAGE, vertexCount(rng, bounds, [2, 6])),
    ...(spline ? { spline: true } : {}),
  }));
  return { annotations: withAttributes(rng, params.annotation_attributes, lines, byIndex, () => undefined) };
}

export function polygonAnnotationResponse(params: Json, rng: SeededRandom): Schemas['PolygonAnnotationResponse'] {
  const bounds = shapeBounds(params);
  const polygons = drawnLabels(rng, params).map((label) => ({
    label,
    vertices: randomPolygon(rng, NOMINAL_IMAGE, vertexCount(rng, bounds, [3, 8])),
  }));
  return { annotations: withAttributes(rng, params.annotation_attributes, polygons, byIndex, () => undefined) };
}

export function imageAnnotationResponse(params: Json, rng: SeededRandom): Schemas['ImageAnnotationResponse'] {
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
