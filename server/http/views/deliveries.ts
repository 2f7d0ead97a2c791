// The account's callbacks as the current generation lists them (schema CallbackMessageList).
import type { components } from '../../../generated/current.ts';
import type { CallbackPage } from '../../domain/deliveries.ts';
import type { ListedCallback } from '../../domain/ports.ts';

type Schemas = components['schemas'];

function callbackView({ message: m, lastAttempt: a }: ListedCallback): Schemas['CallbackMessage'] {
  const state = m.deliveredAt ? 'delivered' : m.failedAt ? 'failed' : 'pending';
  const batch = m.event === 'batch_completed';
  return {
    callback_id: m.id,
    event: m.event,
    task_id: batch ? undefined : m.subject,
    batch: batch ? m.subject : undefined,
    url: m.url,
    created_at: m.createdAt.toISOString(),
    state,
    attempts: m.attempts,
    last_attempt: a
      ? {
          attempted_at: a.attemptedAt.toISOString(),
          status_code: a.statusCode ?? undefined,
          error: a.error ?? undefined,
          duration_ms: a.durationMs,
        }
      : undefined,
    next_attempt_at: state === 'pending' ? m.nextAttemptAt.toISOString() : undefined,
    delivered_at: m.deliveredAt?.toISOString(),
    failed_at: m.failedAt?.toISOString(),
  };
}

export const callbackListView = (page: CallbackPage, limit: number): Schemas['CallbackMessageList'] => ({
  docs: page.callbacks.map(callbackView),
  limit,
  has_more: page.hasMore,
  next_token: page.nextToken,
});
