// The payloads of the callbacks (the contract's webhooks), as the rules ask for them when they
// queue one (domain/ports.ts CallbackPayloads): the composition root hands them to the unit of work.
import type { Task } from '../../domain/model.ts';
import type { CallbackPayloads } from '../../domain/ports.ts';
import { batchView } from './projects.ts';
import { taskViewOf } from './tasks.ts';

/**
 * The payloads with the task shown by `show` (its response files as links, decision record 24):
 * every unit of work that queues callbacks is made with these (server/results/unit-of-work.ts).
 */
export function callbackPayloadsShowing(show: (task: Task) => Task): CallbackPayloads {
  return { task: (task) => taskViewOf(show(task)), batch: batchView, response: (task) => show(task).response };
}
