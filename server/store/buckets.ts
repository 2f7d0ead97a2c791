// Token buckets in the database, shared by every server process on it (N processes, N machines):
// taking a token is one statement on an UNLOGGED table (see migration 0006), the bucket's level
// computed from the database's clock, so that the processes need agree on nothing else.
import type { Execute } from './db.ts';
import { statement } from './rows.ts';

// The level now: what was left plus what flowed in since, capped at the burst ($2).
const level = `least($2::float8, b.tokens + extract(epoch FROM now() - b.refilled_at)::float8 * $3::float8)`;
// What this statement takes: up to $4 whole tokens, none when there is not one.
const taken = (lvl: string) => `CASE WHEN ${lvl} >= 1 THEN least($4::float8, floor(${lvl})) ELSE 0 END`;
// When the bucket will be full again (a full bucket is as good as none: the sweep deletes it).
// No refill (rate 0): in ten years.
const fullAt = (tokens: string) => `now() + least(($2::float8 - (${tokens})) / nullif($3::float8, 0), 315360000) * interval '1 second'`;

const takeText = `INSERT INTO rate_limit_buckets AS b (key, tokens, taken, refilled_at, full_at)
  VALUES ($1, $2::float8 - ${taken('$2::float8')}, ${taken('$2::float8')}, now(), ${fullAt(`$2::float8 - ${taken('$2::float8')}`)})
  ON CONFLICT (key) DO UPDATE SET
    tokens = ${level} - ${taken(level)},
    taken = ${taken(level)},
    refilled_at = now(),
    full_at = ${fullAt(`${level} - ${taken(level)}`)}
  RETURNING tokens, taken`;

// Gives tokens back (a take that turned out not to count), up to the burst; no bucket, nothing to do.
const giveBackText = `UPDATE rate_limit_buckets AS b SET
    tokens = least($2::float8, ${level} + $4::float8),
    refilled_at = now(),
    full_at = ${fullAt(`least($2::float8, ${level} + $4::float8)`)}
  WHERE b.key = $1`;

export interface BucketTake {
  /** Whole tokens taken: up to the number asked for, 0 when the bucket did not hold one. */
  taken: number;
  /** Tokens left in the bucket after this take (below 1: the next take is refused until it refills). */
  tokens: number;
}

export function databaseBuckets(execute: Execute) {
  return {
    /** Takes up to `count` tokens from `key`'s bucket (`burst` at most, refilled at `perSecond`). */
    async take(key: string, perSecond: number, burst: number, count = 1): Promise<BucketTake> {
      const [row] = await execute<{ tokens: number; taken: number }>(statement(takeText, [key, burst, perSecond, count]));
      return { taken: Number(row!.taken), tokens: Number(row!.tokens) };
    },
    /** Gives `count` tokens back to `key`'s bucket (never above `burst`). */
    async giveBack(key: string, perSecond: number, burst: number, count = 1): Promise<void> {
      await execute(statement(giveBackText, [key, burst, perSecond, count]));
    },
    /** Deletes the buckets that are full again (they mean nothing a missing one does not). */
    async deleteFull(): Promise<number> {
      const [row] = await execute<{ n: number }>(
        statement('WITH d AS (DELETE FROM rate_limit_buckets WHERE full_at <= now() RETURNING 1) SELECT count(*)::int AS n FROM d', []),
      );
      return row!.n;
    },
  };
}
