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
const typeDetails = (task: Task) => stored<TypeDetails>({ type: task.type, params: task.params, response: task.response ?? undefined });

/** The fields both generations show alike, but for the type's own (`typeDetails`). */
type CommonFields = Omit<Current['schemas']['TaskCommonFields'], 'type' | 'params' | 'response'>;

/** The fields both generations show alike (all but the status, the callback flag and urgency). */
const commonFields = (task: Task): CommonFields => ({
  task_id: task.taskId,
  instruction: task.instruction ?? undefined,
  callback_url: task.callbackUrl ?? undefined,
  created_at: task.createdAt.toISOString(),
  updated_at: task.updatedAt.toISOString(),
  completed_at: task.completedAt?.toISOString(),
  customer_review_status: task.customerReviewStatus ?? undefined,
  times_redone: task.timesRedone > 0 ? task.timesRedone : undefined,
  metadata: task.metadata,
  project_param_version: task.project !== null ? task.projectParamVersion : undefined,
  audits: task.audits.map((a): CommonFields['audits'][number] => ({
    audited_by: a.auditedBy,
    audited_at: a.auditedAt.toISOString(),
    audit_time_secs: a.auditTimeSecs,
    audit_result: a.result,
    audit_source: a.source,
    comments: a.comments,
  })),
  unique_id: task.uniqueId ?? undefined,
  tags: task.tags !== null && task.tags.length > 0 ? task.tags : undefined,
  project: task.project ?? undefined,
  batch: task.batch ?? undefined,
});

// The order of the fields is the one the task objects always had: id, the type's own, status,
// instruction and callback address, the generation's own, then the rest.
export function currentTaskView(task: Task): CurrentTask {
  const { task_id, instruction, callback_url, ...rest } = commonFields(task);
  return {
    task_id,
    ...typeDetails(task),
    status: task.status,
    instruction,
    callback_url,
    callback_completed: task.callbackCompleted ?? undefined,
    ...rest,
  };
}

export function legacyTaskView(task: Task): LegacyTask {
  const { task_id, instruction, callback_url, ...rest } = commonFields(task);
  return {
    task_id,
    ...typeDetails(task),
    // The older generation has no `error` status: it shows a completed task with response.error.
    status: task.status === 'error' ? 'completed' : task.status,
    instruction,
    callback_url,
    callback_succeeded: task.callbackCompleted ?? undefined,
    urgency: task.urgency,
    ...rest,
  };
}

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
    const limited: Pick<W, 'task_id' | 'status' | 'metadata' | 'project'> = {
      task_id: whole.task_id,
      status: whole.status,
      metadata: whole.metadata,
      project: whole.project,
    };
    return { ...limited, ...url };
  };

export const currentTaskListView = (page: TaskPage, limit: number, shape: ListShape): Current['schemas']['TaskList'] => ({
  docs: page.tasks.map(listed(currentTaskView, shape)),
  total: page.total,
  limit,
  offset: page.offset,
  has_more: page.hasMore,
  next_token: page.nextToken || undefined,
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
  docs: attempts.map((a): Current['schemas']['CallbackAttemptList']['docs'][number] => ({
    event: a.event,
    attempted_at: a.attemptedAt.toISOString(),
    url: a.url,
    status_code: a.statusCode ?? undefined,
    error: a.error ?? undefined,
    duration_ms: a.durationMs,
  })),
});
