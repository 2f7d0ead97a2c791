// What the worker API's handlers get.
import type { UnitOfWork } from '../../domain/ports.ts';
import type { Contract } from '../contract.ts';

export interface WorkerApiDeps {
  uow: UnitOfWork;
  contract: Contract<'workforce'>;
}
