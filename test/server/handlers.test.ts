// Every operation of both contracts has a handler and no handler is orphaned. The operations of
// projects, batches, training and evaluation tasks are not served yet (they answer 501); they are
// listed here, so that this list can only shrink.
import { describe, expect, it } from 'vitest';
import { handlerTable } from '../../server/app.ts';
import type { UnitOfWork } from '../../server/domain/ports.ts';
import { loadContract } from '../../server/http/contract.ts';
import { client, startTestServer } from '../support/server.ts';

const notServedYet = (id: string) => /Project|Batch|TrainingTask|EvaluationTask/.test(id);

describe.each(['current', 'legacy'] as const)('%s generation', (gen) => {
  const contract = loadContract(gen);
  const table = handlerTable(contract, {} as UnitOfWork);

  it('has a handler for every operation of the contract (except those not served yet)', () => {
    const missing = contract.operationIds.filter((id) => !table[id as keyof typeof table] && !notServedYet(id));
    expect(missing).toEqual([]);
  });

  it('has no handler for an operation the contract does not have', () => {
    expect(Object.keys(table).filter((id) => !contract.operationIds.includes(id))).toEqual([]);
  });

  it('lists as not served only operations that really have no handler', () => {
    expect(Object.keys(table).filter(notServedYet)).toEqual([]);
  });
});

it('answers an operation that is not served yet with 501 and a JSON error', async () => {
  const server = await startTestServer('pglite');
  try {
    const res = await client(server, 'current', server.dev.test_key)('GET', '/v1/projects');
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ status_code: 501, error: expect.stringContaining('listProjects') });
  } finally {
    await server.close();
  }
});
