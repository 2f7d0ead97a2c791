// The tracks of a videoplaybackannotation answer: one object followed through the frames, its shape
// given at keyframes and interpolated in between (linearly: a box's sides, a point, an ellipse's
// centre, radii and rotation the short way round, a polygon's, line's or cuboid's vertices when both
// keyframes have as many; otherwise the earlier keyframe's shape holds). A track is visible from its
// first keyframe to its `end` (inclusive; null: to the last frame). The answer lists the track's
// shape in every frame it is visible in (VideoAnnotationTrack); the draft keeps the keyframes.
import { isRecord } from '../../../shared/json.ts';
import {
  clone,
  num,
  round,
  shapesOf,
  toElement,
  type AttributeValue,
  type Geometry,
  type Kind,
  type Pt,
  type Shape,
} from '../image/model.ts';

export interface Keyframe {
  frame: number;
  shape: Shape;
}

export interface Track {
  uuid: string;
  type: Kind;
  label: string;
  attributes?: Record<string, AttributeValue>;
  /** Ascending by frame, at least one. */
  keys: Keyframe[];
  /** The last frame the object is visible in; null: to the end. */
  end: number | null;
}

export interface VideoEvent {
  label: string;
  start: number;
  end: number;
}

const lerp = (a: number, b: number, t: number) => round(a + (b - a) * t);

function lerpPoints<P extends Pt>(a: P[], b: P[], t: number): P[] {
  return a.map((p, i) => ({ ...p, x: lerp(p.x, (b[i] as P).x, t), y: lerp(p.y, (b[i] as P).y, t) }));
}

/** The shape between two keyframes' shapes, `t` of the way from `a` to `b`. */
function interpolate(a: Shape, b: Shape, t: number): Shape {
  const out = clone(a);
  if (out.type === 'box' && b.type === 'box')
    Object.assign(out, {
      left: lerp(out.left, b.left, t),
      top: lerp(out.top, b.top, t),
      width: lerp(out.width, b.width, t),
      height: lerp(out.height, b.height, t),
    });
  else if (out.type === 'point' && b.type === 'point') Object.assign(out, { x: lerp(out.x, b.x, t), y: lerp(out.y, b.y, t) });
  else if (out.type === 'ellipse' && b.type === 'ellipse') {
    // The rotation turns the short way round, and stays in [0, 360).
    const turn = ((((b.rotation - out.rotation) % 360) + 540) % 360) - 180;
    Object.assign(out, {
      x: lerp(out.x, b.x, t),
      y: lerp(out.y, b.y, t),
      rx: lerp(out.rx, b.rx, t),
      ry: lerp(out.ry, b.ry, t),
      rotation: round((((out.rotation + turn * t) % 360) + 360) % 360) % 360,
    });
  } else if ((out.type === 'polygon' || out.type === 'line') && b.type === out.type && b.vertices.length === out.vertices.length)
    out.vertices = lerpPoints(out.vertices, b.vertices, t);
  else if (
    out.type === 'cuboid' &&
    b.type === 'cuboid' &&
    b.vertices.map((v) => v.description).join() === out.vertices.map((v) => v.description).join()
  )
    out.vertices = lerpPoints(out.vertices, b.vertices, t);
  return out;
}

/** The track's shape in frame `f` (with the track's uuid and label), or null where it is not visible. */
export function shapeAt(track: Track, f: number): Shape | null {
  const first = track.keys[0];
  if (!first || f < first.frame || (track.end !== null && f > track.end)) return null;
  let i = track.keys.length - 1;
  while (i > 0 && (track.keys[i] as Keyframe).frame > f) i--;
  const a = track.keys[i] as Keyframe;
  const b = track.keys[i + 1];
  const shape = b ? interpolate(a.shape, b.shape, (f - a.frame) / (b.frame - a.frame)) : clone(a.shape);
  return { ...shape, uuid: track.uuid, label: track.label, ...(track.attributes ? { attributes: track.attributes } : {}) } as Shape;
}

export const isKeyframe = (track: Track, f: number) => track.keys.some((k) => k.frame === f);

/** Sets the track's shape at frame `f` as a keyframe (replacing one there); a track ended before `f` goes on to it. */
export function setKeyframe(track: Track, f: number, shape: Shape): void {
  const keys = track.keys.filter((k) => k.frame !== f);
  keys.push({ frame: f, shape: clone(shape) });
  keys.sort((x, y) => x.frame - y.frame);
  track.keys = keys;
  if (track.end !== null && track.end < f) track.end = f;
}

/** The frames of the answer: the track's shape in each frame from its first keyframe to its end. */
export function trackOut(track: Track, lastFrame: number): Record<string, unknown> {
  const first = track.keys[0]?.frame ?? 0;
  const last = Math.min(track.end ?? lastFrame, lastFrame);
  const frames: Record<string, unknown>[] = [];
  for (let f = first; f <= last; f++) {
    const s = shapeAt(track, f);
    if (!s) continue;
    const { uuid: _u, type: _t, label: _l, attributes: _a, ...geometry } = toElement(s);
    frames.push({ frame: f, ...geometry });
  }
  return { uuid: track.uuid, type: track.type, label: track.label, frames };
}

/** The draft's form of a track: its keyframes as contract-like frames. */
export function trackDraft(track: Track): Record<string, unknown> {
  return {
    uuid: track.uuid,
    type: track.type,
    label: track.label,
    ...(track.attributes ? { attributes: track.attributes } : {}),
    end: track.end,
    keys: track.keys.map((k) => {
      const { uuid: _u, type: _t, label: _l, attributes: _a, ...geometry } = toElement(k.shape);
      return { frame: k.frame, ...geometry };
    }),
  };
}

/** The tracks of a draft (what is not a track of the task's geometries is left out). */
export function tracksOf(value: unknown, geometries: Geometry[]): Track[] {
  const list = isRecord(value) && Array.isArray(value.tracks) ? value.tracks : [];
  return list.flatMap((t): Track[] => {
    if (!isRecord(t) || !Array.isArray(t.keys)) return [];
    const keys = t.keys.flatMap((k): Keyframe[] => {
      if (!isRecord(k)) return [];
      const [shape] = shapesOf({ annotations: [{ ...k, uuid: t.uuid, type: t.type, label: t.label }] }, geometries);
      return shape ? [{ frame: Math.max(0, Math.round(num(k.frame))), shape }] : [];
    });
    const [parsed] = shapesOf({ annotations: [{ uuid: t.uuid, type: t.type, label: t.label, attributes: t.attributes }] }, geometries);
    if (!keys.length || !parsed) return [];
    keys.sort((x, y) => x.frame - y.frame);
    return [
      {
        uuid: parsed.uuid,
        type: parsed.type,
        label: parsed.label,
        ...(parsed.attributes ? { attributes: parsed.attributes } : {}),
        keys,
        end: t.end === null || t.end === undefined ? null : Math.max(0, Math.round(num(t.end))),
      },
    ];
  });
}

/**
 * The tracks of pre-labels (the task's `hypothesis`, in the response's form): every frame given is
 * a keyframe, and the track ends at the last one (a frame left out between two is interpolated).
 */
export function hypothesisTracks(value: unknown, geometries: Geometry[]): Track[] {
  const list = isRecord(value) && Array.isArray(value.annotations) ? value.annotations : [];
  const tracks = list.flatMap((t) => {
    if (!isRecord(t) || !Array.isArray(t.frames)) return [];
    const frames = t.frames.filter(isRecord);
    const last = Math.max(...frames.map((f) => Math.round(num(f.frame))));
    return frames.length ? [{ ...t, keys: frames, end: last }] : [];
  });
  return tracksOf({ tracks }, geometries);
}

/** The events of a draft (or of pre-labels, which have the same form). */
export function eventsOf(value: unknown, labels: readonly string[]): VideoEvent[] {
  const list = isRecord(value) && Array.isArray(value.events) ? value.events : [];
  return list.flatMap((e): VideoEvent[] =>
    isRecord(e) && typeof e.label === 'string' && labels.includes(e.label)
      ? [{ label: e.label, start: Math.max(0, Math.round(num(e.start))), end: Math.max(0, Math.round(num(e.end))) }]
      : [],
  );
}
