// The batches of the account's mode (issue 35, Batches): the list through GET /v1/batches, its filters
// the operation's query parameters kept in the address (a link shows the same view), 50 a page by
// `offset`; each batch's progress from GET /v1/batches/{name}/status, with what holds its tasks back
// from workers (the calibration gate) and why; its callback; finalize (POST .../finalize) for a batch
// in staging, offered to the roles that may call it (access.ts).
import { useState } from 'preact/hooks';
import { may } from '../access.ts';
import { client, data, type Role, type Schemas, messageOf } from '../api.ts';
import { FilterForm, type FilterFields, filterNames } from '../filters.tsx';
import { useLoad } from '../load.ts';
import { href, type Route } from '../route.ts';
import { Heading, Link, Pending, when, Notice, type Said } from '../ui.tsx';
import { projectHref } from './projects.tsx';

type Batch = Schemas['Batch'];
type Counts = Schemas['BatchTaskCounts'];

const pageSize = 50;

const fields: FilterFields = {
  choices: [['status', 'Status', ['staging', 'in_progress', 'completed']]],
  texts: [['project', 'Project']],
  dates: [
    ['start_time', 'Created from'],
    ['end_time', 'Created before'],
    ['completed_after', 'Completed from'],
    ['completed_before', 'Completed before'],
  ],
};

/** A batch's tasks by status, as a bar and in words. */
function Progress({ counts }: { counts: Counts }) {
  const total = counts.pending + counts.completed + counts.error + counts.canceled;
  const done = total - counts.pending;
  const words = total === 0 ? ['No task yet'] : [`${done} of ${total} done`, `${counts.pending} pending`];
  if (counts.error) words.push(`${counts.error} in error`);
  if (counts.canceled) words.push(`${counts.canceled} canceled`);
  return (
    <div class="progress">
      <progress max={Math.max(total, 1)} value={done} aria-label={words.join(', ')} />
      <span>{words.join(' · ')}</span>
      {counts.held && (
        <p class="notice warn">
          <strong>Held:</strong> {counts.held.replace(/^Held by the calibration gate: /, 'the calibration gate: ')}
        </p>
      )}
    </div>
  );
}

/** The batches of a page and each one's counts (one request per batch, all at once). */
async function loadPage(query: Record<string, string>, offset: number) {
  const list = await data(client.GET('/v1/batches', { params: { query: { ...query, limit: pageSize, offset } } }));
  const counts = await Promise.all(
    list.docs.map((b) => data(client.GET('/v1/batches/{batchName}/status', { params: { path: { batchName: b.name } } })).catch(() => null)),
  );
  return { list, counts };
}

export function BatchesScreen({ route, role }: { route: Route; role: Role }) {
  const query: Record<string, string> = {};
  for (const name of filterNames(fields)) {
    const v = route.query.get(name);
    if (v) query[name] = v;
  }
  const offset = Math.max(0, Math.floor(Number(route.query.get('offset')) || 0));
  const key = `${JSON.stringify(query)} ${offset}`;
  const [loaded, reload] = useLoad(() => loadPage(query, offset), [key]);
  const [notice, setNotice] = useState<Said | null>(null);
  const finalizing = may(role, 'finalizeBatch');
  async function finalize(batch: Batch) {
    try {
      const b = await data(client.POST('/v1/batches/{batchName}/finalize', { params: { path: { batchName: batch.name } } }));
      setNotice({
        kind: 'good',
        text:
          b.status === 'completed'
            ? `Finalized ${b.name}: every task was done, so it is completed.`
            : `Finalized ${b.name}: its tasks go to workers.`,
      });
      reload();
    } catch (err) {
      setNotice({ kind: 'bad', text: `${batch.name} was not finalized: ${messageOf(err)}` });
    }
  }
  const page = (to: number) => href('batches', { ...query, ...(to > 0 ? { offset: String(to) } : {}) });
  return (
    <>
      <Heading>Batches</Heading>
      <FilterForm route={route} screen="batches" fields={fields} idPrefix="b" />
      <Notice notice={notice} />
      <Pending loaded={loaded}>
        {({ list, counts }) =>
          list.docs.length === 0 ? (
            <p>No batch matches.</p>
          ) : (
            <>
              <p role="status">
                Batches {offset + 1} to {offset + list.docs.length} of {list.totalDocs}, the newest first.
              </p>
              <table class="grid batches">
                <caption class="sr-only">The batches, the newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Project</th>
                    <th scope="col">Status</th>
                    <th scope="col">Progress</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Callback</th>
                    <th scope="col">Created</th>
                    <th scope="col">Completed</th>
                    {finalizing && (
                      <th scope="col">
                        <span class="sr-only">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {list.docs.map((b, i) => (
                    <tr key={b.name}>
                      <td class="name">
                        <Link href={href('tasks', { batch: b.name })}>{b.name}</Link>
                        {b.archived && <span class="muted"> (archived)</span>}
                      </td>
                      <td>
                        <Link href={projectHref(b.project)}>{b.project}</Link>
                      </td>
                      <td>{b.status}</td>
                      <td>{counts[i] ? <Progress counts={counts[i]} /> : '—'}</td>
                      <td>{b.calibration_batch ? 'calibration' : b.self_label_batch ? 'self-label' : 'production'}</td>
                      <td class="mono">{b.callback ?? '—'}</td>
                      <td>{when(b.created_at)}</td>
                      <td>{when(b.completed_at)}</td>
                      {finalizing && (
                        <td>
                          {b.status === 'staging' && (
                            <button type="button" onClick={() => finalize(b)} aria-label={`Finalize ${b.name}`}>
                              Finalize
                            </button>
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
              <div class="actions spaced">
                {offset > 0 && <Link href={page(Math.max(0, offset - pageSize))}>Previous page</Link>}
                {list.has_more && <Link href={page(offset + pageSize)}>Next page</Link>}
              </div>
            </>
          )
        }
      </Pending>
    </>
  );
}
