// Issue 34: single sign-on against a real OpenID Connect provider (oidc-provider, the certified
// library) started on loopback, as a browser goes through it: the log-in begins at our server, the
// provider logs the person in, its redirect's parameters come back to our callback. Refused: a wrong
// state, a code used again, an ID token for another audience, an expired ID token (the server's
// clock moved past it), a domain the account does not allow. Members are made at the first log-in.
import { createSign } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../support/clock.ts';
import { testProvider } from '../support/oidc.ts';
import { accountWithOwner, send, type MemberSession } from '../support/members.ts';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * The provider, behind a proxy that is its issuer address: the proxy can rewrite the ID token of a
 * token answer (re-signed with the provider's own key) to play a provider that gets it wrong.
 */
async function identityProvider(redirectUri: string) {
  const users: Record<string, { email: string; name: string }> = {
    ana: { email: 'ana@example.com', name: 'Ana Lima' },
    eve: { email: 'eve@elsewhere.example', name: 'Eve' },
  };
  /** How the proxy spoils the next ID token: its audience, or nothing. */
  let spoil: 'audience' | null = null;
  const proxy = createServer();
  const proxyPort = await listen(proxy);
  const issuer = `http://127.0.0.1:${proxyPort}`;
  // A minute: the server's clock can pass it without the log-in attempt (10 minutes) lapsing.
  const op = testProvider({ issuer, redirectUri, users, idTokenSeconds: 60 });
  const { privateKey } = op;
  const providerServer = createServer((req, res) => void op.handle(req, res));
  const providerPort = await listen(providerServer);
  proxy.on('request', (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const upstream = httpRequest(
        // Uncompressed, so that the proxy can read a token answer.
        {
          host: '127.0.0.1',
          port: providerPort,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, 'accept-encoding': 'identity' },
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            let text = Buffer.concat(body);
            if (spoil && req.url?.startsWith('/token') && answer.statusCode === 200) {
              const tokens = JSON.parse(text.toString());
              const [header, payload] = (tokens.id_token as string)
                .split('.')
                .slice(0, 2)
                .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
              payload.aud = 'some-other-client';
              const signing = `${b64url(header)}.${b64url(payload)}`;
              tokens.id_token = `${signing}.${createSign('RSA-SHA256').update(signing).sign(privateKey).toString('base64url')}`;
              text = Buffer.from(JSON.stringify(tokens));
              spoil = null;
            }
            const headers = { ...answer.headers, 'content-length': String(text.length) };
            res.writeHead(answer.statusCode ?? 500, headers);
            res.end(text);
          });
        },
      );
      upstream.end(Buffer.concat(chunks));
    });
  });
  return {
    issuer,
    as: op.as,
    spoilAudience() {
      spoil = 'audience';
    },
    async close() {
      await Promise.all([proxy, providerServer].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

/** A browser's cookies (name -> value, one jar for every host of the test: all loopback). */
function browser() {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  return {
    jar,
    keep,
    cookie,
    /** Follows redirects until the address starts with `stop`: that address. */
    async visit(url: string, stop: string): Promise<URL> {
      let at = url;
      for (let i = 0; i < 20; i++) {
        if (at.startsWith(stop)) return new URL(at);
        const res = await fetch(at, { redirect: 'manual', headers: { cookie: cookie() } });
        keep(res);
        const next = res.headers.get('location');
        if (!next) throw new Error(`no redirect from ${at}: ${res.status} ${await res.text()}`);
        at = new URL(next, at).href;
      }
      throw new Error('too many redirects');
    },
  };
}

describe.each(databases)('single sign-on (%s)', (db) => {
  let server: TestServer;
  let idp: Awaited<ReturnType<typeof identityProvider>>;
  let owner: MemberSession;
  const clock = testClock();
  const redirect = () => `${server.url}/console/sso/callback`;
  beforeAll(async () => {
    if (db === 'postgres' && !hasPostgres()) return;
    server = await startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' }, undefined, { now: clock.now });
    idp = await identityProvider(redirect());
    ({ owner } = await accountWithOwner(server, 'acme'));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await idp?.close();
  });

  /** A log-in through the provider as `user`: the start, the browser's trip, and the callback's parameters. */
  async function signIn(user: string) {
    idp.as(user);
    const b = browser();
    const start = await send(`${server.url}/v1/sso/start`, 'POST', { json: { account: 'acme' } });
    expect(start.status, start.text).toBe(200);
    b.keep(new Response(null, { headers: start.headers }));
    const back = await b.visit(start.body.authorization_url, redirect());
    const params = Object.fromEntries(back.searchParams);
    const callback = (json: Record<string, string> = params, cookie = b.cookie()) =>
      send(`${server.url}/v1/sso/callback`, 'POST', { json, headers: { cookie } });
    return { params, callback, b };
  }

  it('is set up by an owner (the secret sealed, never shown), and a person of an allowed domain logs in and becomes a member', async () => {
    if (!server) return;
    const saved = await owner.call('PUT', '/v1/sso', {
      json: {
        issuer: idp.issuer,
        client_id: 'humantask',
        client_secret: 'provider-secret',
        allowed_domains: ['Example.com'],
        default_role: 'viewer',
      },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ client_secret_set: true, allowed_domains: ['example.com'], redirect_uri: redirect() });
    expect(saved.text).not.toContain('provider-secret');
    const { callback } = await signIn('ana');
    const session = await callback();
    expect(session.status, session.text).toBe(200);
    expect(session.body).toMatchObject({ via: 'sso', member: { email: 'ana@example.com', role: 'viewer', sso: true } });
    const cookie = session.headers
      .getSetCookie()
      .find((c) => c.startsWith('humantask_session='))!
      .split(';')[0]!;
    expect((await send(`${server.url}/v1/tasks`, 'GET', { headers: { cookie } })).status).toBe(200);
    const log = (await owner.call('GET', '/v1/activity?target_type=member')).body.docs;
    expect(log[0]).toMatchObject({ action: 'member.joined', actor: { type: 'system' }, details: { via: 'sso', role: 'viewer' } });
    expect((await owner.call('GET', '/v1/activity?action=sso.updated')).body.docs[0]).toMatchObject({ actor: { id: owner.memberId } });
  });

  it('refuses a wrong state, and the same log-in finished twice', async () => {
    if (!server) return;
    const { params, callback } = await signIn('ana');
    const wrong = await callback({ ...params, state: 'not-the-state' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('sso_state_mismatch');
    expect((await callback()).status).toBe(200);
    const twice = await callback();
    expect(twice.status).toBe(400);
    expect(twice.body.code).toBe('sso_login_used');
  });

  it('refuses a code used before: the provider will not exchange it twice', async () => {
    if (!server) return;
    const first = await signIn('ana');
    expect((await first.callback()).status).toBe(200);
    // A new log-in attempt of the same browser, its state, and the old code.
    const b = first.b;
    const start = await send(`${server.url}/v1/sso/start`, 'POST', { json: { account: 'acme' } });
    b.keep(new Response(null, { headers: start.headers }));
    const state = new URL(start.body.authorization_url).searchParams.get('state')!;
    const replay = await send(`${server.url}/v1/sso/callback`, 'POST', {
      json: { ...first.params, state },
      headers: { cookie: b.cookie() },
    });
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('sso_token_invalid');
    expect(replay.body.error).toContain('invalid_grant');
  });

  it('refuses an ID token for another audience', async () => {
    if (!server) return;
    const { callback } = await signIn('ana');
    idp.spoilAudience();
    const refused = await callback();
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('sso_token_invalid');
    expect(refused.body.error).toContain('aud');
  });

  it('refuses a person of a domain the account does not allow', async () => {
    if (!server) return;
    const { callback } = await signIn('eve');
    const refused = await callback();
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'sso_domain_not_allowed' });
    expect(refused.body.error).toContain('eve@elsewhere.example');
  });
  it('refuses an ID token that expired by the server clock', async () => {
    if (!server) return;
    const { callback } = await signIn('ana');
    clock.advance(5 * 60_000);
    const refused = await callback();
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('sso_token_invalid');
    expect(refused.body.error).toContain('"exp"');
  });
});
