// The contract itself: lint-clean, generated files fresh, and the rules that Redocly's linter
// cannot express (they need more than one node, or both generations at once).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  apis,
  asGeneration,
  deref,
  generations,
  loadBundle,
  makeValidator,
  operations,
  pointerOf,
  root,
  type Json,
} from './support/spec.ts';

const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

describe('the contract', () => {
  it.each(apis)('lints clean (%s): no error, no warning, nothing ignored', (gen) => {
    let out: string;
    try {
      out = execFileSync(bin('redocly'), ['lint', gen, '--format=json'], { cwd: root, env, encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      out = (e as { stdout: string }).stdout;
    }
    const report = JSON.parse(out.slice(out.indexOf('{'))) as { totals: Json; problems: Json[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message} @ ${p.location?.[0]?.pointer}`)).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });

  it('has fresh generated files (npm run generate changes nothing)', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'humantask-fresh-'));
    try {
      execFileSync(process.execPath, ['--import', 'tsx', 'scripts/generate.ts', out], { cwd: root, env, stdio: 'pipe' });
      for (const f of readdirSync(out)) {
        expect(readFileSync(path.join(out, f), 'utf8'), `generated/${f} is stale: run npm run generate`).toBe(
          readFileSync(path.join(root, 'generated', f), 'utf8'),
        );
      }
      expect(readdirSync(out).sort()).toEqual(readdirSync(path.join(root, 'generated')).sort());
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe.each(apis)('%s contract', (api) => {
  const gen = asGeneration(api);
  const doc = loadBundle(gen);
  const ops = operations(gen, doc);
  const validate = makeValidator(gen, doc);

  it.each(ops.map((o) => [`${o.method.toUpperCase()} ${o.path}`, o] as const))(
    '%s documents its error answers',
    (_name, { path: p, op }) => {
      const codes = Object.keys(op.responses ?? {});
      // The worker API answers some operations with 204 (log out, no work for now).
      const expected = ['400', '401', '429', '500', ...(api === 'workforce' && !codes.includes('200') ? ['204'] : ['200'])];
      // Issue 34: a customer operation may be refused to a role or a key's scope (public ones excepted).
      if (api !== 'workforce' && !op['x-access']?.public) expected.push('403');
      if (p.includes('{')) expected.push('404');
      if (op.requestBody) expected.push('413');
      if (/^\/v1\/task\/[a-z]+$/.test(p)) expected.push('402', '404', '409');
      expect(codes).toEqual(expect.arrayContaining(expected));
      // 206: a byte range of a file (the worker API's media route), no JSON; 307: its signed link to a bucket's object.
      for (const code of codes.filter((c) => c !== '200' && c !== '204' && c !== '206' && c !== '307')) {
        const schema = deref(doc, op.responses[code]).content?.['application/json']?.schema;
        expect(deref(doc, schema)?.title, `${code} answers with ErrorBody`).toBe('ErrorBody');
      }
    },
  );

  it('gives every request body and every answer a named example that validates (formats too)', () => {
    const problems: string[] = [];
    const check = (where: string, media: Json, pointer: string) => {
      const examples = Object.entries<Json>(media.examples ?? {});
      if (examples.length === 0) problems.push(`${where}: no named example`);
      for (const [name, ex] of examples) {
        const v = validate(pointer + '/schema');
        if (!v(deref(doc, ex).value)) problems.push(`${where} example ${name}: ${JSON.stringify(v.errors?.slice(0, 3))}`);
      }
    };
    for (const { op, pointer, method, path: p } of ops) {
      const name = `${method.toUpperCase()} ${p}`;
      const body = deref(doc, op.requestBody);
      for (const [type, media] of Object.entries<Json>(body?.content ?? {})) {
        check(`${name} request ${type}`, media, `${pointer}/requestBody/content/${type.replaceAll('/', '~1')}`);
      }
      for (const [code, resp] of Object.entries<Json>(op.responses ?? {})) {
        const r = deref(doc, resp);
        const base = resp.$ref ? resp.$ref : `${pointer}/responses/${code}`;
        for (const [type, media] of Object.entries<Json>(r.content ?? {})) {
          check(`${name} ${code} ${type}`, media, `${base}/content/${type.replaceAll('/', '~1')}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('lists concrete paths before templated ones that could match them (Prism takes the first match)', () => {
    const paths = Object.keys(doc.paths);
    const asRegex = (p: string) => new RegExp('^' + p.replace(/\{[^}]+\}/g, '[^/]+') + '$');
    for (const [i, templated] of paths.entries()) {
      if (!templated.includes('{')) continue;
      const shadowed = paths.slice(i + 1).filter((p) => !p.includes('{') && asRegex(templated).test(p));
      expect(shadowed, `${templated} comes before`).toEqual([]);
    }
  });

  it('answers every 401 with WWW-Authenticate and every 429 with Retry-After', () => {
    for (const { op } of ops) {
      expect(Object.keys(deref(doc, op.responses['401']).headers ?? {})).toContain('WWW-Authenticate');
      expect(Object.keys(deref(doc, op.responses['429']).headers ?? {})).toContain('Retry-After');
    }
  });

  it('validates a body against its schema (the validator is not vacuous)', () => {
    const v = validate(pointerOf('components', 'schemas', 'ErrorBody'));
    expect(v({ status_code: 400, error: 'x' })).toBe(true);
    expect(v({ status_code: 400 })).toBe(false);
    expect(v({ status_code: 400, error: 'x', stack: 'at ...' })).toBe(false);
  });
});

// Every endpoint of the API description and of our decisions, per generation (seed §4, decisions
// §3, §5, §6, §8): the contract has exactly these operations.
const olderTypes = [
  'annotation',
  'pointannotation',
  'lineannotation',
  'polygonannotation',
  'segmentannotation',
  'categorization',
  'comparison',
  'datacollection',
  'transcription',
  'audiotranscription',
  // Issue 32: a type alias names its type on a creation path too.
  'segmentannoation',
];
const newerTypes = [
  'imageannotation',
  'textcollection',
  'namedentityrecognition',
  'documenttranscription',
  'documentranscription',
  'videoplaybackannotation',
  'lidarsegmentation',
];
const kinds = [
  'textcollection',
  'imageannotation',
  'namedentityrecognition',
  'documentranscription',
  'documenttranscription',
  'segmentannoation',
  'segmentannotation',
  'videoplaybackannotation',
];
function expectedEndpoints(types: string[]): string[] {
  return [
    'GET /v1/tasks',
    'GET /v1/task/{taskId}',
    'POST /v1/task/{taskId}/cancel',
    'POST /v1/task/{taskId}/setMetadata',
    'POST /v1/task/{taskId}/unique_id',
    'DELETE /v1/task/{taskId}/unique_id',
    'POST /v1/task/{taskId}/tags',
    'PUT /v1/task/{taskId}/tags',
    'DELETE /v1/task/{taskId}/tags',
    'POST /v1/task/{taskId}/audit',
    'GET /v1/task/{taskId}/callbacks',
    'POST /v1/task/{taskId}/callbacks/redeliver',
    ...types.map((t) => `POST /v1/task/${t}`),
    'GET /v1/projects',
    'POST /v1/projects',
    'GET /v1/projects/{projectName}',
    'POST /v1/projects/{projectName}/setParams',
    'POST /v1/projects/{projectName}/setOntology',
    // Issue 32: projects are archived as batches are.
    'POST /v1/projects/{projectName}/archive',
    'POST /v1/projects/{projectName}/unarchive',
    'GET /v1/batches',
    'POST /v1/batches',
    'GET /v1/batches/{batchName}',
    'POST /v1/batches/{batchName}/finalize',
    'GET /v1/batches/{batchName}/status',
    'POST /v1/batches/{batchName}/setMetadata',
    'POST /v1/batches/{batchName}/archive',
    'POST /v1/batches/{batchName}/unarchive',
    ...['training', 'evaluation'].flatMap((k) => [
      `GET /v1/${k}_tasks`,
      `GET /v1/${k}_tasks/{${k}TaskId}`,
      ...kinds.map((kind) => `POST /v1/${k}_tasks/${kind}`),
    ]),
  ].sort();
}
// Issue 18: the workforce a customer manages with its API key (current generation only).
const workforceManagement = [
  'POST /v1/workforce/workers',
  'GET /v1/workforce/workers',
  'GET /v1/workforce/workers/{workerId}',
  'PATCH /v1/workforce/workers/{workerId}',
  'DELETE /v1/workforce/workers/{workerId}',
  'POST /v1/workforce/workers/{workerId}/pause',
  'POST /v1/workforce/workers/{workerId}/unpause',
  'POST /v1/workforce/workers/{workerId}/reset_password',
  'GET /v1/projects/{projectName}/staffing',
  'PUT /v1/projects/{projectName}/staffing',
  'GET /v1/batches/{batchName}/staffing',
  'PUT /v1/batches/{batchName}/staffing',
  'GET /v1/task/{taskId}/assignments',
];
// Issue 19: the quality loop a customer sets and reads with its API key (current generation only).
const quality = [
  'GET /v1/projects/{projectName}/quality_policy',
  'PUT /v1/projects/{projectName}/quality_policy',
  'GET /v1/projects/{projectName}/quality',
  'POST /v1/task/{taskId}/promote',
];
// Issue 34: members, sessions, single sign-on, scoped keys and the activity log (current generation only).
/** The operations the console added (issue 35). */
// Issue 35: what the console's screens need that the API description has not.
const consoleOperations = ['POST /v1/tasks/cancel', 'GET /v1/overview', 'GET /v1/callbacks'];

const identity = [
  'POST /v1/session',
  'GET /v1/session',
  'DELETE /v1/session',
  'GET /v1/sessions',
  'DELETE /v1/sessions',
  'DELETE /v1/sessions/{sessionId}',
  'PUT /v1/me/password',
  'POST /v1/me/totp',
  'PUT /v1/me/totp',
  'DELETE /v1/me/totp',
  'POST /v1/invitations/accept',
  'POST /v1/password_resets',
  'POST /v1/password_resets/complete',
  'GET /v1/members',
  'POST /v1/members',
  'GET /v1/members/{memberId}',
  'PATCH /v1/members/{memberId}',
  'DELETE /v1/members/{memberId}',
  'POST /v1/members/{memberId}/invitation',
  'POST /v1/members/{memberId}/password_reset',
  'DELETE /v1/members/{memberId}/totp',
  'GET /v1/account/security',
  'PATCH /v1/account/security',
  'GET /v1/sso',
  'PUT /v1/sso',
  'DELETE /v1/sso',
  'POST /v1/sso/start',
  'POST /v1/sso/callback',
  'GET /v1/api_keys',
  'POST /v1/api_keys',
  'GET /v1/api_keys/{keyId}',
  'DELETE /v1/api_keys/{keyId}',
  'GET /v1/activity',
];
// Issue 36: imports and exports (current generation).
const transfer = [
  'POST /v1/imports',
  'GET /v1/imports/{importId}',
  'GET /v1/imports/{importId}/refused',
  'POST /v1/exports',
  'GET /v1/exports/{exportId}',
];
// Issue 37: the accounts' buckets.
const storage = [
  'POST /v1/storage/connections',
  'GET /v1/storage/connections',
  'GET /v1/storage/connections/{connectionId}',
  'DELETE /v1/storage/connections/{connectionId}',
  // A part of a response kept as a file (decision record 24).
  'GET /v1/task/{taskId}/files/{file}',
];
// Issue 18: the worker API (/worker/v1).
const workerApi = [
  'POST /v1/session',
  'DELETE /v1/session',
  'GET /v1/me',
  'POST /v1/tokens',
  'GET /v1/tokens',
  'DELETE /v1/tokens/{tokenId}',
  'POST /v1/assignments/next',
  'GET /v1/assignments',
  'GET /v1/assignments/{assignmentId}',
  ...['heartbeat', 'submit', 'skip', 'release', 'review'].map((a) => `POST /v1/assignments/{assignmentId}/${a}`),
  // Issue 19: the worker's own figures.
  'GET /v1/stats',
  // Issue 31: a file of the task, passed on by the server.
  'GET /v1/assignments/{assignmentId}/media',
];

describe('coverage of the API description', () => {
  it.each([
    [
      'current',
      [
        ...expectedEndpoints([...olderTypes, ...newerTypes]),
        ...workforceManagement,
        ...quality,
        ...identity,
        ...transfer,
        ...storage,
        ...consoleOperations,
      ].sort(),
    ],
    ['legacy', expectedEndpoints(olderTypes)],
    ['workforce', [...workerApi].sort()],
  ] as const)('the %s contract has every endpoint, and no other', (api, expected) => {
    const actual = operations(asGeneration(api))
      .map((o) => `${o.method.toUpperCase()} ${o.path}`)
      .sort();
    expect(actual).toEqual(expected);
  });

  it.each(generations)('the %s contract has the three callbacks as webhooks', (gen) => {
    const hooks = loadBundle(gen).webhooks ?? {};
    expect(Object.keys(hooks).sort()).toEqual(['attachmentError', 'batchCompleted', 'taskCompleted']);
  });
});

describe('the access table (x-access, issue 34)', () => {
  const roles = ['owner', 'admin', 'manager', 'reviewer', 'viewer'];
  const scopes = ['tasks:read', 'tasks:write', 'projects:write', 'workforce', 'exports', 'admin'];
  it.each(generations)('%s: every operation says who may call it, in the one shape the server reads', (gen) => {
    const problems: string[] = [];
    for (const { op, method, path: p } of operations(gen)) {
      const a = op['x-access'];
      const name = `${method.toUpperCase()} ${p}`;
      if (!a || typeof a !== 'object') {
        problems.push(`${name}: no x-access`);
        continue;
      }
      const keys = Object.keys(a).filter((k) => !['public', 'role', 'scope', 'activity', 'second_factor_setup'].includes(k));
      if (keys.length) problems.push(`${name}: unknown keys ${keys}`);
      if (a.public === true) {
        if (a.role || a.scope) problems.push(`${name}: public with a role or scope`);
        if (!Array.isArray(op.security) || op.security.length !== 0) problems.push(`${name}: public without security: []`);
      } else if (!roles.includes(a.role)) problems.push(`${name}: role ${a.role}`);
      if (a.scope !== undefined && !scopes.includes(a.scope)) problems.push(`${name}: scope ${a.scope}`);
      if (a.activity !== undefined && !/^[a-z_]+\.[a-z_]+$/.test(a.activity)) problems.push(`${name}: activity ${a.activity}`);
      // Members only: the operation says so to generators too (the session scheme alone).
      if (!a.public && a.scope === undefined && JSON.stringify(op.security) !== JSON.stringify([{ memberSession: [] }]))
        problems.push(`${name}: members only without security [memberSession]`);
    }
    expect(problems).toEqual([]);
  });

  it('every operation of the older generation is one of the current generation, with the same access', () => {
    const current = new Map(operations('current').map((o) => [o.op.operationId, o.op['x-access']]));
    for (const { op } of operations('legacy')) expect(op['x-access'], op.operationId).toEqual(current.get(op.operationId));
  });
});

describe('all contracts together', () => {
  const all = apis.flatMap((api) => operations(asGeneration(api)));

  it('use one operationId per operation, the same in both generations', () => {
    const byId = new Map<string, Set<string>>();
    for (const o of all) {
      const key = `${o.method} ${o.path}`;
      byId.set(o.op.operationId, (byId.get(o.op.operationId) ?? new Set()).add(key));
    }
    for (const [id, keys] of byId) expect([...keys], id).toHaveLength(1);
  });

  it('keep every component file in use', () => {
    const used = new Set<string>();
    for (const api of apis) {
      for (const [kind, entries] of Object.entries<Json>(loadBundle(asGeneration(api)).components ?? {})) {
        for (const name of Object.keys(entries)) used.add(`${kind}/${name}`);
      }
    }
    const kinds = ['schemas', 'parameters', 'responses', 'headers', 'examples'];
    const dirs = kinds.map((k) => [k, path.join(root, 'openapi', 'components', k)] as const).filter(([, d]) => existsSync(d));
    const files = dirs.flatMap(([k, dir]) =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => `${k}/${f.replace(/\.yaml$/, '')}`),
    );
    expect(files.filter((f) => !used.has(f))).toEqual([]);
  });
});
