// What the rules need from storage. server/store implements it; the rules never see SQL.
import type { Account, Json, Mode, Task, TaskStatus } from './model.ts';
import type { WorkRepository } from './workforce/model.ts';
import type { WorkerRepository } from './workforce/identity.ts';
import type { ProjectQualityRepository, QualificationRepository, QualityPolicyRepository, WorkerStatsRepository } from './quality/model.ts';
import type { ActivityRepository } from './identity/activity.ts';
import type {
  AccountIdentityRepository,
  ApiKeyRepository,
  MemberLinkRepository,
  MemberRepository,
  MemberSessionRepository,
  SsoLoginRepository,
} from './identity/model.ts';
import type { Scope } from './identity/roles.ts';

export interface TaskFilters {
  startTime?: Date;
  endTime?: Date;
  statuses?: TaskStatus[];
  type?: string;
  project?: string;
  batch?: string;
  uniqueId?: string;
  tags?: string[];
  customerReviewStatus?: string;
  completedAfter?: Date;
  completedBefore?: Date;
  updatedAfter?: Date;
  updatedBefore?: Date;
}

/**
 * A list page: by offset (older generation) or after a keyset position (current generation);
 * `countBefore` asks for the number of matches before the position (a token of an older server
 * carries no running count).
 */
export type PageRequest =
  | { limit: number; offset: number }
  | { limit: number; after: { createdAt: Date; taskId: string } | null; countBefore?: boolean };

export interface TaskRepository {
  /**
   * Creates a task, all or nothing: with `answer`, first claims its Idempotency-Key (saving the
   * answer; false and nothing written when the key is held, after waiting for a concurrent holder);
   * with `callback`, queues that message too; with `countLiveRequestOf`, counts that account's live
   * request (see AccountRepository.authenticate). Throws UniqueIdTaken when the unique_id is in use.
   */
  create(task: Task, extras: { answer?: SavedAnswer; callback?: OutboxMessage; countLiveRequestOf?: string }): Promise<boolean>;
  update(task: Task): Promise<void>;
  /** The task if it belongs to this account and mode; with forUpdate, locked until the transaction ends. */
  get(accountId: string, mode: Mode, taskId: string, options?: { forUpdate?: boolean }): Promise<Task | null>;
  findByUniqueId(accountId: string, mode: Mode, uniqueId: string): Promise<Task | null>;
  /** One page (limit + 1 rows fetched to tell whether more follow) and the count of all matches. */
  /** A page of matches and their `total`; `before` counts the matches before a keyset position (0 without one). */
  list(accountId: string, mode: Mode, filters: TaskFilters, page: PageRequest): Promise<{ tasks: Task[]; total: number; before: number }>;
  /**
   * Leases up to `limit` tasks whose attachment check is due (moves their due time to
   * `leaseUntil`, so that another checker takes them over only if this one dies).
   */
  claimAttachmentChecks(now: Date, leaseUntil: Date, limit: number): Promise<Task[]>;
  /** Ids of test-mode tasks whose completion delay is over (any account). */
  dueTestTaskIds(now: Date, limit: number): Promise<{ taskId: string; accountId: string; mode: Mode; createdAt: Date }[]>;
  /** Moves a due test-mode task's completion to `at` (one that could not be completed: see completeDueTestTasks). */
  postponeTestCompletion(taskId: string, at: Date): Promise<void>;
}

export interface SavedAnswer {
  accountId: string;
  key: string;
  mode: Mode;
  fingerprint: string;
  statusCode: number;
  body: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Idempotency-Keys are per account and mode: a key used in one mode is free in the other. */
export interface IdempotencyRepository {
  find(accountId: string, mode: Mode, key: string): Promise<SavedAnswer | null>;
  /** Inserts unless the key is held (unexpired); true when this call claimed it. Waits for a concurrent holder. */
  claim(answer: SavedAnswer): Promise<boolean>;
  update(answer: SavedAnswer): Promise<void>;
  /** Frees a key whose request failed before it had an answer (a placeholder, status 0). */
  release(accountId: string, mode: Mode, key: string): Promise<void>;
  deleteExpired(now: Date): Promise<number>;
}

export interface AccountRecord extends Account {
  testKeyHash: string;
  liveKeyHash: string;
  /** Live requests counted so far (read-only: counted by `authenticate` or with the request's work). */
  liveRequestCount: number;
}

/** What an API key opens: its account and mode, and which key it is (the keys of old carry every scope). */
export interface AuthenticatedKey {
  account: Account;
  mode: Mode;
  key: { keyId: string; name: string; scopes: readonly Scope[] | 'all' };
}

export interface AccountRepository {
  findById(accountId: string): Promise<AccountRecord | null>;
  /**
   * The account and mode of an API key (by its hash): one of the account's two keys of old, or a
   * scoped key (not revoked, not expired at `now`); a live request is counted at the same time,
   * unless `countLater`: then the request is counted by the statement that creates its task (one
   * write, not two), or else by countLiveRequest before it is answered.
   */
  authenticate(keyHash: string, options?: { countLater?: boolean; now?: Date }): Promise<AuthenticatedKey | null>;
  /** Counts one live request of the account (on one of its 16 counter rows). */
  countLiveRequest(accountId: string): Promise<void>;
  findByName(name: string): Promise<AccountRecord | null>;
  insert(account: AccountRecord): Promise<void>;
  update(account: AccountRecord): Promise<void>;
  list(): Promise<AccountRecord[]>;
  count(): Promise<number>;
}

export interface Project {
  projectId: string;
  accountId: string;
  mode: Mode;
  name: string;
  type: string;
  rapid: boolean;
  studio: boolean;
  createdAt: Date;
}

export interface ParamVersion {
  projectId: string;
  version: number;
  params: Record<string, unknown>;
  createdAt: Date;
}

export interface OntologyVersion {
  projectId: string;
  version: number;
  name: string | null;
  ontology: unknown[];
  createdAt: Date;
}

export interface ProjectRepository {
  /** Inserts a project; false when the name is taken (for this account and mode). */
  insert(project: Project): Promise<boolean>;
  get(accountId: string, mode: Mode, name: string, options?: { forUpdate?: boolean }): Promise<Project | null>;
  list(accountId: string, mode: Mode): Promise<Project[]>;
  paramVersions(projectIds: string[]): Promise<ParamVersion[]>;
  ontologyVersions(projectIds: string[]): Promise<OntologyVersion[]>;
  addParamVersion(version: ParamVersion): Promise<void>;
  addOntologyVersion(version: OntologyVersion): Promise<void>;
}

export type BatchStatus = 'staging' | 'in_progress' | 'completed';

export interface Batch {
  batchId: string;
  accountId: string;
  mode: Mode;
  name: string;
  project: string;
  status: BatchStatus;
  callback: string | null;
  metadata: Record<string, unknown>;
  calibrationBatch: boolean;
  selfLabelBatch: boolean;
  /** Archived: takes no new task, left out of lists that exclude archived batches. */
  archived: boolean;
  createdAt: Date;
  completedAt: Date | null;
}

export interface BatchFilters {
  project?: string;
  status?: BatchStatus;
  startTime?: Date;
  endTime?: Date;
  excludeArchived?: boolean;
}

export interface BatchRepository {
  /** Inserts a batch; false when the name is taken (for this account and mode). */
  insert(batch: Batch): Promise<boolean>;
  update(batch: Batch): Promise<void>;
  get(accountId: string, mode: Mode, name: string, options?: { forUpdate?: boolean }): Promise<Batch | null>;
  list(
    accountId: string,
    mode: Mode,
    filters: BatchFilters,
    page: { limit: number; offset: number },
  ): Promise<{ batches: Batch[]; total: number }>;
  /** Task counts of a batch by status. */
  taskCounts(accountId: string, mode: Mode, name: string): Promise<Record<'pending' | 'completed' | 'canceled' | 'error', number>>;
  /** Whether some batch of this project with calibration_batch has completed. */
  hasCompletedCalibration(accountId: string, mode: Mode, project: string): Promise<boolean>;
}

export interface TrainingTask {
  id: string;
  accountId: string;
  mode: Mode;
  kind: 'training' | 'evaluation';
  type: string;
  params: Record<string, unknown>;
  expectedResponse: Record<string, unknown>;
  initialResponse: Record<string, unknown> | null;
  createdAt: Date;
  /** The audited task it was promoted from (POST /v1/task/{taskId}/promote); absent or null when created directly. */
  sourceTaskId?: string | null;
}

export interface TrainingTaskRepository {
  insert(task: TrainingTask): Promise<void>;
  /**
   * Stores a task promoted from an audited one, unless one of its kind was promoted from the same
   * task before: answers the one stored (the new one, or the earlier one).
   */
  insertPromoted(task: TrainingTask & { sourceTaskId: string }): Promise<TrainingTask>;
  get(accountId: string, mode: Mode, kind: TrainingTask['kind'], id: string): Promise<TrainingTask | null>;
  /** Newest first (created_at, then id, descending). */
  list(
    accountId: string,
    mode: Mode,
    kind: TrainingTask['kind'],
    filters: { type?: string; startTime?: Date; endTime?: Date },
    page: { limit: number; offset: number },
  ): Promise<{ tasks: TrainingTask[]; total: number }>;
}

export interface OutboxMessage {
  id: string;
  accountId: string;
  mode: Mode;
  event: 'task_completed' | 'attachment_error' | 'batch_completed';
  subject: string;
  url: string;
  payload: Record<string, unknown>;
  createdAt: Date;
  nextAttemptAt: Date;
  attempts: number;
  firstAttemptAt: Date | null;
  leaseUntil: Date | null;
  deliveredAt: Date | null;
  failedAt: Date | null;
}

export interface DeliveryAttempt {
  id: string;
  messageId: string;
  accountId: string;
  subject: string;
  url: string;
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * A claimed message with what its sender needs of the account (the callback auth key and signing
 * secret), or, when they cannot be opened (sealed with another key, damaged), why: that message
 * fails alone, the rest of the claim goes out.
 */
export type ClaimedMessage = { message: OutboxMessage } & (
  | { callbackAuthKey: string; signingSecret: string }
  | { unreadableSecrets: string }
);

export interface OutboxRepository {
  add(message: OutboxMessage): Promise<void>;
  forSubject(accountId: string, subject: string): Promise<OutboxMessage[]>;
  /** Messages that failed for good, newest first (for the operator). */
  failed(limit: number): Promise<OutboxMessage[]>;
  /**
   * Leases up to `limit` due messages (not delivered, not failed, not leased by another
   * dispatcher) until `leaseUntil`; rows locked by a concurrent claim are skipped.
   */
  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedMessage[]>;
  /**
   * Stores the outcome of an attempt, all or nothing: the attempt's record, the message's new
   * state and, when `callbackCompleted` is not null, the task's callback flag.
   */
  recordAttempt(message: OutboxMessage, attempt: DeliveryAttempt, callbackCompleted: boolean | null): Promise<void>;
  attemptsFor(accountId: string, subject: string): Promise<DeliveryAttempt[]>;
}

/**
 * The payloads of the callbacks (the contract's webhooks) are wire shapes: the HTTP layer's views
 * make them (server/http/views/callbacks.ts), and the rules ask for them here when they queue a
 * callback, in the transaction of the change, so the stored payload is the task as it was then.
 */
export interface CallbackPayloads {
  /** A task as the generation that created it shows it. */
  task(task: Task): Json;
  /** A batch as the batchCompleted webhook shows it. */
  batch(batch: Batch): Json;
}

export interface Repositories {
  /** Not storage: how a queued callback's payload is rendered (see CallbackPayloads). */
  payloads: CallbackPayloads;
  /** Worker identity (issue 18): workers, passwords, sessions and API tokens. */
  workers: WorkerRepository;
  tasks: TaskRepository;
  idempotency: IdempotencyRepository;
  accounts: AccountRepository;
  projects: ProjectRepository;
  batches: BatchRepository;
  training: TrainingTaskRepository;
  outbox: OutboxRepository;
  /** The work loop of live mode (workforce). */
  work: WorkRepository;
  /** Quality policies, and the figures counted from the work event log. */
  quality: QualityPolicyRepository & WorkerStatsRepository & ProjectQualityRepository;
  /** Training, hidden evaluation and pausing: a worker's standing per project. */
  qualification: QualificationRepository;
  /** The list counters and the tag index that triggers keep, checked and rebuilt (`humantask counts`). */
  counts: CountsRepository;
  /** Customer identity (issue 34): members, their sessions and links, log-in rules, SSO log-ins, scoped keys, the activity log. */
  members: MemberRepository;
  memberSessions: MemberSessionRepository;
  memberLinks: MemberLinkRepository;
  accountIdentity: AccountIdentityRepository;
  ssoLogins: SsoLoginRepository;
  apiKeys: ApiKeyRepository;
  activity: ActivityRepository;
}

/** A counter of task_counts (summed over its shards) that differs from the tasks it stands for. */
export interface CountDifference {
  accountId: string;
  mode: Mode;
  /** 0 every task, 1 a project's, 2 a batch's, 3 a tag's (see task_counts in store/schema.ts). */
  scope: number;
  project: string;
  batch: string;
  tag: string;
  status: string;
  type: string;
  kept: number;
  actual: number;
}

export interface CountCheck {
  /** Counters compared (every key that the counters or the tasks have). */
  compared: number;
  /** How many of them differ, and the first `limit` of those (by account, mode and key). */
  differing: number;
  differences: CountDifference[];
  /** Rows of the tag index (task_tags) that a tagged task lacks, and rows that stand for no task's tag. */
  tagRowsMissing: number;
  tagRowsExtra: number;
}

export interface CountsRepository {
  /** Reads every task (an operator's check, not a request's): each statement sees one snapshot. */
  check(limit: number): Promise<CountCheck>;
  /** Both rebuilt from the tasks. Run it in a transaction: writers of tasks wait until it commits. */
  rebuild(): Promise<void>;
}

/** The repositories, and a way to run several operations as one transaction. */
export interface UnitOfWork extends Repositories {
  transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
}

export class UniqueIdTaken extends Error {
  constructor() {
    super('unique_id taken');
  }
}
