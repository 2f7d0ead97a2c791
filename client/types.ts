// Types of the typed client, all derived from the generated contract types (never written by hand):
// operations are looked up by path and method, and their bodies, parameters and answers follow.
import type { components as CurrentComponents, paths as CurrentPaths } from '../generated/current.ts';
import type { components as LegacyComponents, paths as LegacyPaths } from '../generated/legacy.ts';

export type { CurrentPaths, LegacyPaths, CurrentComponents, LegacyComponents };

/** The body of every error answer of both generations: `{status_code, error}`. */
export type ErrorBody = CurrentComponents['schemas']['ErrorBody'];

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/** The operation object of `Path` and `M` in a generation's `paths` (never when there is none). */
export type Operation<P, Path, M extends HttpMethod> = Path extends keyof P ? (P[Path] extends { [K in M]: infer O } ? O : never) : never;

type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body of the operation's 200 answer (every success of this API is a 200). */
export type SuccessBody<Op> = Op extends { responses: { 200: infer R } } ? JsonContent<R> : never;

/** The error statuses the contract documents for the operation (400, 401, 404, ...). */
export type ErrorStatus<Op> = Op extends { responses: infer R } ? Exclude<keyof R, 200 | 'default'> & number : never;

/** The operation's JSON request body. */
export type RequestBody<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : Op extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B
    : never;

/** The operation's query parameters. */
export type Query<Op> = Op extends { parameters: { query?: infer Q } } ? Exclude<Q, undefined> : never;

/** A successful answer: `data` is the contract's 200 body. */
export interface Success<Op> {
  ok: true;
  status: 200;
  data: SuccessBody<Op>;
  error?: never;
  response: Response;
}

/** An error answer: `status` is one of the operation's documented error statuses, `error` the `{status_code, error}` body. */
export interface Failure<Op> {
  ok: false;
  status: ErrorStatus<Op>;
  data?: never;
  error: ErrorBody;
  response: Response;
}

/**
 * What a convenience method resolves to. Narrow on `ok`, on `status` or on `error`. With
 * `throwOnError: true` (`Throw = true`) errors are thrown as `HumantaskError`, so only `Success` remains.
 */
export type Result<Op, Throw extends boolean = false> = Throw extends true ? Success<Op> : Success<Op> | Failure<Op>;

/** Task types that have a creation endpoint `POST /v1/task/<type>` in the generation. */
export type CreatableTaskType<P> = {
  [K in keyof P]: K extends `/v1/task/${infer T}` ? (T extends `{${string}` | `${string}/${string}` ? never : T) : never;
}[keyof P];

/** Types that have `POST /v1/training_tasks/<type>` (`Kind = 'training_tasks'`) or `/v1/evaluation_tasks/<type>`. */
export type CreatableTrainingType<P, Kind extends 'training_tasks' | 'evaluation_tasks'> = {
  [K in keyof P]: K extends `/v1/${Kind}/${infer T}` ? (T extends `{${string}` | `${string}/${string}` ? never : T) : never;
}[keyof P];

/** Options every convenience method takes. */
export interface RequestOptions {
  /** Aborts the request (and any wait between retries). */
  signal?: AbortSignal;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/** Options of creation methods. */
export interface CreateOptions extends RequestOptions {
  /** The `Idempotency-Key` to send; by default a new random UUID per call (reused by its retries). */
  idempotencyKey?: string;
}

/** Options of `iterate` helpers. */
export interface IterateOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

// Operations by path, per generation.
type TaskPath = '/v1/task/{taskId}';
export type TaskOf<P> = SuccessBody<Operation<P, TaskPath, 'get'>>;
export type BatchOf<P> = SuccessBody<Operation<P, '/v1/batches/{batchName}', 'get'>>;
export type TrainingTaskOf<P> = SuccessBody<Operation<P, '/v1/training_tasks/{trainingTaskId}', 'get'>>;
export type EvaluationTaskOf<P> = SuccessBody<Operation<P, '/v1/evaluation_tasks/{evaluationTaskId}', 'get'>>;

/**
 * Filters of the task list, without the paging cursor or offset (the iterator manages those) and
 * without `limited_response` (the iterator yields whole tasks).
 */
export type TaskFilters<P> = Omit<Query<Operation<P, '/v1/tasks', 'get'>>, 'next_token' | 'offset' | 'limited_response'>;
export type BatchFilters<P> = Omit<Query<Operation<P, '/v1/batches', 'get'>>, 'offset'>;
export type TrainingFilters<P> = Omit<Query<Operation<P, '/v1/training_tasks', 'get'>>, 'offset'>;
export type EvaluationFilters<P> = Omit<Query<Operation<P, '/v1/evaluation_tasks', 'get'>>, 'offset'>;

type R<P, Path, M extends HttpMethod, T extends boolean> = Promise<Result<Operation<P, Path, M>, T>>;
type Body<P, Path, M extends HttpMethod> = RequestBody<Operation<P, Path, M>>;

export interface TasksApi<P, T extends boolean> {
  /** `POST /v1/task/<type>`: the body is the contract's request of that type. Sends an `Idempotency-Key`. */
  create<K extends CreatableTaskType<P> & string>(
    type: K,
    body: Body<P, `/v1/task/${K}`, 'post'>,
    options?: CreateOptions,
  ): R<P, `/v1/task/${K}`, 'post', T>;
  /** `GET /v1/task/{taskId}` */
  get(taskId: string, options?: RequestOptions): R<P, TaskPath, 'get', T>;
  /** `GET /v1/tasks`: one page. */
  list(query?: Query<Operation<P, '/v1/tasks', 'get'>>, options?: RequestOptions): R<P, '/v1/tasks', 'get', T>;
  /** Every task matching the filters, newest first, page after page (`limit` sets the page size). Throws `HumantaskError`. */
  iterate(filters?: TaskFilters<P>, options?: IterateOptions): AsyncIterableIterator<TaskOf<P>>;
  /** `POST /v1/task/{taskId}/cancel` (`clearUniqueId`: the `clear_unique_id` parameter). */
  cancel(taskId: string, options?: RequestOptions & { clearUniqueId?: boolean }): R<P, `${TaskPath}/cancel`, 'post', T>;
  /** `POST /v1/task/{taskId}/setMetadata`: replaces the metadata. */
  setMetadata(
    taskId: string,
    metadata: Body<P, `${TaskPath}/setMetadata`, 'post'>,
    options?: RequestOptions,
  ): R<P, `${TaskPath}/setMetadata`, 'post', T>;
  /** `POST /v1/task/{taskId}/unique_id` */
  setUniqueId(taskId: string, uniqueId: string, options?: RequestOptions): R<P, `${TaskPath}/unique_id`, 'post', T>;
  /** `DELETE /v1/task/{taskId}/unique_id` */
  deleteUniqueId(taskId: string, options?: RequestOptions): R<P, `${TaskPath}/unique_id`, 'delete', T>;
  /** `POST /v1/task/{taskId}/tags`: adds tags. */
  addTags(taskId: string, tags: Body<P, `${TaskPath}/tags`, 'post'>, options?: RequestOptions): R<P, `${TaskPath}/tags`, 'post', T>;
  /** `PUT /v1/task/{taskId}/tags`: the PUT form of `addTags` (the contract makes both add). */
  putTags(taskId: string, tags: Body<P, `${TaskPath}/tags`, 'put'>, options?: RequestOptions): R<P, `${TaskPath}/tags`, 'put', T>;
  /** `DELETE /v1/task/{taskId}/tags`: removes tags. */
  removeTags(taskId: string, tags: Body<P, `${TaskPath}/tags`, 'delete'>, options?: RequestOptions): R<P, `${TaskPath}/tags`, 'delete', T>;
  /** `GET /v1/task/{taskId}/callbacks`: the delivery attempts of the task's callbacks, oldest first. */
  listCallbacks(taskId: string, options?: RequestOptions): R<P, `${TaskPath}/callbacks`, 'get', T>;
  /** `POST /v1/task/{taskId}/callbacks/redeliver`: queues a new delivery (a new `webhook-id`). Not retried but after 429. */
  redeliverCallback(taskId: string, options?: RequestOptions): R<P, `${TaskPath}/callbacks/redeliver`, 'post', T>;
  /**
   * `GET /v1/task/{taskId}/files/{file}`: a part of a response kept as a file, by its link (`ResultFile`,
   * current generation); `withResultFiles` puts every such part in place.
   */
  readResultFile(link: { url: string }, options?: RequestOptions): R<P, `${TaskPath}/files/{file}`, 'get', T>;
  /** `POST /v1/task/{taskId}/audit`: accepts or rejects a completed task's result. */
  audit(taskId: string, review: Body<P, `${TaskPath}/audit`, 'post'>, options?: RequestOptions): R<P, `${TaskPath}/audit`, 'post', T>;
}

type ProjectPath = '/v1/projects/{projectName}';
export interface ProjectsApi<P, T extends boolean> {
  create(body: Body<P, '/v1/projects', 'post'>, options?: RequestOptions): R<P, '/v1/projects', 'post', T>;
  get(name: string, options?: RequestOptions): R<P, ProjectPath, 'get', T>;
  /** `archived: 'true'` or `'false'` lists only archived or only other projects. */
  list(query?: Query<Operation<P, '/v1/projects', 'get'>>, options?: RequestOptions): R<P, '/v1/projects', 'get', T>;
  setParams(
    name: string,
    body: Body<P, `${ProjectPath}/setParams`, 'post'>,
    options?: RequestOptions,
  ): R<P, `${ProjectPath}/setParams`, 'post', T>;
  setOntology(
    name: string,
    body: Body<P, `${ProjectPath}/setOntology`, 'post'>,
    options?: RequestOptions,
  ): R<P, `${ProjectPath}/setOntology`, 'post', T>;
  /** Archives the project: it takes no new task or batch, and `archived=false` lists leave it out. */
  archive(name: string, options?: RequestOptions): R<P, `${ProjectPath}/archive`, 'post', T>;
  unarchive(name: string, options?: RequestOptions): R<P, `${ProjectPath}/unarchive`, 'post', T>;
}

type BatchPath = '/v1/batches/{batchName}';
export interface BatchesApi<P, T extends boolean> {
  create(body: Body<P, '/v1/batches', 'post'>, options?: RequestOptions): R<P, '/v1/batches', 'post', T>;
  get(name: string, options?: RequestOptions): R<P, BatchPath, 'get', T>;
  list(query?: Query<Operation<P, '/v1/batches', 'get'>>, options?: RequestOptions): R<P, '/v1/batches', 'get', T>;
  /** Every batch matching the filters, newest first (`limit` sets the page size). Throws `HumantaskError`. */
  iterate(filters?: BatchFilters<P>, options?: IterateOptions): AsyncIterableIterator<BatchOf<P>>;
  finalize(name: string, options?: RequestOptions): R<P, `${BatchPath}/finalize`, 'post', T>;
  /** Archives the batch: it takes no new task and `exclude_archived=true` lists leave it out. */
  archive(name: string, options?: RequestOptions): R<P, `${BatchPath}/archive`, 'post', T>;
  unarchive(name: string, options?: RequestOptions): R<P, `${BatchPath}/unarchive`, 'post', T>;
  status(name: string, options?: RequestOptions): R<P, `${BatchPath}/status`, 'get', T>;
  setMetadata(
    name: string,
    metadata: Body<P, `${BatchPath}/setMetadata`, 'post'>,
    options?: RequestOptions,
  ): R<P, `${BatchPath}/setMetadata`, 'post', T>;
}

export interface TrainingTasksApi<P, T extends boolean> {
  /** `POST /v1/training_tasks/<type>`. Sends an `Idempotency-Key`. */
  create<K extends CreatableTrainingType<P, 'training_tasks'> & string>(
    type: K,
    body: Body<P, `/v1/training_tasks/${K}`, 'post'>,
    options?: CreateOptions,
  ): R<P, `/v1/training_tasks/${K}`, 'post', T>;
  get(id: string, options?: RequestOptions): R<P, '/v1/training_tasks/{trainingTaskId}', 'get', T>;
  list(query?: Query<Operation<P, '/v1/training_tasks', 'get'>>, options?: RequestOptions): R<P, '/v1/training_tasks', 'get', T>;
  iterate(filters?: TrainingFilters<P>, options?: IterateOptions): AsyncIterableIterator<TrainingTaskOf<P>>;
}

export interface EvaluationTasksApi<P, T extends boolean> {
  /** `POST /v1/evaluation_tasks/<type>`. Sends an `Idempotency-Key`. */
  create<K extends CreatableTrainingType<P, 'evaluation_tasks'> & string>(
    type: K,
    body: Body<P, `/v1/evaluation_tasks/${K}`, 'post'>,
    options?: CreateOptions,
  ): R<P, `/v1/evaluation_tasks/${K}`, 'post', T>;
  get(id: string, options?: RequestOptions): R<P, '/v1/evaluation_tasks/{evaluationTaskId}', 'get', T>;
  list(query?: Query<Operation<P, '/v1/evaluation_tasks', 'get'>>, options?: RequestOptions): R<P, '/v1/evaluation_tasks', 'get', T>;
  iterate(filters?: EvaluationFilters<P>, options?: IterateOptions): AsyncIterableIterator<EvaluationTaskOf<P>>;
}

/** The convenience methods of one generation. */
export interface Api<P, T extends boolean> {
  tasks: TasksApi<P, T>;
  projects: ProjectsApi<P, T>;
  batches: BatchesApi<P, T>;
  trainingTasks: TrainingTasksApi<P, T>;
  evaluationTasks: EvaluationTasksApi<P, T>;
}
