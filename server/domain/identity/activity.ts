// The activity log (issue 34): an append-only record of every change a person or key of the account
// makes, written in the transaction that makes the change. Who (a member, a key, a worker, the
// operator), what (an action and its target), when, from where and with which request.
import { randomBytes } from 'node:crypto';
import { positionToken, queryBinding, readPositionToken } from '../page-token.ts';
import type { Json, Mode } from '../model.ts';

export type ActorType = 'member' | 'api_key' | 'worker' | 'operator' | 'system';

export interface Actor {
  type: ActorType;
  /** A member's, key's or worker's id. */
  id?: string;
  /** The member's or worker's e-mail address, the key's name, as they were. */
  name?: string;
}

/** Whoever runs the server, through the `humantask` command. */
export const operatorActor: Actor = { type: 'operator' };

export interface ActivityEntry {
  activityId: string;
  accountId: string;
  at: Date;
  /** `project.params_set`: the kind of object, a dot, what was done. */
  action: string;
  actor: Actor;
  targetType: string;
  targetId: string | null;
  mode: Mode | null;
  address: string | null;
  requestId: string | null;
  details: Json | null;
}

/** What a request knows of where it came from. */
export interface RequestOrigin {
  address?: string | undefined;
  requestId?: string | undefined;
  mode?: Mode | undefined;
}

export interface ActivityFilters {
  action?: string;
  /** `member.*`: every action on members. */
  actionPrefix?: string;
  actorType?: ActorType;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  since?: Date;
  until?: Date;
}

export interface ActivityRepository {
  append(entry: ActivityEntry): Promise<void>;
  /** Newest first (at, then id, descending), after a position. */
  list(
    accountId: string,
    filters: ActivityFilters,
    page: { limit: number; after?: { at: Date; activityId: string } },
  ): Promise<ActivityEntry[]>;
  /** Deletes entries older than `before`; how many. */
  deleteBefore(before: Date): Promise<number>;
}

/** Time-ordered: 8 hex digits of seconds, then random. */
const newActivityId = (at: Date) =>
  'act_' +
  Math.floor(at.getTime() / 1000)
    .toString(16)
    .padStart(8, '0') +
  randomBytes(8).toString('hex');

/** The entry of a change, as `recordActivity` appends it. */
export interface NewActivity {
  accountId: string;
  action: string;
  actor: Actor;
  target: { type: string; id?: string | null | undefined };
  at: Date;
  origin?: RequestOrigin | undefined;
  details?: Json | undefined;
}

function activityEntry(a: NewActivity): ActivityEntry {
  return {
    activityId: newActivityId(a.at),
    accountId: a.accountId,
    at: a.at,
    action: a.action,
    actor: a.actor,
    targetType: a.target.type,
    targetId: a.target.id ?? null,
    mode: a.origin?.mode ?? null,
    address: a.origin?.address ?? null,
    requestId: a.origin?.requestId ?? null,
    details: a.details && Object.keys(a.details).length > 0 ? a.details : null,
  };
}

/**
 * Appends one entry, in the caller's transaction (`repos` of `uow.transaction`): the change and its
 * record commit together or not at all. Bulk operations (imports, exports) that change an account
 * outside a request call this too, with the actor that started them.
 */
export async function recordActivity(repos: { activity: ActivityRepository }, a: NewActivity): Promise<ActivityEntry> {
  const entry = activityEntry(a);
  await repos.activity.append(entry);
  return entry;
}

export interface ActivityPage {
  entries: ActivityEntry[];
  hasMore: boolean;
  nextToken?: string;
}

/** One page of an account's activity, newest first; next_token bound to the account and filters. */
export async function listActivity(
  repos: { activity: ActivityRepository },
  accountId: string,
  filters: ActivityFilters,
  page: { limit: number; nextToken?: string | undefined },
): Promise<ActivityPage> {
  const binding = queryBinding(['activity', accountId, filters]);
  const position = page.nextToken ? readPositionToken(page.nextToken, binding, /^act_[0-9a-f]{24}$/) : undefined;
  const after = position ? { at: position.at, activityId: position.id } : undefined;
  const rows = await repos.activity.list(accountId, filters, { limit: page.limit + 1, ...(after ? { after } : {}) });
  const entries = rows.slice(0, page.limit);
  const hasMore = rows.length > page.limit;
  const last = entries.at(-1);
  return {
    entries,
    hasMore,
    ...(hasMore && last ? { nextToken: positionToken({ at: last.at, id: last.activityId }, binding) } : {}),
  };
}
