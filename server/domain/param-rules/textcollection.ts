// Parameter rules (param-rules.ts) of textcollection: fields, forms and the fields they name,
// answer counts, and pre-filled answers against their fields.
import type { Json } from '../model.ts';
import { asRecord, asString, entries, isRecord, list, numeric, records, show } from '../../../shared/json.ts';
import { at, first, join, type Problem, repeated, seg, valueKey } from './problems.ts';

/** One field of the task (FieldSets are not fields: their fields are listed instead). */
interface FieldAt {
  field: Json;
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
function allFields(params: Json): { top: FieldAt[]; all: FieldAt[]; childrenOf: (form: FieldAt) => FieldAt[] } {
  const top = fieldsIn(params.fields, 'fields');
  const children = new Map(
    top.filter((f) => f.type === 'form').map((f) => [f, fieldsIn(f.field.fields, join(f.path, 'fields'), f)] as const),
  );
  return { top, all: [...top, ...[...children.values()].flat()], childrenOf: (form) => children.get(form) ?? [] };
}

/** `max_x` at least `min_x`, both defaulting to 1 (their contract defaults). */
function atLeast(f: FieldAt, maxKey: string, minKey: string): Problem {
  const min = numeric(f.field[minKey]) ?? 1;
  const given = numeric(f.field[maxKey]);
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
      const min = numeric(field.min);
      const max = numeric(field.max);
      return min !== undefined && max !== undefined && min > max ? at(`${path}/min (${min}) must not be above max (${max})`) : null;
    },
    () => (f.type === 'category' ? (atLeast(f, 'max_choices', 'min_choices') ?? categoryValues(f).duplicate) : null),
    () => {
      if (f.type !== 'time_range') return null;
      // `default_seconds` wins over its other spelling when both are given.
      const key = field.default_seconds !== undefined ? 'default_seconds' : 'defaults_seconds';
      const [from = NaN, to = NaN] = list(field[key]).map((v) => numeric(v) ?? NaN); // a missing end (NaN) compares false
      return from > to ? at(`${path}/${key} [${from}, ${to}]: from must not be above to`) : null;
    },
    () => {
      if (f.type !== 'ranking_order') return null;
      const count = numeric(field.num_items_to_rank);
      return count !== undefined && count > attachmentCount
        ? at(`${path}/num_items_to_rank (${count}) must not exceed the number of attachments (${attachmentCount})`)
        : null;
    },
  );
}

/** The rules of a field that names other fields: default_from_field, choices_from_field, conditions. */
function referenceProblem(f: FieldAt, byId: Map<string, FieldAt>): Problem {
  const { field, path } = f;
  const source = asString(field.default_from_field);
  if (f.type === 'time_range' && source !== undefined) {
    const target = byId.get(source);
    if (!target || target === f || target.type !== 'time_range') {
      return at(`${path}/default_from_field ${show(source)} is not the field_id of another time_range field of the task`);
    }
  }
  const options = asString(field.choices_from_field);
  if (f.type === 'select' && options !== undefined) {
    const target = byId.get(options);
    if (!target || target === f) return at(`${path}/choices_from_field ${show(options)} is not the field_id of another field of the task`);
  }
  for (const [i, set] of list(field.conditions).entries()) {
    for (const key of Object.keys(asRecord(set))) {
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
      const limit = numeric(field.max_characters) ?? 1000;
      const length = [...String(answer)].length;
      return length > limit ? at(`${path} has ${length} characters; field ${show(f.id)} takes at most max_characters (${limit})`) : null;
    }
    case 'number': {
      const value = numeric(answer);
      const min = numeric(field.min);
      const max = numeric(field.max);
      if (value === undefined) return null;
      if (min !== undefined && value < min) return at(`${path} ${show(answer)} is below the min (${min}) of field ${show(f.id)}`);
      if (max !== undefined && value > max) return at(`${path} ${show(answer)} is above the max (${max}) of field ${show(f.id)}`);
      return null;
    }
    case 'datetime': {
      const include = new Set(list(field.include));
      const part = Object.keys(asRecord(answer)).find((k) => !include.has(k));
      return part ? at(`${path}/${part} is not one of the parts field ${show(f.id)} includes (${[...include].join(', ')})`) : null;
    }
    case 'category': {
      const values = list(answer);
      const { leaves } = categoryValues(f);
      const min = numeric(field.min_choices) ?? 1;
      const max = numeric(field.max_choices) ?? 1;
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
      const from = isRecord(answer) ? numeric(answer.from_seconds) : undefined;
      const to = isRecord(answer) ? numeric(answer.to_seconds) : undefined;
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
      const limit = numeric(field.num_items_to_rank) ?? ctx.attachmentCount;
      for (const [i, index] of ranked.entries()) {
        const n = numeric(index) ?? -1;
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
    const max = numeric(f.field.max_responses_required) ?? 1;
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
  const least = (f: FieldAt) => Math.max(1, numeric(f.field.min_responses_required) ?? 1);
  const values = (f: FieldAt) => {
    if (f.type === 'category') return Math.max(1, numeric(f.field.min_choices) ?? 1);
    if (f.type === 'ranking_order') return Math.max(1, numeric(f.field.num_items_to_rank) ?? attachmentCount);
    return 1;
  };
  const sum = (fields: FieldAt[], each: (f: FieldAt) => number) => fields.reduce((n, f) => n + each(f), 0);
  return sum(top, (f) => least(f) * (f.type === 'form' ? sum(childrenOf(f), (child) => least(child) * values(child)) : values(f)));
}

export function textCollection(params: Json): Problem {
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
