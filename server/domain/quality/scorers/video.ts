// videoplaybackannotation: tracks and events.
// Two tracks of the same geometry and label are compared frame by frame over every frame either
// covers (between a track's first and last keyframe its shape is interpolated linearly where two
// keyframes have the same structure, else held from the earlier keyframe): the track similarity is
// the mean per-frame similarity (the image rule: IoU, or closeness for points and lines), a frame
// only one track covers counting 0 (over a shared span longer than 256 frames, 256 frames spread
// evenly stand for it). Tracks are then matched one to one (Hungarian) and scored as
// shapes are: F1 at the threshold × mean matched track similarity. Events (label, start..end
// frames) are matched per label on the overlap of their frame ranges, scored the same way. The
// score is the mean of the two parts weighted by how many items each has (the larger answer's count).
import {
  isRecord,
  type Json,
  matchingResult,
  matchItems,
  num,
  partsResult,
  records,
  type ScoreResult,
  type Settings,
  str,
} from './common.ts';
import { type GeometryKind, kindOf, type PreparedShape, prepareShape, shapeSimilarity } from './geometry.ts';

interface Track {
  kind: GeometryKind;
  label: string;
  /** Keyframes by ascending frame number (a frame given twice: the later entry). */
  keys: Array<{ frame: number; shape: Json }>;
  first: number;
  last: number;
}

/** A value `t` of the way from a to b, numbers interpolated; undefined when the two differ in structure. */
function lerp(a: unknown, b: unknown, t: number): unknown {
  if (typeof a === 'number' && typeof b === 'number') return a + (b - a) * t;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return undefined;
    const out = a.map((v, i) => lerp(v, b[i], t));
    return out.includes(undefined) ? undefined : out;
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return undefined;
    const out: Json = {};
    for (const key of keys) {
      const v = lerp(a[key], Object.hasOwn(b, key) ? b[key] : undefined, t);
      if (v === undefined) return undefined;
      out[key] = v;
    }
    return out;
  }
  return a === b ? a : undefined;
}

/** Frame numbers are read as whole numbers within ±10⁹ (a video of a billion frames is beyond any task). */
const frameOf = (value: unknown) => Math.max(-1e9, Math.min(1e9, Math.round(num(value))));

function readTrack(raw: Json): Track {
  const byFrame = new Map<number, Json>();
  for (const f of records(raw.frames)) byFrame.set(frameOf(f.frame), f);
  const keys = [...byFrame.entries()].map(([frame, shape]) => ({ frame, shape })).sort((x, y) => x.frame - y.frame);
  return { kind: kindOf(raw.type), label: str(raw.label), keys, first: keys[0]?.frame ?? 0, last: keys.at(-1)?.frame ?? -1 };
}

/** The track's shape at a frame of its span: a keyframe, or interpolated between the two around it. */
function shapeAt(track: Track, frame: number): PreparedShape {
  let [lo, hi] = [0, track.keys.length - 1];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if ((track.keys[mid] as { frame: number }).frame <= frame) lo = mid;
    else hi = mid - 1;
  }
  const before = track.keys[lo] as { frame: number; shape: Json };
  const after = track.keys[lo + 1];
  const shape =
    before.frame === frame || !after
      ? before.shape
      : ((lerp(before.shape, after.shape, (frame - before.frame) / (after.frame - before.frame)) as Json | undefined) ?? before.shape);
  return prepareShape(track.kind, track.label, shape);
}

/** Frames compared at most per pair of tracks; a longer shared span is sampled evenly. */
const FRAMES_COMPARED = 256;

/** Mean per-frame similarity over the frames either track spans (a frame only one spans: 0). */
function trackSimilarity(a: Track, b: Track, tolerance: number): number {
  const spanA = a.last - a.first + 1;
  const spanB = b.last - b.first + 1;
  if (spanA <= 0 || spanB <= 0) return spanA <= 0 && spanB <= 0 ? 1 : 0;
  const [lo, hi] = [Math.max(a.first, b.first), Math.min(a.last, b.last)];
  if (hi < lo) return 0;
  const shared = hi - lo + 1;
  const frames =
    shared <= FRAMES_COMPARED
      ? Array.from({ length: shared }, (_, i) => lo + i)
      : Array.from({ length: FRAMES_COMPARED }, (_, i) => lo + Math.round((i * (shared - 1)) / (FRAMES_COMPARED - 1)));
  const sum = frames.reduce((s, f) => s + shapeSimilarity(shapeAt(a, f), shapeAt(b, f), tolerance), 0);
  return ((sum / frames.length) * shared) / (spanA + spanB - shared);
}

/** Inclusive frame ranges: shared frames / frames in either. */
function frameRangeIoU(a: Json, b: Json): number {
  const [s1, e1, s2, e2] = [num(a.start), num(a.end), num(b.start), num(b.end)];
  const inter = Math.max(0, Math.min(e1, e2) - Math.max(s1, s2) + 1);
  const union = e1 - s1 + 1 + (e2 - s2 + 1) - inter;
  return union <= 0 ? 0 : inter / union;
}

export function videoPlaybackAnnotation(_params: Json, a: Json, b: Json, settings: Settings): ScoreResult {
  // The read track holds a Map, which JSON leaves empty: matchItems orders the answers by their raw tracks.
  const read = (answer: Json) => records(answer.annotations).map((raw) => ({ raw, track: readTrack(raw) }));
  const [tracksA, tracksB] = [read(a), read(b)];
  const tracks = matchItems(
    tracksA,
    tracksB,
    (t) => JSON.stringify([t.track.kind, t.track.label]),
    (x, y) => trackSimilarity(x.track, y.track, settings.tolerance),
    settings.threshold,
  );
  const eventsA = records(a.events);
  const eventsB = records(b.events);
  const events = matchItems(eventsA, eventsB, (e) => str(e.label), frameRangeIoU, settings.threshold);
  return partsResult([
    { name: 'tracks', weight: Math.max(tracksA.length, tracksB.length), result: matchingResult(tracks, settings.threshold, 'tracks') },
    { name: 'events', weight: Math.max(eventsA.length, eventsB.length), result: matchingResult(events, settings.threshold, 'events') },
  ]);
}
