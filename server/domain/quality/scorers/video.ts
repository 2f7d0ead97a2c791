// videoplaybackannotation: tracks and events.
// Two tracks of the same geometry and label are compared frame by frame over every frame either
// covers (between a track's first and last keyframe its shape is interpolated linearly where two
// keyframes have the same structure, else held from the earlier keyframe): the track similarity is
// the mean per-frame similarity (the image rule: IoU, or closeness for points and lines), a frame
// only one track covers counting 0. Tracks are then matched one to one (Hungarian) and scored as
// shapes are: F1 at the threshold × mean matched track similarity. Events (label, start..end
// frames) are matched per label on the overlap of their frame ranges, scored the same way. The
// score is the mean of the two parts weighted by how many items each has (the larger answer's count).
import { type Json, matchingResult, matchItems, num, partsResult, records, type ScoreResult, type Settings, str } from './common.ts';
import { type GeometryKind, kindOf, type PreparedShape, prepareShape, shapeSimilarity } from './geometry.ts';

interface Track {
  kind: GeometryKind;
  label: string;
  /** Frame number → the shape there (keyframes and the frames between them). */
  frames: Map<number, PreparedShape>;
}

/** A value halfway (t) between two JSON values of the same structure, numbers interpolated; undefined when they differ. */
function lerp(a: unknown, b: unknown, t: number): unknown {
  if (typeof a === 'number' && typeof b === 'number') return a + (b - a) * t;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return undefined;
    const out = a.map((v, i) => lerp(v, b[i], t));
    return out.includes(undefined) ? undefined : out;
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return undefined;
    const out: Json = {};
    for (const key of keys) {
      const v = lerp((a as Json)[key], (b as Json)[key], t);
      if (v === undefined) return undefined;
      out[key] = v;
    }
    return out;
  }
  return a === b ? a : undefined;
}

/** Frames a single track may cover at most (a long gap between keyframes is not filled in beyond this). */
const MAX_FRAMES = 10_000;

function readTrack(raw: Json): Track {
  const kind = kindOf(raw.type);
  const label = str(raw.label);
  const keyframes = records(raw.frames)
    .map((f) => ({ frame: Math.round(num(f.frame)), shape: f }))
    .sort((x, y) => x.frame - y.frame);
  const frames = new Map<number, PreparedShape>();
  keyframes.forEach((key, i) => {
    const next = keyframes[i + 1];
    frames.set(key.frame, prepareShape(kind, label, key.shape));
    if (!next) return;
    for (let f = key.frame + 1; f < next.frame && frames.size < MAX_FRAMES; f++) {
      const between = lerp(key.shape, next.shape, (f - key.frame) / (next.frame - key.frame));
      frames.set(f, prepareShape(kind, label, (between as Json | undefined) ?? key.shape));
    }
  });
  return { kind, label, frames };
}

function trackSimilarity(a: Track, b: Track, tolerance: number): number {
  const all = new Set([...a.frames.keys(), ...b.frames.keys()]);
  if (all.size === 0) return 1;
  let sum = 0;
  for (const f of all) {
    const x = a.frames.get(f);
    const y = b.frames.get(f);
    if (x && y) sum += shapeSimilarity(x, y, tolerance);
  }
  return sum / all.size;
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
