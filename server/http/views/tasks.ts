// The two generation views of a task, its list and its callback history. Every difference between
// the generations' task objects lives here: status names, the callback flag's name, urgency, how an
// error shows, and how the list pages.
import type { components as Current } from '../../../generated/current.ts';
import type { components as Legacy } from '../../../generated/legacy.ts';
import type { Generation, Task, TaskStatus } from '../../domain/model.ts';
import type { CallbackAttempt } from '../../domain/task-callbacks.ts';
import type { TaskPage } from '../../domain/task-reads.ts';
import { stored } from './stored.ts';

type CurrentTask = Current['schemas']['Task'];
type LegacyTask = Legacy['schemas']['LegacyTask'];

/**
 * The part of a task whose wire type depends on its type: `params` and `response`. They were
 * checked against the type's schema when stored (creation validates the params, the synthetic and
 * worker answers are checked against the type's response schema), so they are asserted here, once.
 */
type TypeDetails = Current['schemas']['TaskTypeDetails'] & Pick<Current['schemas']['TaskCommonFields'], 'params' | 'response'>;
const typeDetails = (task: Task) =>
  stored<TypeDetails>({ type: task.type, params: task.params, ...(task.response !== null ? { response: task.response } : {}) });

/** The fields both generations show alike, around the generation's own (status, callback flag, urgency). */
function taskFields<Status, Own extends object>(task: Task, status: Status, own: Own) {
  return {
    task_id: task.taskId,
    ...typeDetails(task),
    status,
    ...(task.instruction !== null ? { instruction: task.instruction } : {}),
    ...(task.callbackUrl !== null ? { callback_url: task.callbackUrl } : {}),
    ...own,
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
    ...(task.completedAt !== null ? { completed_at: task.completedAt.toISOString() } : {}),
    ...(task.customerReviewStatus !== null ? { customer_review_status: task.customerReviewStatus } : {}),
    ...(task.timesRedone > 0 ? { times_redone: task.timesRedone } : {}),
    metadata: task.metadata,
    ...(task.project !== null ? { project_param_version: task.projectParamVersion } : {}),
    audits: task.audits.map((a) => ({
      audited_by: a.auditedBy,
      audited_at: a.auditedAt.toISOString(),
      audit_time_secs: a.auditTimeSecs,
      audit_result: a.result,
      audit_source: a.source,
      ...(a.comments !== undefined ? { comments: a.comments } : {}),
    })),
    ...(task.uniqueId !== null ? { unique_id: task.uniqueId } : {}),
    ...(task.tags !== null && task.tags.length > 0 ? { tags: task.tags } : {}),
    ...(task.project !== null ? { project: task.project } : {}),
    ...(task.batch !== null ? { batch: task.batch } : {}),
  };
}

export function currentTaskView(task: Task): CurrentTask {
  return taskFields(task, task.status, {
    ...(task.callbackCompleted !== null ? { callback_completed: task.callbackCompleted } : {}),
  });
}

export function legacyTaskView(task: Task): LegacyTask {
  // The older generation has no `error` status: it shows a completed task with response.error.
  return taskFields(task, task.status === 'error' ? 'completed' : task.status, {
    ...(task.callbackCompleted !== null ? { callback_succeeded: task.callbackCompleted } : {}),
    urgency: task.urgency,
  });
}

/** A task as the generation that created it shows it (in its callback). */
export const taskViewOf = (task: Task): CurrentTask | LegacyTask =>
  task.generation === 'legacy' ? legacyTaskView(task) : currentTaskView(task);

/** How a list shows its tasks (`include_attachment_url`, `limited_response`). */
export interface ListShape {
  attachmentUrl: boolean;
  limited: boolean;
}

/**
 * A task's `attachment_url`: its attachment when that is an http(s) URL (no copy is kept); none for
 * text (even text that reads like a URL) and for lists of frames or attachments.
 */
const attachmentUrl = (task: Task): { attachment_url?: string } => {
  const { attachment, attachment_type } = task.params;
  return attachment_type !== 'text' && typeof attachment === 'string' && /^https?:\/\//i.test(attachment)
    ? { attachment_url: attachment }
    : {};
};

/** A list entry: the whole task, or with `limited_response` only its id, status, metadata and project. */
const listed =
  <W extends { task_id: string; status: string; metadata: Current['schemas']['Metadata']; project?: string }>(
    view: (task: Task) => W,
    shape: ListShape,
  ) =>
  (task: Task) => {
    const whole = view(task);
    const url = shape.attachmentUrl ? attachmentUrl(task) : {};
    if (!shape.limited) return { ...whole, ...url };
    const { project } = whole;
    return {
      task_id: whole.task_id,
      status: whole.status as W['status'],
      metadata: whole.metadata,
      ...(project !== undefined ? { project } : {}),
      ...url,
    };
  };

export const currentTaskListView = (page: TaskPage, limit: number, shape: ListShape): Current['schemas']['TaskList'] => ({
  docs: page.tasks.map(listed(currentTaskView, shape)),
  total: page.total,
  limit,
  offset: page.offset,
  has_more: page.hasMore,
  ...(page.nextToken ? { next_token: page.nextToken } : {}),
});

export const legacyTaskListView = (
  page: TaskPage,
  limit: number,
  offset: number,
  shape: ListShape,
): Legacy['schemas']['LegacyTaskList'] => ({
  docs: page.tasks.map(listed(legacyTaskView, shape)),
  total: page.total,
  limit,
  offset,
  has_more: page.hasMore,
});

/** The statuses a generation's `status` filter selects (the older one shows errors as completed). */
export function statusesFor(generation: Generation, status: TaskStatus): TaskStatus[] {
  if (generation === 'legacy' && status === 'completed') return ['completed', 'error'];
  return [status];
}

export const callbackHistoryView = (attempts: CallbackAttempt[]): Current['schemas']['CallbackAttemptList'] => ({
  docs: attempts.map((a) => ({
    event: a.event,
    attempted_at: a.attemptedAt.toISOString(),
    url: a.url,
    ...(a.statusCode !== null ? { status_code: a.statusCode } : {}),
    ...(a.error !== null ? { error: a.error } : {}),
    duration_ms: a.durationMs,
  })),
});
