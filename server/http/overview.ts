// GET /v1/overview (the console's overview): domain/overview.ts reads it, views/overview.ts shows it.
import { wallClock } from '../domain/clock.ts';
import { readOverview } from '../domain/overview.ts';
import type { HandlerDeps } from './tasks.ts';
import type { HandlerTable, Operations } from './typed.ts';
import { overviewView } from './views/overview.ts';

export function overviewHandlers({ uow, now = wallClock }: HandlerDeps): Pick<HandlerTable<Operations['current']>, 'getOverview'> {
  return {
    getOverview: async ({ caller, query }) => overviewView(await readOverview(uow, caller, query.days ?? 30, now())),
  };
}
