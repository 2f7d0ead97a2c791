// Test mode's synthetic answers (synthetic.ts): the segmentation types, segmentannotation (masks
// by label, which test mode names but never paints) and lidarsegmentation (a label per point).
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import { asBoolean, distinctStrings, list } from '../../../shared/json.ts';
import { NOMINAL_LIDAR_POINTS, SYNTHETIC_MASK_ORIGIN } from './nominal.ts';
import { range, type SeededRandom } from './random.ts';

type Schemas = components['schemas'];

/** `#rrggbb` of a combined-mask index: an odd multiplier permutes 24-bit values, so no two indexes share a color. */
function maskColor(index: number): string {
  return `#${(Math.imul(index, 0x9e3779) & 0xffffff).toString(16).padStart(6, '0')}`;
}

export function segmentAnnotationResponse(params: Json, rng: SeededRandom, seed: string): Schemas['SegmentAnnotationResponse'] {
  const maskUrl = (name: string) => `${SYNTHETIC_MASK_ORIGIN}/${encodeURIComponent(seed)}/${name}.png`;
  const labels = distinctStrings(params.labels);
  // A name in both lists is rejected on creation; should one get here, its plain mask wins.
  const instanceLabels = distinctStrings(params.instance_labels).filter((label) => !labels.includes(label));
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
// lidarsegmentation

export function lidarSegmentationResponse(params: Json, rng: SeededRandom): Schemas['LidarSegmentationResponse'] {
  const labels = distinctStrings(params.labels);
  const frames = range(list(params.attachments).length).map((frame) => {
    // Each label once when the frame has room for all of them; the rest random, some unlabeled (-1).
    const covering = range(Math.min(labels.length, NOMINAL_LIDAR_POINTS));
    const rest = range(NOMINAL_LIDAR_POINTS - covering.length).map(() => rng.int(-1, labels.length - 1));
    return { frame, point_labels: rng.shuffle([...covering, ...rest]) };
  });
  return { labels, frames };
}
