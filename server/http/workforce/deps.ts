// What the worker API's handlers get.
import type { Clock } from '../../domain/clock.ts';
import type { UnitOfWork } from '../../domain/ports.ts';
import type { IdentitySettings } from '../../domain/workforce/identity.ts';
import type { WorkAvailable, WorkSettings } from '../../domain/workforce/work.ts';
import type { AuthFailureLimit } from '../auth.ts';
import type { Contract } from '../contract.ts';

/** The media route's limits and reach (media.ts; config.media). */
export interface MediaSettings {
  /** The host's answer head must come within this, and the body may not fall silent for longer (MEDIA_TIMEOUT_MS). */
  timeoutMs: number;
  /** The largest file passed on (MEDIA_MAX_BYTES). */
  maxBytes: number;
  /** ALLOW_PRIVATE_NETWORKS, as for callbacks and attachment checks. */
  allowPrivateNetworks: readonly string[];
  /** The longest a link to a bucket's object handed to a browser lives (STORAGE_LINK_SECONDS); never past the lease. */
  linkSeconds: number;
}

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
  /** The media route's limits and the networks it may reach (config.media). */
  media: MediaSettings;
}
