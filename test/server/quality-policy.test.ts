// A project's quality policy (issue 19), over HTTP, on PGlite and on PostgreSQL: the defaults when it
// was never set, versions added by PUT (a PUT replaces the policy, what it leaves out takes its
// default), reading one version, out-of-bounds and contradicting values refused with 400 naming
// the field (nothing stored), and one account never seeing or changing another's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type AccountSecrets } from '../../server/domain/accounts.ts';
import { defaultQualityPolicy, qualityPolicyBounds } from '../../server/domain/quality/policy.ts';
import { loadBundle, type Json } from '../support/spec.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const defaults = {
  overlap: 1,
  training: { required: 5, pass_score: 0.8, retry_after_s: 86400, max_tries: 3, show_expected: true },
  evaluation: { rate_new: 0.1, rate_trusted: 0.03, trusted_after: 50, window: 20, min_scored: 5, pause_below: 0.7 },
  consensus: { threshold: 0.8, max_extra: 2 },
  speed: { min_seconds: 'auto', fast_count: 3, of_last: 10 },
  calibration: { gate_score: 0.8 },
};

describe('the quality policy in the contract and in the rules', () => {
  const doc = loadBundle('current');
  const schemas = doc.components.schemas as Record<string, Json>;
  const resolve = (s: Json): Json => (s.$ref ? schemas[String(s.$ref).split('/').pop()!]! : s);
  const request = schemas.QualityPolicyRequest!;
  /** Every number of the request schema, by dotted name, with its bounds and default. */
  const numbers = new Map<string, { min: number; max: number; integer: boolean; default: unknown }>();
  for (const [name, prop] of Object.entries<Json>(request.properties)) {
    const s = resolve(prop);
    const fields: [string, Json][] =
      s.type === 'object' ? Object.entries<Json>(s.properties).map(([k, v]) => [`${name}.${k}`, v]) : [[name, s]];
    for (const [field, schema] of fields) {
      const numeric = schema.oneOf ? schema.oneOf.find((b: Json) => b.type === 'number') : schema;
      if (numeric.type === 'number' || numeric.type === 'integer')
        numbers.set(field, { min: numeric.minimum, max: numeric.maximum, integer: numeric.type === 'integer', default: schema.default });
    }
  }

  it('states the same bounds as the rules, for every number', () => {
    expect(Object.fromEntries([...numbers].map(([k, { min, max, integer }]) => [k, { min, max, integer }]))).toEqual(qualityPolicyBounds);
  });

  it('states the same defaults as the rules', () => {
    expect(defaultQualityPolicy).toEqual(defaults);
    for (const [field, { default: d }] of numbers) {
      const [part, key] = field.split('.');
      const top = (defaults as Record<string, unknown>)[part!];
      const value = key ? (top as Record<string, unknown>)[key] : top;
      expect(d, field).toEqual(value);
    }
  });
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('the quality policy on %s', (db) => {
  let server: TestServer;
  let account: AccountSecrets;
  let live: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer(db);
    account = await createAccount(server.uow, `quality-${db}`, new Date());
    live = client(server, 'current', account.live_key);
    for (const name of ['street-scenes', 'tickets']) {
      const created = await live('POST', '/v1/projects', { json: { type: 'imageannotation', name } });
      expect(created.status, created.text).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers the defaults, as version null without created_at, when the policy was never set', async () => {
    const got = await live('GET', '/v1/projects/street-scenes/quality_policy');
    expect(got.status, got.text).toBe(200);
    expect(got.body).toEqual({ project: 'street-scenes', version: null, ...defaults });
    // No version exists to be read.
    const v0 = await live('GET', '/v1/projects/street-scenes/quality_policy?version=0');
    expect([v0.status, v0.body.error]).toEqual([404, 'Project "street-scenes" has no quality policy version 0.']);
  });

  it('adds a version with every PUT, fills in what it leaves out with defaults, and keeps earlier versions readable', async () => {
    const first = await live('PUT', '/v1/projects/street-scenes/quality_policy', {
      json: { overlap: 3, training: { required: 8, pass_score: 0.85 }, speed: { min_seconds: 4 }, calibration: { gate_score: 0.9 } },
    });
    expect(first.status, first.text).toBe(200);
    const v0 = {
      ...defaults,
      project: 'street-scenes',
      version: 0,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      overlap: 3,
      training: { ...defaults.training, required: 8, pass_score: 0.85 },
      speed: { ...defaults.speed, min_seconds: 4 },
      calibration: { gate_score: 0.9 },
    };
    expect(first.body).toEqual(v0);

    // A PUT replaces the policy: overlap and training go back to their defaults.
    const second = await live('PUT', '/v1/projects/street-scenes/quality_policy', { json: { evaluation: { window: 30, min_scored: 30 } } });
    expect(second.status, second.text).toBe(200);
    const v1 = {
      ...defaults,
      project: 'street-scenes',
      version: 1,
      created_at: expect.any(String),
      evaluation: { ...defaults.evaluation, window: 30, min_scored: 30 },
    };
    expect(second.body).toEqual(v1);

    expect((await live('GET', '/v1/projects/street-scenes/quality_policy')).body).toEqual(v1);
    expect((await live('GET', '/v1/projects/street-scenes/quality_policy?version=0')).body).toEqual(first.body);
    expect((await live('GET', '/v1/projects/street-scenes/quality_policy?version=1')).body).toEqual(second.body);
    const v2 = await live('GET', '/v1/projects/street-scenes/quality_policy?version=2');
    expect([v2.status, v2.body.error]).toEqual([404, 'Project "street-scenes" has no quality policy version 2.']);

    // `{}` is a version with every default; a null means "not given".
    const third = await live('PUT', '/v1/projects/street-scenes/quality_policy', {
      json: { overlap: null, training: { pass_score: null } },
    });
    expect(third.body).toEqual({ ...defaults, project: 'street-scenes', version: 2, created_at: expect.any(String) });
    // The other project has its own versions.
    expect((await live('GET', '/v1/projects/tickets/quality_policy')).body.version).toBeNull();
  });

  it.each([
    ['a share above 1', { training: { pass_score: 1.5 } }, 'body.training.pass_score must be at most 1'],
    ['a negative rate', { evaluation: { rate_new: -0.1 } }, 'body.evaluation.rate_new must be at least 0'],
    ['an evaluation rate above 0.5', { evaluation: { rate_trusted: 0.6 } }, 'body.evaluation.rate_trusted must be at most 0.5'],
    ['overlap 0', { overlap: 0 }, 'body.overlap must be at least 1'],
    ['overlap above 10', { overlap: 11 }, 'body.overlap must be at most 10'],
    ['a fractional count', { consensus: { max_extra: 1.5 } }, 'body.consensus.max_extra must be a whole number'],
    ['a retry delay beyond 30 days', { training: { retry_after_s: 2_592_001 } }, 'body.training.retry_after_s must be at most 2592000'],
    ['min_seconds neither a number nor auto', { speed: { min_seconds: 'never' } }, 'body.speed.min_seconds must be a number or "auto"'],
    ['a string for a number', { calibration: { gate_score: '0.9' } }, 'body.calibration.gate_score must be a number'],
    ['an unknown field', { training: { passmark: 0.8 } }, 'passmark'],
    ['an unknown part', { review: { sample_rate: 0.1 } }, 'review'],
    [
      'min_scored above window',
      { evaluation: { window: 10, min_scored: 11 } },
      'evaluation.min_scored is 11: at most evaluation.window (10).',
    ],
    ['fast_count above of_last', { speed: { fast_count: 6, of_last: 5 } }, 'speed.fast_count is 6: at most speed.of_last (5).'],
  ])('refuses %s with 400 naming the field, and stores nothing', async (_name, json, message) => {
    const before = (await live('GET', '/v1/projects/tickets/quality_policy')).body;
    const res = await live('PUT', '/v1/projects/tickets/quality_policy', { json });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(message);
    expect((await live('GET', '/v1/projects/tickets/quality_policy')).body).toEqual(before);
  });

  it('refuses a version that is not a whole number from 0, naming it', async () => {
    for (const v of ['-1', 'latest', '1.5']) {
      const res = await live('GET', `/v1/projects/tickets/quality_policy?version=${v}`);
      expect(res.status, v).toBe(400);
      expect(res.body.error).toContain('version');
    }
  });

  it("keeps accounts and modes apart: another account's or mode's key gets 404 and changes nothing", async () => {
    await live('PUT', '/v1/projects/tickets/quality_policy', { json: { overlap: 2 } });
    const other = await createAccount(server.uow, `quality-other-${db}`, new Date());
    const stranger = client(server, 'current', other.live_key);
    const testMode = client(server, 'current', account.test_key);
    for (const call of [stranger, testMode]) {
      const read = await call('GET', '/v1/projects/tickets/quality_policy');
      expect([read.status, read.body.error]).toEqual([404, 'Project "tickets" not found.']);
      const write = await call('PUT', '/v1/projects/tickets/quality_policy', { json: { overlap: 5 } });
      expect(write.status).toBe(404);
    }
    // The other account's project of the same name has its own policy.
    await stranger('POST', '/v1/projects', { json: { type: 'categorization', name: 'tickets' } });
    expect((await stranger('GET', '/v1/projects/tickets/quality_policy')).body.version).toBeNull();
    expect((await live('GET', '/v1/projects/tickets/quality_policy')).body.overlap).toBe(2);
    const unknown = await live('GET', '/v1/projects/no-such-project/quality_policy');
    expect([unknown.status, unknown.body.error]).toEqual([404, 'Project "no-such-project" not found.']);
  });

  it('numbers concurrent PUTs one after the other, losing none', async () => {
    await live('POST', '/v1/projects', { json: { type: 'imageannotation', name: 'busy' } });
    const puts = await Promise.all(
      [1, 2, 3, 4, 5].map((overlap) => live('PUT', '/v1/projects/busy/quality_policy', { json: { overlap } })),
    );
    expect(puts.map((p) => p.status)).toEqual([200, 200, 200, 200, 200]);
    expect(puts.map((p) => p.body.version).sort()).toEqual([0, 1, 2, 3, 4]);
    for (const p of puts)
      expect((await live('GET', `/v1/projects/busy/quality_policy?version=${p.body.version}`)).body.overlap).toBe(p.body.overlap);
  });

  it('answers 404 for the quality figures of a project the caller does not have, and for promoting an unknown task', async () => {
    expect((await live('GET', '/v1/projects/nothing/quality')).status).toBe(404);
    const promote = await live('POST', '/v1/task/65f1c0a2b3c4d5e6f7a8b9c0/promote', { json: { kind: 'training' } });
    expect([promote.status, promote.body.error]).toEqual([404, 'Task 65f1c0a2b3c4d5e6f7a8b9c0 not found.']);
  });
});
