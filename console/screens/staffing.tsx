// A project's staffing (issue 35, Workforce): who may attempt its live tasks and who may review them
// (the operator's workforce, and the account's own workers by name), and which attempts are reviewed,
// from GET /v1/projects/{name}/staffing, replaced as a whole by PUT (managers and up). Where it comes
// from is said: set on the project, or the default (nothing set).
import { useState } from 'preact/hooks';
import { may } from '../access.ts';
import { client, data, type Role, type Schemas, messageOf } from '../api.ts';
import { useLoad } from '../load.ts';
import { Pending, when, Problem } from '../ui.tsx';

type Staffing = Schemas['Staffing'];
type Subject = Schemas['StaffingSubject'];
type Worker = Schemas['Worker'];

/** How many of the account's workers the form offers (the list's largest page). */
const offered = 100;

async function load(project: string) {
  const path = { params: { path: { projectName: project } } };
  const [staffing, workers] = await Promise.all([
    data(client.GET('/v1/projects/{projectName}/staffing', path)),
    data(client.GET('/v1/workforce/workers', { params: { query: { limit: offered } } })),
  ]);
  return { staffing, workers: workers.docs.filter((w) => w.status !== 'removed'), more: workers.has_more };
}

function Subjects({
  legend,
  workers,
  chosen,
  onChange,
  id,
}: {
  legend: string;
  workers: Worker[];
  chosen: Subject[];
  onChange(s: Subject[]): void;
  id: string;
}) {
  const toggle = (s: Subject) => onChange(chosen.includes(s) ? chosen.filter((c) => c !== s) : [...chosen, s]);
  return (
    <fieldset class="subjects" id={id}>
      <legend>{legend}</legend>
      <label class="choice">
        <input type="checkbox" checked={chosen.includes('operator')} onChange={() => toggle('operator')} /> The operator's workforce
      </label>
      {workers.map((w) => (
        <label key={w.worker_id} class="choice">
          <input type="checkbox" checked={chosen.includes(w.worker_id)} onChange={() => toggle(w.worker_id)} /> {w.display_name} (
          {w.roles.join(', ')}
          {w.status === 'paused' ? '; paused' : ''})
        </label>
      ))}
    </fieldset>
  );
}

function StaffingForm({
  project,
  staffing,
  workers,
  onSaved,
}: {
  project: string;
  staffing: Staffing;
  workers: Worker[];
  onSaved(s: Staffing): void;
}) {
  const [attempt, setAttempt] = useState<Subject[]>(staffing.attempt);
  const [review, setReview] = useState<Subject[]>(staffing.review);
  const [newWorkerTasks, setNewWorkerTasks] = useState(String(staffing.review_sampling.new_worker_tasks ?? 20));
  const [rate, setRate] = useState(String(staffing.review_sampling.rate ?? 0.1));
  const [error, setError] = useState<string | null>(null);
  async function save(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const body = { attempt, review, review_sampling: { new_worker_tasks: Number(newWorkerTasks), rate: Number(rate) } };
      onSaved(await data(client.PUT('/v1/projects/{projectName}/staffing', { params: { path: { projectName: project } }, body })));
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <form onSubmit={save} aria-label="Change the staffing">
      <Subjects legend="Who may attempt (and redo)" id="staff-attempt" workers={workers} chosen={attempt} onChange={setAttempt} />
      <Subjects legend="Who may review" id="staff-review" workers={workers} chosen={review} onChange={setReview} />
      <fieldset>
        <legend>Which attempts are reviewed</legend>
        <div class="field">
          <label for="staff-new">Every attempt among a worker's first (attempts in this project)</label>
          <input
            id="staff-new"
            type="number"
            min={0}
            max={10000}
            step={1}
            value={newWorkerTasks}
            onInput={(e) => setNewWorkerTasks(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="staff-rate">Then this share of their later attempts (0 to 1)</label>
          <input id="staff-rate" type="number" min={0} max={1} step={0.01} value={rate} onInput={(e) => setRate(e.currentTarget.value)} />
        </div>
      </fieldset>
      <Problem error={error} />
      <div class="actions spaced">
        <button class="primary" type="submit">
          Save the staffing
        </button>
      </div>
    </form>
  );
}

/** Which attempts are reviewed, in words. */
function reviewed({ new_worker_tasks: first = 20, rate = 0.1 }: Schemas['ReviewSampling']): string {
  if (first === 0 && rate === 0) return 'No attempt: a submitted answer completes the task';
  const later = rate === 0 ? 'none of the later ones' : rate === 1 ? 'all the later ones' : `${Math.round(rate * 100)} % of the later ones`;
  return first === 0
    ? `${later[0]!.toUpperCase()}${later.slice(1)} (every attempt is a later one)`
    : `Every attempt among a worker's first ${first}, then ${later}`;
}

export function StaffingPanel({ project, role }: { project: string; role: Role }) {
  const [loaded] = useLoad(() => load(project), [project]);
  const [saved, setSaved] = useState<Staffing | null>(null);
  const names = (workers: Worker[], subjects: Subject[]) =>
    subjects
      .map((s) => (s === 'operator' ? "the operator's workforce" : (workers.find((w) => w.worker_id === s)?.display_name ?? s)))
      .join(', ') || 'nobody (the tasks wait)';
  return (
    <section class="panel" aria-labelledby="staffing-title">
      <h2 id="staffing-title">Staffing</h2>
      <Pending loaded={loaded}>
        {({ staffing: fetched, workers, more }) => {
          const staffing = saved ?? fetched;
          return (
            <>
              {saved && (
                <p class="notice good" role="status">
                  Saved the staffing.
                </p>
              )}
              <dl class="facts">
                <dt>Set</dt>
                <dd>{staffing.source === 'default' ? 'Nothing set: the default' : `On the project, ${when(staffing.updated_at)}`}</dd>
                <dt>Who may attempt</dt>
                <dd>{names(workers, staffing.attempt)}</dd>
                <dt>Who may review</dt>
                <dd>{names(workers, staffing.review)}</dd>
                <dt>Reviewed</dt>
                <dd>{reviewed(staffing.review_sampling)}</dd>
              </dl>
              {may(role, 'setProjectStaffing') && (
                <details>
                  <summary>Change the staffing</summary>
                  {more && <p class="muted">The first {offered} of your workers are offered here.</p>}
                  <StaffingForm project={project} staffing={staffing} workers={workers} onSaved={setSaved} />
                </details>
              )}
            </>
          );
        }}
      </Pending>
    </section>
  );
}
