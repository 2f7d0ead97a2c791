// The first screen after log-in: who is logged in, to which account, in which mode, and the overview of
// the mode's work (GET /v1/overview): tasks by type and status, completions per day (a Chart.js bar
// chart, with its figures as a table beside it for a screen reader or the keyboard), pending tasks by
// project, callbacks given up on and paused workers, each linking to the screen that shows them.
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';
import { client, data, type MemberSession, type Schemas } from '../api.ts';
import { useLoad } from '../load.ts';
import { href, type Route } from '../route.ts';
import { Heading, Link, Pending, when } from '../ui.tsx';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

type Overview = Schemas['Overview'];

const statuses: Schemas['TaskStatus'][] = ['pending', 'completed', 'error', 'canceled'];

/** Tasks by type (rows) and status (columns), each count a link to those tasks. */
function TaskTable({ overview }: { overview: Overview }) {
  const types = [...new Set(overview.tasks.map((t) => t.type))];
  const count = (type: string, status: string) => overview.tasks.find((t) => t.type === type && t.status === status)?.count ?? 0;
  if (types.length === 0) return <p>No task yet in this mode.</p>;
  return (
    <table class="grid counts">
      <caption class="sr-only">Tasks by type and status</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          {statuses.map((s) => (
            <th scope="col" key={s}>
              {s}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {types.map((type) => (
          <tr key={type}>
            <th scope="row">{type}</th>
            {statuses.map((status) => {
              const n = count(type, status);
              return (
                <td key={status} class="number">
                  {n === 0 ? '0' : <Link href={href('tasks', { type, status })}>{n.toLocaleString()}</Link>}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Completions per day as bars; the figures are in the table under it. */
function CompletionChart({ days }: { days: Overview['completed_per_day'] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: days.map((d) => d.day.slice(5)),
        datasets: [{ label: 'Completed', data: days.map((d) => d.count), backgroundColor: '#0b57d0' }],
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    });
    return () => chart.destroy();
  }, [days]);
  const total = days.reduce((n, d) => n + d.count, 0);
  return (
    <>
      <div class="chart">
        <canvas
          ref={canvas}
          role="img"
          aria-label={`Tasks completed per day over the last ${days.length} days: ${total.toLocaleString()} in all, the table below has each day`}
        />
      </div>
      <details>
        <summary>Each day as a table</summary>
        <table class="grid days">
          <caption class="sr-only">Tasks completed per day (UTC)</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Completed</th>
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.day}>
                <td>{d.day}</td>
                <td class="number">{d.count.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}

function PendingByProject({ overview }: { overview: Overview }) {
  if (overview.pending_by_project.length === 0) return <p>Nothing is pending.</p>;
  return (
    <ul class="pending">
      {overview.pending_by_project.map((p) => (
        <li key={p.project ?? ''}>
          {p.project === null ? 'Of no project' : <Link href={href(`projects/${encodeURIComponent(p.project)}`)}>{p.project}</Link>}:{' '}
          <Link href={href('tasks', { status: 'pending', ...(p.project === null ? {} : { project: p.project }) })}>
            {p.count.toLocaleString()} pending
          </Link>
        </li>
      ))}
    </ul>
  );
}

export function Home({ session, route }: { session: MemberSession; route: Route }) {
  const [loaded] = useLoad(() => data(client.GET('/v1/overview', { params: { query: { days: 30 } } })), [route.mode]);
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
      <Pending loaded={loaded}>
        {(overview) => (
          <div class="overview">
            <section class="panel" aria-labelledby="tasks-title">
              <h2 id="tasks-title">Tasks</h2>
              <TaskTable overview={overview} />
            </section>
            <section class="panel" aria-labelledby="alerts-title">
              <h2 id="alerts-title">Needs attention</h2>
              <ul class="alerts">
                <li>
                  {overview.failed_callbacks === 0 ? (
                    'No callback was given up on in the last 30 days.'
                  ) : (
                    <Link href={href('deliveries', { state: 'failed' })}>
                      {overview.failed_callbacks.toLocaleString()} callback{overview.failed_callbacks === 1 ? ' was' : 's were'} given up on
                      in the last 30 days
                    </Link>
                  )}
                </li>
                <li>
                  {overview.paused_workers === 0 ? (
                    'No worker is paused.'
                  ) : (
                    <Link href={href('workforce', { status: 'paused' })}>
                      {overview.paused_workers.toLocaleString()} worker{overview.paused_workers === 1 ? ' is' : 's are'} paused
                    </Link>
                  )}
                </li>
              </ul>
            </section>
            <section class="panel wide" aria-labelledby="done-title">
              <h2 id="done-title">Completed per day, the last 30 days (UTC)</h2>
              <CompletionChart days={overview.completed_per_day} />
            </section>
            <section class="panel" aria-labelledby="pending-title">
              <h2 id="pending-title">Pending, by project</h2>
              <PendingByProject overview={overview} />
            </section>
            <p class="muted as-of">As of {when(overview.as_of)}.</p>
          </div>
        )}
      </Pending>
    </>
  );
}
