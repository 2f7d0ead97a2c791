// What the worker API's handlers get.
import type { Clock } from '../../domain/clock.ts';
import type { UnitOfWork } from '../../domain/ports.ts';
import type { IdentitySettings } from '../../domain/workforce/identity.ts';
import type { WorkAvailable, WorkSettings } from '../../domain/workforce/work.ts';
import type { AuthFailureLimit } from '../auth.ts';
import type { Contract } from '../contract.ts';

export interface WorkerApiDeps {
  uow: UnitOfWork;
  contract: Contract<'workforce'>;
  identity: IdentitySettings;
  /** Failed authentications per client address (wrong passwords count too). */
  authFailures?: AuthFailureLimit | undefined;
  /** Leases and redos (config.workforce). */
  work: WorkSettings;
  /** Wakes long polls for work when live work becomes claimable. */
  workAvailable: WorkAvailable;
  /** The work loop's draws (hidden evaluation, review sampling); Math.random when absent. */
  random?: (() => number) | undefined;
  /** The clock that sessions and leases lapse by (log-in, claims, heartbeats, submits, reviews). */
  now: Clock;
}
