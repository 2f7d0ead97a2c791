// Two parameter versions of a project side by side (issue 35, Projects): per parameter, whether the
// later version added, removed, changed or kept it, and for a change its lines before and after
// (jsdiff's line diff: an instruction compares line by line, any other value as its JSON).
import { diffLines } from 'diff';

export type Kind = 'added' | 'removed' | 'changed' | 'same';

export interface Line {
  text: string;
  kind: 'added' | 'removed' | 'same';
}

export interface Change {
  name: string;
  kind: Kind;
  /** The value's lines, marked: both versions' for a change, the one version's otherwise. */
  lines: Line[];
}

/** What every version carries that is no parameter. */
const bookkeeping = new Set(['version', 'created_at']);

/** A value as the lines to compare: a text as it is, anything else as JSON with its keys sorted. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sorted(value), null, 2);
}

const linesOf = (text: string, kind: Line['kind']): Line[] => text.split('\n').map((line) => ({ text: line, kind }));

/** The parameters of `from` and `to` compared, in the order of `to` and then those `from` alone has. */
export function compareVersions(from: Record<string, unknown>, to: Record<string, unknown>): Change[] {
  const names = [...Object.keys(to), ...Object.keys(from).filter((n) => !(n in to))].filter((n) => !bookkeeping.has(n));
  return names.map((name): Change => {
    if (!(name in from)) return { name, kind: 'added', lines: linesOf(asText(to[name]), 'added') };
    if (!(name in to)) return { name, kind: 'removed', lines: linesOf(asText(from[name]), 'removed') };
    const [before, after] = [asText(from[name]), asText(to[name])];
    if (before === after) return { name, kind: 'same', lines: linesOf(after, 'same') };
    // Each text ends its last line, so that a line added after it leaves it unchanged.
    const lines = diffLines(`${before}\n`, `${after}\n`).flatMap((part) =>
      linesOf(part.value.replace(/\n$/, ''), part.added ? 'added' : part.removed ? 'removed' : 'same'),
    );
    return { name, kind: 'changed', lines };
  });
}
