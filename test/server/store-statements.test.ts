// The store's single statements (store.execute) are prepared once per connection by name, on PGlite
// as on PostgreSQL (server/store/pglite-prepared.ts): a prepared statement answers the same rows as
// the same text parsed afresh, with the values of each run; a failed run leaves nothing written and
// the connection usable; one sent while a transaction is open waits for it and never runs inside it
// (on PGlite's single connection as on PostgreSQL's pool); a NOTIFY it sends reaches the listener.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const everyType = `SELECT $1::text AS t, $2::int AS i, $3::bigint AS b, $4::numeric AS n, $5::boolean AS f,
  $6::jsonb AS j, $7::timestamptz AS at, $8::text[] AS list, $9::text AS absent, 'x'::text AS fixed`;
const values = (i: number) => [
  `text ${i} 'quoted' "and" ünïcode`,
  i,
  2 ** 40 + i,
  `${i}.25`,
  i % 2 === 0,
  JSON.stringify({ n: i, nested: [1, 'two', null] }),
  new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  ['a', `b${i}`],
  null,
];

for (const db of databases) {
  describe.skipIf(db === 'postgres' && !hasPostgres())(`single statements on ${db}`, () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer(db);
      await server.store.execute({ name: '', text: 'CREATE TABLE statement_probe (id int PRIMARY KEY, note text NOT NULL)', values: [] });
    });
    afterAll(() => server?.close());

    it('answer the same rows prepared as parsed afresh, with the values of each run', async () => {
      for (let i = 0; i < 3; i++) {
        const prepared = await server.store.execute({ name: 'probe_every_type', text: everyType, values: values(i) });
        const fresh = await server.store.execute({ name: '', text: everyType, values: values(i) });
        expect(prepared).toEqual(fresh);
        expect(prepared[0]).toMatchObject({
          t: values(i)[0],
          i,
          f: i % 2 === 0,
          j: { n: i, nested: [1, 'two', null] },
          list: ['a', `b${i}`],
        });
        expect(prepared[0]!.absent).toBeNull();
        expect(new Date(prepared[0]!.at as string).toISOString()).toBe(values(i)[6]);
      }
    });

    it('leave nothing written and the connection usable after a failed run', async () => {
      const insert = { name: 'probe_insert', text: 'INSERT INTO statement_probe (id, note) VALUES ($1, $2) RETURNING id' };
      expect(await server.store.execute({ ...insert, values: [1, 'first'] })).toEqual([{ id: 1 }]);
      await expect(server.store.execute({ ...insert, values: [1, 'again'] })).rejects.toMatchObject({ code: '23505' });
      await expect(server.store.execute({ ...insert, values: [2, null] })).rejects.toMatchObject({ code: '23502' });
      expect(await server.store.execute({ ...insert, values: [3, 'third'] })).toEqual([{ id: 3 }]);
      const rows = await server.store.execute({ name: 'probe_all', text: 'SELECT id, note FROM statement_probe ORDER BY id', values: [] });
      expect(rows).toEqual([
        { id: 1, note: 'first' },
        { id: 3, note: 'third' },
      ]);
    });

    it('refuse a name prepared with another text', async () => {
      await server.store.execute({ name: 'probe_named', text: 'SELECT 1 AS one', values: [] });
      await expect(server.store.execute({ name: 'probe_named', text: 'SELECT 2 AS two', values: [] })).rejects.toThrow();
      expect(await server.store.execute({ name: 'probe_named', text: 'SELECT 1 AS one', values: [] })).toEqual([{ one: 1 }]);
    });

    it('wait for a transaction that is open, and never run inside it', async () => {
      const probe = {
        name: 'probe_count_pending',
        text: `SELECT count(*)::int AS n FROM statement_probe WHERE note = 'pending'`,
        values: [],
      };
      let inserted!: () => void;
      const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const transaction = server.store.db
        .transaction(async (tx) => {
          await tx.execute(sql`INSERT INTO statement_probe (id, note) VALUES (100, 'pending')`);
          inserted();
          await released;
          throw new Error('rolled back on purpose');
        })
        .catch((err: Error) => err.message);
      await insertedYet;
      // Sent while the transaction holds its uncommitted row; answered once it has rolled back.
      const counted = server.store.execute<{ n: number }>(probe);
      release();
      expect(await transaction).toBe('rolled back on purpose');
      expect(await counted).toEqual([{ n: 0 }]);
      expect(await server.store.execute(probe)).toEqual([{ n: 0 }]);
    });

    it('deliver the NOTIFY of a prepared statement to the listener', async () => {
      const heard: string[] = [];
      const unlisten = await server.store.listen('statement_probe', { onPayload: (p) => heard.push(p), onRelisten() {}, onError() {} });
      for (const n of ['one', 'two'])
        await server.store.execute({ name: 'probe_notify', text: `SELECT pg_notify('statement_probe', $1)`, values: [n] });
      for (let i = 0; i < 100 && heard.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      await unlisten();
      expect(heard).toEqual(['one', 'two']);
    });
  });
}
