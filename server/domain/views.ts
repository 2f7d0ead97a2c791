// The two generation views of a task. Every difference between the generations' task objects
// lives here: status names, the callback flag's name, urgency, and how an error shows.
import type { Generation, Json, Task, TaskStatus } from './model.ts';

export function taskView(task: Task, generation: Generation): Json {
  const legacy = generation === 'legacy';
  const view: Json = {
    task_id: task.taskId,
    type: task.type,
    // The older generation has no `error` status: it shows a completed task with response.error.
    status: legacy && task.status === 'error' ? 'completed' : task.status,
  };
  if (task.instruction !== null) view.instruction = task.instruction;
  view.params = task.params;
  if (task.response !== null) view.response = task.response;
  if (task.callbackUrl !== null) view.callback_url = task.callbackUrl;
  if (task.callbackCompleted !== null) view[legacy ? 'callback_succeeded' : 'callback_completed'] = task.callbackCompleted;
  if (legacy) view.urgency = task.urgency;
  view.created_at = task.createdAt.toISOString();
  view.updated_at = task.updatedAt.toISOString();
  if (task.completedAt !== null) view.completed_at = task.completedAt.toISOString();
  if (task.customerReviewStatus !== null) view.customer_review_status = task.customerReviewStatus;
  if (task.timesRedone > 0) view.times_redone = task.timesRedone;
  view.metadata = task.metadata;
  if (task.project !== null) view.project_param_version = task.projectParamVersion;
  view.audits = task.audits;
  if (task.uniqueId !== null) view.unique_id = task.uniqueId;
  if (task.tags !== null && task.tags.length > 0) view.tags = task.tags;
  if (task.project !== null) view.project = task.project;
  if (task.batch !== null) view.batch = task.batch;
  return view;
}

/** The statuses a generation's `status` filter selects (the older one shows errors as completed). */
export function statusesFor(generation: Generation, status: string): TaskStatus[] {
  if (generation === 'legacy' && status === 'completed') return ['completed', 'error'];
  return [status as TaskStatus];
}

export interface TaskListPage {
  tasks: Task[];
  total: number;
  hasMore: boolean;
  nextToken?: string;
}

/** The list body: offset paging in the older generation, next_token in the current one. */
export function taskListView(page: TaskListPage, generation: Generation, limit: number, offset: number): Json {
  const docs = page.tasks.map((t) => taskView(t, generation));
  if (generation === 'legacy') return { docs, total: page.total, limit, offset, has_more: page.hasMore };
  return { docs, total: page.total, limit, has_more: page.hasMore, ...(page.nextToken ? { next_token: page.nextToken } : {}) };
}

/** How a generation pages its task list: by offset (older) or by next_token (current). */
export const pagesByOffset = (generation: Generation): boolean => generation === 'legacy';

/** The status answering a cancel of a completed task: 400 (current) or 500 (older), seed §3.1, §7. */
export const cancelCompletedStatus = (generation: Generation): number => (generation === 'legacy' ? 500 : 400);
