// The state of an account's work in one mode at a glance (GET /v1/overview, the console's overview):
// tasks by type and status, completions per UTC day over a window, pending tasks by project,
// callbacks given up on in the window, paused workers. The figures come from what the store keeps per
// account (OverviewRepository); here the window is laid out day by day.
import type { Caller } from './model.ts';
import type { OverviewFigures, UnitOfWork } from './ports.ts';

/** How many projects the pending figures name at most (the rest are left out). */
const overviewProjects = 50;

const dayMs = 86_400_000;

export interface Overview extends Omit<OverviewFigures, 'completedByDay'> {
  asOf: Date;
  /** Each day of the window, the oldest first, with its completions (0 when none). */
  completedPerDay: { day: string; count: number }[];
}

/** The overview of the caller's account and mode, with `days` days of completions, today (UTC) the last. */
export async function readOverview(uow: UnitOfWork, caller: Caller, days: number, now: Date): Promise<Overview> {
  const today = Math.floor(now.getTime() / dayMs) * dayMs;
  const since = new Date(today - (days - 1) * dayMs);
  const { completedByDay, ...figures } = await uow.overview.figures(caller.account.accountId, caller.mode, since, overviewProjects);
  const completedPerDay = Array.from({ length: days }, (_, i) => {
    const day = new Date(since.getTime() + i * dayMs).toISOString().slice(0, 10);
    return { day, count: completedByDay.get(day) ?? 0 };
  });
  return { ...figures, asOf: now, completedPerDay };
}
