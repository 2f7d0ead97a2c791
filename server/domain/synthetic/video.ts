// Test mode's synthetic answers (synthetic.ts): videoplaybackannotation, tracks of shapes over the
// frames the worker sees, and events.
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import { asCount, distinctStrings, list } from '../../../shared/json.ts';
import { withAttributes } from './attributes.ts';
import { boxOfShape, canvasFor, type GeometryPlan, geometryPlans, moveWithin, randomShape, type Shape } from './geometry.ts';
import { NOMINAL_VIDEO_SECONDS } from './nominal.ts';
import { clamp, range, type SeededRandom } from './random.ts';

type Schemas = components['schemas'];

/** How many frames the worker sees: one per frame image, or the nominal video sampled at `frame_rate`. */
function frameCount(params: Json): number {
  const frames = list(params.attachments).length;
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

export function videoPlaybackAnnotationResponse(params: Json, rng: SeededRandom): Schemas['VideoPlaybackAnnotationResponse'] {
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
  const events = distinctStrings(params.events_to_annotate)
    .map((label) => {
      const start = rng.int(0, frames - 1);
      return { label, start, end: rng.int(start, Math.min(frames - 1, start + 5)) };
    })
    .sort((a, b) => a.start - b.start);
  return { annotations, events };
}
