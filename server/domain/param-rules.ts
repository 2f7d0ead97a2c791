// The parameter rules the contract states but JSON Schema cannot express (two fields compared,
// uniqueness across a tree, one field naming another). The request body has already passed the
// contract's schema (numbers and booleans typed) and any project parameters are merged in, so the
// shapes are known; these checks only relate values to each other. Each problem is reported as
// the contract's examples report theirs: `request/body/<path> <what is wrong>`.

type Params = Record<string, unknown>;
type Problem = string | null;

// ---- small helpers ---------------------------------------------------------------------------

const isRecord = (value: unknown): value is Params => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const records = (value: unknown): Params[] => list(value).filter(isRecord);
const entries = (value: unknown): [string, unknown][] => (isRecord(value) ? Object.entries(value) : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** A number, also from a numeric string (project parameters may keep the form a client sent). */
function num(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

/** A JSON-pointer segment: `~` and `/` escaped, so that a key cannot fake a path. */
const seg = (key: string | number) => String(key).replaceAll('~', '~0').replaceAll('/', '~1');
const join = (...parts: (string | number)[]) =>
  parts
    .map((p) => (typeof p === 'number' ? String(p) : p))
    .filter((p) => p !== '')
    .join('/');
const at = (path: string) => `request/body/${path}`;
const show = (value: unknown) => JSON.stringify(value);

/** Category and select values keep their JSON type: `"3"` and `3` are different values. */
const valueKey = (value: unknown) => `${typeof value}:${String(value)}`;

/** Runs checks in order; the first problem wins. */
function first(...checks: (() => Problem)[]): Problem {
  for (const check of checks) {
    const problem = check();
    if (problem) return problem;
  }
  return null;
}

/** The first repeated key among named items: where it was seen first and where again. */
function repeated(items: { key: string; path: string }[]): { key: string; path: string; firstPath: string } | null {
  const seen = new Map<string, string>();
  for (const { key, path } of items) {
    const firstPath = seen.get(key);
    if (firstPath !== undefined) return { key, path, firstPath };
    seen.set(key, path);
  }
  return null;
}

// ---- shared structures -----------------------------------------------------------------------

/** `max_vertices` (absent or null: no bound) at least `min_vertices` (default 1). */
function vertexBounds(spec: Params, path: string): Problem {
  const max = num(spec.max_vertices) ?? Infinity;
  // No max_vertices: no bound, which Infinity is.
  const min = num(spec.min_vertices) ?? 1;
  return max < min ? at(`${join(path, 'max_vertices')} (${max}) must be at least min_vertices (${min})`) : null;
}

/**
 * `annotation_attributes` of the older single-geometry types: an `offset` attribute is measured
 * within a box, so only `annotation` (boxes) accepts it.
 */
function offsetOnlyOnBoxes(params: Params, type: string): Problem {
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
function geometryBounds(params: Params): Problem {
  for (const [key, spec] of entries(params.geometries)) {
    if (!isRecord(spec)) continue;
    const problem = vertexBounds(spec, join('geometries', seg(key)));
    if (problem) return problem;
  }
  return null;
}

// ---- older image types ------------------------------------------------------------------------

const lineOrPolygon = (type: string) => (params: Params) =>
  first(
    () => vertexBounds(params, ''),
    () => offsetOnlyOnBoxes(params, type),
  );

/** A name is in `labels` or in `instance_labels`, never both (the response keys masks by label). */
function segmentLabels(params: Params): Problem {
  const labels = new Set(list(params.labels));
  const index = list(params.instance_labels).findIndex((label) => labels.has(label));
  if (index < 0) return null;
  const label = list(params.instance_labels)[index];
  return at(`instance_labels/${index} ${show(label)} is also in labels; a label is either in labels or in instance_labels`);
}

/** `category_ids`: every value is one of `categories`, and no two ids name the same category. */
function categoryIds(params: Params): Problem {
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

// ---- imageannotation ----------------------------------------------------------------------------

/** Pre-labels: each annotation's geometry is given, and its label is one of that geometry's labels. */
function imageHypothesis(params: Params): Problem {
  if (!isRecord(params.hypothesis)) return null;
  const geometries = isRecord(params.geometries) ? params.geometries : {};
  let index = 0;
  for (const annotation of list(params.hypothesis.annotations)) {
    const path = `hypothesis/annotations/${index++}`;
    if (!isRecord(annotation)) continue;
    const type = text(annotation.type) ?? '';
    const spec = geometries[type];
    if (!isRecord(spec))
      return at(`${path}/type ${show(type)} is not one of the task's geometries (${Object.keys(geometries).join(', ')})`);
    if (!list(spec.objects_to_annotate).includes(annotation.label)) {
      return at(`${path}/label ${show(annotation.label)} is not one of geometries/${seg(type)}/objects_to_annotate`);
    }
  }
  return null;
}

// ---- namedentityrecognition ---------------------------------------------------------------------

/** Every label of the tree, children included, with its path. */
function nerLabels(labels: unknown, path: string, out: { label: Params; path: string }[] = []) {
  records(labels).forEach((label, i) => {
    const here = join(path, i);
    out.push({ label, path: here });
    nerLabels(label.children, join(here, 'children'), out);
  });
  return out;
}

function namedEntityRecognition(params: Params): Problem {
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

// ---- documenttranscription ----------------------------------------------------------------------

/** A document feature's label: `label`, or the deprecated `name` of tasks and projects made before. */
const featureLabel = (feature: Params): unknown => feature.label ?? feature.name;

/** The features as they are stored and shown: `label` (a deprecated `name` becomes it). */
export function labelledFeatures(features: unknown): unknown {
  if (!Array.isArray(features)) return features;
  return features.map((f: unknown) => {
    if (!isRecord(f) || f.name === undefined) return f;
    const { name: _alias, ...rest } = f;
    return { ...rest, label: featureLabel(f) };
  });
}

function documentTranscription(params: Params): Problem {
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

// ---- textcollection ----------------------------------------------------------------------------

/** One field of the task (FieldSets are not fields: their fields are listed instead). */
interface FieldAt {
  field: Params;
  path: string;
  id: string;
  type: string;
  /** The top-level form the field belongs to, if any. */
  form?: FieldAt;
}

/** The fields of a form, through its FieldSets; or of the task when given the top-level list. */
function fieldsIn(items: unknown, path: string, form?: FieldAt): FieldAt[] {
  return list(items).flatMap((item, i): FieldAt[] => {
    if (!isRecord(item)) return [];
    const here = join(path, i);
    if (item.type === 'fieldset') return fieldsIn(item.fields, join(here, 'fields'), form);
    return [{ field: item, path: here, id: String(item.field_id), type: String(item.type), ...(form ? { form } : {}) }];
  });
}

/** The task's fields at every depth: the top-level ones, then the children of each form. */
function allFields(params: Params): { top: FieldAt[]; all: FieldAt[]; childrenOf: (form: FieldAt) => FieldAt[] } {
  const top = fieldsIn(params.fields, 'fields');
  const children = new Map(
    top.filter((f) => f.type === 'form').map((f) => [f, fieldsIn(f.field.fields, join(f.path, 'fields'), f)] as const),
  );
  return { top, all: [...top, ...[...children.values()].flat()], childrenOf: (form) => children.get(form) ?? [] };
}

/** `max_x` at least `min_x`, both defaulting to 1 (their contract defaults). */
function atLeast(f: FieldAt, maxKey: string, minKey: string): Problem {
  const min = num(f.field[minKey]) ?? 1;
  const given = num(f.field[maxKey]);
  const max = given ?? 1;
  if (max >= min) return null;
  return at(`${f.path}/${maxKey}${given === undefined ? ' (absent, so 1)' : ''} must be at least ${minKey} (${min})`);
}

/** The selectable (leaf) values of a category field, and the first value used twice at any depth. */
function categoryValues(f: FieldAt): { leaves: Set<string>; duplicate: Problem } {
  const leaves = new Set<string>();
  const all: { key: string; path: string; value: unknown }[] = [];
  const walk = (choices: unknown, path: string) => {
    records(choices).forEach((choice, i) => {
      const here = `${path}/${i}`;
      all.push({ key: valueKey(choice.value), path: `${here}/value`, value: choice.value });
      if (list(choice.subchoices).length > 0) walk(choice.subchoices, `${here}/subchoices`);
      else leaves.add(valueKey(choice.value));
    });
  };
  walk(f.field.choices, `${f.path}/choices`);
  const dup = repeated(all);
  const value = dup && all.find((c) => c.path === dup.path)?.value;
  return {
    leaves,
    duplicate:
      dup &&
      at(
        `${dup.path} ${show(value)} is used twice in this field (first at ${dup.firstPath}); choice values are unique among all choices of the field, nested ones included`,
      ),
  };
}

/** The rules of one field on its own. */
function fieldProblem(f: FieldAt, attachmentCount: number): Problem {
  const { field, path } = f;
  return first(
    () => atLeast(f, 'max_responses_required', 'min_responses_required'),
    () => {
      if (f.type !== 'number') return null;
      const min = num(field.min);
      const max = num(field.max);
      return min !== undefined && max !== undefined && min > max ? at(`${path}/min (${min}) must not be above max (${max})`) : null;
    },
    () => (f.type === 'category' ? (atLeast(f, 'max_choices', 'min_choices') ?? categoryValues(f).duplicate) : null),
    () => {
      if (f.type !== 'time_range') return null;
      // `default_seconds` wins over its other spelling when both are given.
      const key = field.default_seconds !== undefined ? 'default_seconds' : 'defaults_seconds';
      const [from = NaN, to = NaN] = list(field[key]).map((v) => num(v) ?? NaN); // a missing end (NaN) compares false
      return from > to ? at(`${path}/${key} [${from}, ${to}]: from must not be above to`) : null;
    },
    () => {
      if (f.type !== 'ranking_order') return null;
      const count = num(field.num_items_to_rank);
      return count !== undefined && count > attachmentCount
        ? at(`${path}/num_items_to_rank (${count}) must not exceed the number of attachments (${attachmentCount})`)
        : null;
    },
  );
}

/** The rules of a field that names other fields: default_from_field, choices_from_field, conditions. */
function referenceProblem(f: FieldAt, byId: Map<string, FieldAt>): Problem {
  const { field, path } = f;
  const source = text(field.default_from_field);
  if (f.type === 'time_range' && source !== undefined) {
    const target = byId.get(source);
    if (!target || target === f || target.type !== 'time_range') {
      return at(`${path}/default_from_field ${show(source)} is not the field_id of another time_range field of the task`);
    }
  }
  const options = text(field.choices_from_field);
  if (f.type === 'select' && options !== undefined) {
    const target = byId.get(options);
    if (!target || target === f) return at(`${path}/choices_from_field ${show(options)} is not the field_id of another field of the task`);
  }
  for (const [i, set] of list(field.conditions).entries()) {
    for (const key of Object.keys(isRecord(set) ? set : {})) {
      const target = byId.get(key);
      if (target?.type === 'category') continue;
      const what = target ? `names a ${target.type} field` : 'names no field of the task';
      return at(`${path}/conditions/${i}/${seg(key)} ${what}; condition keys must be field_ids of category fields`);
    }
  }
  return null;
}

interface HypothesisContext {
  attachmentCount: number;
  childrenOf: (form: FieldAt) => FieldAt[];
}

/** One pre-filled answer against its field. */
function answerProblem(f: FieldAt, answer: unknown, path: string, ctx: HypothesisContext): Problem {
  const { field } = f;
  switch (f.type) {
    case 'text': {
      const limit = num(field.max_characters) ?? 1000;
      const length = [...String(answer)].length;
      return length > limit ? at(`${path} has ${length} characters; field ${show(f.id)} takes at most max_characters (${limit})`) : null;
    }
    case 'number': {
      const value = num(answer);
      const min = num(field.min);
      const max = num(field.max);
      if (value === undefined) return null;
      if (min !== undefined && value < min) return at(`${path} ${show(answer)} is below the min (${min}) of field ${show(f.id)}`);
      if (max !== undefined && value > max) return at(`${path} ${show(answer)} is above the max (${max}) of field ${show(f.id)}`);
      return null;
    }
    case 'datetime': {
      const include = new Set(list(field.include));
      const part = Object.keys(isRecord(answer) ? answer : {}).find((k) => !include.has(k));
      return part ? at(`${path}/${part} is not one of the parts field ${show(f.id)} includes (${[...include].join(', ')})`) : null;
    }
    case 'category': {
      const values = list(answer);
      const { leaves } = categoryValues(f);
      const min = num(field.min_choices) ?? 1;
      const max = num(field.max_choices) ?? 1;
      for (const [i, value] of values.entries()) {
        if (!leaves.has(valueKey(value))) return at(`${path}/${i} ${show(value)} is not a selectable choice value of field ${show(f.id)}`);
        if (values.findIndex((v) => valueKey(v) === valueKey(value)) !== i) return at(`${path}/${i} ${show(value)} is selected twice`);
      }
      if (values.length < min || values.length > max) {
        return at(
          `${path} selects ${values.length} choices; field ${show(f.id)} takes ${min === max ? min : `${min} to ${max}`} (min_choices, max_choices)`,
        );
      }
      return null;
    }
    case 'time_range': {
      const from = isRecord(answer) ? num(answer.from_seconds) : undefined;
      const to = isRecord(answer) ? num(answer.to_seconds) : undefined;
      return from !== undefined && to !== undefined && from > to
        ? at(`${path}/from_seconds (${from}) must not be above to_seconds (${to})`)
        : null;
    }
    case 'select': {
      // With choices_from_field the options include another field's answers, unknown until then.
      if (field.choices_from_field !== undefined) return null;
      const options = new Set(list(field.choices).map(valueKey));
      const [value] = list(answer);
      return options.has(valueKey(value)) ? null : at(`${path}/0 ${show(value)} is not one of the choices of field ${show(f.id)}`);
    }
    case 'ranking_order': {
      const ranked = list(answer);
      const limit = num(field.num_items_to_rank) ?? ctx.attachmentCount;
      for (const [i, index] of ranked.entries()) {
        const n = num(index) ?? -1;
        if (n >= ctx.attachmentCount) return at(`${path}/${i} (${n}) is not the index of one of the ${ctx.attachmentCount} attachments`);
        if (ranked.indexOf(index) !== i) return at(`${path}/${i} (${n}) is ranked twice`);
      }
      return ranked.length > limit
        ? at(`${path} ranks ${ranked.length} attachments; field ${show(f.id)} ranks at most ${limit} (num_items_to_rank)`)
        : null;
    }
    case 'form':
      return annotationsProblem(answer, path, ctx.childrenOf(f), `form ${show(f.id)}`, ctx);
    default:
      return null;
  }
}

/** A dictionary field_id → pre-annotation, against the fields of one level (the task's, or a form's). */
function annotationsProblem(annotations: unknown, path: string, fields: FieldAt[], where: string, ctx: HypothesisContext): Problem {
  const byId = new Map(fields.map((f) => [f.id, f]));
  for (const [key, annotation] of entries(annotations)) {
    const here = `${path}/${seg(key)}`;
    if (!isRecord(annotation)) continue;
    if (annotation.field_id !== key) return at(`${here}/field_id ${show(annotation.field_id)} must equal its key ${show(key)}`);
    const f = byId.get(key);
    if (!f) return at(`${here}/field_id ${show(key)} is not a field of ${where}`);
    if (annotation.type !== f.type) return at(`${here}/type ${show(annotation.type)} is not the type of field ${show(key)} (${f.type})`);
    const answers = list(annotation.response);
    const max = num(f.field.max_responses_required) ?? 1;
    if (answers.length > max)
      return at(`${here}/response has ${answers.length} answers; field ${show(key)} takes at most max_responses_required (${max})`);
    for (const [i, answer] of answers.entries()) {
      const problem = answerProblem(f, answer, `${here}/response/${i}`, ctx);
      if (problem) return problem;
    }
  }
  return null;
}

/**
 * Our limit on the answers a text collection task asks for at the least (TextCollectionParams
 * `fields`): it bounds what a worker must give and what a test-mode answer holds, which would
 * otherwise grow as the product of nested `min_responses_required`.
 */
const MAX_REQUIRED_ANSWERS = 1000;

/**
 * The fewest values a complete response holds: each field's min_responses_required answers (a
 * form's times its children's), a category answer `min_choices` values, a ranking `num_items_to_rank`.
 */
function requiredAnswers(top: FieldAt[], childrenOf: (form: FieldAt) => FieldAt[], attachmentCount: number): number {
  const least = (f: FieldAt) => Math.max(1, num(f.field.min_responses_required) ?? 1);
  const values = (f: FieldAt) => {
    if (f.type === 'category') return Math.max(1, num(f.field.min_choices) ?? 1);
    if (f.type === 'ranking_order') return Math.max(1, num(f.field.num_items_to_rank) ?? attachmentCount);
    return 1;
  };
  const sum = (fields: FieldAt[], each: (f: FieldAt) => number) => fields.reduce((n, f) => n + each(f), 0);
  return sum(top, (f) => least(f) * (f.type === 'form' ? sum(childrenOf(f), (child) => least(child) * values(child)) : values(f)));
}

function textCollection(params: Params): Problem {
  const { top, all, childrenOf } = allFields(params);
  const byId = new Map(all.map((f) => [f.id, f]));
  const attachments = records(params.attachments);
  const ctx: HypothesisContext = { attachmentCount: list(params.attachments).length, childrenOf };
  return first(
    // field_ids are unique across the task, form children included.
    () => {
      const dup = repeated(all.map((f) => ({ key: f.id, path: `${f.path}/field_id` })));
      return (
        dup &&
        at(
          `${dup.path} ${show(dup.key)} is used twice (first at ${dup.firstPath}); field_ids are unique across the task, form children included`,
        )
      );
    },
    () => {
      const least = requiredAnswers(top, childrenOf, ctx.attachmentCount);
      return least > MAX_REQUIRED_ANSWERS
        ? at(
            `fields ask for at least ${least} answer values (min_responses_required of each field, a form's times the sum of its children's; min_choices of a category, num_items_to_rank of a ranking); at most ${MAX_REQUIRED_ANSWERS}`,
          )
        : null;
    },
    // Either no top-level field is a form, or all of them are.
    () => {
      const forms = top.filter((f) => f.type === 'form').length;
      return forms > 0 && forms < top.length ? at('fields must be either all form fields or no form fields') : null;
    },
    () => {
      for (const f of all) {
        const problem = fieldProblem(f, ctx.attachmentCount) ?? referenceProblem(f, byId);
        if (problem) return problem;
      }
      return null;
    },
    // Attachment `forms` name form fields of the task.
    () => {
      for (const [i, attachment] of attachments.entries()) {
        for (const [j, id] of list(attachment.forms).entries()) {
          if (byId.get(String(id))?.type !== 'form')
            return at(`attachments/${i}/forms/${j} ${show(id)} is not the field_id of a form field of the task`);
        }
      }
      return null;
    },
    () =>
      isRecord(params.hypothesis)
        ? annotationsProblem(params.hypothesis.annotations, 'hypothesis/annotations', top, 'the task (top level)', ctx)
        : null,
  );
}

// ---- entry point -------------------------------------------------------------------------------

const rulesOf: Record<string, (params: Params) => Problem> = {
  pointannotation: (params) => offsetOnlyOnBoxes(params, 'pointannotation'),
  lineannotation: lineOrPolygon('lineannotation'),
  polygonannotation: lineOrPolygon('polygonannotation'),
  segmentannotation: segmentLabels,
  categorization: categoryIds,
  imageannotation: (params) => geometryBounds(params) ?? imageHypothesis(params),
  videoplaybackannotation: geometryBounds,
  namedentityrecognition: namedEntityRecognition,
  documenttranscription: documentTranscription,
  textcollection: textCollection,
};

/**
 * Checks a task type's parameters (schema-valid, project parameters merged in) against the rules
 * the contract states but its schema cannot express. Null when they hold; otherwise a message
 * naming the field and the rule, for a 400. Types without such rules always pass.
 */
export function checkTaskParams(type: string, params: Record<string, unknown>): string | null {
  return rulesOf[type]?.(params) ?? null;
}
