// An OpenID Connect provider for tests (oidc-provider, the certified library), answering at
// `issuer` on loopback: one client, `humantask`, whose person logs in and consents as soon as the
// browser reaches the interaction page. The caller serves `handle` on a server of its own (or behind
// a proxy that is the issuer's address).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider from 'oidc-provider';

export interface TestProvider {
  /** The provider's HTTP answers. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Who logs in next (a key of `users`; the first one to begin with). */
  as(user: string): void;
  /** The key the provider signs ID tokens with (to sign a spoiled one). */
  privateKey: KeyObject;
}

export function testProvider(options: {
  issuer: string;
  redirectUri: string;
  users: Record<string, { email: string; name: string }>;
  /** ID tokens' lifetime in seconds (oidc-provider's default: an hour). */
  idTokenSeconds?: number;
}): TestProvider {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' };
  const { users } = options;
  let nextUser = Object.keys(users)[0]!;
  const provider = new Provider(options.issuer, {
    clients: [
      {
        client_id: 'humantask',
        client_secret: 'provider-secret',
        redirect_uris: [options.redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk as never] },
    cookies: { keys: ['test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    ...(options.idTokenSeconds === undefined ? {} : { ttl: { IdToken: options.idTokenSeconds } }),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, email: users[sub]!.email, email_verified: true, name: users[sub]!.name }),
    }),
  });
  return {
    privateKey,
    as(user) {
      nextUser = user;
    },
    async handle(req, res) {
      if (req.url?.startsWith('/interaction/')) {
        // The person logs in and consents at once.
        const details = await provider.interactionDetails(req, res);
        const grant = new provider.Grant({ accountId: nextUser, clientId: String(details.params.client_id) });
        grant.addOIDCScope('openid email profile');
        await provider.interactionFinished(req, res, { login: { accountId: nextUser }, consent: { grantId: await grant.save() } });
        return;
      }
      provider.callback()(req, res);
    },
  };
}
