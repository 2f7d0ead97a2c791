// The data manager (issue 35): the account's tasks of the mode as a table, through GET /v1/tasks.
// Its filters are the list API's query parameters under the same names, kept in the address (a
// link shows the same view); the columns too (`columns`), and the page (`next_token`). The rows are
// walked with the arrow keys and selected with Space; a selection is canceled task by task
// (POST /v1/task/{id}/cancel), the whole filter by POST /v1/tasks/cancel, repeated until nothing
// pending matches. Cancel is offered to the roles that may call it (access.ts).
import { useEffect, useRef, useState } from 'preact/hooks';
import { may } from '../access.ts';
import { ApiError, client, data, type Role, type Schemas, messageOf } from '../api.ts';
import { useLoad } from '../load.ts';
import { href, navigate, type Route } from '../route.ts';
import { FilterForm, type FilterFields, filterNames } from '../filters.tsx';
import { Heading, Link, Notice, Pager, Pending, type Said, when } from '../ui.tsx';

type Status = Schemas['TaskStatus'];
/** A row of the list (a limited response has fewer fields: the table shows what is there). */
type Task = Partial<Schemas['Task']> & { task_id: string; status: Status };
type ReviewStatus = Schemas['CustomerReviewStatus'];

const statuses: Status[] = ['pending', 'completed', 'canceled', 'error'];
const reviewStatuses: ReviewStatus[] = ['pending', 'accepted', 'rejected', 'fixed'];

/** The list's filters, by their query parameter (GET /v1/tasks); the time bounds take a date. */
const fields: FilterFields = {
  choices: [
    ['status', 'Status', statuses],
    ['customer_review_status', 'Review status', reviewStatuses],
  ],
  texts: [
    ['type', 'Type'],
    ['project', 'Project'],
    ['batch', 'Batch'],
    ['unique_id', 'Unique id'],
    ['tags', 'Tags (comma-separated, all must match)'],
  ],
  dates: [
    ['created_after', 'Created from'],
    ['created_before', 'Created before'],
    ['completed_after', 'Completed from'],
    ['completed_before', 'Completed before'],
    ['updated_after', 'Updated from'],
    ['updated_before', 'Updated before'],
  ],
};

interface Column {
  id: string;
  title: string;
  cell(task: Task): preact.ComponentChildren;
}
const columns: Column[] = [
  // The task's id opens its view (a link: Enter on it, or a new tab).
  { id: 'task_id', title: 'Task', cell: (t) => <Link href={href(`tasks/${encodeURIComponent(t.task_id)}`)}>{t.task_id}</Link> },
  { id: 'created', title: 'Created', cell: (t) => when(t.created_at) },
  { id: 'type', title: 'Type', cell: (t) => t.type ?? '—' },
  { id: 'status', title: 'Status', cell: (t) => t.status },
  { id: 'project', title: 'Project', cell: (t) => t.project ?? '—' },
  { id: 'batch', title: 'Batch', cell: (t) => t.batch ?? '—' },
  { id: 'tags', title: 'Tags', cell: (t) => (t.tags ?? []).join(', ') || '—' },
  { id: 'unique_id', title: 'Unique id', cell: (t) => t.unique_id ?? '—' },
  { id: 'completed', title: 'Completed', cell: (t) => when(t.completed_at) },
  { id: 'review', title: 'Review', cell: (t) => t.customer_review_status ?? '—' },
  { id: 'updated', title: 'Updated', cell: (t) => when(t.updated_at) },
];
const defaultColumns = ['task_id', 'created', 'type', 'status', 'project', 'batch', 'tags'];

/** The list's query from the address: the filters (tags split at commas), the page's token. */
function listQuery(route: Route): Record<string, string | string[]> {
  const q: Record<string, string | string[]> = {};
  for (const name of filterNames(fields)) {
    const value = route.query.get(name);
    if (!value) continue;
    q[name] =
      name === 'tags'
        ? value
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean)
        : value;
  }
  return q;
}

function queryString(q: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(q)) for (const v of Array.isArray(value) ? value : [value]) params.append(name, v);
  return params.toString();
}

/** The list, or the bulk cancel, with the query as the list's rules take it (tags repeated). */
async function call<T>(operation: 'list' | 'cancel', q: Record<string, string | string[]>): Promise<T> {
  const search = queryString(q);
  const options = { querySerializer: () => search };
  const answer = operation === 'list' ? await client.GET('/v1/tasks', options) : await client.POST('/v1/tasks/cancel', options);
  return data(Promise.resolve(answer as { data?: T; error?: unknown; response: Response }));
}

function ColumnChooser({ route, shown }: { route: Route; shown: string[] }) {
  function toggle(id: string) {
    const next = shown.includes(id) ? shown.filter((c) => c !== id) : columns.map((c) => c.id).filter((c) => c === id || shown.includes(c));
    const query = new URLSearchParams(route.query);
    query.set('columns', next.join(','));
    navigate(href('tasks', query), true);
  }
  return (
    <details class="columns">
      <summary>Columns</summary>
      <fieldset>
        <legend class="sr-only">Columns to show</legend>
        {columns.map((c) => (
          <label key={c.id} class="choice">
            <input type="checkbox" checked={shown.includes(c.id)} onChange={() => toggle(c.id)} /> {c.title}
          </label>
        ))}
      </fieldset>
    </details>
  );
}

export function TasksScreen({ route, role }: { route: Route; role: Role }) {
  const q = listQuery(route);
  const token = route.query.get('next_token');
  const key = route.query.toString();
  const [loaded, reload] = useLoad(
    () => call<Schemas['TaskList']>('list', { ...q, limit: '50', ...(token ? { next_token: token } : {}) }),
    [key],
  );
  const shown = (route.query.get('columns') ?? defaultColumns.join(',')).split(',').filter((id) => columns.some((c) => c.id === id));
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [active, setActive] = useState(0);
  const [notice, setNotice] = useState<Said | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const [busy, setBusy] = useState(false);
  const body = useRef<HTMLTableSectionElement>(null);
  const mayCancel = may(role, 'cancelTask');
  const mayCancelAll = may(role, 'cancelTasks');
  // Another filter or page: another set of rows, nothing of the old one selected.
  useEffect(() => {
    setSelected(new Set());
    setActive(0);
    setConfirmAll(false);
  }, [key]);

  function toggle(id: string) {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  }
  function focusRow(i: number, count: number) {
    const row = Math.max(0, Math.min(count - 1, i));
    setActive(row);
    (body.current?.rows[row] as HTMLElement | undefined)?.focus();
  }
  function onKey(e: KeyboardEvent, tasks: Task[], i: number) {
    if (e.target !== e.currentTarget) return;
    if (e.key === 'ArrowDown') focusRow(i + 1, tasks.length);
    else if (e.key === 'ArrowUp') focusRow(i - 1, tasks.length);
    else if (e.key === 'Home') focusRow(0, tasks.length);
    else if (e.key === 'End') focusRow(tasks.length - 1, tasks.length);
    else if (e.key === ' ' && mayCancel) toggle(tasks[i]!.task_id);
    else return;
    e.preventDefault();
  }

  async function cancelSelected() {
    setBusy(true);
    let done = 0;
    const failed: string[] = [];
    for (const taskId of selected) {
      try {
        await data(client.POST('/v1/task/{taskId}/cancel', { params: { path: { taskId } } }));
        done++;
      } catch (err) {
        failed.push(`${taskId}: ${err instanceof ApiError ? err.message : String(err)}`);
      }
    }
    setSelected(new Set());
    setBusy(false);
    setNotice(
      failed.length
        ? { kind: 'warn', text: `Canceled ${done} of ${done + failed.length} tasks. Not canceled: ${failed.join('; ')}` }
        : { kind: 'good', text: `Canceled ${done} task${done === 1 ? '' : 's'}.` },
    );
    reload();
  }

  async function cancelAll() {
    setConfirmAll(false);
    setBusy(true);
    let total = 0;
    try {
      for (;;) {
        const answer = await call<Schemas['TasksCanceled']>('cancel', { ...q, limit: '100' });
        total += answer.canceled;
        setNotice({ kind: 'warn', text: `Canceled ${total} so far…` });
        if (!answer.has_more) break;
      }
      setNotice({ kind: 'good', text: `Canceled ${total} pending task${total === 1 ? '' : 's'} that matched the filters.` });
    } catch (err) {
      setNotice({ kind: 'bad', text: `Canceled ${total}, then: ${messageOf(err)}` });
    }
    setBusy(false);
    setSelected(new Set());
    reload();
  }

  return (
    <>
      <Heading>Tasks</Heading>
      <FilterForm route={route} screen="tasks" fields={fields} idPrefix="f" keep={['columns']} />
      <ColumnChooser route={route} shown={shown} />
      <Notice notice={notice} />
      <Pending loaded={loaded}>
        {(list) => {
          const rows = list.docs as Task[];
          return (
            <>
              <div class="actions toolbar">
                <span role="status">
                  {list.total} task{list.total === 1 ? '' : 's'} match{list.total === 1 ? 'es' : ''}
                  {list.docs.length < list.total ? `; showing ${list.offset + 1}–${list.offset + list.docs.length}` : ''}
                </span>
                {mayCancel && (
                  <button type="button" disabled={busy || selected.size === 0} onClick={cancelSelected}>
                    Cancel selected ({selected.size})
                  </button>
                )}
                {mayCancelAll && !confirmAll && (
                  <button type="button" disabled={busy || list.total === 0} onClick={() => setConfirmAll(true)}>
                    Cancel all that match…
                  </button>
                )}
                {confirmAll && (
                  <fieldset class="confirm">
                    <legend>Cancel every pending task that matches these filters?</legend>
                    <button type="button" class="primary" onClick={cancelAll}>
                      Yes, cancel them
                    </button>{' '}
                    <button type="button" onClick={() => setConfirmAll(false)}>
                      No
                    </button>
                  </fieldset>
                )}
              </div>
              <table class="grid tasks">
                <caption class="sr-only">Tasks; arrow keys move between rows{mayCancel ? ', Space selects a row' : ''}</caption>
                <thead>
                  <tr>
                    {mayCancel && (
                      <th scope="col">
                        <span class="sr-only">Selected</span>
                      </th>
                    )}
                    {shown.map((id) => (
                      <th scope="col" key={id}>
                        {columns.find((c) => c.id === id)!.title}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody ref={body}>
                  {rows.map((t, i) => (
                    <tr
                      key={t.task_id}
                      tabIndex={i === Math.min(active, list.docs.length - 1) ? 0 : -1}
                      aria-selected={mayCancel ? selected.has(t.task_id) : undefined}
                      onKeyDown={(e) => onKey(e, rows, i)}
                      onFocus={() => setActive(i)}
                    >
                      {mayCancel && (
                        <td>
                          <input
                            type="checkbox"
                            tabIndex={-1}
                            aria-label={`Select task ${t.task_id}`}
                            checked={selected.has(t.task_id)}
                            onChange={() => toggle(t.task_id)}
                          />
                        </td>
                      )}
                      {shown.map((id) => (
                        <td key={id}>{columns.find((c) => c.id === id)!.cell(t)}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager route={route} screen="tasks" next={list.next_token} />
            </>
          );
        }}
      </Pending>
    </>
  );
}
