// What the console's overview and Deliveries read: GET /v1/overview (domain/overview.ts) and the
// account's callbacks, GET /v1/callbacks (domain/deliveries.ts).
import { wallClock } from '../domain/clock.ts';
import { listCallbacks } from '../domain/deliveries.ts';
import { readOverview } from '../domain/overview.ts';
import type { HandlerDeps } from './tasks.ts';
import type { HandlerTable, Operations } from './typed.ts';
import { callbackListView } from './views/deliveries.ts';
import { overviewView } from './views/overview.ts';

export function overviewHandlers({
  uow,
  now = wallClock,
}: HandlerDeps): Pick<HandlerTable<Operations['current']>, 'getOverview' | 'listCallbacks'> {
  return {
    getOverview: async ({ caller, query }) => overviewView(await readOverview(uow, caller, query.days ?? 30, now())),
    listCallbacks: async ({ caller, query }) => {
      const limit = query.limit ?? 100;
      const page = await listCallbacks(uow, caller, { state: query.state, event: query.event }, { limit, nextToken: query.next_token });
      return callbackListView(page, limit);
    },
  };
}
