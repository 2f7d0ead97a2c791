// What tag Identity's handlers (http/identity.ts) need besides the store: their own module, so that
// the handler modules that pass it on (http/tasks.ts) do not depend on the handlers.
import type { Clock } from '../domain/clock.ts';
import type { MemberSettings } from '../domain/identity/members.ts';
import type { SessionSettings } from '../domain/identity/sessions.ts';
import type { OidcRelyingParty } from '../domain/identity/sso.ts';
import type { SendNotice } from '../delivery/notices.ts';
import type { AuthFailureLimit, FailureLimit } from './auth.ts';

export interface IdentitySettingsAll extends MemberSettings, SessionSettings {}

/** What tag Identity's handlers need besides the store. */
export interface IdentityDeps {
  settings: IdentitySettingsAll;
  now: Clock;
  /** PUBLIC_URL (or where the server listens): where the links in mails and the single sign-on redirect point. Read at each use. */
  publicUrl: string;
  /** Mails invitations and password links; null without SMTP_URL (the links are shown). */
  notices: SendNotice | null;
  oidc: OidcRelyingParty;
  /** Failed log-ins (and password-link requests) per client address, shared with unknown keys. */
  addressFailures: AuthFailureLimit;
  /** Failed log-ins per member (account and e-mail address). */
  memberFailures: FailureLimit;
}
