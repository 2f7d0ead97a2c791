// Work nudges: the statements that queue background work also run `pg_notify(workChannel, ...)` in
// their transaction, so PostgreSQL delivers the nudge only after the commit (and never after a
// rollback), to every server process listening. PGlite does the same in-process (`client.listen`).
// A nudge only makes a poller look sooner: the work itself is in the tables, and the poll finds it
// if a nudge is lost.
import pg from 'pg';

export const workChannel = 'humantask_work';

/**
 * The background jobs: callbacks in the outbox, live attachment checks, delayed test completions;
 * `assignments`: live work became claimable (it wakes workers waiting in a long poll); `transfer`:
 * an import or export is ready to be taken up.
 */
export type WorkQueue = 'outbox' | 'attachment_check' | 'test_completion' | 'assignments' | 'transfer';
const queues: readonly string[] = ['outbox', 'attachment_check', 'test_completion', 'assignments', 'transfer'] satisfies WorkQueue[];

/** A nudge's payload: the queue, and the time the work falls due when that is later than now. */
export const workPayload = (queue: WorkQueue, dueAt?: Date | null) => (dueAt ? `${queue}@${dueAt.getTime()}` : queue);

export function parseWorkPayload(payload: string): { queue: WorkQueue; dueAt: Date | undefined } | null {
  const [queue, at] = payload.split('@');
  if (!queue || !queues.includes(queue)) return null;
  const ms = at === undefined ? NaN : Number(at);
  return { queue: queue as WorkQueue, dueAt: Number.isFinite(ms) ? new Date(ms) : undefined };
}

export type Unlisten = () => Promise<void>;

export interface ListenHandlers {
  onPayload(payload: string): void;
  /** Listening again after the connection failed: nudges sent meanwhile were lost. */
  onRelisten(): void;
  onError(err: unknown): void;
}

/**
 * LISTENs on `channel` over a connection of its own (a pool's connections come and go), as
 * graphile-worker does. When that connection fails it is opened again after a pause.
 */
export async function listenPostgres(
  connectionString: string,
  channel: string,
  handlers: ListenHandlers,
  retryMs = 1000,
): Promise<Unlisten> {
  let closed = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;

  async function connect(again: boolean): Promise<void> {
    const c = new pg.Client({ connectionString });
    c.on('notification', (n) => {
      if (n.channel === channel) handlers.onPayload(n.payload ?? '');
    });
    c.on('error', (err) => {
      handlers.onError(err);
      reconnect(c);
    });
    c.on('end', () => reconnect(c));
    client = c;
    await c.connect();
    await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    if (again) handlers.onRelisten();
  }

  function reconnect(failed: pg.Client): void {
    if (closed || client !== failed || retry) return;
    client = null;
    failed.end().catch(() => {});
    retry = setTimeout(() => {
      retry = null;
      connect(true).catch((err) => {
        handlers.onError(err);
        if (client) reconnect(client);
      });
    }, retryMs);
    retry.unref();
  }

  await connect(false);
  return async () => {
    closed = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
