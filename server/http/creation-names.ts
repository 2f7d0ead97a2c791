// What a creation (a task of any type, a training or an evaluation task, of either generation) does
// with a name it does not take: decisions 2 and 17, stated in the contract (`TaskCreateCommon`).
// A name the API documents is refused, 400 naming it: a parameter of another creation, or one the
// real service documents and this one does not support (`x-unsupported-parameters` in the
// contract). A client that sends it expects an effect, and a 200 would drop it in silence. Any
// other name is a client's own extra, accepted and ignored (kept out of `params`). A property sent
// as `null` counts as not given. Everything here is read from the two bundled contracts, once.
import type { Generation } from '../domain/model.ts';
import { loadContract, type Contract, type Json } from './contract.ts';
import { trainingCreations } from './training.ts';

interface Creation {
  generation: Generation;
  path: string;
  group: 'task' | 'training' | 'evaluation';
  type: string;
  takes: ReadonlySet<string>;
  body: Json;
}

export interface CreationNames {
  /**
   * The 400 message for the names `body` gives (not as `null`) that the creation at `path` of this
   * generation does not take and the API documents; null when there is none, or when `path` is no
   * creation.
   */
  refusal(path: string, body: unknown): string | null;
}

/** The `x-unsupported-parameters` a schema carries, through allOf/anyOf/oneOf and if/then/else. */
function unsupportedIn(contract: Contract, schema: Json | undefined, out: Map<string, string>): void {
  const s = contract.resolve(schema);
  if (!s) return;
  for (const [name, reason] of Object.entries<string>(s['x-unsupported-parameters'] ?? {})) out.set(name, reason);
  for (const sub of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? []), s.then, s.else]) unsupportedIn(contract, sub, out);
}

function creationsOf(contract: Contract<Generation>): Creation[] {
  const ops = [
    ...[...contract.creations.values()].map((op) => ({ ...op, group: 'task' as const })),
    ...[...trainingCreations(contract).values()].map((op) => ({ ...op, group: op.kind })),
  ];
  return ops.map(({ path, group, type, bodySchema }) => ({
    generation: contract.generation,
    path,
    group,
    type,
    takes: contract.propertyNames(bodySchema),
    body: bodySchema,
  }));
}

/** `a`, `a and b`, `a, b and c`. */
const listed = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

let all: { creations: Creation[]; unsupported: Map<string, string>; documented: Set<string> } | undefined;

/** Every creation of both generations, the names the contract lists as not supported, and every documented name. */
function everything() {
  if (!all) {
    const creations: Creation[] = [];
    const unsupported = new Map<string, string>();
    for (const contract of [loadContract('current'), loadContract('legacy')]) {
      const own = creationsOf(contract);
      for (const c of own) unsupportedIn(contract, c.body, unsupported);
      creations.push(...own);
    }
    const documented = new Set([...creations.flatMap((c) => [...c.takes]), ...unsupported.keys()]);
    all = { creations, unsupported, documented };
  }
  return all;
}

/**
 * Which creations take `name`, in words: "every task creation", "annotation and categorization
 * tasks", "imageannotation tasks and their training and evaluation tasks", ...
 */
function takenBy(name: string, creations: Creation[]): string {
  const typesOf = (group: Creation['group']) => {
    const ofGroup = creations.filter((c) => c.group === group);
    const taking = ofGroup.filter((c) => c.takes.has(name));
    const legacyOnly =
      taking.length > 0 &&
      taking.every((c) => c.generation === 'legacy') &&
      taking.length === ofGroup.filter((c) => c.generation === 'legacy').length;
    return {
      all: taking.length > 0 && taking.length === ofGroup.length,
      legacyOnly,
      types: [...new Set(taking.map((c) => c.type))].sort(),
    };
  };
  const tasks = typesOf('task');
  const training = typesOf('training');
  const evaluation = typesOf('evaluation');
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  const parts: string[] = [];
  const trainingAlike = same(training.types, evaluation.types);
  if (tasks.all) parts.push('every task creation');
  else if (tasks.legacyOnly) parts.push('every task creation of the older generation, /legacy');
  else if (tasks.types.length && trainingAlike && same(tasks.types, training.types))
    return `${listed(tasks.types)} tasks and their training and evaluation tasks`;
  else if (tasks.types.length) parts.push(`${listed(tasks.types)} tasks`);
  if (trainingAlike && training.types.length)
    parts.push(training.all ? 'every training and evaluation task creation' : `${listed(training.types)} training and evaluation tasks`);
  else
    for (const [kind, group] of [
      ['training', training],
      ['evaluation', evaluation],
    ] as const)
      if (group.types.length) parts.push(group.all ? `every ${kind} task creation` : `${listed(group.types)} ${kind} tasks`);
  return listed(parts);
}

const cache = new Map<Generation, CreationNames>();

/** The names rule of the creations of one generation. */
export function creationNames(generation: Generation): CreationNames {
  let names = cache.get(generation);
  if (names) return names;
  const { creations, unsupported, documented } = everything();
  const byPath = new Map(creations.filter((c) => c.generation === generation).map((c) => [c.path, c]));
  const why = new Map<string, string>();
  const sentence = (name: string, subject: string): string => {
    const reason = unsupported.get(name);
    if (reason) return `${name} is not supported: no creation takes it; ${reason}.`;
    let where = why.get(name);
    if (where === undefined) {
      where = takenBy(name, creations);
      why.set(name, where);
    }
    return `${name} is not supported for ${subject} (taken by ${where}, not by this one).`;
  };
  names = {
    refusal(path, body) {
      const creation = byPath.get(path);
      if (!creation || !body || typeof body !== 'object' || Array.isArray(body)) return null;
      const refused = Object.entries(body)
        .filter(([name, value]) => value !== null && value !== undefined && !creation.takes.has(name) && documented.has(name))
        .map(([name]) => name);
      if (refused.length === 0) return null;
      const subject = `${creation.type} ${creation.group === 'task' ? 'tasks' : `${creation.group} tasks`}`;
      const shown = refused.slice(0, 5).map((name) => sentence(name, subject));
      const more = refused.length > 5 ? ` Nor are ${listed(refused.slice(5))}.` : '';
      return `${shown.join(' ')}${more} Leave ${refused.length === 1 ? 'it' : 'them'} out: nothing would be done with ${refused.length === 1 ? 'it' : 'them'}.`;
    },
  };
  cache.set(generation, names);
  return names;
}
