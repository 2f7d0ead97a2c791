// The account's API keys (issue 35, Settings; admins and owners): the list (GET /v1/api_keys, revoked
// and expired ones on request), a new key with its name, mode, scopes and optional expiry
// (POST /v1/api_keys: the secret is shown once, here), and revoke (DELETE /v1/api_keys/{keyId}).
// The two keys of old are listed as full-scope keys and are not revoked here.
import { useState } from 'preact/hooks';
import { client, data, type Schemas, messageOf } from '../api.ts';
import { useLoad } from '../load.ts';
import { Heading, Pending, when, Problem, Notice, type Said } from '../ui.tsx';

type Scope = Schemas['ApiKeyScope'];
const scopes: Scope[] = ['tasks:read', 'tasks:write', 'projects:write', 'workforce', 'exports', 'admin'];

function NewKey({ onCreated }: { onCreated(created: Schemas['ApiKeyCreated']): void }) {
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'test' | 'live'>('test');
  const [chosen, setChosen] = useState<Set<Scope>>(new Set(['tasks:read']));
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<string | null>(null);
  async function create(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const body = {
        name,
        mode,
        scopes: scopes.filter((s) => chosen.has(s)),
        ...(expires ? { expires_at: new Date(`${expires}T00:00:00Z`).toISOString() } : {}),
      };
      const created = await data(client.POST('/v1/api_keys', { body }));
      setName('');
      onCreated(created);
    } catch (err) {
      setError(messageOf(err));
    }
  }
  const toggle = (s: Scope) => {
    const next = new Set(chosen);
    if (next.has(s)) next.delete(s);
    else next.add(s);
    setChosen(next);
  };
  return (
    <form class="panel new-key" onSubmit={create} aria-labelledby="new-key-title">
      <h2 id="new-key-title">New key</h2>
      <div class="field">
        <label for="key-name">Name</label>
        <input id="key-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <fieldset>
        <legend>Mode</legend>
        {(['test', 'live'] as const).map((m) => (
          <label key={m} class="choice">
            <input type="radio" name="key-mode" checked={mode === m} onChange={() => setMode(m)} /> {m}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Scopes</legend>
        {scopes.map((s) => (
          <label key={s} class="choice">
            <input type="checkbox" checked={chosen.has(s)} onChange={() => toggle(s)} /> {s}
          </label>
        ))}
      </fieldset>
      <div class="field">
        <label for="key-expires">Expires (optional; the start of that day, UTC)</label>
        <input id="key-expires" type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
      </div>
      <Problem error={error} />
      <div class="actions">
        <button class="primary" type="submit">
          Create the key
        </button>
      </div>
    </form>
  );
}

export function ApiKeys() {
  const [withRevoked, setWithRevoked] = useState(false);
  const [loaded, reload] = useLoad(
    () => data(client.GET('/v1/api_keys', { params: { query: withRevoked ? { include_revoked: 'true' } : {} } })),
    [withRevoked],
  );
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null);
  const [notice, setNotice] = useState<Said | null>(null);
  async function revoke(key: Schemas['ApiKey']) {
    try {
      await data(client.DELETE('/v1/api_keys/{keyId}', { params: { path: { keyId: key.key_id } } }));
      setNotice({ kind: 'good', text: `Revoked ${key.name} (${key.prefix}…).` });
      reload();
    } catch (err) {
      setNotice({ kind: 'bad', text: messageOf(err) });
    }
  }
  return (
    <>
      <Heading>API keys</Heading>
      {created && (
        <div class="notice good" role="status">
          <p>Created {created.key.name}. Its secret is shown this once: copy it now.</p>
          <p>
            <code class="secret">{created.secret}</code>
          </p>
        </div>
      )}
      <Notice notice={notice} />
      <div class="actions toolbar">
        <label class="choice">
          <input type="checkbox" checked={withRevoked} onChange={() => setWithRevoked(!withRevoked)} /> Show revoked and expired keys
        </label>
      </div>
      <Pending loaded={loaded}>
        {(list) => (
          <table class="grid keys">
            <caption class="sr-only">The account's API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mode</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">By</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.docs.map((k) => (
                <tr key={k.key_id}>
                  <td>{k.name}</td>
                  <td>{k.mode}</td>
                  <td class="mono">{k.prefix}…</td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.created_by ? (k.created_by.name ?? k.created_by.id ?? k.created_by.type) : '—'}</td>
                  <td>{when(k.expires_at)}</td>
                  <td>{when(k.last_used_at)}</td>
                  <td>
                    {k.revoked_at ? (
                      `Revoked ${when(k.revoked_at)}`
                    ) : k.legacy ? (
                      'Key of old'
                    ) : (
                      <button type="button" onClick={() => revoke(k)} aria-label={`Revoke ${k.name}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Pending>
      <NewKey
        onCreated={(c) => {
          setCreated(c);
          setNotice(null);
          reload();
        }}
      />
    </>
  );
}
