// The account's callbacks of the mode (issue 35, Deliveries), through GET /v1/callbacks: the newest
// first, by state (pending, delivered, failed) and event in the address, pages by `next_token`; each
// one's attempts, its last answer and what comes next; its task's page (every attempt). A task's
// callbacks are sent again one by one or as a selection (POST /v1/task/{id}/callbacks/redeliver),
// offered to the roles that may (access.ts).
import { useState } from 'preact/hooks';
import { may } from '../access.ts';
import { client, data, type Role, type Schemas, messageOf } from '../api.ts';
import { FilterForm, type FilterFields, filterNames } from '../filters.tsx';
import { useLoad } from '../load.ts';
import { href, type Route } from '../route.ts';
import { Heading, Link, Pager, Pending, when, Notice, type Said } from '../ui.tsx';

type Callback = Schemas['CallbackMessage'];

const fields: FilterFields = {
  choices: [
    ['state', 'State', ['pending', 'delivered', 'failed']],
    ['event', 'Event', ['task_completed', 'attachment_error', 'batch_completed']],
  ],
  texts: [],
  dates: [],
};

function lastAnswer(c: Callback): string {
  const a = c.last_attempt;
  if (!a) return 'not sent yet';
  return `${a.status_code ?? a.error ?? 'no answer'} (${when(a.attempted_at)})`;
}

function next(c: Callback): string {
  if (c.state === 'delivered') return `delivered ${when(c.delivered_at)}`;
  if (c.state === 'failed') return `given up ${when(c.failed_at)}`;
  return `next try ${when(c.next_attempt_at)}`;
}

export function Deliveries({ route, role }: { route: Route; role: Role }) {
  const query: Record<string, string> = {};
  for (const name of [...filterNames(fields), 'next_token']) {
    const v = route.query.get(name);
    if (v) query[name] = v;
  }
  const key = JSON.stringify(query);
  const [loaded, reload] = useLoad(() => data(client.GET('/v1/callbacks', { params: { query: { ...query, limit: 50 } } })), [key]);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [notice, setNotice] = useState<Said | null>(null);
  const redelivering = may(role, 'redeliverTaskCallback');
  const toggle = (taskId: string) => {
    const nextSet = new Set(chosen);
    if (nextSet.has(taskId)) nextSet.delete(taskId);
    else nextSet.add(taskId);
    setChosen(nextSet);
  };
  async function redeliver(taskIds: string[]) {
    const refused: string[] = [];
    for (const taskId of taskIds) {
      try {
        await data(client.POST('/v1/task/{taskId}/callbacks/redeliver', { params: { path: { taskId } } }));
      } catch (err) {
        refused.push(`${taskId}: ${messageOf(err)}`);
      }
    }
    const sent = taskIds.length - refused.length;
    setNotice({
      kind: refused.length ? 'bad' : 'good',
      text: `Queued ${sent} callback${sent === 1 ? '' : 's'} again.${refused.length ? ` Refused: ${refused.join('; ')}` : ''}`,
    });
    setChosen(new Set());
    reload();
  }
  return (
    <>
      <Heading>Deliveries</Heading>
      <FilterForm route={route} screen="deliveries" fields={fields} idPrefix="d" />
      <Notice notice={notice} />
      <Pending loaded={loaded}>
        {(list) =>
          list.docs.length === 0 ? (
            <p>No callback matches.</p>
          ) : (
            <>
              {redelivering && (
                <div class="actions toolbar">
                  <button type="button" disabled={chosen.size === 0} onClick={() => redeliver([...chosen])}>
                    Redeliver selected ({chosen.size})
                  </button>
                </div>
              )}
              <table class="grid deliveries">
                <caption class="sr-only">The account's callbacks, the newest first</caption>
                <thead>
                  <tr>
                    {redelivering && (
                      <th scope="col">
                        <span class="sr-only">Select</span>
                      </th>
                    )}
                    <th scope="col">Created</th>
                    <th scope="col">Event</th>
                    <th scope="col">Of</th>
                    <th scope="col">Address</th>
                    <th scope="col">State</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Last answer</th>
                    <th scope="col">Then</th>
                  </tr>
                </thead>
                <tbody>
                  {list.docs.map((c) => (
                    <tr key={c.callback_id}>
                      {redelivering && (
                        <td>
                          {c.task_id && (
                            <input
                              type="checkbox"
                              aria-label={`Select the callback of task ${c.task_id}`}
                              checked={chosen.has(c.task_id)}
                              onChange={() => toggle(c.task_id!)}
                            />
                          )}
                        </td>
                      )}
                      <td>{when(c.created_at)}</td>
                      <td>{c.event}</td>
                      <td>
                        {c.task_id ? (
                          <Link href={href(`tasks/${encodeURIComponent(c.task_id)}`)}>{c.task_id}</Link>
                        ) : (
                          <Link href={href('tasks', { batch: c.batch ?? '' })}>batch {c.batch}</Link>
                        )}
                      </td>
                      <td class="mono">{c.url}</td>
                      <td>{c.state}</td>
                      <td class="number">{c.attempts}</td>
                      <td>{lastAnswer(c)}</td>
                      <td>{next(c)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager route={route} screen="deliveries" next={list.next_token} />
            </>
          )
        }
      </Pending>
    </>
  );
}
