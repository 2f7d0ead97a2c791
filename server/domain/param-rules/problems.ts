// Parameter rules (param-rules.ts): how a problem is found and said. A problem names its place as
// the contract's examples do, `request/body/<JSON pointer> <what is wrong>`.

export type Problem = string | null;

/** A JSON-pointer segment: `~` and `/` escaped, so that a key cannot fake a path. */
export const seg = (key: string | number) => String(key).replaceAll('~', '~0').replaceAll('/', '~1');
export const join = (...parts: (string | number)[]) =>
  parts
    .map((p) => (typeof p === 'number' ? String(p) : p))
    .filter((p) => p !== '')
    .join('/');
export const at = (path: string) => `request/body/${path}`;

/** Category and select values keep their JSON type: `"3"` and `3` are different values. */
export const valueKey = (value: unknown) => `${typeof value}:${String(value)}`;

/** Runs checks in order; the first problem wins. */
export function first(...checks: (() => Problem)[]): Problem {
  for (const check of checks) {
    const problem = check();
    if (problem) return problem;
  }
  return null;
}

/** The first repeated key among named items: where it was seen first and where again. */
export function repeated(items: { key: string; path: string }[]): { key: string; path: string; firstPath: string } | null {
  const seen = new Map<string, string>();
  for (const { key, path } of items) {
    const firstPath = seen.get(key);
    if (firstPath !== undefined) return { key, path, firstPath };
    seen.set(key, path);
  }
  return null;
}
