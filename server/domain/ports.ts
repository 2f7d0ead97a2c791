// What the rules need from storage. server/store implements it; the rules never see SQL.
import type { Account, Mode, Task, TaskStatus } from './model.ts';

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

/** A list page: by offset (older generation) or after a keyset position (current generation). */
export type PageRequest =
  | { limit: number; offset: number }
  | { limit: number; after: { createdAt: Date; taskId: string } | null };

export interface TaskRepository {
  /** Inserts a task; throws UniqueIdTaken when its unique_id is in use. */
  insert(task: Task): Promise<void>;
  update(task: Task): Promise<void>;
  /** The task if it belongs to this account and mode; with forUpdate, locked until the transaction ends. */
  get(accountId: string, mode: Mode, taskId: string, options?: { forUpdate?: boolean }): Promise<Task | null>;
  findByUniqueId(accountId: string, mode: Mode, uniqueId: string): Promise<Task | null>;
  /** One page (limit + 1 rows fetched to tell whether more follow) and the count of all matches. */
  list(accountId: string, mode: Mode, filters: TaskFilters, page: PageRequest): Promise<{ tasks: Task[]; total: number }>;
  /** Ids of test-mode tasks whose completion delay is over (any account). */
  dueTestTaskIds(now: Date, limit: number): Promise<{ taskId: string; accountId: string; mode: Mode }[]>;
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

export interface IdempotencyRepository {
  find(accountId: string, key: string): Promise<SavedAnswer | null>;
  /** Inserts unless the key exists; true when this call inserted it. Waits for a concurrent holder. */
  claim(answer: SavedAnswer): Promise<boolean>;
  update(answer: SavedAnswer): Promise<void>;
  deleteExpired(now: Date): Promise<number>;
}

export interface AccountRecord extends Account {
  testKeyHash: string;
  liveKeyHash: string;
}

export interface AccountRepository {
  findByKeyHash(keyHash: string): Promise<{ account: Account; mode: Mode } | null>;
  findByName(name: string): Promise<AccountRecord | null>;
  insert(account: AccountRecord): Promise<void>;
  update(account: AccountRecord): Promise<void>;
  list(): Promise<AccountRecord[]>;
  count(): Promise<number>;
  countLiveRequest(accountId: string): Promise<void>;
}

export interface Repositories {
  tasks: TaskRepository;
  idempotency: IdempotencyRepository;
  accounts: AccountRepository;
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
