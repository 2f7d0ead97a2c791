// The activity log (issue 35, Settings; admins and owners): who did what, when, from where, through
// GET /v1/activity. Its filters are the operation's query parameters under the same names, kept in the
// address as the data manager's are (a link shows the same view); pages follow `next_token`.
import { client, data } from '../api.ts';
import { useLoad } from '../load.ts';
import { FilterForm, type FilterFields, filterNames } from '../filters.tsx';
import type { Route } from '../route.ts';
import { Heading, Pager, Pending, when } from '../ui.tsx';

const fields: FilterFields = {
  choices: [['actor_type', 'Actor type', ['member', 'api_key', 'worker', 'operator', 'system']]],
  texts: [
    ['action', 'Action (e.g. api_key.created)'],
    ['actor_id', 'Actor id'],
    ['target_type', 'Target type'],
    ['target_id', 'Target id'],
  ],
  dates: [
    ['since', 'From'],
    ['until', 'Before'],
  ],
};

export function Activity({ route }: { route: Route }) {
  const query: Record<string, string> = {};
  for (const name of [...filterNames(fields), 'next_token']) {
    const v = route.query.get(name);
    if (v) query[name] = v;
  }
  const key = JSON.stringify(query);
  const [loaded] = useLoad(
    () => data(client.GET('/v1/activity', { params: { query: { ...query, limit: 50 } as Record<string, string | number> } })),
    [key],
  );
  return (
    <>
      <Heading>Activity</Heading>
      <FilterForm route={route} screen="activity" fields={fields} idPrefix="a" />
      <Pending loaded={loaded}>
        {(list) => (
          <>
            <table class="grid activity">
              <caption class="sr-only">The account's activity, the newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Action</th>
                  <th scope="col">Who</th>
                  <th scope="col">Target</th>
                  <th scope="col">Mode</th>
                  <th scope="col">Address</th>
                  <th scope="col">Request</th>
                </tr>
              </thead>
              <tbody>
                {list.docs.map((a) => (
                  <tr key={a.activity_id}>
                    <td>{when(a.at)}</td>
                    <td class="mono">{a.action}</td>
                    <td>
                      {a.actor.type}: {a.actor.name ?? a.actor.id ?? '—'}
                    </td>
                    <td>
                      {a.target.type}
                      {a.target.id ? ` ${a.target.id}` : ''}
                    </td>
                    <td>{a.mode ?? '—'}</td>
                    <td class="mono">{a.address ?? '—'}</td>
                    <td class="mono">{a.request_id ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.docs.length === 0 && <p>Nothing matches.</p>}
            <Pager route={route} screen="activity" next={list.next_token} />
          </>
        )}
      </Pending>
    </>
  );
}
