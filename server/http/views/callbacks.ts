// The payloads of the callbacks (the contract's webhooks), as the rules ask for them when they
// queue one (domain/ports.ts CallbackPayloads): the composition root hands them to the unit of work.
import type { CallbackPayloads } from '../../domain/ports.ts';
import { batchView } from './projects.ts';
import { taskViewOf } from './tasks.ts';

export const callbackPayloads: CallbackPayloads = { task: taskViewOf, batch: batchView };
