// The suite's own checks that exercise every operation of the contract once or twice:
//  - without a key and with an unknown key: 401 (with WWW-Authenticate; the shape rules check it);
//    an operation that needs no credential (`security: []`: logging in, invitations, password
//    links, single sign-on) gets its examples' documented answers without one instead;
//  - on a templated path naming nothing that exists: 404;
//  - each documented request example (or, for operations without a body, one plain request): the
//    documented answer.
// Each answer also goes through the shape checks of the runner.
import { credentialOf, loadContract, takesSession, type Contract, type ContractOperation } from './contract.ts';
import {
  formEncode,
  isRecord,
  keepingAccountRules,
  operationKind,
  personalize,
  requestExamples,
  staffedBy,
  unknownHexId,
  type SuiteState,
} from './fixtures.ts';
import { describeExchange } from './shape.ts';
import { ConformanceFailure, type Check, type CheckContext, type Exchange, type Generation, type KeyName } from './types.ts';

/** The status the seed gives for a cancel of a completed task: 400 (newer), 500 (older). */
const cancelCompletedStatus: Record<Generation, number> = { current: 400, legacy: 500 };

/**
 * Every operation id of both contracts, with the generations that have it (document order).
 * `workforce: false` leaves out tag Workforce (an account's workers, staffing, who worked on a
 * task): the generated input does, as its bodies name workers and e-mail addresses that generated
 * values cannot keep valid; the workforce checks (checks/workforce-manage.ts) try them instead.
 */
export function operationsOfBothGenerations({ workforce = true }: { workforce?: boolean } = {}): {
  operationId: string;
  generations: Generation[];
}[] {
  const out = new Map<string, Generation[]>();
  for (const gen of ['current', 'legacy'] as const) {
    for (const op of loadContract(gen).operations) {
      if (!workforce && (op.op.tags as string[] | undefined)?.includes('Workforce')) continue;
      out.set(op.operationId, [...(out.get(op.operationId) ?? []), gen]);
    }
  }
  return [...out].map(([operationId, generations]) => ({ operationId, generations }));
}

export function operationOf(ctx: CheckContext, operationId: string): { contract: Contract; op: ContractOperation } {
  const contract = loadContract(ctx.generation);
  const op = contract.byId.get(operationId);
  if (!op) throw new Error(`the ${ctx.generation} contract has no operation ${operationId}`);
  return { contract, op };
}

function expectOneOf(ex: Exchange, statuses: number[], why: string): void {
  if (!statuses.includes(ex.status))
    throw new ConformanceFailure(`${why}: expected ${statuses.join(' or ')}, got ${ex.status}\n${describeExchange(ex)}`);
}

/**
 * Operations whose generated requests can fit the contract's schemas and still get a documented
 * answer other than 200: 400 for a quality policy's fields that bound each other, a period more than
 * 366 days back or in the future, an `initial_response` with a training promotion or not of the task
 * type's shape; 404 for a quality policy version the project does not have.
 */
const ruleBeyondSchema: Record<string, number[]> = {
  setProjectQualityPolicy: [400],
  getProjectQuality: [400],
  promoteTask: [400],
  getProjectQualityPolicy: [404],
  // An import names a project or batch the run may not have (404) and a source_url the server must
  // fetch: one it may not reach, or that answers no file, is refused with 400 naming why.
  createImport: [400, 404],
  // An export's target names a bucket: one the account has no storage connection to is refused with
  // 400 naming it (the generated targets name buckets the run never connected).
  createExport: [400],
  // A password is needed to accept an invitation unless the account logs in by single sign-on only.
  acceptInvitation: [400],
  // Only an owner's session may make an owner or change one: the suite's key gets 403 for role owner.
  inviteMember: [403],
  updateMember: [403],
  // password_login false needs single sign-on set up and enabled, which a run cannot (see ssoOutcomes).
  updateAccountSecurity: [400],
  // A response file link's signature is the server's: a generated one is refused (403).
  getTaskResultFile: [403],
  ...storageOutcomes(),
  ...ssoOutcomes(),
};

/**
 * Operations whose contract examples are valid requests and still get a documented answer other
 * than 200 on the run's own data: an export in a format that writes some task types only (COCO)
 * meets the run's tasks of other types, a 400 naming them; a response file link is signed by the
 * server, so the example's signature (not the server's) is refused with 403 (the result-files
 * checks read real links).
 */
const exampleOutcomes: Record<string, number[]> = {
  createExport: [400],
  getTaskResultFile: [403],
  ...storageOutcomes(),
  ...ssoOutcomes(),
};

/**
 * A storage connection is tested against its bucket before it is kept: the examples' bucket, on a
 * real provider, is out of a conformance run's reach (400 naming why), so no connection exists for
 * the others to read or delete (404). The server's tests make them against an S3 server.
 */
function storageOutcomes(): Record<string, number[]> {
  return { createStorageConnection: [400], getStorageConnection: [404], deleteStorageConnection: [404] };
}

/**
 * Single sign-on settings are tested against their OpenID provider before they are kept (its
 * discovery document): the examples' provider, on a real host, is out of a conformance run's reach
 * (400 naming why), so the run sets none up: the settings are not found (404), and an account
 * without single sign-on starts no log-in (400), nor completes one that this client never began
 * (400, no `humantask_sso` cookie). The server's tests make them against a provider on loopback.
 */
function ssoOutcomes(): Record<string, number[]> {
  return { setSsoSettings: [400], getSsoSettings: [404], deleteSsoSettings: [404], startSsoLogin: [400], completeSsoLogin: [400] };
}

/** The answers an operation may give to a valid request of the suite (besides 200); `generated`: input generated from the schemas. */
export function businessOutcomes(ctx: CheckContext, op: ContractOperation, generated = false): number[] {
  const beyond = generated ? ruleBeyondSchema[op.operationId] : exampleOutcomes[op.operationId];
  if (beyond) return [200, ...beyond];
  // Test-mode tasks are completed at once, so a cancel meets a completed task (seed 3.1).
  return op.operationId === 'cancelTask' ? [200, cancelCompletedStatus[ctx.generation]] : [200];
}

export function coreChecks(state: SuiteState): Check[] {
  const checks: Check[] = [];
  for (const { operationId, generations } of operationsOfBothGenerations()) {
    const contract = loadContract(generations[0]!);
    if (credentialOf(contract, contract.byId.get(operationId)!) === 'public') {
      checks.push({
        id: `auth/no-key/${operationId}`,
        area: 'Authentication',
        seed: '(our decision: tag Identity; an operation with `security: []` and x-access public needs no credential)',
        rule: 'An operation anybody may call (logging in, invitations, password links, single sign-on) needs no key: each of its contract examples, sent without one, gets the documented answer.',
        kind: 'shape',
        generations,
        run: (ctx) => runExamples(ctx, state, operationId, 'none'),
      });
      continue;
    }
    const label = operationId;
    checks.push({
      id: `auth/no-key/${label}`,
      area: 'Authentication',
      seed: '5 Authentication (5.1 HTTP Basic, 5.5 missing or invalid key: 401)',
      rule: 'A request without an API key, or with a key the server does not know, gets 401 with WWW-Authenticate.',
      kind: 'shape',
      generations,
      async run(ctx) {
        const { op } = operationOf(ctx, operationId);
        const path = state.fixtures(loadContract(ctx.generation)).examplePathFor(op);
        const method = op.method.toUpperCase();
        const none = await ctx.call(method, path, { key: 'none' });
        expectOneOf(none, [401], `${operationId} without a key`);
        if (ctx.options.profile === 'mock') {
          ctx.note('profile mock: a mock takes any key, so the unknown-key request is not sent');
          return;
        }
        const unknown = await ctx.call(method, path, {
          key: 'none',
          headers: { authorization: `Basic ${Buffer.from(`${ctx.unique('not-a-key')}:`).toString('base64')}` },
        });
        expectOneOf(unknown, [401], `${operationId} with an unknown key`);
        // An operation a member's session may call: a session cookie the server never handed out is no credential either.
        if (!takesSession(loadContract(ctx.generation), op)) return;
        const unknownSession = await ctx.call(method, path, {
          key: 'none',
          headers: { cookie: `humantask_session=${unknownHexId()}${unknownHexId()}`, 'x-csrf-token': unknownHexId() },
        });
        expectOneOf(unknownSession, [401], `${operationId} with an unknown session cookie`);
      },
    });
  }

  for (const { operationId, generations } of operationsOfBothGenerations()) {
    const templated = loadContract(generations[0]!).byId.get(operationId)!.templated;
    if (!templated) continue;
    checks.push({
      id: `not-found/${operationId}`,
      area: 'Not found',
      seed: '4.1 Task management (404 for an unknown id); 7 Errors (404: the resource does not exist)',
      rule: 'A request on a path that names no existing task, project, batch, training or evaluation task gets 404.',
      kind: 'shape',
      // A mock keeps no state: every well-formed id exists for it.
      mock: false,
      generations,
      async run(ctx) {
        const { contract, op } = operationOf(ctx, operationId);
        const fixtures = state.fixtures(contract);
        const [, example] = requestExamples(contract, op)[0] ?? [];
        const json = example === undefined ? undefined : await personalize(ctx, op, example);
        const ex = await ctx.call(op.method.toUpperCase(), fixtures.unknownPathFor(ctx, op), json === undefined ? {} : { json });
        expectOneOf(ex, [404], `${operationId} naming nothing that exists`);
      },
    });
  }

  for (const { operationId, generations } of operationsOfBothGenerations()) {
    const templated = loadContract(generations[0]!).byId.get(operationId)!.templated;
    if (!templated) continue;
    checks.push({
      id: `not-found/any-form/${operationId}`,
      area: 'Not found',
      seed: '7 Errors (404: the resource does not exist); decision: an id that names nothing is 404 whatever its form (issue 22)',
      rule: 'A path id or name that names nothing is 404 with the usual error body whatever its form (not a 24-hex id, upper case, 300 characters, spaces and accents): no pattern turns "not found" into "bad request".',
      kind: 'shape',
      mock: false,
      generations,
      async run(ctx) {
        const { contract, op } = operationOf(ctx, operationId);
        const [, example] = requestExamples(contract, op)[0] ?? [];
        const failures: string[] = [];
        for (const form of anyForms(ctx)) {
          const json = example === undefined ? undefined : await personalize(ctx, op, example);
          let path = op.path;
          for (const param of op.parameters.filter((p) => p.in === 'path'))
            path = path.replace(`{${param.name}}`, encodeURIComponent(form));
          const ex = await ctx.call(op.method.toUpperCase(), path, json === undefined ? {} : { json });
          if (ex.status !== 404 || ex.body?.status_code !== 404 || typeof ex.body?.error !== 'string')
            failures.push(`expected 404 with {status_code: 404, error}\n${describeExchange(ex)}`);
        }
        if (failures.length)
          throw new ConformanceFailure(
            `${failures.length} path(s) of ${operationId} naming nothing got another answer than 404:\n${failures.slice(0, 2).join('\n')}`,
          );
      },
    });
  }

  for (const { operationId, generations } of operationsOfBothGenerations()) {
    checks.push({
      id: `examples/${operationId}`,
      area: 'Examples',
      seed: '4 Endpoints (each operation answers its documented request)',
      rule: "Each of the contract's request examples of the operation (or a plain request, when it takes no body) gets the documented answer.",
      kind: 'shape',
      generations,
      run: (ctx) => keepingAccountRules(ctx, operationId, () => runExamples(ctx, state, operationId)),
    });
  }
  return checks;
}

/** Ids and names that name nothing, in forms a pattern could refuse: what clients in the wild send. */
function anyForms(ctx: CheckContext): string[] {
  const hex = unknownHexId();
  return ['fake_id_qwertyuiop', hex.toUpperCase(), `${ctx.unique('long')}-`.padEnd(300, 'x'), `${ctx.unique('no such')} é`];
}

/** Sends each request example of an operation and expects its documented answer; `credential`: sent with it rather than the default. */
async function runExamples(ctx: CheckContext, state: SuiteState, operationId: string, credential?: KeyName): Promise<void> {
  const { contract, op } = operationOf(ctx, operationId);
  const fixtures = state.fixtures(contract);
  const mock = ctx.options.profile === 'mock';
  const method = op.method.toUpperCase();
  const kind = operationKind(op);
  const idempotency = op.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
  const bodies: { name: string; json?: unknown; form?: boolean; raw?: { contentType: string; body: string } }[] = [];
  for (const [name, value] of requestExamples(contract, op)) bodies.push({ name, json: value });
  // A file of another media type (an import's JSON Lines or CSV), sent as it is.
  for (const media of Object.keys(contract.requestBody(op)?.content ?? {}).filter(
    (m) => m !== 'application/json' && m !== 'application/x-www-form-urlencoded',
  ))
    for (const [name, value] of requestExamples(contract, op, media))
      bodies.push({ name: `${name} (${media})`, raw: { contentType: media, body: String(value) } });
  const forms = requestExamples(contract, op, 'application/x-www-form-urlencoded');
  // Prism (5.14) stops on form bodies of operations with callbacks: a mock gets JSON only.
  if (mock && forms.length) ctx.note('profile mock: the form examples are not sent (Prism cannot take them)');
  else for (const [name, value] of forms) bodies.push({ name: `${name} (form)`, json: value, form: true });
  if (bodies.length === 0) {
    if (contract.requestBody(op)?.required)
      throw new ConformanceFailure(`${operationId} requires a body, but the contract gives no request example`);
    bodies.push({ name: '(no body)' });
  }

  const failures: string[] = [];
  for (const b of bodies) {
    let body = b.json === undefined ? undefined : await personalize(ctx, op, b.json);
    let expected = [200];
    if (!mock && isRecord(body)) {
      if (kind === 'task-creation' && (body.project !== undefined || body.batch !== undefined)) {
        // The example's project exists only in the example: an unknown project or batch is a 404.
        body = {
          ...body,
          ...(body.project !== undefined ? { project: ctx.unique('no-such-project') } : {}),
          ...(body.batch !== undefined ? { batch: ctx.unique('no-such-batch') } : {}),
        };
        expected = [404];
      } else if (Array.isArray(body.attempt) || Array.isArray(body.review)) {
        // A staffing: the example's workers exist only in the example; a worker of the run stands in.
        body = staffedBy(body, await fixtures.worker(ctx));
      } else if (typeof body.project === 'string') {
        // Examples (a batch, a worker returned to a project) name projects that createProject examples
        // create, with the request's key: a workforce is of its key's mode too (decision 13), so
        // the test key's worker is returned to a test-mode project.
        const projectExample = fixtures.projectExampleNamed(body.project);
        const workforce = op.path.startsWith('/v1/workforce/');
        if (projectExample) body = { ...body, project: await fixtures.projectFrom(ctx, projectExample, 'main') };
        else if (kind === 'batch-creation' || workforce) {
          body = { ...body, project: ctx.unique('no-such-project') };
          expected = [404];
        }
      }
    }
    if (!mock) expected = expected.includes(200) ? [...new Set([...expected, ...businessOutcomes(ctx, op)])] : expected;
    const path = op.templated ? await fixtures.pathFor(ctx, op) : op.path;
    const headers = idempotency ? { 'Idempotency-Key': ctx.unique('idem') } : undefined;
    const request = b.raw
      ? { raw: b.raw, ...(headers ? { headers } : {}) }
      : b.form && isRecord(body)
        ? { form: formEncode(body), ...(headers ? { headers } : {}) }
        : { ...(body !== undefined ? { json: body } : {}), ...(headers ? { headers } : {}) };
    const ex = await ctx.call(method, path, credential ? { ...request, key: credential } : request);
    if (ex.status === 402 && kind !== 'other' && !mock) {
      ctx.note(`example ${b.name}: 402, the task type is not enabled for this account (a documented business answer)`);
      continue;
    }
    if (!expected.includes(ex.status))
      failures.push(`example ${b.name}: expected ${expected.join(' or ')}, got ${ex.status}\n${describeExchange(ex)}`);
  }
  if (failures.length)
    throw new ConformanceFailure(
      `${failures.length} of ${bodies.length} example request(s) of ${operationId} got another answer than documented:\n${failures.join('\n')}`,
    );
}
