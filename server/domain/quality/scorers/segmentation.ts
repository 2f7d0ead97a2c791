// Per-class IoU: segmentannotation (pixels of label masks) and lidarsegmentation (labelled points).
// The score is the mean IoU over the classes present in either answer; a class neither answer uses
// does not count, and two answers that use no class at all agree (1).
import {
  type ClassResult,
  clamp01,
  fixed,
  type Json,
  type Mask,
  mean,
  num,
  records,
  type ScoreResult,
  type Settings,
  str,
} from './common.ts';

function classesResult(classes: ClassResult[], unscored: string[], noun: string): ScoreResult {
  const present = classes.filter((c) => c.union > 0);
  const score = clamp01(mean(present.map((c) => c.iou)));
  const note = unscored.length > 0 ? `; ${unscored.length} label(s) left unscored (masks not given)` : '';
  return {
    score,
    details: {
      kind: 'classes',
      summary: `mean IoU over ${present.length} ${noun} present: ${fixed(score)}${note}`,
      classes,
      unscored,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// segmentannotation: `annotations.labeled[label]` is a mask URL (a list of them for instance
// labels, whose union is the label's area). The scorer fetches nothing: the caller passes decoded
// masks by URL (options.masks). Two answers naming the same files agree on that label without them;
// a label whose masks are missing, or of different sizes, is listed as unscored and left out.

const maskUrls = (answer: Json, label: string): string[] => {
  const labeled = (answer.annotations as Json | undefined)?.labeled as Json | undefined;
  const value = labeled && Object.hasOwn(labeled, label) ? labeled[label] : undefined;
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v.length > 0);
};

/** The union of masks as one pixel set, or undefined when one is missing or the sizes differ. */
function unionMask(urls: string[], masks: ReadonlyMap<string, Mask>): { width: number; height: number; on: Uint8Array } | undefined {
  const found = urls.map((u) => masks.get(u));
  if (found.some((m) => m === undefined)) return undefined;
  const first = found[0];
  if (!first) return { width: 0, height: 0, on: new Uint8Array(0) };
  const on = new Uint8Array(first.width * first.height);
  for (const m of found as Mask[]) {
    if (m.width !== first.width || m.height !== first.height) return undefined;
    for (let i = 0; i < on.length; i++) if (m.data[i]) on[i] = 1;
  }
  return { width: first.width, height: first.height, on };
}

export function segmentAnnotation(_params: Json, a: Json, b: Json, settings: Settings): ScoreResult {
  const labelsOf = (answer: Json) => Object.keys(((answer.annotations as Json | undefined)?.labeled as Json | undefined) ?? {});
  const labels = [...new Set([...labelsOf(a), ...labelsOf(b)])].sort();
  const classes: ClassResult[] = [];
  const unscored: string[] = [];
  for (const label of labels) {
    const [ua, ub] = [maskUrls(a, label), maskUrls(b, label)];
    if (ua.length === 0 && ub.length === 0) continue;
    const ma = unionMask(ua, settings.masks);
    const mb = unionMask(ub, settings.masks);
    const empty = (m: typeof ma) => m !== undefined && m.on.length === 0;
    if (ma && mb && (empty(ma) || empty(mb) || (ma.width === mb.width && ma.height === mb.height))) {
      let intersection = 0;
      let union = 0;
      const n = Math.max(ma.on.length, mb.on.length);
      for (let i = 0; i < n; i++) {
        const [x, y] = [ma.on[i] ?? 0, mb.on[i] ?? 0];
        if (x && y) intersection += 1;
        if (x || y) union += 1;
      }
      classes.push({ label, iou: union === 0 ? 1 : intersection / union, intersection, union });
    } else if (JSON.stringify([...ua].sort()) === JSON.stringify([...ub].sort())) {
      classes.push({ label, iou: 1, intersection: 1, union: 1 });
    } else {
      unscored.push(label);
    }
  }
  return classesResult(classes, unscored, 'labels');
}

// ---------------------------------------------------------------------------------------------
// lidarsegmentation: each frame's `point_labels[i]` is an index into `labels` (-1: none). Frames
// pair by their `frame` number; points by position. Classes are compared by label name, so the
// two answers' label lists need not be in the same order.

export function lidarSegmentation(_params: Json, a: Json, b: Json): ScoreResult {
  const namesOf = (answer: Json) => (Array.isArray(answer.labels) ? answer.labels.map(str) : []);
  const framesOf = (answer: Json) =>
    new Map(records(answer.frames).map((f) => [num(f.frame, -1), Array.isArray(f.point_labels) ? f.point_labels : []]));
  const [na, nb] = [namesOf(a), namesOf(b)];
  const [fa, fb] = [framesOf(a), framesOf(b)];
  const tally = new Map<string, { intersection: number; union: number }>();
  const count = (label: string | undefined, key: 'intersection' | 'union') => {
    if (label === undefined) return;
    const entry = tally.get(label) ?? { intersection: 0, union: 0 };
    entry[key] += 1;
    tally.set(label, entry);
  };
  const nameAt = (names: string[], index: unknown) => (typeof index === 'number' && index >= 0 ? names[index] : undefined);
  for (const frame of new Set([...fa.keys(), ...fb.keys()])) {
    const [pa, pb] = [fa.get(frame) ?? [], fb.get(frame) ?? []];
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      const [x, y] = [nameAt(na, pa[i]), nameAt(nb, pb[i])];
      if (x !== undefined && x === y) {
        count(x, 'intersection');
        count(x, 'union');
      } else {
        count(x, 'union');
        count(y, 'union');
      }
    }
  }
  const classes = [...tally.entries()]
    .sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0))
    .map(([label, { intersection, union }]): ClassResult => ({ label, iou: intersection / union, intersection, union }));
  return classesResult(classes, [], 'classes');
}
