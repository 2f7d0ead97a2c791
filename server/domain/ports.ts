// What the rules need from storage. server/store implements it; the rules never see SQL.
import type { Account, Generation, Json, Mode, ResultFilesRecord, Task, TaskStatus } from './model.ts';
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

/**
 * A task list's filters, combined with AND. A list matches a task having any of its values
 * (`tags`: all of them); an empty list is no filter.
 */
export interface TaskFilters {
  startTime?: Date;
  endTime?: Date;
  statuses?: TaskStatus[];
  types?: string[];
  projects?: string[];
  batches?: string[];
  uniqueIds?: string[];
  tags?: string[];
  customerReviewStatuses?: string[];
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
  /**
   * Records where a task's response files are (written first), only while its response is still
   * `response`, the one they hold: false when the task has moved on (another answer, a redo).
   */
  setResultFiles(taskId: string, response: Json, record: ResultFilesRecord): Promise<boolean>;
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
  /**
   * Creates many tasks at once (an import's group of lines), with their callbacks, in a few
   * statements: the same rows and side effects as `create` of each (live work, nudges), and the
   * account's live requests counted by `countLiveRequests`. Throws UniqueIdTaken when a unique_id
   * is in use (nothing written).
   */
  createMany(tasks: Task[], callbacks: OutboxMessage[], countLiveRequests: number): Promise<void>;
  /** Which of these unique_ids a task of this account and mode holds. */
  heldUniqueIds(accountId: string, mode: Mode, uniqueIds: string[]): Promise<Set<string>>;
  /** The task types of the tasks matching the filters, with how many of each (from the counters where they keep them). */
  typesOf(accountId: string, mode: Mode, filters: TaskFilters): Promise<Map<string, number>>;
  /** Up to `limit` matches after a keyset position, in the list's order, without a total (an export's pages). */
  listAfter(
    accountId: string,
    mode: Mode,
    filters: TaskFilters,
    after: { createdAt: Date; taskId: string } | null,
    limit: number,
  ): Promise<Task[]>;
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
  /** Archived: takes no new task or batch. */
  archived: boolean;
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
  /** Oldest first; with `archived`, only the projects that are (or are not) archived. */
  list(accountId: string, mode: Mode, filters?: { archived?: boolean }): Promise<Project[]>;
  update(project: Project): Promise<void>;
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
  /** When one of its tasks was last audited (kept by the store, never written from a batch). */
  auditedAt: Date | null;
}

/** A batch list's filters, combined with AND; a list matches any of its values. */
export interface BatchFilters {
  projects?: string[];
  statuses?: BatchStatus[];
  startTime?: Date;
  endTime?: Date;
  completedAfter?: Date;
  completedBefore?: Date;
  auditedAfter?: Date;
  auditedBefore?: Date;
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

/** A training or evaluation list's filters: `types` matches any of them. */
export interface TrainingTaskFilters {
  types?: string[];
  startTime?: Date;
  endTime?: Date;
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
    filters: TrainingTaskFilters,
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

/** A callback as the account's list shows it: the message, and its latest attempt. */
export interface ListedCallback {
  message: OutboxMessage;
  lastAttempt: DeliveryAttempt | null;
}

export interface CallbackFilters {
  state?: 'pending' | 'delivered' | 'failed' | undefined;
  event?: OutboxMessage['event'] | undefined;
}

export interface OutboxRepository {
  add(message: OutboxMessage): Promise<void>;
  /**
   * Up to `limit` callbacks of the account and mode, the newest first (failed ones by `failedAt`),
   * after a keyset position of that order.
   */
  page(accountId: string, mode: Mode, filters: CallbackFilters, limit: number, after?: { at: Date; id: string }): Promise<ListedCallback[]>;
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
  /** The taskCompleted webhook's body: the task as the generation that created it shows it. */
  taskCompleted(task: Task): Json;
  /** The attachmentError webhook's body: the attachments that could not be fetched. */
  attachmentError(task: Task, attachments: { url: string; statusCode: number }[]): Json;
  /** The batchCompleted webhook's body. */
  batchCompleted(batch: Batch, counts: { completed: number; canceled: number; error: number }): Json;
}

/**
 * Writes a completed task's response files and records where they are (decision record 24). The
 * store calls it for each task it writes whose response has files its row does not name yet, never
 * inside a transaction: after the statement that wrote the task, or after the transaction that did
 * commits (a transaction that rolls back writes none), so that a slow bucket holds no connection.
 */
export interface ResultWriter {
  /** Whether the task's response has files that its row does not name yet (no I/O). */
  wanted(task: Task): boolean;
  /** Writes the files (under names no row names yet), then records them while the task's response is still this one. */
  writeAndRecord(task: Task, repos: Repositories): Promise<void>;
  /** A write after a commit that failed: the request that committed is not failed for it (the file route writes it when read). */
  failed(task: Task, err: unknown): void;
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
  /** The overview's figures (GET /v1/overview). */
  overview: OverviewRepository;
  /** Customer identity (issue 34): members, their sessions and links, log-in rules, SSO log-ins, scoped keys, the activity log. */
  members: MemberRepository;
  memberSessions: MemberSessionRepository;
  memberLinks: MemberLinkRepository;
  accountIdentity: AccountIdentityRepository;
  ssoLogins: SsoLoginRepository;
  apiKeys: ApiKeyRepository;
  activity: ActivityRepository;
  /** Imports and exports: their jobs, files and progress. */
  transfer: TransferRepository;
  /** The accounts' storage connections (their buckets), secrets sealed at rest. */
  storage: StorageRepository;
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

/** What the overview shows (GET /v1/overview), as the store reads it: each figure of one account and mode. */
export interface OverviewFigures {
  /** Tasks by type and status (those with tasks only). */
  tasks: { type: string; status: string; count: number }[];
  /** Tasks completed per UTC day (`YYYY-MM-DD`) since the given time; days without completions are absent. */
  completedByDay: Map<string, number>;
  /** Pending tasks by project, the most first, at most `projects`; null: of no project. */
  pendingByProject: { project: string | null; count: number }[];
  failedCallbacks: number;
  pausedWorkers: number;
}

export interface OverviewRepository {
  /** Each figure read from what the server keeps per account (the task counters, indexes): none reads every task. */
  figures(accountId: string, mode: Mode, since: Date, projects: number): Promise<OverviewFigures>;
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

// ---- Bulk work (issue 36): imports and exports as jobs with a state, progress and a lease. ----

export type ImportState = 'receiving' | 'fetching' | 'queued' | 'running' | 'completed' | 'stopped' | 'failed';

/** What applies to every line of an import's file. */
export interface ImportSettings {
  type?: string;
  project?: string;
  batch?: string;
  /** Creation parameters under every line's own. */
  params?: Json;
  /** CSV: the column of the attachment (default `attachment`). */
  attachmentColumn?: string;
  sourceUrl?: string;
  /** CSV: the header row, once read, and its line count (a quoted header may span lines). */
  header?: string[];
  /** The header row as it was, for the refused-lines file. */
  headerText?: string;
}

export interface ImportRecord {
  importId: string;
  accountId: string;
  mode: Mode;
  state: ImportState;
  format: 'jsonl' | 'csv';
  settings: ImportSettings;
  maxRefusedShare: number;
  bytesTotal: number;
  bytesRead: number;
  nextLine: number;
  linesRead: number;
  created: number;
  duplicates: number;
  refused: number;
  batches: string[];
  error: string | null;
  leaseUntil: Date | null;
  leaseToken: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export interface RefusedLine {
  line: number;
  statusCode: number;
  error: string;
  /** The line as it was; null when it was over the size limit (not kept). */
  text: string | null;
}

/** An import's progress after a group of lines, written with the group's tasks. */
export type ImportProgress = Pick<
  ImportRecord,
  | 'bytesRead'
  | 'nextLine'
  | 'linesRead'
  | 'created'
  | 'duplicates'
  | 'refused'
  | 'batches'
  | 'state'
  | 'error'
  | 'updatedAt'
  | 'finishedAt'
  | 'leaseUntil'
  | 'settings'
  | 'bytesTotal'
>;

export type ExportState = 'queued' | 'running' | 'completed' | 'failed' | 'expired';

export interface ExportRecord {
  exportId: string;
  accountId: string;
  mode: Mode;
  state: ExportState;
  format: string;
  view: Generation;
  filterQuery: Record<string, string>;
  /** The filters as the store reads them, as JSON (times as ISO text). */
  filters: Record<string, unknown>;
  options: Record<string, unknown>;
  tasksTotal: number;
  tasksWritten: number;
  skipped: { reason: string; count: number }[];
  sizeBytes: number | null;
  error: string | null;
  leaseUntil: Date | null;
  leaseToken: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  expiresAt: Date | null;
}

export type ExportProgress = Pick<
  ExportRecord,
  'state' | 'tasksWritten' | 'skipped' | 'sizeBytes' | 'error' | 'updatedAt' | 'finishedAt' | 'expiresAt' | 'leaseUntil'
>;

export interface TransferRepository {
  /** Wakes the import and export workers of every server process (after the commit, if in a transaction). */
  nudgeTransfers(): Promise<void>;
  insertImport(record: ImportRecord): Promise<void>;
  getImport(accountId: string, mode: Mode, importId: string): Promise<ImportRecord | null>;
  /** Stores a piece of an import's file. */
  addImportChunk(importId: string, seq: number, data: Buffer): Promise<void>;
  importChunk(importId: string, seq: number): Promise<Buffer | null>;
  /**
   * Leases the oldest import due for work (fetching, queued, running, or receiving whose upload
   * stopped) whose lease is free or lapsed, skipping rows another process is claiming.
   */
  claimImport(now: Date, leaseUntil: Date, token: string): Promise<ImportRecord | null>;
  /**
   * Writes an import's progress if `token` still holds its lease (false, nothing written,
   * otherwise), deleting the pieces of its file below `dropChunksBelow`.
   */
  saveImportProgress(importId: string, token: string, progress: ImportProgress, dropChunksBelow: number): Promise<boolean>;
  /** Deletes an upload that never completed (its import row and pieces). */
  deleteImport(importId: string): Promise<void>;
  addRefusedLines(importId: string, lines: RefusedLine[]): Promise<void>;
  /** Refused lines from line `after` on (exclusive), in file order. */
  refusedLines(importId: string, after: number, limit: number): Promise<RefusedLine[]>;
  /** Which of these creation-body keys were imported before (per account and mode). */
  heldImportKeys(accountId: string, mode: Mode, keys: string[]): Promise<Set<string>>;
  addImportKeys(accountId: string, mode: Mode, entries: { key: string; taskId: string }[]): Promise<void>;
  insertExport(record: ExportRecord): Promise<void>;
  getExport(accountId: string, mode: Mode, exportId: string): Promise<ExportRecord | null>;
  /** An export by its id alone (a signed download link names no account). */
  findExport(exportId: string): Promise<ExportRecord | null>;
  /** Like claimImport, for exports (queued, or running under a lapsed lease). */
  claimExport(now: Date, leaseUntil: Date, token: string): Promise<ExportRecord | null>;
  /** An export's progress if `token` holds its lease; false otherwise. */
  saveExportProgress(exportId: string, token: string, progress: ExportProgress): Promise<boolean>;
  /** Starts an export's file again (a claim of an export that another process had begun). */
  clearExportFile(exportId: string): Promise<void>;
  addExportChunk(exportId: string, seq: number, data: Buffer): Promise<void>;
  /** The pieces of an export's file from `seq` on, `limit` at a time. */
  exportChunks(exportId: string, fromSeq: number, limit: number): Promise<{ seq: number; data: Buffer }[]>;
  /** Deletes the files of completed exports kept past `now`: they become `expired`. */
  expireExports(now: Date): Promise<number>;
}

// ---- Storage (issue 37): the accounts' buckets. ----

/** A connection to one bucket of an account, in one mode, as shown (no secret). */
export interface StorageConnection {
  connectionId: string;
  accountId: string;
  mode: Mode;
  provider: 's3' | 'gcs';
  bucket: string;
  endpoint: string;
  region: string;
  pathStyle: boolean;
  accessKeyId: string;
  media: 'proxy' | 'presigned';
  createdAt: Date;
}

export interface StorageRepository {
  /** Stores it, the secret sealed; false when the account already has a connection to that bucket in that mode. */
  insert(connection: StorageConnection, secretAccessKey: string): Promise<boolean>;
  list(accountId: string, mode: Mode): Promise<StorageConnection[]>;
  get(accountId: string, mode: Mode, connectionId: string): Promise<StorageConnection | null>;
  /** The connection to a bucket, with its secret opened (only what signs requests asks for it). */
  forBucket(
    accountId: string,
    mode: Mode,
    provider: 's3' | 'gcs',
    bucket: string,
  ): Promise<(StorageConnection & { secretAccessKey: string }) | null>;
  /** Of the buckets given (provider and name), those the account has no connection to in that mode. */
  unconnected(
    accountId: string,
    mode: Mode,
    buckets: { provider: 's3' | 'gcs'; bucket: string }[],
  ): Promise<{ provider: 's3' | 'gcs'; bucket: string }[]>;
  delete(accountId: string, mode: Mode, connectionId: string): Promise<StorageConnection | null>;
}
