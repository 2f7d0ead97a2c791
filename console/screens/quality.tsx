// A project's quality (issue 35, Quality), from GET /v1/projects/{name}/quality over a period: how well
// the answers of a task agree (overall and per field), what reviews decided, each worker's standing,
// evaluation accuracy and agreement with the others (a Chart.js bar chart, with its figures in the
// table under it), and the calibration batches' scores. The project and the period are in the address
// (`?project=street-scenes&days=30`); own workers are shown by name (GET /v1/workforce/workers).
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';
import { may } from '../access.ts';
import { client, data, type Role, type Schemas } from '../api.ts';
import { useLoad } from '../load.ts';
import { href, navigate, type Route } from '../route.ts';
import { Heading, Link, Pending, when } from '../ui.tsx';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

type Quality = Schemas['ProjectQuality'];
type WorkerQuality = Schemas['WorkerQuality'];

const periods = ['7', '30', '90'] as const;
const dayMs = 86_400_000;

const share = (x: number | undefined) => (x === undefined ? '—' : `${Math.round(x * 100)} %`);
const hours = (ms: number) =>
  ms < 60_000 ? `${Math.round(ms / 1000)} s` : ms < 3_600_000 ? `${Math.round(ms / 60_000)} min` : `${(ms / 3_600_000).toFixed(1)} h`;

async function load(project: string, days: number, workersToo: boolean) {
  const since = new Date(Date.now() - days * dayMs).toISOString();
  const [quality, workers] = await Promise.all([
    data(client.GET('/v1/projects/{projectName}/quality', { params: { path: { projectName: project }, query: { since } } })),
    workersToo ? data(client.GET('/v1/workforce/workers', { params: { query: { limit: 100 } } })).then((l) => l.docs) : Promise.resolve([]),
  ]);
  const names = new Map(workers.map((w) => [w.worker_id, w.display_name]));
  return { quality, nameOf: (id: string) => names.get(id) ?? id };
}

function Choice({ route, projects }: { route: Route; projects: string[] }) {
  function choose(e: Event) {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    navigate(href('quality', { project: String(form.get('project')), days: String(form.get('days')) }));
  }
  return (
    <form class="filters" onSubmit={choose} aria-label="The project and the period">
      <div class="field">
        <label for="q-project">Project</label>
        <select id="q-project" name="project" value={route.query.get('project') ?? projects[0]}>
          {projects.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="q-days">Period</label>
        <select id="q-days" name="days" value={route.query.get('days') ?? '30'}>
          {periods.map((d) => (
            <option key={d} value={d}>
              the last {d} days
            </option>
          ))}
        </select>
      </div>
      <div class="actions">
        <button class="primary" type="submit">
          Show
        </button>
      </div>
    </form>
  );
}

/** Each worker's accuracy and agreement as grouped bars (0 to 100 %); the table under it has the figures. */
function WorkerChart({ workers, nameOf }: { workers: WorkerQuality[]; nameOf(id: string): string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const percent = (x: number | undefined) => (x === undefined ? null : Math.round(x * 1000) / 10);
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: workers.map((w) => nameOf(w.worker)),
        datasets: [
          { label: 'Evaluation accuracy (%)', data: workers.map((w) => percent(w.accuracy)), backgroundColor: '#0b57d0' },
          { label: 'Agreement with others (%)', data: workers.map((w) => percent(w.agreement)), backgroundColor: '#8a4b00' },
        ],
      },
      options: { animation: false, maintainAspectRatio: false, scales: { y: { min: 0, max: 100 } } },
    });
    return () => chart.destroy();
  }, [workers]);
  return (
    <div class="chart">
      <canvas
        ref={canvas}
        role="img"
        aria-label={`Evaluation accuracy and agreement of ${workers.length} worker${workers.length === 1 ? '' : 's'}, in percent; the table below has each figure`}
      />
    </div>
  );
}

function Figures({ quality, nameOf }: { quality: Quality; nameOf(id: string): string }) {
  const { agreement, review, workers, calibration } = quality;
  return (
    <div class="overview">
      <section class="panel" aria-labelledby="agreement-title">
        <h2 id="agreement-title">Agreement</h2>
        {agreement.tasks === 0 ? (
          <p>No task had two answers in the period.</p>
        ) : (
          <>
            <p>
              {share(agreement.mean)} on average over {agreement.tasks} task{agreement.tasks === 1 ? '' : 's'} with two answers or more.
            </p>
            {agreement.by_field.length > 0 && (
              <table class="grid">
                <caption class="sr-only">Agreement per field</caption>
                <thead>
                  <tr>
                    <th scope="col">Field or label</th>
                    <th scope="col">Tasks</th>
                    <th scope="col">Agreement</th>
                  </tr>
                </thead>
                <tbody>
                  {agreement.by_field.map((f) => (
                    <tr key={f.field}>
                      <td>{f.field}</td>
                      <td class="number">{f.tasks}</td>
                      <td class="number">{share(f.mean)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </section>
      <section class="panel" aria-labelledby="review-title">
        <h2 id="review-title">Reviews</h2>
        {review.reviewed === 0 ? (
          <p>No attempt was reviewed in the period.</p>
        ) : (
          <p>
            {review.reviewed} reviewed: {review.accepted} accepted, {review.fixed} fixed, {review.rejected} rejected (reject rate{' '}
            {share(review.reject_rate)}).
          </p>
        )}
      </section>
      <section class="panel wide" aria-labelledby="workers-title">
        <h2 id="workers-title">Workers</h2>
        {workers.length === 0 ? (
          <p>No worker answered in the period.</p>
        ) : (
          <>
            <WorkerChart workers={workers} nameOf={nameOf} />
            <table class="grid quality-workers">
              <caption class="sr-only">Each worker's figures in the period</caption>
              <thead>
                <tr>
                  <th scope="col">Worker</th>
                  <th scope="col">Standing</th>
                  <th scope="col">Submitted</th>
                  <th scope="col">Active time</th>
                  <th scope="col">Evaluation accuracy</th>
                  <th scope="col">Agreement</th>
                  <th scope="col">Reviews (reject rate)</th>
                </tr>
              </thead>
              <tbody>
                {workers.map((w) => (
                  <tr key={w.worker}>
                    <td>{nameOf(w.worker)}</td>
                    <td>{w.state}</td>
                    <td class="number">{w.submitted}</td>
                    <td class="number">{hours(w.active_ms)}</td>
                    <td class="number">
                      {share(w.accuracy)}
                      {w.evaluation_scored ? ` of ${w.evaluation_scored}` : ''}
                    </td>
                    <td class="number">{share(w.agreement)}</td>
                    <td class="number">{w.review.reviewed === 0 ? '—' : `${w.review.reviewed} (${share(w.review.reject_rate)})`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {quality.workers_total > workers.length && (
              <p class="muted">
                The {workers.length} most active of {quality.workers_total} workers.
              </p>
            )}
          </>
        )}
      </section>
      {calibration.length > 0 && (
        <section class="panel wide" aria-labelledby="calibration-title">
          <h2 id="calibration-title">Calibration</h2>
          <table class="grid">
            <caption class="sr-only">The calibration batches' scores</caption>
            <thead>
              <tr>
                <th scope="col">Batch</th>
                <th scope="col">Status</th>
                <th scope="col">Reviewed</th>
                <th scope="col">Score</th>
                <th scope="col">Opens the gate</th>
              </tr>
            </thead>
            <tbody>
              {calibration.map((c) => (
                <tr key={c.batch}>
                  <td>{c.batch}</td>
                  <td>{c.status}</td>
                  <td class="number">{c.reviewed}</td>
                  <td class="number">{share(c.score)}</td>
                  <td>{c.passed ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      <p class="muted as-of">
        From {when(quality.since)} to {when(quality.as_of)}; quality policy{' '}
        {quality.policy_version === null ? 'defaults (never set)' : `version ${quality.policy_version}`}.{' '}
        <Link href={href(`projects/${encodeURIComponent(quality.project)}`)}>The project</Link>
      </p>
    </div>
  );
}

export function QualityScreen({ route, role }: { route: Route; role: Role }) {
  const [projects] = useLoad(() => data(client.GET('/v1/projects', { params: { query: { archived: 'false' } } })), []);
  const chosen = route.query.get('project');
  const days = Number(route.query.get('days')) || 30;
  const [figures] = useLoad(() => (chosen ? load(chosen, days, may(role, 'listWorkers')) : Promise.resolve(null)), [chosen, days]);
  return (
    <>
      <Heading>Quality</Heading>
      <Pending loaded={projects}>
        {(list) =>
          list.length === 0 ? (
            <p>No project yet in this mode: quality is counted per project.</p>
          ) : (
            <>
              <Choice route={route} projects={list.map((p) => p.name)} />
              {chosen ? (
                <Pending loaded={figures}>{(f) => f && <Figures quality={f.quality} nameOf={f.nameOf} />}</Pending>
              ) : (
                <p>Choose a project and a period, then Show.</p>
              )}
            </>
          )
        }
      </Pending>
    </>
  );
}
