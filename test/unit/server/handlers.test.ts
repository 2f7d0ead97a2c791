// Every operation of both bundled contracts has a handler, and no handler is orphaned. The compiler
// checks the first against generated/ (test/typecheck-boundary.test.ts); this checks the run-time
// table against the bundled YAML the validator serves, webhooks left out.
import { describe, expect, it } from 'vitest';
import { handlerTable } from '../../../server/app.ts';
import type { UnitOfWork } from '../../../server/domain/ports.ts';
import { loadContract } from '../../../server/http/contract.ts';

describe.each(['current', 'legacy'] as const)('%s generation', (gen) => {
  const contract = loadContract(gen);
  const table = handlerTable(contract, {} as UnitOfWork);

  it('has a handler for every operation of the contract', () => {
    expect(contract.operationIds.filter((id) => !table[id as keyof typeof table])).toEqual([]);
  });

  it('has no handler for an operation the contract does not have', () => {
    expect(Object.keys(table).filter((id) => !contract.operationIds.includes(id))).toEqual([]);
  });
});
