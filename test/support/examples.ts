// The contract's own request examples of the creation operations, by path.
import type { Contract } from '../../server/http/contract.ts';

export type Body = Record<string, unknown>;

/** Every named JSON request example of every creation operation: [path, name, body]. */
export function creationExamples(contract: Contract): [string, string, Body][] {
  return [...contract.creations.values()].flatMap((op) => {
    const requestBody = contract.resolve(contract.doc.paths[op.path].post.requestBody)!;
    return Object.entries<{ value: Body }>(requestBody.content['application/json'].examples).map(
      ([name, ex]) => [op.path, name, contract.resolve(ex)!.value as Body] as [string, string, Body],
    );
  });
}
