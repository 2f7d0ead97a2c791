// The account's own workers of the mode (issue 35, Workforce): the list (GET /v1/workforce/workers, by
// status, pages by `next_token`), a new worker (POST: the password the server chose is shown once,
// here), their roles changed (PATCH), pause and unpause, a new password (POST .../reset_password: shown
// once; their sessions end), and removal after a confirmation. Changes are offered to the roles that
// may make them (access.ts); who may work on which project is the project's staffing (projects.tsx).
import { useState } from 'preact/hooks';
import { may } from '../access.ts';
import { client, data, type Role, type Schemas, messageOf } from '../api.ts';
import { FilterForm, type FilterFields, filterNames } from '../filters.tsx';
import { useLoad } from '../load.ts';
import type { Route } from '../route.ts';
import { Heading, Pager, Pending, when, Problem, Notice, type Said } from '../ui.tsx';

type Worker = Schemas['Worker'];
type WorkerRole = Schemas['WorkerRole'];

const workerRoles: WorkerRole[] = ['labeler', 'reviewer', 'lead'];

const fields: FilterFields = { choices: [['status', 'Status', ['active', 'paused', 'removed']]], texts: [], dates: [] };

/** Checkboxes of a worker's roles. */
function RoleChoice({ chosen, onChange, legend }: { chosen: WorkerRole[]; onChange(roles: WorkerRole[]): void; legend: string }) {
  return (
    <fieldset class="roles">
      <legend>{legend}</legend>
      {workerRoles.map((r) => (
        <label key={r} class="choice">
          <input
            type="checkbox"
            checked={chosen.includes(r)}
            onChange={() =>
              onChange(chosen.includes(r) ? chosen.filter((c) => c !== r) : workerRoles.filter((w) => w === r || chosen.includes(w)))
            }
          />{' '}
          {r}
        </label>
      ))}
    </fieldset>
  );
}

function NewWorker({ onCreated }: { onCreated(w: Schemas['WorkerCreated']): void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [roles, setRoles] = useState<WorkerRole[]>(['labeler']);
  const [calibrator, setCalibrator] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function create(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const body = { email, display_name: name, roles, calibrator };
      onCreated(await data(client.POST('/v1/workforce/workers', { body })));
      setEmail('');
      setName('');
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <form class="panel editor" onSubmit={create} aria-labelledby="new-worker-title">
      <h2 id="new-worker-title">New worker</h2>
      <div class="field">
        <label for="worker-email">E-mail address</label>
        <input id="worker-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="worker-name">Name</label>
        <input id="worker-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <RoleChoice chosen={roles} onChange={setRoles} legend="Roles" />
      <label class="choice">
        <input type="checkbox" checked={calibrator} onChange={() => setCalibrator(!calibrator)} /> Calibrator (answers calibration batches)
      </label>
      <Problem error={error} />
      <div class="actions spaced">
        <button class="primary" type="submit">
          Create the worker
        </button>
      </div>
    </form>
  );
}

/** A worker's row: their facts, and what the member may do to them. */
function WorkerRow({ worker, changes, onDone }: { worker: Worker; changes: boolean; onDone(text: string, kind?: 'good' | 'bad'): void }) {
  const [editing, setEditing] = useState(false);
  const [roles, setRoles] = useState<WorkerRole[]>(worker.roles);
  const [confirming, setConfirming] = useState(false);
  const path = { params: { path: { workerId: worker.worker_id } } };
  const act = async (what: () => Promise<string>) => {
    try {
      onDone(await what());
    } catch (err) {
      onDone(`${worker.display_name}: ${messageOf(err)}`, 'bad');
    }
  };
  const removed = worker.status === 'removed';
  return (
    <tr>
      <td>{worker.display_name}</td>
      <td>{worker.email}</td>
      <td>
        {editing ? (
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              void act(async () => {
                const w = await data(client.PATCH('/v1/workforce/workers/{workerId}', { ...path, body: { roles } }));
                setEditing(false);
                return `${w.display_name} is now ${w.roles.join(', ')}.`;
              });
            }}
          >
            <RoleChoice chosen={roles} onChange={setRoles} legend={`Roles of ${worker.display_name}`} />
            <button class="primary" type="submit">
              Save
            </button>
          </form>
        ) : (
          worker.roles.join(', ')
        )}
        {worker.calibrator && <span class="muted"> · calibrator</span>}
      </td>
      <td>{worker.status}</td>
      <td>{when(worker.created_at)}</td>
      <td>{when(worker.last_seen_at)}</td>
      {changes && (
        <td>
          <div class="row-actions">
            {!removed && !editing && (
              <button type="button" onClick={() => setEditing(true)} aria-label={`Change the roles of ${worker.display_name}`}>
                Roles
              </button>
            )}
            {worker.status === 'active' && (
              <button
                type="button"
                aria-label={`Pause ${worker.display_name}`}
                onClick={() =>
                  act(async () => {
                    await data(client.POST('/v1/workforce/workers/{workerId}/pause', path));
                    return `Paused ${worker.display_name}: no new work for them.`;
                  })
                }
              >
                Pause
              </button>
            )}
            {worker.status === 'paused' && (
              <button
                type="button"
                aria-label={`Unpause ${worker.display_name}`}
                onClick={() =>
                  act(async () => {
                    await data(client.POST('/v1/workforce/workers/{workerId}/unpause', path));
                    return `${worker.display_name} may work again.`;
                  })
                }
              >
                Unpause
              </button>
            )}
            {!removed && (
              <button
                type="button"
                aria-label={`New password for ${worker.display_name}`}
                onClick={() =>
                  act(async () => {
                    const reset = await data(client.POST('/v1/workforce/workers/{workerId}/reset_password', { ...path, body: {} }));
                    return `New password for ${worker.display_name}, shown this once: ${reset.password ?? '(none)'}. Their sessions ended.`;
                  })
                }
              >
                New password
              </button>
            )}
            {!removed &&
              (confirming ? (
                <fieldset class="confirm">
                  <legend>Remove {worker.display_name}?</legend>
                  <button
                    type="button"
                    onClick={() =>
                      act(async () => {
                        await data(client.DELETE('/v1/workforce/workers/{workerId}', path));
                        return `Removed ${worker.display_name}.`;
                      })
                    }
                  >
                    Yes, remove
                  </button>
                  <button type="button" onClick={() => setConfirming(false)}>
                    No
                  </button>
                </fieldset>
              ) : (
                <button type="button" aria-label={`Remove ${worker.display_name}…`} onClick={() => setConfirming(true)}>
                  Remove…
                </button>
              ))}
          </div>
        </td>
      )}
    </tr>
  );
}

export function Workforce({ route, role }: { route: Route; role: Role }) {
  const query: Record<string, string> = {};
  for (const name of [...filterNames(fields), 'next_token']) {
    const v = route.query.get(name);
    if (v) query[name] = v;
  }
  const key = JSON.stringify(query);
  const [loaded, reload] = useLoad(() => data(client.GET('/v1/workforce/workers', { params: { query: { ...query, limit: 50 } } })), [key]);
  const [notice, setNotice] = useState<Said | null>(null);
  const [created, setCreated] = useState<Schemas['WorkerCreated'] | null>(null);
  const changes = may(role, 'updateWorker');
  const done = (text: string, kind: 'good' | 'bad' = 'good') => {
    setCreated(null);
    setNotice({ kind, text });
    if (kind === 'good') reload();
  };
  return (
    <>
      <Heading>Workforce</Heading>
      <p class="muted">
        Your own workers of this mode. They log in to the labeling app at <code>/label/</code>; which projects they work on is each
        project's staffing.
      </p>
      <FilterForm route={route} screen="workforce" fields={fields} idPrefix="w" />
      {created && (
        <div class="notice good" role="status">
          <p>Created {created.display_name}.</p>
          {created.initial_password && (
            <p>
              Their password, shown this once: <code class="secret">{created.initial_password}</code>
            </p>
          )}
        </div>
      )}
      <Notice notice={notice} />
      <Pending loaded={loaded}>
        {(list) =>
          list.docs.length === 0 ? (
            <p>No worker matches.</p>
          ) : (
            <>
              <table class="grid workers">
                <caption class="sr-only">The account's workers of this mode</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">E-mail address</th>
                    <th scope="col">Roles</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last seen</th>
                    {changes && (
                      <th scope="col">
                        <span class="sr-only">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {list.docs.map((w) => (
                    <WorkerRow key={`${w.worker_id} ${w.status} ${w.roles.join()}`} worker={w} changes={changes} onDone={done} />
                  ))}
                </tbody>
              </table>
              <Pager route={route} screen="workforce" next={list.next_token} />
            </>
          )
        }
      </Pending>
      {may(role, 'createWorker') && (
        <NewWorker
          onCreated={(w) => {
            setNotice(null);
            setCreated(w);
            reload();
          }}
        />
      )}
    </>
  );
}
