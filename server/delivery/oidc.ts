// The OpenID Connect relying party (issue 34): openid-client does the protocol (discovery, the
// authorization URL with PKCE, state and nonce, the token exchange, the ID token's signature,
// issuer, audience, expiry and nonce); every request it makes to the provider goes through the
// network guard (net.ts: public addresses only, unless ALLOW_PRIVATE_NETWORKS names the network;
// no redirects), and it judges time by the server's clock.
import * as client from 'openid-client';
import type { OidcClaims, OidcRelyingParty } from '../domain/identity/sso.ts';
import { OidcProblem } from '../domain/identity/sso.ts';
import type { SsoSettingsRecord } from '../domain/identity/model.ts';
import { safeRequest } from './net.ts';

export interface OidcOptions {
  allowPrivateNetworks: string[];
  timeoutMs: number;
  /** The server's clock (what lapses, lapses on it: tests move it on). */
  now: () => Date;
}

/** openid-client's fetch, through the guard: a Response of what the provider answered, or a TypeError. */
function guardedFetch(options: OidcOptions): client.CustomFetch {
  return async (url, init) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers as HeadersInit).forEach((v, k) => {
      headers[k] = v;
    });
    const method = (init.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST') throw new TypeError(`the identity provider was asked with ${method}`);
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    const answer = await safeRequest(url, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      timeoutMs: options.timeoutMs,
      maxResponseBytes: 1024 * 1024,
      allowPrivateNetworks: options.allowPrivateNetworks,
    });
    if (!answer.ok) throw new TypeError(`the identity provider at ${new URL(url).origin} could not be reached: ${answer.message}`);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
}

const problemOf = (err: unknown, code: string): OidcProblem => {
  if (err instanceof OidcProblem) return err;
  const e = err as { message?: string; error?: string; error_description?: string; cause?: { message?: string } };
  const detail = e.error ? `${e.error}${e.error_description ? ` (${e.error_description})` : ''}` : (e.message ?? String(err));
  const cause = e.cause?.message && !detail.includes(e.cause.message) ? `: ${e.cause.message}` : '';
  return new OidcProblem(`${detail}${cause}`.slice(0, 500), code);
};

export function oidcRelyingParty(options: OidcOptions): OidcRelyingParty {
  const fetch = guardedFetch(options);
  async function configuration(settings: Pick<SsoSettingsRecord, 'issuer' | 'clientId' | 'clientSecret'>): Promise<client.Configuration> {
    const issuer = new URL(settings.issuer);
    const auth = settings.clientSecret ? client.ClientSecretPost(settings.clientSecret) : client.None();
    const metadata: Partial<client.ClientMetadata> = {
      ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}),
      // The ID token's times are judged by the server's clock: how far it is ahead of this machine's.
      [client.clockSkew]: Math.round((options.now().getTime() - Date.now()) / 1000),
    };
    const config = await client.discovery(
      issuer,
      settings.clientId,
      metadata,
      auth,
      // http only where the guard lets a private network through (tests on loopback).
      { [client.customFetch]: fetch, ...(issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}) },
    );
    config[client.customFetch] = fetch;
    return config;
  }
  return {
    async discover(settings) {
      try {
        const config = await configuration(settings);
        const meta = config.serverMetadata();
        if (!meta.authorization_endpoint || !meta.token_endpoint)
          throw new OidcProblem('the discovery document names no authorization or token endpoint', 'sso_discovery_failed');
      } catch (err) {
        throw problemOf(err, 'sso_discovery_failed');
      }
    },
    async begin(settings, redirectUri) {
      let config: client.Configuration;
      try {
        config = await configuration(settings);
      } catch (err) {
        throw problemOf(err, 'sso_discovery_failed');
      }
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url: url.href, state, nonce, codeVerifier };
    },
    async finish(settings, callback, checks): Promise<OidcClaims> {
      try {
        const config = await configuration(settings);
        const tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) throw new OidcProblem('the provider sent no ID token', 'sso_token_invalid');
        return {
          subject: claims.sub,
          email: typeof claims.email === 'string' ? claims.email : undefined,
          emailVerified: typeof claims.email_verified === 'boolean' ? claims.email_verified : undefined,
          name: typeof claims.name === 'string' ? claims.name : undefined,
        };
      } catch (err) {
        throw problemOf(err, 'sso_token_invalid');
      }
    },
  };
}
