// What imports and exports need besides the store: their settings (config.transfer), the networks
// a source URL may reach, and the key that signs export download links.
import type { Config } from '../config.ts';

export type TransferConfig = Config['transfer'] & { allowPrivateNetworks: readonly string[] };

export type TransferDeps = TransferConfig & {
  /** HMAC of a message under the server's key for `purpose` (store/secrets.ts `sign`). */
  sign(purpose: string, message: string): string;
  /** The server's clock, that links lapse by (a test moves it on). */
  now(): Date;
};
