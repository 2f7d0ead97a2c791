// Accounts, their keys and their live requests counted. Account rows carry their secrets sealed;
// only the dispatcher, which sends them, opens them.
import { asc, count, eq, getTableColumns, sql } from 'drizzle-orm';
import type { AccountRecord, Repositories } from '../domain/ports.ts';
import type { Account, Mode } from '../domain/model.ts';
import type { Scope } from '../domain/identity/roles.ts';
import type { Database, Execute } from './db.ts';
import type { SecretBox } from './secrets.ts';
import { rowCodec, statement } from './rows.ts';
import { accounts } from './schema.ts';
import { countLiveRequestSql, liveShard } from './tasks.ts';

/** An account row with its live requests counted (the sum of its counter rows). */
const accountWithCount = {
  ...getTableColumns(accounts),
  // Spelled out with an alias: drizzle writes a column of a one-table select without its table, so
  // `${liveRequestCounts.accountId} = ${accounts.accountId}` came out as `account_id = account_id`
  // (true for every row: every account showed the sum of all accounts).
  liveRequestCount:
    sql<number>`(SELECT coalesce(sum(c.count), 0) FROM live_request_counts c WHERE c.account_id = "accounts"."account_id")`.mapWith(Number),
};
const accountRow = rowCodec<Account & { testKeyHash: string; liveKeyHash: string }>(accounts);

export function accountRepository(db: Database, execute: Execute, secrets: SecretBox): Repositories['accounts'] {
  const sealed = <A extends { callbackAuthKey: string; signingSecret: string }>(a: A): A => ({
    ...a,
    callbackAuthKey: secrets.seal(a.callbackAuthKey),
    signingSecret: secrets.seal(a.signingSecret),
  });
  return {
    async findById(accountId: string) {
      const rows = await db.select(accountWithCount).from(accounts).where(eq(accounts.accountId, accountId));
      return rows[0] ?? null;
    },
    async authenticate(keyHash: string, options) {
      // One round trip: the account of the key (one of its two keys of old, or a scoped key that
      // is not revoked or expired) and, for a live key, the request counted (unless it is counted
      // later: then a read only).
      const find = `SELECT ${accountRow.qualified('a')}, NULL::text AS key_id, NULL::text AS key_name, NULL::text[] AS key_scopes,
          CASE WHEN a.test_key_hash = $1 THEN 'test' ELSE 'live' END AS key_mode
        FROM accounts a WHERE a.test_key_hash = $1 OR a.live_key_hash = $1
        UNION ALL
        SELECT ${accountRow.qualified('a')}, k.key_id, k.name, k.scopes, k.mode
        FROM api_keys k JOIN accounts a ON a.account_id = k.account_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2::timestamptz)`;
      const now = (options?.now ?? new Date()).toISOString();
      const [row] = await execute<
        Record<string, unknown> & { key_id: string | null; key_name: string | null; key_scopes: string[] | null; key_mode: Mode }
      >(
        options?.countLater
          ? statement(find, [keyHash, now])
          : statement(
              `WITH found AS (${find}),
                counted AS (${countLiveRequestSql("SELECT account_id, $3, 1 FROM found WHERE key_mode = 'live'")})
              SELECT * FROM found`,
              [keyHash, now, liveShard()],
            ),
      );
      if (!row) return null;
      const { testKeyHash: _test, liveKeyHash: _live, ...account } = accountRow.fromRow(row);
      const mode = row.key_mode;
      return {
        account,
        mode,
        key: row.key_id
          ? { keyId: row.key_id, name: row.key_name ?? '', scopes: (row.key_scopes ?? []) as Scope[] }
          : { keyId: mode === 'test' ? 'legacy_test' : 'legacy_live', name: `${mode} key`, scopes: 'all' },
      };
    },
    async countLiveRequest(accountId: string) {
      await execute(statement(countLiveRequestSql('VALUES ($1, $2, 1)'), [accountId, liveShard()]));
    },
    async findByName(name: string) {
      const rows = await db.select(accountWithCount).from(accounts).where(eq(accounts.name, name));
      return rows[0] ?? null;
    },
    async insert({ liveRequestCount: _count, ...account }: AccountRecord) {
      await db.insert(accounts).values(sealed(account));
    },
    async update({ liveRequestCount: _count, ...account }: AccountRecord) {
      await db.update(accounts).set(sealed(account)).where(eq(accounts.accountId, account.accountId));
    },
    async list() {
      return db.select(accountWithCount).from(accounts).orderBy(asc(accounts.createdAt));
    },
    async count() {
      const rows = await db.select({ n: count() }).from(accounts);
      return Number(rows[0]?.n ?? 0);
    },
  };
}
