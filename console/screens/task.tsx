// The task view (issue 35): one task of the mode, as its customer owns it, through GET /v1/task/{id}:
// its facts, instruction and params; the response drawn by the labeling app's own players in read-only
// mode (imported from label/, never copied; a type without a player shows the response as formatted
// JSON); who worked on it (GET /v1/task/{id}/assignments: workers as their handles), its audits, its
// callback deliveries (GET /v1/task/{id}/callbacks) with redeliver (POST .../callbacks/redeliver), and
// the customer's own review (POST /v1/task/{id}/audit: accept, or reject with remarks, which sends the
// task back to be redone). What the member's role may not call is not drawn (access.ts).
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Player, PlayerFactory } from '../../label/players/types.ts';
import type { Assignment, Draft } from '../../label/api.ts';
import { may } from '../access.ts';
import { client, data, type Role, type Schemas, messageOf } from '../api.ts';
import { Instruction, media } from '../instruction.tsx';
import { useLoad } from '../load.ts';
import { href, type Route } from '../route.ts';
import { Heading, Link, Pending, when, Problem, Notice, type Said } from '../ui.tsx';

/** The task as the view reads it (the contract's Task is a union per type; the view reads the common fields). */
type Task = {
  task_id: string;
  type: string;
  status: Schemas['TaskStatus'];
  instruction?: string;
  params?: unknown;
  created_at: string;
} & Record<string, unknown>;

/** The task as the worker API's assignment would carry it: what a player reads. */
function asAssignment(task: Task): Assignment {
  return {
    assignment_id: `view-${task.task_id}`,
    role: 'attempt',
    status: 'submitted',
    active_ms: 0,
    task: { ...task, instruction: task.instruction ?? '' },
  } as unknown as Assignment;
}

/** A result the players cannot draw: an error, or nothing yet. */
const drawable = (response: unknown): response is Draft =>
  !!response && typeof response === 'object' && !('error' in (response as Record<string, unknown>));

/** The response in the player of its type, read-only; the JSON when no player draws the type. */
function ResponseView({ task }: { task: Task }) {
  const area = useRef<HTMLElement>(null);
  const [state, setState] = useState<'loading' | 'drawn' | 'none'>('loading');
  const response = (task as { response?: unknown }).response;
  useEffect(() => {
    let player: Player | undefined;
    let gone = false;
    if (!drawable(response)) {
      setState('none');
      return;
    }
    // The players are a chunk of their own: only a task view loads them.
    import('../../label/players/index.ts').then(({ players }) => {
      const factory: PlayerFactory | undefined = players[task.type];
      if (gone || !area.current) return;
      if (!factory) return setState('none');
      area.current.replaceChildren();
      player = factory(area.current, asAssignment(task), response, { changed: () => undefined, activeMs: () => 0, readOnly: true, media });
      // A player that cannot show without taking edits is made inert, as the labeling app's review does.
      if (!player.readOnly) area.current.setAttribute('inert', '');
      setState('drawn');
    });
    return () => {
      gone = true;
      player?.destroy?.();
    };
  }, [task]);
  return (
    <section aria-labelledby="response-title" class="panel">
      <h2 id="response-title">Response</h2>
      {response === undefined && <p>No response yet.</p>}
      {state === 'none' && response !== undefined && (
        <p class="muted">{drawable(response) ? `No player draws ${task.type} tasks: the response as JSON.` : 'The response as JSON.'}</p>
      )}
      <section ref={area} class="player" aria-label={`The response, drawn read-only (${task.type})`} hidden={state !== 'drawn'} />
      {response !== undefined && (
        <details open={state === 'none'}>
          <summary>Response as JSON</summary>
          <pre class="json">{JSON.stringify(response, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}

function Facts({ task }: { task: Task }) {
  const t = task as Task & Partial<Record<string, unknown>>;
  const rows: [string, string][] = [
    ['Type', task.type],
    ['Status', task.status],
    ['Project', (t.project as string | undefined) ?? '—'],
    ['Batch', (t.batch as string | undefined) ?? '—'],
    ['Unique id', (t.unique_id as string | undefined) ?? '—'],
    ['Tags', ((t.tags as string[] | undefined) ?? []).join(', ') || '—'],
    ['Created', when(task.created_at)],
    ['Completed', when(t.completed_at as string | undefined)],
    ['Review status', (t.customer_review_status as string | undefined) ?? '—'],
    ['Redone', String((t.times_redone as number | undefined) ?? 0)],
    ['Callback address', (t.callback_url as string | undefined) ?? '—'],
  ];
  return (
    <dl class="facts">
      {rows.map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

function Assignments({ taskId }: { taskId: string }) {
  const [loaded] = useLoad(() => data(client.GET('/v1/task/{taskId}/assignments', { params: { path: { taskId } } })), [taskId]);
  return (
    <section aria-labelledby="work-title" class="panel">
      <h2 id="work-title">Attempts and reviews</h2>
      <Pending loaded={loaded}>
        {(list) =>
          list.docs.length === 0 ? (
            <p>No worker has worked on this task.</p>
          ) : (
            <table class="grid">
              <caption class="sr-only">Who worked on the task, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">Worker</th>
                  <th scope="col">Status</th>
                  <th scope="col">Issued</th>
                  <th scope="col">Submitted</th>
                  <th scope="col">Active time</th>
                  <th scope="col">Review result</th>
                </tr>
              </thead>
              <tbody>
                {list.docs.map((a) => (
                  <tr key={a.assignment_id}>
                    <td>{a.role}</td>
                    <td class="mono">{a.worker}</td>
                    <td>{a.status}</td>
                    <td>{when(a.created_at)}</td>
                    <td>{when(a.submitted_at)}</td>
                    <td>{a.active_ms !== undefined ? `${Math.round(a.active_ms / 1000)} s` : '—'}</td>
                    <td>{a.review_result ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Pending>
    </section>
  );
}

function Audits({ task }: { task: Task }) {
  const audits = ((task as { audits?: Schemas['AuditRecord'][] }).audits ?? []) as Schemas['AuditRecord'][];
  return (
    <section aria-labelledby="audits-title" class="panel">
      <h2 id="audits-title">Audits</h2>
      {audits.length === 0 ? (
        <p>No audit yet.</p>
      ) : (
        <table class="grid">
          <caption class="sr-only">The task's audits, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Source</th>
              <th scope="col">By</th>
              <th scope="col">Result</th>
              <th scope="col">Remarks</th>
            </tr>
          </thead>
          <tbody>
            {audits.map((a, i) => (
              <tr key={i}>
                <td>{when(a.audited_at)}</td>
                <td>{a.audit_source}</td>
                <td class="mono">{a.audited_by}</td>
                <td>{a.audit_result}</td>
                <td>{a.comments ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Deliveries({ task, role }: { task: Task; role: Role }) {
  const taskId = task.task_id;
  const [loaded, reload] = useLoad(() => data(client.GET('/v1/task/{taskId}/callbacks', { params: { path: { taskId } } })), [taskId]);
  const [notice, setNotice] = useState<Said | null>(null);
  const mayRedeliver = may(role, 'redeliverTaskCallback') && (task.status === 'completed' || task.status === 'error');
  async function redeliver() {
    try {
      await data(client.POST('/v1/task/{taskId}/callbacks/redeliver', { params: { path: { taskId } } }));
      setNotice({ kind: 'good', text: 'The callback is queued again.' });
      reload();
    } catch (err) {
      setNotice({ kind: 'bad', text: messageOf(err) });
    }
  }
  return (
    <section aria-labelledby="deliveries-title" class="panel">
      <h2 id="deliveries-title">Callback deliveries</h2>
      <div class="actions toolbar">
        <span>
          {(task as { callback_completed?: boolean }).callback_completed ? 'Delivered (a 2xx answer came).' : 'Not delivered yet.'}
        </span>
        <button type="button" onClick={reload}>
          Refresh
        </button>
        {mayRedeliver && (
          <button type="button" onClick={redeliver}>
            Redeliver the callback
          </button>
        )}
      </div>
      <Notice notice={notice} />
      <Pending loaded={loaded}>
        {(list) =>
          list.docs.length === 0 ? (
            <p>No delivery attempt yet.</p>
          ) : (
            <table class="grid deliveries">
              <caption class="sr-only">The callback's delivery attempts, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Address</th>
                  <th scope="col">Answer</th>
                  <th scope="col">Took</th>
                </tr>
              </thead>
              <tbody>
                {list.docs.map((d, i) => (
                  <tr key={i}>
                    <td>{when(d.attempted_at)}</td>
                    <td>{d.event}</td>
                    <td class="mono">{d.url}</td>
                    <td>{d.status_code !== undefined ? `HTTP ${d.status_code}` : (d.error ?? '—')}</td>
                    <td>{d.duration_ms} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Pending>
    </section>
  );
}

/** The customer's own review of a completed task: accept, or reject with remarks (the task is redone). */
function Review({ task, onReviewed }: { task: Task; onReviewed(): void }) {
  const [remarks, setRemarks] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const status = (task as { customer_review_status?: string }).customer_review_status;
  if (task.status !== 'completed')
    return (
      <section aria-labelledby="review-title" class="panel">
        <h2 id="review-title">Your review</h2>
        <p>Only a completed task can be reviewed.</p>
      </section>
    );
  async function review(accepted: boolean) {
    setBusy(true);
    setError(null);
    try {
      const body = { accepted, ...(remarks.trim() ? { comments: remarks.trim() } : {}) };
      await data(client.POST('/v1/task/{taskId}/audit', { params: { path: { taskId: task.task_id } }, body }));
      setRemarks('');
      onReviewed();
    } catch (err) {
      setError(messageOf(err));
    }
    setBusy(false);
  }
  return (
    <section aria-labelledby="review-title" class="panel">
      <h2 id="review-title">Your review</h2>
      {status === 'rejected' ? (
        <p role="status">Rejected: the task is being redone. It can be reviewed again once the redo is in.</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
          }}
        >
          <label for="review-remarks">Remarks (kept on the audit; with a rejection, what to mend)</label>
          <textarea id="review-remarks" rows={3} value={remarks} onInput={(e) => setRemarks(e.currentTarget.value)} />
          <Problem error={error} />
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => review(true)}>
              Accept the result
            </button>
            <button type="button" disabled={busy} onClick={() => review(false)}>
              Reject and have it redone
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

export function TaskView({ route, role }: { route: Route; role: Role }) {
  const taskId = decodeURIComponent(route.path.slice('tasks/'.length));
  const [loaded, again] = useLoad(
    () => data(client.GET('/v1/task/{taskId}', { params: { path: { taskId } } })) as Promise<unknown> as Promise<Task>,
    [taskId],
  );
  return (
    <>
      <p>
        <Link href={href('tasks')}>Back to the tasks</Link>
      </p>
      <Heading>Task {taskId}</Heading>
      <Pending loaded={loaded}>
        {(task) => (
          <div class="task-view">
            <Facts task={task} />
            <ResponseView task={task} />
            {may(role, 'auditTask') && <Review task={task} onReviewed={again} />}
            <section aria-labelledby="instruction-title" class="panel">
              <h2 id="instruction-title">Instruction</h2>
              <Instruction text={task.instruction ?? ''} />
            </section>
            <section aria-labelledby="params-title" class="panel">
              <h2 id="params-title">Params</h2>
              <pre class="json">{JSON.stringify(task.params, null, 2)}</pre>
            </section>
            {may(role, 'listTaskAssignments') && <Assignments taskId={task.task_id} />}
            <Audits task={task} />
            {may(role, 'listTaskCallbacks') && <Deliveries task={task} role={role} />}
          </div>
        )}
      </Pending>
    </>
  );
}
