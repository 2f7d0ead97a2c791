// The test-mode response of a `textcollection` task (contract, "Test-mode responses", bullet
// **Text collection**): a checker that re-derives, from the task's own `params` and the response's
// own answers, every way a response breaks those rules. The creation bodies that exercise every rule
// are in test-mode-text-collection-cases.ts. Written from the contract; nothing here comes from the
// server's code.

type Dict = Record<string, any>;

const isDict = (value: unknown): value is Dict => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const show = (value: unknown): string => JSON.stringify(value) ?? String(value);

/** A number parameter, given as a number or as a decimal string (the contract accepts both). */
function num(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(value)) return Number(value);
  return undefined;
}

/** A choice value (CategoryChoiceValue): a non-empty string or a finite number. */
const isChoiceValue = (value: unknown): value is string | number =>
  (typeof value === 'string' && value.length > 0) || (typeof value === 'number' && Number.isFinite(value));

/** Leaf choice values of a category field (subchoices included): only these can be selected. */
function leafValues(choices: unknown, out: unknown[] = []): unknown[] {
  for (const c of list(choices) as any[]) {
    if (Array.isArray(c?.subchoices) && c.subchoices.length) leafValues(c.subchoices, out);
    else out.push(c?.value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checker

interface Field {
  id: string;
  type: string;
  def: Dict;
  minResponses: number;
  maxResponses: number;
  /** A form's child fields, FieldSets flattened (their fields answer under their own ids). */
  children: Field[];
}

function fieldsOf(items: unknown): Field[] {
  return list(items).flatMap((def): Field[] => {
    if (!isDict(def)) return [];
    if (def.type === 'fieldset') return fieldsOf(def.fields);
    if (typeof def.field_id !== 'string' || typeof def.type !== 'string') return [];
    const maxResponses = num(def.max_responses_required) ?? 1;
    return [
      {
        id: def.field_id,
        type: def.type,
        def,
        minResponses: Math.min(num(def.min_responses_required) ?? 1, maxResponses),
        maxResponses,
        children: def.type === 'form' ? fieldsOf(def.fields) : [],
      },
    ];
  });
}

/**
 * The answers decided so far, as conditions and `choices_from_field` see them: a form's filling
 * sees its own siblings first (a hidden sibling has no answer, whatever another filling chose),
 * then the outer answers; outside a form, a child's answers are those of every filling.
 */
class Scope {
  private readonly own = new Map<string, unknown[]>();
  constructor(private readonly parent?: Scope) {}
  record(id: string, answers: readonly unknown[]): void {
    this.own.set(id, [...(this.own.get(id) ?? []), ...answers]);
  }
  answersOf(id: string): readonly unknown[] {
    return this.own.get(id) ?? this.parent?.answersOf(id) ?? [];
  }
  ownAnswersOf(id: string): readonly unknown[] {
    return this.own.get(id) ?? [];
  }
  /** The plain values in a field's answers: the selected choices of a category, the options a select offers. */
  valuesOf(id: string): (string | number)[] {
    return [
      ...new Set(
        this.answersOf(id)
          .flatMap((a) => (Array.isArray(a) ? a : [a]))
          .filter(isChoiceValue),
      ),
    ];
  }
}

/** FieldConditions: one set holds (OR), all of its keys (AND): a value or any of a list selected, or with `not` none. */
function conditionsShow(conditions: unknown, selected: (id: string) => readonly unknown[]): boolean {
  if (!Array.isArray(conditions) || conditions.length === 0) return true;
  const anySelected = (wanted: unknown, chosen: readonly unknown[]) =>
    (Array.isArray(wanted) ? wanted : [wanted]).some((v) => chosen.includes(v));
  return conditions.some(
    (set) =>
      isDict(set) &&
      Object.entries(set).every(([id, wanted]) =>
        isDict(wanted) && 'not' in wanted ? !anySelected(wanted.not, selected(id)) : anySelected(wanted, selected(id)),
      ),
  );
}

/**
 * What a field's visibility or answer depends on: its condition keys and its `choices_from_field`.
 * A form is decided as a whole (the contract): it also depends on whatever its fields depend on
 * outside it (a form's conditions on its own children see nothing selected: the form comes first).
 */
function needs(field: Field): string[] {
  const own = new Set([field.id, ...field.children.map((c) => c.id)]);
  const direct = (f: Field) => [
    ...list(f.def.conditions).flatMap((set) => (isDict(set) ? Object.keys(set) : [])),
    ...(typeof f.def.choices_from_field === 'string' ? [f.def.choices_from_field] : []),
  ];
  return [...direct(field), ...field.children.flatMap(direct)].filter((id) => !own.has(id));
}

/** A field of the task at any depth: a top-level field, or the child of a top-level form. */
interface Node {
  field: Field;
  form?: Field;
}

/**
 * Visits every field once the fields it depends on are decided (a form's children after the
 * form). Fields left when none can be decided depend on each other in a cycle, or on such fields:
 * they count as hidden. Dependencies are between fields, whatever form they belong to.
 */
function inDependencyOrder(nodes: readonly Node[], visit: (node: Node, decidable: boolean) => void): void {
  let pending = [...nodes];
  while (pending.length > 0) {
    const undecided = new Set(pending.map((n) => n.field.id));
    const ready = pending.filter((n) => (!n.form || !undecided.has(n.form.id)) && needs(n.field).every((id) => !undecided.has(id)));
    if (ready.length === 0) {
      for (const n of pending) visit(n, false);
      return;
    }
    for (const n of ready) visit(n, true);
    pending = pending.filter((n) => !ready.includes(n));
  }
}

interface Context {
  attachmentCount: number;
  problems: string[];
}

/** The options of a select: its `choices`, then the answered values of `choices_from_field`. */
function selectOptions(def: Dict, scope: Scope): (string | number)[] {
  return [
    ...new Set([
      ...list(def.choices).filter(isChoiceValue),
      ...(typeof def.choices_from_field === 'string' ? scope.valuesOf(def.choices_from_field) : []),
    ]),
  ];
}

/** One filling of a form: its dictionary of child answers and what its children see. */
interface Filling {
  answers: Dict;
  scope: Scope;
  at: string;
}

/** The answers of a dictionary level (the task's annotations, or one filling of a form), its unknown keys reported. */
function answersAt(given: unknown, fields: readonly Field[], at: string, where: string, ctx: Context): Dict {
  if (!isDict(given)) {
    ctx.problems.push(`${at}: ${show(given)} is not a dictionary of answers keyed by field_id`);
    return {};
  }
  const known = new Set(fields.map((f) => f.id));
  for (const key of Object.keys(given)) if (!known.has(key)) ctx.problems.push(`${at}/${key}: answers no field of ${where}`);
  return given;
}

/**
 * Checks one field at one place (the task's annotations, or one filling of its form): shown and
 * answered, or hidden and absent; its answers recorded for the fields that depend on it. Returns
 * the fillings of a shown form.
 */
function checkField(field: Field, decidable: boolean, answers: Dict, scope: Scope, at: string, ctx: Context): Filling[] {
  const { problems } = ctx;
  const here = `${at}/${field.id}`;
  const present = Object.hasOwn(answers, field.id);
  const leaveOut = (): Filling[] => {
    scope.record(field.id, []);
    return [];
  };
  if (!decidable) {
    if (present)
      problems.push(
        `${here}: answered, but it is one of fields whose conditions depend on each other in a cycle (or depends on such a field), so it counts as hidden and must be absent`,
      );
    return leaveOut();
  }
  if (!conditionsShow(field.def.conditions, (id) => scope.valuesOf(id))) {
    if (present)
      problems.push(`${here}: answered, but its conditions ${show(field.def.conditions)} hide it (a hidden field must be absent)`);
    return leaveOut();
  }
  const options = field.type === 'select' ? selectOptions(field.def, scope) : [];
  if (field.type === 'select' && options.length === 0) {
    if (present)
      problems.push(
        `${here}: answered, but the select has no option (no choices, and ${show(field.def.choices_from_field)} has no answered value)`,
      );
    return leaveOut();
  }
  if (!present) {
    const offered = field.type === 'select' ? `; the select's options are ${show(options)}` : '';
    problems.push(`${here}: missing, but its conditions show it (every shown field is answered${offered})`);
    return leaveOut();
  }
  const value = answers[field.id];
  let given: unknown[];
  if (field.maxResponses > 1) {
    if (!Array.isArray(value)) {
      problems.push(`${here}: ${show(value)} should be a list of answers (max_responses_required ${field.maxResponses} is above 1)`);
      given = [value];
    } else {
      given = value;
      if (value.length < field.minResponses || value.length > field.maxResponses) {
        problems.push(
          `${here}: ${value.length} answers, outside min_responses_required ${field.minResponses} to max_responses_required ${field.maxResponses}`,
        );
      }
    }
  } else {
    given = [value];
  }
  const fillings: Filling[] = [];
  given.forEach((answer, i) => {
    const path = field.maxResponses > 1 ? `${here}/${i}` : here;
    if (field.type === 'form') {
      fillings.push({ answers: answersAt(answer, field.children, path, `form ${show(field.id)}`, ctx), scope: new Scope(scope), at: path });
    } else {
      for (const problem of answerProblems(field, answer, options, ctx)) problems.push(`${path}: ${problem}`);
    }
  });
  scope.record(field.id, given);
  return fillings;
}

const DATE_PARTS: Record<string, [number, number]> = { year: [1, 9999], month: [1, 12], day: [1, 31], hour: [0, 23], minute: [0, 59] };
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
/** A leap year, standing for a date without a year (which may be 29 February). */
const ANY_LEAP_YEAR = 2000;

/** How one answer breaks the rules of its (non-form) field. */
function answerProblems(field: Field, answer: unknown, options: readonly unknown[], ctx: Context): string[] {
  const def = field.def;
  switch (field.type) {
    case 'text': {
      if (typeof answer !== 'string') return [`${show(answer)} is not a text answer (a string)`];
      const limit = num(def.max_characters) ?? 1000;
      const length = [...answer].length;
      return length > limit ? [`${length} characters, above max_characters ${limit}`] : [];
    }
    case 'boolean':
      return typeof answer === 'boolean' ? [] : [`${show(answer)} is not a boolean`];
    case 'number':
      return numberProblems(def, answer);
    case 'datetime':
      return datetimeProblems(def, answer);
    case 'category': {
      if (!Array.isArray(answer)) return [`${show(answer)} is not a category answer (a list of choice values)`];
      const leaves = leafValues(def.choices);
      const out: string[] = [];
      if (!answer.every((v) => leaves.includes(v)) || new Set(answer).size !== answer.length) {
        out.push(`${show(answer)} is not a set of the field's selectable (leaf) choice values ${show(leaves)}`);
      }
      const fewest = Math.min(num(def.min_choices) ?? 1, leaves.length);
      const most = Math.max(fewest, Math.min(num(def.max_choices) ?? 1, leaves.length));
      if (answer.length < fewest || answer.length > most)
        out.push(`${answer.length} choices, outside min_choices ${fewest} to max_choices ${most}`);
      return out;
    }
    case 'time_range':
      return timeRangeProblems(def, answer);
    case 'select': {
      if (!Array.isArray(answer) || answer.length !== 1) return [`${show(answer)} is not a select answer [value]`];
      return options.includes(answer[0])
        ? []
        : [
            `${show(answer[0])} is not one of the select's options ${show(options)} (its choices, or the answers to choices_from_field ${show(def.choices_from_field)})`,
          ];
    }
    case 'ranking_order': {
      const n = ctx.attachmentCount;
      const wanted = Math.min(Math.max(num(def.num_items_to_rank) ?? n, 1), n);
      if (!Array.isArray(answer)) return [`${show(answer)} is not a ranking (a list of attachment indexes)`];
      const out: string[] = [];
      if (!answer.every((i) => Number.isInteger(i) && i >= 0 && i < n) || new Set(answer).size !== answer.length) {
        out.push(`${show(answer)} is not a ranking of distinct indexes of the task's ${n} attachments`);
      }
      if (answer.length !== wanted) {
        out.push(
          `ranks ${answer.length} attachments, not ${wanted} (num_items_to_rank${def.num_items_to_rank === undefined ? ' absent: all attachments' : ''})`,
        );
      }
      return out;
    }
    default:
      return [];
  }
}

/** Number answers: a decimal string within min and max, on the grid min + k·step (max − k·step without min). */
function numberProblems(def: Dict, answer: unknown): string[] {
  const value = typeof answer === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(answer) ? Number(answer) : undefined;
  if (value === undefined) return [`${show(answer)} is not a number answer (the number as a decimal string)`];
  const min = num(def.min);
  const max = num(def.max);
  const givenStep = num(def.step);
  const step = givenStep !== undefined && givenStep > 0 ? givenStep : 1;
  const out: string[] = [];
  if (min !== undefined && value < min) out.push(`${answer} is below min ${min}`);
  if (max !== undefined && value > max) out.push(`${answer} is above max ${max}`);
  const origin = min ?? max;
  if (origin !== undefined) {
    // Decimal steps: compare with a tolerance relative to the magnitudes involved.
    const k = Math.round((min !== undefined ? value - origin : origin - value) / step);
    const onGrid = origin + (min !== undefined ? k : -k) * step;
    const tolerance = 1e-9 * Math.max(1, Math.abs(value), Math.abs(origin), step);
    if (k < 0 || Math.abs(value - onGrid) > tolerance) {
      out.push(
        min !== undefined
          ? `${answer} is not on the grid min + k·step (${min} + k·${step})`
          : `${answer} is not on the grid max − k·step (${max} − k·${step}; no min)`,
      );
    }
  }
  return out;
}

/** Datetime answers: exactly the included parts, in range, a real date, the in-range defaults kept. */
function datetimeProblems(def: Dict, answer: unknown): string[] {
  if (!isDict(answer)) return [`${show(answer)} is not a datetime answer (an object of date parts)`];
  const include = list(def.include).filter((p): p is string => typeof p === 'string' && p in DATE_PARTS);
  const out: string[] = [];
  const missing = include.filter((p) => !(p in answer));
  const extra = Object.keys(answer).filter((p) => !include.includes(p));
  if (missing.length > 0 || extra.length > 0)
    out.push(`parts ${show(Object.keys(answer))}, not exactly the included parts ${show(include)}`);
  for (const part of include) {
    const [lo, hi] = DATE_PARTS[part]!;
    const v = answer[part];
    if (part in answer && !(Number.isInteger(v) && v >= lo && v <= hi))
      out.push(`${part} ${show(v)} is not a whole number from ${lo} to ${hi}`);
  }
  const part = (p: string): number | undefined => (include.includes(p) && Number.isInteger(answer[p]) ? answer[p] : undefined);
  const [year, month, day] = [part('year'), part('month'), part('day')];
  if (day !== undefined && month !== undefined && month >= 1 && month <= 12 && day > daysIn(year ?? ANY_LEAP_YEAR, month)) {
    out.push(`${show({ year, month, day })} is not a real date (the month has ${daysIn(year ?? ANY_LEAP_YEAR, month)} days)`);
  }
  const defaults = isDict(def.defaults) ? def.defaults : {};
  for (const p of include) {
    const [lo, hi] = DATE_PARTS[p]!;
    const preset = num(defaults[p]);
    if (preset === undefined || !Number.isInteger(preset) || preset < lo || preset > hi) continue;
    let kept = preset;
    // A preset day that the preset month lacks (31 April) cannot be kept: it becomes the month's last day.
    const monthPreset = num(defaults.month);
    if (p === 'day' && include.includes('month') && monthPreset !== undefined && month !== undefined && month >= 1 && month <= 12) {
      kept = Math.min(preset, daysIn(year ?? ANY_LEAP_YEAR, month));
    }
    if (p in answer && answer[p] !== kept) {
      out.push(
        `${p} ${show(answer[p])}: the in-range default ${show(defaults[p])} is not kept${kept !== preset ? ` (as the month's last day, ${kept})` : ''}`,
      );
    }
  }
  return out;
}

const SECONDS_PER_DAY = 86400;

/** Time ranges: inside the day, from ≤ to, each end moved from the default by a whole number of increments. */
function timeRangeProblems(def: Dict, answer: unknown): string[] {
  if (!isDict(answer) || typeof answer.from_seconds !== 'number' || typeof answer.to_seconds !== 'number') {
    return [`${show(answer)} is not a time range {from_seconds, to_seconds}`];
  }
  const out: string[] = [];
  const extra = Object.keys(answer).filter((k) => k !== 'from_seconds' && k !== 'to_seconds');
  if (extra.length > 0) out.push(`unexpected keys ${show(extra)} in a time range`);
  const { from_seconds: from, to_seconds: to } = answer as { from_seconds: number; to_seconds: number };
  if (from < 0 || to > SECONDS_PER_DAY || from > to)
    out.push(`[${from}, ${to}] is not a range inside the day (0 ≤ from_seconds ≤ to_seconds ≤ ${SECONDS_PER_DAY})`);
  const pair = list(def.default_seconds).length === 2 ? def.default_seconds : def.defaults_seconds;
  const [from0, to0] = list(pair).map(num);
  const step = num(def.increment_seconds) ?? 1;
  for (const [end, v, v0] of [
    ['from_seconds', from, from0],
    ['to_seconds', to, to0],
  ] as const) {
    if (v0 === undefined || !(step > 0)) continue;
    const k = Math.round((v - v0) / step);
    // Answers carry at most millisecond precision.
    if (Math.abs(v - (v0 + k * step)) > 0.0005 + 1e-9 * Math.abs(v)) {
      out.push(`${end} ${v} is not moved from the default ${v0} by a whole number of increment_seconds (${step})`);
    }
  }
  return out;
}

/**
 * Every way a completed `textcollection` task's response breaks the contract's Text collection
 * bullet, as messages naming `response/annotations/<field_id>` (and, in forms, the filling and
 * the child) and the rule. Empty for other task types.
 *
 * Readings where the bullet leaves room: a field that depends (by conditions or
 * `choices_from_field`) on a field of a cycle is hidden too; a condition of a field on itself,
 * or of a form on its own child, sees nothing selected; a select with no option is absent; a
 * preset day the month lacks becomes the month's last day; a number without min and max has no grid.
 */
export function textCollectionProblems(task: any): string[] {
  if (task?.type !== 'textcollection') return [];
  const ctx: Context = { attachmentCount: list(task.params?.attachments).length, problems: [] };
  const fields = fieldsOf(task.params?.fields);
  const at = 'response/annotations';
  if (!isDict(task.response?.annotations))
    return [`${at}: ${show(task.response?.annotations)} is not a dictionary of answers keyed by field_id`];
  const annotations = answersAt(task.response?.annotations, fields, at, 'the task', ctx);
  const top = new Scope();
  const fillingsOf = new Map<string, Filling[]>();
  const nodes: Node[] = fields.flatMap((field) => [{ field }, ...field.children.map((child) => ({ field: child, form: field }))]);
  inDependencyOrder(nodes, ({ field, form }, decidable) => {
    if (!form) {
      const fillings = checkField(field, decidable, annotations, top, at, ctx);
      if (field.type === 'form') fillingsOf.set(field.id, fillings);
      return;
    }
    // A child is decided in each filling of its form (none when the form is hidden): it sees its
    // siblings of the same filling, then the outer answers; outside, its answers are every filling's.
    for (const filling of fillingsOf.get(form.id) ?? []) {
      checkField(field, decidable, filling.answers, filling.scope, filling.at, ctx);
      top.record(field.id, filling.scope.ownAnswersOf(field.id));
    }
  });
  return ctx.problems;
}
