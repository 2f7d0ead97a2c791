// Named prepared statements on PGlite, through its public interface (`execProtocol`, `runExclusive`,
// the exported protocol serializers and parsers; docs/decisions/0021-fenced-internals.md). Its `query()` sends Parse, Describe, Bind, Describe, Execute
// and Sync one by one into the WebAssembly backend for every call, parsing and planning the text
// again each time (the unnamed statement): on the creation statement that was half of its cost.
// Here a statement is parsed once per name (Parse + Describe, which also gives the parameter types
// and the result columns), and each execution is one call with Bind + Execute + Sync; the values
// are serialized and the rows parsed as `query()` does (PGlite's own serializers, parsers and
// result parser), so a caller sees the same rows either way. PGlite's `syncToFs` after a call is left
// out (as for `prepare`): on a folder (NodeFS) and in memory it does nothing, since the backend's
// writes reach the files (the operating system) as it makes them, before the call returns; skipping it
// saves a mutex and its promises a statement, and loses no write (test/server/durability.test.ts).
import type { PGlite } from '@electric-sql/pglite';
import { withStatementName } from './errors.ts';

type PGliteModule = typeof import('@electric-sql/pglite');
type BackendMessage = Parameters<PGliteModule['parse']['parseResults']>[0][number];

/** A statement as db.ts's Statement: the same name always goes with the same text. */
interface Statement {
  name: string;
  text: string;
  values: unknown[];
}

interface Prepared {
  text: string;
  paramTypes: number[];
  /** The RowDescription of the statement (none for a statement that returns no rows). */
  columns: BackendMessage[];
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `execute` on one PGlite client: each statement prepared once, by its name (see Statement). */
export function preparedExecutor(client: PGlite, pglite: PGliteModule): <R>(st: Statement) => Promise<R[]> {
  const { serialize } = pglite.protocol;
  const { parseResults, parseDescribeStatementResults } = pglite.parse;
  const prepared = new Map<string, Prepared>();
  const sync = serialize.sync();
  const execute = serialize.execute({});

  const prepare = async (st: Statement): Promise<Prepared> => {
    const { messages } = await client.execProtocol(
      concat([serialize.parse({ name: st.name, text: st.text }), serialize.describe({ type: 'S', name: st.name }), sync]),
      { syncToFs: false },
    );
    const p = {
      text: st.text,
      paramTypes: parseDescribeStatementResults(messages),
      columns: messages.filter((m) => m.name === 'rowDescription'),
    };
    prepared.set(st.name, p);
    return p;
  };

  const run = async <R>(st: Statement): Promise<R[]> => {
    let p = prepared.get(st.name);
    if (p && p.text !== st.text) throw new Error(`prepared statement ${st.name} was prepared with another text`);
    p ??= await prepare(st);
    const values = st.values.map((v, i) => {
      if (v === null || v === undefined) return null;
      const serializer = client.serializers[p.paramTypes[i]!];
      return serializer ? serializer(v) : String(v);
    });
    const { messages } = await client.execProtocol(concat([serialize.bind({ statement: st.name, values }), execute, sync]), {
      syncToFs: false,
    });
    return parseResults([...p.columns, ...messages], client.parsers)[0]!.rows as R[];
  };

  // Alone on the connection, through PGlite's public `runExclusive` (which `execProtocol` needs: it
  // takes no lock of its own), and after any transaction of the store's (the caller holds
  // `transactions`, below). A statement without a name is parsed each time (as pg does).
  return <R>(st: Statement) =>
    withStatementName(st.name, async () => {
      if (st.name === '') return (await client.query<R>(st.text, st.values)).rows;
      if (client.closed) throw new Error('PGlite is closed');
      await client.waitReady;
      return client.runExclusive(() => run<R>(st));
    });
}

/**
 * One turn at a time on the store's PGlite connection, for its transactions and its prepared
 * statements. PGlite's `runExclusive` keeps other statements off the connection only for as long as
 * one statement runs: between the statements of an open transaction it is free, and a prepared
 * statement sent then would run inside that transaction (and be rolled back with it). So every
 * transaction of the store (`db.transaction`, see db.ts) and every prepared statement takes this
 * turn first. Nothing waits on it while holding PGlite's own locks, so it cannot deadlock with them.
 */
export function connectionTurns(): <T>(work: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (work) => {
    const turn = last.then(() => work());
    last = turn.catch(() => undefined);
    return turn;
  };
}
