// The console's shell (issue 35, decision 23): the session first (the log-in when there is none),
// then the bar (account, mode switch, who, log-out), the navigation (only the screens the member's
// role may open: access.ts) and the screen the URL names.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { may, type OperationId } from './access.ts';
import { client, currentSession, data, messageOf, sessionState, type MemberSession, type Mode } from './api.ts';
import { sessionLapsed } from './load.ts';
import { LogIn, SetPassword, SsoCallback, TotpSetup } from './login.tsx';
import { href, navigate, useRoute, type Route } from './route.ts';
import { Activity } from './screens/activity.tsx';
import { BatchesScreen } from './screens/batches.tsx';
import { Deliveries } from './screens/deliveries.tsx';
import { Home } from './screens/home.tsx';
import { ApiKeys } from './screens/keys.tsx';
import { Members } from './screens/members.tsx';
import { ProjectsScreen, ProjectView } from './screens/projects.tsx';
import { QualityScreen } from './screens/quality.tsx';
import { Sessions } from './screens/sessions.tsx';
import { TaskView } from './screens/task.tsx';
import { TasksScreen } from './screens/tasks.tsx';
import { Workforce } from './screens/workforce.tsx';
import { Heading, Link } from './ui.tsx';

interface Screen {
  path: string;
  title: string;
  /** The operation the screen lists with: a role that may not call it is not offered the screen. */
  needs: OperationId;
  draw(props: { session: MemberSession; route: Route; logOut(): void }): preact.JSX.Element;
}

/** The screens in the order of the navigation. */
const screens: Screen[] = [
  { path: '', title: 'Home', needs: 'getMemberSession', draw: ({ session, route }) => <Home session={session} route={route} /> },
  {
    path: 'tasks',
    title: 'Tasks',
    needs: 'listTasks',
    // The data manager, and under it one task's view (tasks/<taskId>).
    draw: ({ session, route }) =>
      route.path === 'tasks' ? (
        <TasksScreen route={route} role={session.member.role} />
      ) : (
        <TaskView route={route} role={session.member.role} />
      ),
  },
  {
    path: 'projects',
    title: 'Projects',
    needs: 'listProjects',
    // The list, and under it one project's page (projects/<name>).
    draw: ({ session, route }) =>
      route.path === 'projects' ? (
        <ProjectsScreen route={route} role={session.member.role} />
      ) : (
        <ProjectView route={route} role={session.member.role} />
      ),
  },
  {
    path: 'batches',
    title: 'Batches',
    needs: 'listBatches',
    draw: ({ session, route }) => <BatchesScreen route={route} role={session.member.role} />,
  },
  {
    path: 'workforce',
    title: 'Workforce',
    needs: 'listWorkers',
    draw: ({ session, route }) => <Workforce route={route} role={session.member.role} />,
  },
  {
    path: 'quality',
    title: 'Quality',
    needs: 'getProjectQuality',
    draw: ({ session, route }) => <QualityScreen route={route} role={session.member.role} />,
  },
  {
    path: 'deliveries',
    title: 'Deliveries',
    needs: 'listCallbacks',
    draw: ({ session, route }) => <Deliveries route={route} role={session.member.role} />,
  },
  { path: 'members', title: 'Members', needs: 'listMembers', draw: () => <Members /> },
  { path: 'api-keys', title: 'API keys', needs: 'listApiKeys', draw: () => <ApiKeys /> },
  { path: 'activity', title: 'Activity', needs: 'listActivity', draw: ({ route }) => <Activity route={route} /> },
  { path: 'sessions', title: 'Your sessions', needs: 'listMemberSessions', draw: ({ logOut }) => <Sessions onLoggedOut={logOut} /> },
];

function screenOf(path: string): Screen | undefined {
  return screens.find((s) => s.path === path) ?? screens.find((s) => s.path !== '' && path.startsWith(`${s.path}/`));
}

function ModeSwitch({ route }: { route: Route }) {
  const modes: Mode[] = ['test', 'live'];
  return (
    <nav class="modes" aria-label="Mode">
      {modes.map((m) => (
        <Link key={m} href={href(route.path, route.query, m)} current={route.mode === m ? 'page' : undefined}>
          {m === 'test' ? 'Test' : 'Live'}
        </Link>
      ))}
    </nav>
  );
}

function Shell({ session, route, logOut }: { session: MemberSession; route: Route; logOut(): void }) {
  const offered = screens.filter((s) => may(session.member.role, s.needs));
  const screen = screenOf(route.path);
  const allowed = screen && offered.includes(screen);
  return (
    <>
      <a class="skip" href="#main">
        Skip to the content
      </a>
      <header class={`bar ${route.mode}`}>
        <p class="brand">humantask console · {session.account.name}</p>
        <ModeSwitch route={route} />
        <span class="who">
          {session.member.email} ({session.member.role})
        </span>
        <button type="button" onClick={logOut}>
          Log out
        </button>
      </header>
      <div class="layout">
        <nav class="side" aria-label="Screens">
          <ul>
            {offered.map((s) => (
              <li key={s.path}>
                <Link href={href(s.path)} current={screen === s ? 'page' : undefined}>
                  {s.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" key={`${route.path} ${route.mode}`}>
          {route.mode === 'live' ? (
            <p class="mode-note">Live mode: what you change here reaches workers and your callbacks.</p>
          ) : (
            <p class="mode-note">Test mode: tasks are answered at once with synthetic responses; nothing reaches a person.</p>
          )}
          {allowed ? (
            screen.draw({ session, route, logOut })
          ) : (
            <>
              <Heading>{screen ? 'Not for your role' : 'No such page'}</Heading>
              <p>
                {screen ? `Your role (${session.member.role}) may not open ${screen.title}.` : 'The console has no page at this address.'}{' '}
                <Link href={href('')}>Go to the start</Link>.
              </p>
            </>
          )}
        </main>
      </div>
    </>
  );
}

function App() {
  const route = useRoute();
  sessionState.mode = route.mode;
  const [session, setSession] = useState<MemberSession | null | undefined>(undefined);
  const [problem, setProblem] = useState<string | null>(null);
  const adopt = (s: MemberSession | null) => {
    sessionState.csrf = s?.csrf_token ?? null;
    setSession(s);
  };
  const refresh = () => currentSession().then(adopt, (err) => setProblem(messageOf(err)));
  const publicPage = route.path === 'sso/callback' || route.path === 'accept-invitation' || route.path === 'reset-password';
  useEffect(() => {
    if (!publicPage && session === undefined) refresh();
  }, [publicPage, session]);
  useEffect(() => {
    const lapsed = () => adopt(null);
    sessionLapsed.addEventListener('lapsed', lapsed);
    return () => sessionLapsed.removeEventListener('lapsed', lapsed);
  }, []);
  async function logOut() {
    try {
      await data(client.DELETE('/v1/session'));
    } catch {
      // The session may have ended already (log-out everywhere): the log-in comes back either way.
    }
    adopt(null);
    navigate(href(''));
  }
  if (route.path === 'sso/callback') return <SsoCallback onSession={adopt} />;
  if (route.path === 'accept-invitation') return <SetPassword purpose="invitation" />;
  if (route.path === 'reset-password') return <SetPassword purpose="reset" />;
  if (problem)
    return (
      <main class="card" id="main">
        <p class="notice bad" role="alert">
          The console could not reach the server: {problem}
        </p>
      </main>
    );
  if (session === undefined)
    return (
      <main class="card" id="main">
        <p role="status">Loading…</p>
      </main>
    );
  if (session === null) return <LogIn onSession={adopt} />;
  if (session.second_factor_setup_required) return <TotpSetup onDone={refresh} onLogOut={logOut} />;
  return <Shell session={session} route={route} logOut={logOut} />;
}

render(<App />, document.getElementById('root')!);
