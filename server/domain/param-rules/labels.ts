// Parameter rules (param-rules.ts) of label lists and trees: segmentannotation's two label lists,
// categorization's ids, namedentityrecognition's label tree and relationships.
import type { Json } from '../model.ts';
import { entries, isRecord, list, records, show } from '../../../shared/json.ts';
import { at, first, join, type Problem, repeated, seg } from './problems.ts';

/** A name is in `labels` or in `instance_labels`, never both (the response keys masks by label). */
export function segmentLabels(params: Json): Problem {
  const labels = new Set(list(params.labels));
  const index = list(params.instance_labels).findIndex((label) => labels.has(label));
  if (index < 0) return null;
  const label = list(params.instance_labels)[index];
  return at(`instance_labels/${index} ${show(label)} is also in labels; a label is either in labels or in instance_labels`);
}

/** `category_ids`: every value is one of `categories`, and no two ids name the same category. */
export function categoryIds(params: Json): Problem {
  const categories = new Set(list(params.categories));
  const idOf = new Map<unknown, string>();
  for (const [id, category] of entries(params.category_ids)) {
    const path = `category_ids/${seg(id)}`;
    if (!categories.has(category)) return at(`${path} ${show(category)} is not one of categories`);
    const other = idOf.get(category);
    if (other !== undefined)
      return at(`${path} names ${show(category)}, which the id ${show(other)} names already; two ids may not name the same category`);
    idOf.set(category, id);
  }
  return null;
}

/** Every label of the tree, children included, with its path. */
function nerLabels(labels: unknown, path: string, out: { label: Json; path: string }[] = []) {
  records(labels).forEach((label, i) => {
    const here = join(path, i);
    out.push({ label, path: here });
    nerLabels(label.children, join(here, 'children'), out);
  });
  return out;
}

export function namedEntityRecognition(params: Json): Problem {
  const labels = nerLabels(params.labels, 'labels');
  const names = new Set(labels.map(({ label }) => label.name));
  const relationships = records(params.relationships);
  return first(
    // Label names are unique across the whole tree.
    () => {
      const dup = repeated(labels.map(({ label, path }) => ({ key: String(label.name), path: `${path}/name` })));
      return (
        dup && at(`${dup.path} ${show(dup.key)} is used twice (first at ${dup.firstPath}); label names are unique across the label tree`)
      );
    },
    // Option values are unique within each attribute.
    () => {
      for (const { label, path } of labels) {
        for (const [name, attribute] of entries(label.attributes)) {
          if (!isRecord(attribute)) continue;
          const base = `${path}/attributes/${seg(name)}/options`;
          const dup = repeated(records(attribute.options).map((o, i) => ({ key: String(o.value), path: `${base}/${i}/value` })));
          if (dup) return at(`${dup.path} ${show(dup.key)} is used twice in this attribute (first at ${dup.firstPath})`);
        }
      }
      return null;
    },
    // `source_label` and `target_label` name labels of the task.
    () => {
      for (const [i, relationship] of relationships.entries()) {
        for (const end of ['source_label', 'target_label'] as const) {
          const name = relationship[end];
          if (name !== undefined && !names.has(name)) return at(`relationships/${i}/${end} ${show(name)} is not a label of the task`);
        }
      }
      return null;
    },
    // Named relationships have unique names.
    () => {
      const named = relationships.flatMap((r, i) => (typeof r.name === 'string' ? [{ key: r.name, path: `relationships/${i}/name` }] : []));
      const dup = repeated(named);
      return (
        dup && at(`${dup.path} ${show(dup.key)} is used twice (first at ${dup.firstPath}); relationship names are unique within the task`)
      );
    },
  );
}
