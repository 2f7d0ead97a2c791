// The defaults of worker identity's settings (config.ts reads the environment; these apply where no
// configuration is passed, as in unit tests of the handler tables).
import type { IdentitySettings } from './identity.ts';

export const defaultIdentitySettings: IdentitySettings = { passwordCost: 15, sessionTtlMs: 3_600_000, sessionMaxMs: 86_400_000 };
