// The account's callbacks, the newest first (GET /v1/callbacks, the console's Deliveries): how each
// one's delivery went, to find those failed or still retried. Pages by next_token (page-token.ts).
import type { Caller } from './model.ts';
import { positionToken, queryBinding, readPositionToken } from './page-token.ts';
import type { CallbackFilters, ListedCallback, UnitOfWork } from './ports.ts';

export interface CallbackPage {
  callbacks: ListedCallback[];
  hasMore: boolean;
  nextToken?: string;
}

export async function listCallbacks(
  uow: UnitOfWork,
  caller: Caller,
  filters: CallbackFilters,
  page: { limit: number; nextToken?: string | undefined },
): Promise<CallbackPage> {
  const { accountId } = caller.account;
  const binding = queryBinding(['callbacks', accountId, caller.mode, filters.state ?? null, filters.event ?? null]);
  const position = page.nextToken ? readPositionToken(page.nextToken, binding, /^[0-9a-f]{24}$/) : undefined;
  const rows = await uow.outbox.page(accountId, caller.mode, filters, page.limit + 1, position && { at: position.at, id: position.id });
  const callbacks = rows.slice(0, page.limit);
  const hasMore = rows.length > page.limit;
  const last = callbacks.at(-1)?.message;
  // The position in the list's order: when the server gave up, for the failed ones.
  const at = last && (filters.state === 'failed' ? last.failedAt : last.createdAt);
  return { callbacks, hasMore, ...(hasMore && last && at ? { nextToken: positionToken({ at, id: last.id }, binding) } : {}) };
}
