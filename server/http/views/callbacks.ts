// The payloads of the callbacks (the contract's webhooks), as the rules ask for them when they
// queue one (domain/ports.ts CallbackPayloads): the composition root hands them to the unit of work.
import type { components as Current } from '../../../generated/current.ts';
import type { components as Legacy } from '../../../generated/legacy.ts';
import type { Task } from '../../domain/model.ts';
import type { CallbackPayloads } from '../../domain/ports.ts';
import { batchView } from './projects.ts';
import { stored } from './stored.ts';
import { currentTaskView, legacyTaskView } from './tasks.ts';

type Schemas = Current['schemas'];

/**
 * The payloads with the task shown by `show` (its response files as links, decision record 24):
 * every unit of work that queues callbacks is made with these (server/results/unit-of-work.ts).
 * Each is the contract's webhook body, built as an object literal of its type.
 */
export function callbackPayloadsShowing(show: (task: Task) => Task): CallbackPayloads {
  return {
    taskCompleted(task) {
      const shown = show(task);
      const response = stored<Schemas['TaskCompletedCallback']['response']>(shown.response);
      if (task.generation === 'legacy') {
        const body: Legacy['schemas']['LegacyTaskCompletedCallback'] = { task_id: task.taskId, response, task: legacyTaskView(shown) };
        return body;
      }
      const body: Schemas['TaskCompletedCallback'] = { task_id: task.taskId, response, task: currentTaskView(shown) };
      return body;
    },
    attachmentError(task, attachments) {
      const body: Schemas['AttachmentErrorCallback'] = {
        task_id: task.taskId,
        error: stored<{ error?: string } | null>(task.response)?.error ?? 'The task ran into an error.',
        attachments: attachments.map(({ url, statusCode }): Schemas['AttachmentErrorCallback']['attachments'][number] => ({
          statusCode,
          url,
        })),
      };
      return body;
    },
    batchCompleted(batch, counts) {
      const body: Schemas['BatchCompletedCallback'] = { batch: batchView(batch), counts };
      return body;
    },
  };
}
