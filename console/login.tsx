// Getting in: the log-in form (password, then a TOTP code when the member has one), single sign-on
// (to the provider and back through /console/sso/callback), the pages of an invitation's and a
// password reset's links (their token in the fragment, which no server log sees), and the second
// factor's setup an account can require. Each through the Identity operations of the contract.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, client, data, type MemberSession, messageOf } from './api.ts';
import { currentRoute, href, navigate } from './route.ts';
import { Problem } from './ui.tsx';

/** Focuses a screen's heading when it appears, so that keyboard and screen reader start there. */
function useHeading() {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}

export function LogIn({ onSession }: { onSession(session: MemberSession): void }) {
  const route = currentRoute();
  const [account, setAccount] = useState(route.query.get('account') ?? '');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [totp, setTotp] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const totpInput = useRef<HTMLInputElement>(null);
  const heading = useHeading();
  useEffect(() => {
    if (totp === '') totpInput.current?.focus();
  }, [totp]);

  async function logIn(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = { account, email, password, ...(totp ? { totp_code: totp } : {}) };
      onSession(await data(client.POST('/v1/session', { body })));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'totp_required') {
        setTotp('');
        setError(null);
      } else setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }

  async function singleSignOn() {
    setError(null);
    if (!account) return setError('Enter the account name first: single sign-on is set up per account.');
    setBusy(true);
    try {
      const start = await data(client.POST('/v1/sso/start', { body: { account } }));
      // Where to come back to once logged in (this browser tab only).
      sessionStorage.setItem('humantask.console.after', location.pathname + location.search);
      location.assign(start.authorization_url);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <main class="card" id="main">
      <h1 tabIndex={-1} ref={heading}>
        Log in to the console
      </h1>
      <form onSubmit={logIn}>
        <label for="account">Account</label>
        <input
          id="account"
          name="account"
          autocomplete="organization"
          required
          value={account}
          onInput={(e) => setAccount(e.currentTarget.value)}
        />
        <label for="email">E-mail address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        {totp !== null && (
          <>
            <label for="totp">Code from your authenticator app</label>
            <input
              id="totp"
              name="totp"
              ref={totpInput}
              inputMode="numeric"
              autocomplete="one-time-code"
              pattern="[0-9]{6}"
              required
              aria-describedby="totp-why"
              value={totp}
              onInput={(e) => setTotp(e.currentTarget.value)}
            />
            <p id="totp-why" class="notice warn" role="status">
              Your log-in needs a second factor: enter the six-digit code.
            </p>
          </>
        )}
        <Problem error={error} />
        <div class="actions">
          <button class="primary" type="submit" disabled={busy}>
            Log in
          </button>
        </div>
      </form>
      <p class="or">Or, if your account uses single sign-on:</p>
      <button type="button" onClick={singleSignOn} disabled={busy}>
        Log in with single sign-on
      </button>
    </main>
  );
}

/** /console/sso/callback: the provider sent the browser back; the server finishes the log-in. */
export function SsoCallback({ onSession }: { onSession(session: MemberSession): void }) {
  const [error, setError] = useState<string | null>(null);
  const heading = useHeading();
  useEffect(() => {
    const q = new URLSearchParams(location.search);
    const body: Record<string, string> = {};
    for (const name of ['code', 'state', 'iss', 'session_state', 'error', 'error_description']) {
      const v = q.get(name);
      if (v !== null) body[name] = v;
    }
    // The code is used once: it leaves the address bar and the history at once.
    history.replaceState(null, '', href('sso/callback'));
    data(client.POST('/v1/sso/callback', { body: body as { state: string } })).then(
      (session) => {
        const after = sessionStorage.getItem('humantask.console.after');
        sessionStorage.removeItem('humantask.console.after');
        navigate(after?.startsWith('/console/') && !after.startsWith('/console/sso/') ? after : href(''), true);
        onSession(session);
      },
      (err) => setError(messageOf(err)),
    );
  }, []);
  return (
    <main class="card" id="main">
      <h1 tabIndex={-1} ref={heading}>
        Single sign-on
      </h1>
      {error ? (
        <>
          <Problem error={error} />
          <a href={href('')}>Back to the log-in</a>
        </>
      ) : (
        <p role="status">Finishing the log-in…</p>
      )}
    </main>
  );
}

/** /console/accept-invitation#token=… and /console/reset-password#token=…: choose a password. */
export function SetPassword({ purpose }: { purpose: 'invitation' | 'reset' }) {
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') ?? '');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const heading = useHeading();
  useEffect(() => {
    // The link's token is a secret: it does not stay in the address bar or the history.
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  }, []);

  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const accepted =
        purpose === 'invitation'
          ? await data(client.POST('/v1/invitations/accept', { body: { token, password, ...(name ? { display_name: name } : {}) } }))
          : await data(client.POST('/v1/password_resets/complete', { body: { token, password } }));
      setDone(accepted.account);
    } catch (err) {
      setError(messageOf(err));
    }
  }

  const title = purpose === 'invitation' ? 'Join the account' : 'Choose a new password';
  if (!token)
    return (
      <main class="card" id="main">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        <Problem error="This link has no token: open the whole link from the e-mail (or from who sent it)." />
      </main>
    );
  return (
    <main class="card" id="main">
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {done !== null ? (
        <>
          <p class="notice good" role="status">
            Your password is set. Log in to {done} with it.
          </p>
          <a href={href('', { account: done })}>Log in</a>
        </>
      ) : (
        <form onSubmit={submit}>
          {purpose === 'invitation' && (
            <>
              <label for="display-name">Your name (optional)</label>
              <input id="display-name" autocomplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </>
          )}
          <label for="new-password">New password</label>
          <input
            id="new-password"
            type="password"
            autocomplete="new-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <Problem error={error} />
          <div class="actions">
            <button class="primary" type="submit">
              Set the password
            </button>
          </div>
        </form>
      )}
    </main>
  );
}

/** The account requires a second factor and the member has none yet: set one up before anything else. */
export function TotpSetup({ onDone, onLogOut }: { onDone(): void; onLogOut(): void }) {
  const [enrollment, setEnrollment] = useState<{ secret: string; otpauth_uri: string } | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const heading = useHeading();
  useEffect(() => {
    data(client.POST('/v1/me/totp')).then(setEnrollment, (err) => setError(messageOf(err)));
  }, []);
  async function confirm(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      await data(client.PUT('/v1/me/totp', { body: { code } }));
      onDone();
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <main class="card" id="main">
      <h1 tabIndex={-1} ref={heading}>
        Set up a second factor
      </h1>
      <p>This account requires a code from an authenticator app at every log-in. Add this key to your app, then enter the code it shows.</p>
      {enrollment && (
        <dl class="facts">
          <dt>Key</dt>
          <dd class="mono">{enrollment.secret}</dd>
          <dt>Link</dt>
          <dd>
            <a href={enrollment.otpauth_uri}>Open in an authenticator app</a>
          </dd>
        </dl>
      )}
      <form onSubmit={confirm}>
        <label for="totp-code">Code</label>
        <input
          id="totp-code"
          inputMode="numeric"
          autocomplete="one-time-code"
          required
          value={code}
          onInput={(e) => setCode(e.currentTarget.value)}
        />
        <Problem error={error} />
        <div class="actions">
          <button class="primary" type="submit">
            Confirm
          </button>
          <button type="button" onClick={onLogOut}>
            Log out
          </button>
        </div>
      </form>
    </main>
  );
}
