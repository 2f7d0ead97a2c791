// The account's members (GET /v1/members; admins and owners): who they are, their role and status.
import { client, data } from '../api.ts';
import { useLoad } from '../load.ts';
import { Heading, Pending, when } from '../ui.tsx';

export function Members() {
  const [loaded] = useLoad(() => data(client.GET('/v1/members')), []);
  return (
    <>
      <Heading>Members</Heading>
      <Pending loaded={loaded}>
        {(list) => (
          <table class="grid">
            <caption class="sr-only">The account's members</caption>
            <thead>
              <tr>
                <th scope="col">E-mail address</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Last log-in</th>
              </tr>
            </thead>
            <tbody>
              {list.docs.map((m) => (
                <tr key={m.member_id}>
                  <td>{m.email}</td>
                  <td>{m.display_name ?? '—'}</td>
                  <td>{m.role}</td>
                  <td>{m.status}</td>
                  <td>{when(m.last_login_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Pending>
    </>
  );
}
