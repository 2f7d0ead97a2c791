// The member's own sessions (GET /v1/sessions), each one ended on its own or all at once.
import { client, data } from '../api.ts';
import { useLoad } from '../load.ts';
import { Heading, Pending, when } from '../ui.tsx';

export function Sessions({ onLoggedOut }: { onLoggedOut(): void }) {
  const [loaded, reload] = useLoad(() => data(client.GET('/v1/sessions')), []);
  async function end(sessionId: string, current: boolean) {
    await data(client.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } }));
    if (current) onLoggedOut();
    else reload();
  }
  async function endAll() {
    await data(client.DELETE('/v1/sessions'));
    onLoggedOut();
  }
  return (
    <>
      <Heading>Your sessions</Heading>
      <Pending loaded={loaded}>
        {(list) => (
          <>
            <table class="grid">
              <caption class="sr-only">Your sessions, the newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Began</th>
                  <th scope="col">Last used</th>
                  <th scope="col">From</th>
                  <th scope="col">Via</th>
                  <th scope="col">
                    <span class="sr-only">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.docs.map((s) => (
                  <tr key={s.session_id}>
                    <td>
                      {when(s.created_at)}
                      {s.current ? ' (this one)' : ''}
                    </td>
                    <td>{when(s.last_used_at)}</td>
                    <td>{s.address ?? '—'}</td>
                    <td>{s.via}</td>
                    <td>
                      <button type="button" onClick={() => end(s.session_id, s.current)}>
                        End
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div class="actions spaced">
              <button type="button" onClick={endAll}>
                Log out everywhere
              </button>
            </div>
          </>
        )}
      </Pending>
    </>
  );
}
