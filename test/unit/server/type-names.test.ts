// The type aliases the server knows (server/domain/type-names.ts) are exactly the contract's
// (TaskTypeName's alias branch), each standing for a type of TaskType, in both generations.
import { describe, expect, it } from 'vitest';
import { canonicalType, typeAliases } from '../../../server/domain/type-names.ts';
import { loadContract } from '../../../server/http/contract.ts';

describe.each(['current', 'legacy'] as const)('type aliases of the %s contract', (generation) => {
  const { doc, resolve } = loadContract(generation);
  const types: string[] = resolve(doc.components.schemas.TaskType)!.enum;
  const aliases: string[] = resolve(doc.components.schemas.TaskTypeName)!.anyOf.flatMap((b: { enum?: string[] }) =>
    b.enum && !b.enum.some((t) => types.includes(t)) ? b.enum : [],
  );

  it('names the aliases the server maps, each to a type', () => {
    expect([...aliases].sort()).toEqual(Object.keys(typeAliases).sort());
    for (const alias of aliases) expect(types).toContain(canonicalType(alias));
  });

  it('leaves every type itself', () => {
    for (const type of types) expect(canonicalType(type)).toBe(type);
  });
});
