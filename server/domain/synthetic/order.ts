// Test mode's synthetic answers (synthetic.ts): conditions shared by text-collection fields and
// annotation attributes: decide items after the items they refer to, whatever the order of declaration.

/**
 * Calls `decide` once per item, each after the other items owning an id it needs. Items caught in
 * a cycle cannot have their conditions evaluated: they are decided last with `ready` false and
 * treated as not shown.
 */
export function decideInDependencyOrder<T>(
  items: readonly T[],
  owns: (item: T) => readonly string[],
  needs: (item: T) => readonly string[],
  decide: (item: T, ready: boolean) => void,
): void {
  let pending = [...items];
  while (pending.length > 0) {
    const ownedByPending = new Set(pending.flatMap(owns));
    const ready = pending.filter((item) => {
      const own = owns(item);
      return needs(item).every((id) => own.includes(id) || !ownedByPending.has(id));
    });
    if (ready.length === 0) {
      for (const item of pending) decide(item, false);
      return;
    }
    for (const item of ready) decide(item, true);
    pending = pending.filter((item) => !ready.includes(item));
  }
}
