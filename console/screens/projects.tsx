// The projects of the account's mode (issue 35, Projects): the list (GET /v1/projects, archived ones on
// request) and a new project (POST /v1/projects); one project's page: its facts, archive and unarchive,
// its instruction as a worker sees it, a new parameter version (POST .../setParams, the instruction and
// the other parameters as JSON), two versions compared side by side (`from` and `to` in the address),
// its ontology versions, and its staffing (staffing.tsx). Changes are offered to the roles that may
// make them (access.ts).
import { useState } from 'preact/hooks';
import { may } from '../access.ts';
import { client, data, type Role, type Schemas, messageOf } from '../api.ts';
import { Instruction } from '../instruction.tsx';
import { useLoad } from '../load.ts';
import { href, navigate, type Route } from '../route.ts';
import { Heading, Link, Pending, when, Problem, Notice, type Said } from '../ui.tsx';
import { compareVersions, type Change } from '../versions.ts';
import { StaffingPanel } from './staffing.tsx';

type Project = Schemas['Project'];
type Version = Schemas['ProjectParamVersion'];
type TaskType = Schemas['TaskType'];

/** Every task type a project may have, in the menu's order: a type the contract adds or drops is a compile error here. */
const typeMenu: Record<TaskType, true> = {
  imageannotation: true,
  categorization: true,
  comparison: true,
  textcollection: true,
  namedentityrecognition: true,
  transcription: true,
  audiotranscription: true,
  documenttranscription: true,
  videoplaybackannotation: true,
  lidarsegmentation: true,
  annotation: true,
  pointannotation: true,
  lineannotation: true,
  polygonannotation: true,
  segmentannotation: true,
  datacollection: true,
};
const taskTypes = Object.keys(typeMenu) as TaskType[];

/** Which of the three kinds of project it is. */
const kindOf = (p: Project) => (p.rapid ? 'Rapid' : p.studio ? 'Studio' : 'Standard');

/** The address of a project's page. */
export const projectHref = (name: string, query: Record<string, string> = {}) => href(`projects/${encodeURIComponent(name)}`, query);

function NewProject() {
  const [name, setName] = useState('');
  const [type, setType] = useState<TaskType>('imageannotation');
  const [instruction, setInstruction] = useState('');
  const [error, setError] = useState<string | null>(null);
  async function create(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const body = { name, type, ...(instruction ? { params: { instruction } } : {}) };
      const project = await data(client.POST('/v1/projects', { body, headers: { 'Idempotency-Key': crypto.randomUUID() } }));
      navigate(projectHref(project.name));
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <form class="panel editor" onSubmit={create} aria-labelledby="new-project-title">
      <h2 id="new-project-title">New project</h2>
      <div class="field">
        <label for="project-name">Name</label>
        <input id="project-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="project-type">Task type</label>
        <select id="project-type" value={type} onChange={(e) => setType(e.currentTarget.value as TaskType)}>
          {taskTypes.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="project-instruction">Instruction (Markdown; optional)</label>
        <textarea id="project-instruction" rows={4} value={instruction} onInput={(e) => setInstruction(e.currentTarget.value)} />
      </div>
      <Problem error={error} />
      <div class="actions">
        <button class="primary" type="submit">
          Create the project
        </button>
      </div>
    </form>
  );
}

export function ProjectsScreen({ route, role }: { route: Route; role: Role }) {
  const archived = route.query.get('archived') === 'true';
  const [loaded] = useLoad(() => data(client.GET('/v1/projects', { params: { query: { archived: String(archived) } } })), [archived]);
  return (
    <>
      <Heading>Projects</Heading>
      <div class="actions toolbar">
        <Link href={href('projects', archived ? {} : { archived: 'true' })}>
          {archived ? 'Show the projects in use' : 'Show the archived projects'}
        </Link>
      </div>
      <Pending loaded={loaded}>
        {(projects) =>
          projects.length === 0 ? (
            <p>{archived ? 'No project is archived.' : 'No project yet in this mode.'}</p>
          ) : (
            <table class="grid projects">
              <caption class="sr-only">{archived ? 'The archived projects' : 'The projects in use'}, the newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Task type</th>
                  <th scope="col">Created</th>
                  <th scope="col">Parameter versions</th>
                  <th scope="col">Kind</th>
                </tr>
              </thead>
              <tbody>
                {[...projects]
                  .sort((a, b) => b.created_at.localeCompare(a.created_at))
                  .map((p) => (
                    <tr key={p.name}>
                      <td>
                        <Link href={projectHref(p.name)}>{p.name}</Link>
                      </td>
                      <td>{p.type}</td>
                      <td>{when(p.created_at)}</td>
                      <td>{p.param_history.length}</td>
                      <td>{kindOf(p)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          )
        }
      </Pending>
      {may(role, 'createProject') && <NewProject />}
    </>
  );
}

/** A version's parameters without the bookkeeping and the instruction (edited on its own). */
function otherParams(version: Version | undefined): Record<string, unknown> {
  const { version: _v, created_at: _c, instruction: _i, ...rest } = version ?? { version: 0, created_at: '' };
  return rest;
}

function NewVersion({ project, onSaved }: { project: Project; onSaved(p: Project): void }) {
  const latest = project.param_history.at(-1);
  const [instruction, setInstruction] = useState(latest?.instruction ?? '');
  const [others, setOthers] = useState(JSON.stringify(otherParams(latest), null, 2));
  const [error, setError] = useState<string | null>(null);
  async function save(e: Event) {
    e.preventDefault();
    setError(null);
    let params: unknown;
    try {
      params = JSON.parse(others || '{}');
    } catch (err) {
      return setError(`The other parameters are not JSON: ${messageOf(err)}`);
    }
    if (!params || typeof params !== 'object' || Array.isArray(params))
      return setError('The other parameters must be a JSON object, as {"objects_to_annotate": ["car"]}.');
    try {
      const body = { ...(params as Record<string, unknown>), instruction };
      onSaved(await data(client.POST('/v1/projects/{projectName}/setParams', { params: { path: { projectName: project.name } }, body })));
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <form class="panel editor" onSubmit={save} aria-labelledby="new-version-title">
      <h2 id="new-version-title">New parameter version</h2>
      <p class="muted">
        Tasks created from now on without <code>project_param_version</code> use it; tasks already created keep theirs.
      </p>
      <div class="field">
        <label for="version-instruction">Instruction (Markdown)</label>
        <textarea id="version-instruction" rows={6} value={instruction} onInput={(e) => setInstruction(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="version-params">The other parameters (JSON)</label>
        <textarea id="version-params" class="mono" rows={6} value={others} onInput={(e) => setOthers(e.currentTarget.value)} />
      </div>
      <Problem error={error} />
      <div class="actions">
        <button class="primary" type="submit">
          Save as version {project.param_history.length}
        </button>
      </div>
    </form>
  );
}

const changeWords: Record<Change['kind'], string> = { added: 'added', removed: 'removed', changed: 'changed', same: 'unchanged' };

/** Two versions compared: each parameter's change, its lines marked (<ins>, <del>). */
function Comparison({ project, route }: { project: Project; route: Route }) {
  const versions = project.param_history;
  if (versions.length < 2) return null;
  const pick = (name: string, fallback: number) => {
    const n = Number(route.query.get(name));
    return Number.isInteger(n) && n >= 0 && n < versions.length && route.query.get(name) !== null ? n : fallback;
  };
  const to = pick('to', versions.length - 1);
  const from = pick('from', Math.max(0, to - 1));
  const changes = compareVersions(versions[from]!, versions[to]!);
  const shown = changes.filter((c) => c.kind !== 'same');
  const same = changes.filter((c) => c.kind === 'same').map((c) => c.name);
  function choose(e: Event) {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    navigate(projectHref(project.name, { from: String(form.get('from')), to: String(form.get('to')) }), true);
  }
  const choice = (name: 'from' | 'to', label: string, value: number) => (
    <div class="field">
      <label for={`compare-${name}`}>{label}</label>
      <select id={`compare-${name}`} name={name} value={String(value)}>
        {versions.map((v) => (
          <option key={v.version} value={String(v.version)}>
            version {v.version} ({when(v.created_at)})
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <section class="panel" aria-labelledby="compare-title">
      <h2 id="compare-title">
        Version {from} and version {to} compared
      </h2>
      <form class="filters compare" onSubmit={choose} aria-label="The versions to compare">
        {choice('from', 'From', from)}
        {choice('to', 'To', to)}
        <div class="actions">
          <button class="primary" type="submit">
            Compare
          </button>
        </div>
      </form>
      {shown.length === 0 ? (
        <p>The two versions hold the same parameters.</p>
      ) : (
        <table class="grid diff">
          <caption class="sr-only">
            What version {to} changed from version {from}
          </caption>
          <thead>
            <tr>
              <th scope="col">Parameter</th>
              <th scope="col">Change</th>
              <th scope="col">Lines (removed struck through, added underlined)</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((c) => (
              <tr key={c.name} class={c.kind}>
                <th scope="row" class="mono">
                  {c.name}
                </th>
                <td>{changeWords[c.kind]}</td>
                <td>
                  <pre class="lines">
                    {c.lines.map((l, i) =>
                      l.kind === 'added' ? (
                        <ins key={i}>+ {l.text}</ins>
                      ) : l.kind === 'removed' ? (
                        <del key={i}>- {l.text}</del>
                      ) : (
                        <span key={i}>{`  ${l.text}`}</span>
                      ),
                    )}
                  </pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {same.length > 0 && <p class="muted">Unchanged: {same.join(', ')}.</p>}
    </section>
  );
}

function Versions({ project }: { project: Project }) {
  return (
    <section class="panel" aria-labelledby="versions-title">
      <h2 id="versions-title">Parameter versions</h2>
      {project.param_history.length === 0 ? (
        <p>No parameter version yet: tasks of this project give their parameters themselves.</p>
      ) : (
        <table class="grid versions">
          <caption class="sr-only">The project's parameter versions, the first first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Created</th>
              <th scope="col">Parameters</th>
            </tr>
          </thead>
          <tbody>
            {project.param_history.map((v) => (
              <tr key={v.version}>
                <td>{v.version}</td>
                <td>{when(v.created_at)}</td>
                <td class="mono">
                  {Object.keys(v)
                    .filter((k) => k !== 'version' && k !== 'created_at')
                    .join(', ') || '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Ontologies({ project }: { project: Project }) {
  const latest = project.ontologyHistory.at(-1);
  if (!latest) return null;
  return (
    <section class="panel" aria-labelledby="ontology-title">
      <h2 id="ontology-title">Ontology</h2>
      <ul>
        {project.ontologyHistory.map((o) => (
          <li key={o.version}>
            Version {o.version}
            {o.name ? ` (${o.name})` : ''}, {when(o.created_at)}
          </li>
        ))}
      </ul>
      <details>
        <summary>Version {latest.version} as JSON</summary>
        <pre class="json">{JSON.stringify(latest.ontology, null, 2)}</pre>
      </details>
    </section>
  );
}

export function ProjectView({ route, role }: { route: Route; role: Role }) {
  const name = decodeURIComponent(route.path.slice('projects/'.length));
  const [loaded] = useLoad(() => data(client.GET('/v1/projects/{projectName}', { params: { path: { projectName: name } } })), [name]);
  const [notice, setNotice] = useState<Said | null>(null);
  const [saved, setSaved] = useState<Project | null>(null);
  async function archive(project: Project, to: boolean) {
    try {
      const path = { projectName: project.name };
      const p = await data(
        to
          ? client.POST('/v1/projects/{projectName}/archive', { params: { path } })
          : client.POST('/v1/projects/{projectName}/unarchive', { params: { path } }),
      );
      setSaved(p);
      setNotice({ kind: 'good', text: p.archived ? `Archived ${p.name}: it takes no new task.` : `${p.name} is in use again.` });
    } catch (err) {
      setNotice({ kind: 'bad', text: messageOf(err) });
    }
  }
  return (
    <>
      <Heading>Project {name}</Heading>
      <p>
        <Link href={href('projects')}>All projects</Link>
      </p>
      <Pending loaded={loaded}>
        {(fetched) => {
          const project = saved && saved.name === fetched.name ? saved : fetched;
          const latest = project.param_history.at(-1);
          return (
            <div class="stack">
              <Notice notice={notice} />
              <section class="panel" aria-labelledby="facts-title">
                <h2 id="facts-title">Facts</h2>
                <dl class="facts">
                  <dt>Task type</dt>
                  <dd>{project.type}</dd>
                  <dt>Created</dt>
                  <dd>{when(project.created_at)}</dd>
                  <dt>Kind</dt>
                  <dd>{kindOf(project)}</dd>
                  <dt>Archived</dt>
                  <dd>{project.archived ? 'yes: it takes no new task' : 'no'}</dd>
                </dl>
                <div class="actions">
                  <Link href={href('tasks', { project: project.name })}>Its tasks</Link>
                  <Link href={href('batches', { project: project.name })}>Its batches</Link>
                  {may(role, 'archiveProject') && (
                    <button type="button" onClick={() => archive(project, !project.archived)}>
                      {project.archived ? 'Unarchive' : 'Archive'}
                    </button>
                  )}
                </div>
              </section>
              <section class="panel" aria-labelledby="preview-title">
                <h2 id="preview-title">Instruction, as a worker sees it</h2>
                {latest?.instruction ? (
                  <Instruction text={latest.instruction} />
                ) : (
                  <p>The latest version has no instruction: each task gives its own.</p>
                )}
              </section>
              {may(role, 'getProjectStaffing') && <StaffingPanel project={project.name} role={role} />}
              <Comparison project={project} route={route} />
              <Versions project={project} />
              {may(role, 'setProjectParams') && (
                <NewVersion
                  key={project.param_history.length}
                  project={project}
                  onSaved={(p) => {
                    setSaved(p);
                    setNotice({ kind: 'good', text: `Saved version ${p.param_history.length - 1}.` });
                    navigate(projectHref(p.name), true);
                  }}
                />
              )}
              <Ontologies project={project} />
            </div>
          );
        }}
      </Pending>
    </>
  );
}
