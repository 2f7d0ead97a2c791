// Seed 5 (authentication): HTTP Basic with the API key as user name and an empty password. A
// header that is not exactly `Basic <base64>` is refused, even when it holds a valid key.
import { expectStatus, expectThat, type Check } from '../types.ts';

export const authChecks: Check[] = [
  {
    id: 'auth/malformed-header-401',
    area: 'Authentication',
    seed: '5 Authentication (5.1 HTTP Basic: the key as user name, empty password; 5.5 invalid key: 401)',
    rule: 'An Authorization header that is not exactly `Basic <base64 of key:>` (trailing characters, a second word, another scheme) answers 401 with WWW-Authenticate, even around a valid key.',
    kind: 'behaviour',
    async run(ctx) {
      const credentials = Buffer.from(`${ctx.options.key}:`).toString('base64');
      // The well-formed header is accepted (so that the refusals below are about the form only).
      expectStatus(
        await ctx.call('GET', '/v1/tasks', { key: 'none', query: { limit: 1 }, headers: { authorization: `Basic ${credentials}` } }),
        200,
        'the valid key as `Basic <base64>`',
      );
      for (const authorization of [`Basic ${credentials}!!`, `Basic ${credentials} extra`, `XBasic ${credentials}`]) {
        const ex = await ctx.call('GET', '/v1/tasks', { key: 'none', query: { limit: 1 }, headers: { authorization } });
        expectStatus(ex, 401, `Authorization: ${JSON.stringify(authorization.replace(credentials, '<base64 of key:>'))}`);
        expectThat(
          /^basic\b/i.test(ex.headers.get('www-authenticate') ?? ''),
          `the 401 for a malformed Authorization header should carry WWW-Authenticate: Basic, got ${JSON.stringify(ex.headers.get('www-authenticate'))}`,
        );
      }
    },
  },
];
