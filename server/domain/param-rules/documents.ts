// Parameter rules (param-rules.ts) of documenttranscription: feature labels (and their deprecated
// alias `name`), unique, and pre-labels naming them.
import type { Json } from '../model.ts';
import { isRecord, records, show } from '../../../shared/json.ts';
import { at, first, type Problem, repeated } from './problems.ts';

/** A document feature's label: `label`, or the deprecated `name` of tasks and projects made before. */
const featureLabel = (feature: Json): unknown => feature.label ?? feature.name;

/** The features as they are stored and shown: `label` (a deprecated `name` becomes it). */
export function labelledFeatures(features: unknown): unknown {
  if (!Array.isArray(features)) return features;
  return features.map((f: unknown) => {
    if (!isRecord(f) || f.name === undefined) return f;
    const { name: _alias, ...rest } = f;
    return { ...rest, label: featureLabel(f) };
  });
}

export function documentTranscription(params: Json): Problem {
  const features = records(params.features);
  return first(
    () => {
      const i = features.findIndex((f) => f.label !== undefined && f.name !== undefined && f.label !== f.name);
      return i < 0
        ? null
        : at(
            `features/${i}/name ${show(features[i]!.name)} differs from its label ${show(features[i]!.label)} (name is the deprecated alias of label)`,
          );
    },
    () => {
      const dup = repeated(
        features.map((f, i) => ({ key: String(featureLabel(f)), path: `features/${i}/${f.label !== undefined ? 'label' : 'name'}` })),
      );
      return dup && at(`${dup.path} ${show(dup.key)} is used twice (first at ${dup.firstPath}); feature labels are unique`);
    },
    () => {
      if (!isRecord(params.hypothesis)) return null;
      const names = new Set(features.map(featureLabel));
      for (const [i, annotation] of records(params.hypothesis.annotations).entries()) {
        if (annotation.label === undefined || names.has(annotation.label)) continue;
        const path = `hypothesis/annotations/${i}/label ${show(annotation.label)}`;
        return at(
          features.length === 0
            ? `${path} names a feature, but the task has no features (pre-labels then carry no label)`
            : `${path} is not the label of one of the features`,
        );
      }
      return null;
    },
  );
}
