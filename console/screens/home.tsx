// The first screen after log-in: who is logged in, to which account, in which mode, and where to go.
import type { MemberSession } from '../api.ts';
import type { Route } from '../route.ts';
import { Heading, when } from '../ui.tsx';

export function Home({ session, route }: { session: MemberSession; route: Route }) {
  return (
    <>
      <Heading>{session.account.name}</Heading>
      <dl class="facts">
        <dt>Logged in as</dt>
        <dd>{session.member.display_name ? `${session.member.display_name} (${session.member.email})` : session.member.email}</dd>
        <dt>Role</dt>
        <dd>{session.member.role}</dd>
        <dt>Mode</dt>
        <dd>{route.mode}</dd>
        <dt>Session lapses</dt>
        <dd>
          {when(session.expires_at)} without use, at the latest {when(session.absolute_expires_at)}
        </dd>
      </dl>
    </>
  );
}
