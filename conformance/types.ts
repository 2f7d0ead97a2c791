// The conformance suite's vocabulary: what a check is, what it can do, how it fails.
// `humantask conformance` runs the checks against any server; nothing here imports from server/.

export type Generation = 'current' | 'legacy';

/**
 * Which credential a request is sent with: the main (test-mode) key, another account's key, the live
 * key, the settings account's key, none, or `member`: the console session (cookie and CSRF token) of
 * the check's member (`CheckContext.member`).
 */
export type KeyName = 'main' | 'other' | 'live' | 'settings' | 'none' | 'member';

export interface Options {
  /** Origin of the server under test; the current generation is at `${baseUrl}`, the older at `${baseUrl}/legacy`. */
  baseUrl: string;
  key: string;
  otherKey?: string;
  liveKey?: string;
  /**
   * The test key of an account set up to try the account settings (checks/account-settings.ts
   * says how); the account-settings checks are skipped without it.
   */
  settingsKey?: string;
  /**
   * A session or API token of a worker (`Authorization: Bearer`) of the implementation's operator
   * workforce or of the account's own: the workforce checks (`/worker/v1`) are skipped without it.
   */
  workerToken?: string;
  /** The account's callback auth key and signing secret (`whsec_...`): callbacks are then verified, not only inspected. */
  callbackAuthKey?: string;
  signingSecret?: string;
  generations: Generation[];
  /**
   * Address the callback receiver listens on (it must be reachable from the server). Empty: none
   * was given; checks that need callbacks are skipped (the receiver then listens on 127.0.0.1).
   */
  callbackHost: string;
  /** Runs only the checks whose id or area contains this text (case-insensitive). */
  only?: string;
  reportDir?: string;
  /** fast-check seed; printed so that any run can be repeated. */
  seed: number;
  /** `mock`: shape checks and generated valid requests only (for Prism); behaviour checks are listed as skipped. */
  profile: 'full' | 'mock';
  /** Base path of the older generation (default `/legacy`). */
  legacyPrefix?: string;
  /** Cancel the tasks the run created when it ends (they stay in the accounts otherwise). */
  cleanup?: boolean;
  /** Generated requests per operation and kind (valid, invalid); default 6. */
  runs?: number;
  /**
   * A bucket of an S3-protocol service that both the suite and the server under test can reach,
   * and keys that may list, read and write it: the storage checks connect it to the account, put
   * objects in it and read what the server wrote (skipped without it).
   */
  bucket?: BucketOption;
}

/** `--bucket URL` (the service's origin and the bucket, path style) with `--bucket-key` and `--bucket-region`. */
export interface BucketOption {
  endpoint: string;
  name: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface RequestOptions {
  /**
   * The credential. By default the main key, except for an operation that only a member's session
   * may call (its `security` names `memberSession` alone): the check's member's session. A request
   * that names its own `authorization` or `cookie` header gets no other credential.
   */
  key?: KeyName;
  json?: unknown;
  /** An `application/x-www-form-urlencoded` body (the older generation accepts forms). */
  form?: string;
  /** A body of another media type, as it is (a file to import: JSON Lines, CSV). */
  raw?: { contentType: string; body: string };
  query?: Record<string, string | number | boolean | string[] | undefined>;
  headers?: Record<string, string>;
}

/**
 * Headers every request of the suite carries: a fresh connection each. On a kept-alive one, a
 * request can be written in the very moment the server closes the connection for being idle, and
 * fail unanswered although the server never saw it (HTTP/1.1's keep-alive race); a check must fail
 * only for what the server did. Node's fetch honours `connection: close` with a new connection.
 */
export const freshConnection = { connection: 'close' } as const;

/** One request and its answer, as the suite saw it. */
export interface Exchange {
  generation: Generation;
  method: string;
  /** The path as sent, e.g. `/v1/task/abc` (without the generation prefix). */
  path: string;
  /** The contract's operation that the path matched, if any. */
  operationId?: string;
  /** The contract's path template that matched, e.g. `/v1/task/{taskId}`. */
  template?: string;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: any;
  /** Shape problems found in this answer (already recorded as failures of the shape area). */
  shapeProblems: string[];
  /** The full URL sent (query included), for reports. */
  url?: string;
  /** The request body as sent, for reports. */
  requestText?: string;
  /** The request headers as sent, for reports (the API key hidden). */
  requestHeaders?: Record<string, string>;
}

/** A member's console session: what `POST /v1/session` answered and set. */
export interface MemberSession {
  /** `humantask_session=...`, as the Cookie header carries it. */
  cookie: string;
  csrfToken: string;
  sessionId: string;
}

/**
 * A member of the main account that the suite made through the API (conformance/members.ts):
 * invited with the main key, the invitation accepted with a random password, logged in.
 */
export interface SuiteMember {
  memberId: string;
  email: string;
  password: string;
  /** The account's name, as a log-in names it. */
  account: string;
  role: string;
  session: MemberSession;
}

/**
 * What a check gets. Every `call` is shape-checked against the bundled contract and counted for
 * coverage by the runner, whatever the check then asserts.
 */
export interface CheckContext {
  generation: Generation;
  options: Options;
  call(method: string, path: string, options?: RequestOptions): Promise<Exchange>;
  /** A callback receiver on `options.callbackHost` (started on first use, shared, stopped at the end). */
  receiver(): Promise<Receiver>;
  /** A fresh unique text for this run (unique_ids, names, Idempotency-Keys). */
  unique(prefix?: string): string;
  /** Waits until `probe` returns a value other than undefined/false, or fails the check after `timeoutMs` with `what`. */
  until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Notes something in the report without failing (e.g. why a part was not exercised). */
  note(text: string): void;
  /**
   * The check's member (a viewer), made on first use; `fresh`: a new one, which is the check's
   * member from then on (for a request that changes the member's password or second factor, or
   * ends its sessions). Its session is the `member` credential. With `--profile mock` (no state)
   * it is the contract's example member with a made-up session.
   */
  member(options?: { fresh?: boolean }): Promise<SuiteMember>;
}

export interface ReceivedCallback {
  path: string;
  /** `POST` for callbacks; `GET` for fetches of `fileUrl` addresses. */
  method?: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
  receivedAt: number;
}

export interface Receiver {
  /** URL to put in `callback_url`; each call gives a distinct path so checks do not see each other's callbacks. */
  url(label?: string): string;
  /** Callbacks that reached the URL made with `label`. */
  received(label: string): ReceivedCallback[];
  /** Sets the status the receiver answers for `label` (default 200). */
  respond(label: string, status: number): void;
  /**
   * URL of a small file the receiver serves to GET (an attachment that the server may fetch):
   * answered with `status` (default 200, e.g. 404 for a failed fetch). Fetches are listed by `fetches`.
   */
  fileUrl(label: string, status?: number): string;
  /** The GET requests that reached `fileUrl(label)`. */
  fetches(label: string): ReceivedCallback[];
}

export interface Check {
  /** Stable id, e.g. `idempotency/replay-same-body`. */
  id: string;
  /** Summary area, e.g. `Idempotency`, `Task states`, `Shape`, `Generated input`. */
  area: string;
  /** The section of the API description the rule comes from, e.g. `Duplicate prevention > Idempotency-Key`. */
  seed: string;
  /** What the rule is, in one sentence (shown in the report and in failure messages). */
  rule: string;
  kind: 'shape' | 'behaviour' | 'generated';
  /** Generations it applies to (default both). */
  generations?: Generation[];
  /** Options it needs; the check is skipped (and listed) when one is missing. */
  needs?: Array<'otherKey' | 'liveKey' | 'settingsKey' | 'workerToken' | 'callback' | 'callbackSecrets' | 'bucket'>;
  /** Whether it runs with `--profile mock` (default: shape and generated checks do, behaviour checks do not). */
  mock?: boolean;
  run(ctx: CheckContext): Promise<void>;
}

/** Thrown by a check: the rule it names is broken. */
export class ConformanceFailure extends Error {
  constructor(
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ConformanceFailure';
  }
}

/**
 * Thrown by a check that finds, once running, that the server under test cannot show its rule in
 * a run of reasonable length (e.g. a lease of minutes): the check is listed as skipped with the
 * message as its reason, as a check missing an option is.
 */
export class CheckSkipped extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CheckSkipped';
  }
}

/** Throws a ConformanceFailure with `message` unless `condition` holds. */
export function expectThat(condition: unknown, message: string, details?: unknown): asserts condition {
  if (!condition) throw new ConformanceFailure(message, details);
}

/** Throws unless the exchange answered `status`; the message shows what came instead. */
export function expectStatus(ex: Exchange, status: number | number[], why: string): void {
  const wanted = Array.isArray(status) ? status : [status];
  if (!wanted.includes(ex.status)) {
    throw new ConformanceFailure(`${why}: expected ${wanted.join(' or ')} from ${ex.method} ${ex.path}, got ${ex.status}`, {
      status: ex.status,
      body: ex.body ?? ex.text.slice(0, 500),
    });
  }
}

export type CheckResult =
  | { check: Check; generation: Generation; outcome: 'passed'; ms: number; notes: string[] }
  | {
      check: Check;
      generation: Generation;
      outcome: 'failed';
      ms: number;
      notes: string[];
      message: string;
      details?: unknown;
      /** The last requests the check sent before it failed, each with its answer (describeExchange). */
      requests?: string[];
    }
  | { check: Check; generation: Generation; outcome: 'skipped'; ms: 0; notes: string[]; reason: string };

/** Where the runner reports progress (the CLI's progress bar or plain lines; tests may collect lines). */
export interface ProgressSink {
  /** The run starts: `total` check runs (check × generation) are planned. */
  start?(total: number): void;
  /** One check run has ended. */
  result?(result: CheckResult, done: number, total: number): void;
  /** A line of information (the seed, the generation being run, ...). */
  log?(text: string): void;
  /** The run has ended. */
  stop?(): void;
}
