// Issue 36, imports: a file of task creations (JSON Lines, CSV) made into tasks exactly once, on
// both databases. What the customer sees: the import's progress and counts, the tasks through the
// task API, each refused line with the error its single creation gets (the same status and message,
// compared line by line with POST /v1/task/<type>), the refused lines as a file to fix, and a second
// import of the same file creating nothing.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../support/net.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { endedImport, importAll, postImport } from '../support/transfer.ts';

const cb = 'https://example.com/humantask/callback';
const categorization = (text: string, extra: object = {}) => ({
  type: 'categorization',
  callback_url: cb,
  instruction: 'Billing or support?',
  attachment_type: 'text',
  attachment: text,
  categories: ['billing', 'support'],
  ...extra,
});
const jsonl = (lines: unknown[]) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;

/** Bad creation bodies, each refused by a single creation (the same error is expected of its line). */
const badBodies: [string, object][] = [
  ['categorization', { callback_url: cb }],
  ['categorization', { callback_url: cb, instruction: 'x', attachment_type: 'bogus', attachment: 'a', categories: [1] }],
  ['imageannotation', { callback_url: cb, attachment: 'https://example.com/a.png', geometries: { box: { objects_to_annotate: [] } } }],
  ['categorization', { ...categorization('a'), type: undefined, tags: ['a', 'b', 'c', 'd', 'e', 'f'] }],
  ['categorization', { ...categorization('a'), type: undefined, project: 'no-such-project' }],
  ['categorization', { ...categorization('a'), type: undefined, batch: 'no-such-batch' }],
  ['categorization', { ...categorization('a'), type: undefined, callback_url: 'http://127.0.0.1/cb' }],
  ['categorization', { ...categorization('a\u0000b'), type: undefined }],
  ['annotation', { callback_url: cb, attachment: 'https://example.com/a.png', objects_to_annotate: ['car'], min_width: '-3' }],
  [
    'polygonannotation',
    { callback_url: cb, attachment: 'https://example.com/a.png', objects_to_annotate: ['car'], min_vertices: 5, max_vertices: 3 },
  ],
  ['namedentityrecognition', { callback_url: cb, text: 'Ada Lovelace', labels: [{ name: 'PER' }, { name: 'PER' }] }],
  ['categorization', { ...categorization('a'), type: undefined, category_ids: { x: 'nope' } }],
];

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('imports on %s', (db) => {
  let server: TestServer;
  let key: string;
  let call: ReturnType<typeof client>;
  beforeAll(async () => {
    server = await startTestServer(db);
    key = server.dev.test_key;
    call = client(server, 'current', key);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates a task for each good line, counts duplicates and refuses bad lines with their numbers', async () => {
    const file = jsonl([
      categorization('import one'),
      categorization('import two', { unique_id: 'import-two' }),
      '{"type": "categorization", "attachment"',
      '',
      categorization('import one'),
      categorization('import two again', { unique_id: 'import-two' }),
      { type: 'no-such-type' },
      categorization('import three', { tags: ['imported'], metadata: { row: 7 } }),
    ]);
    const done = await importAll(server, key, file);
    expect(done).toMatchObject({ state: 'completed', format: 'jsonl', lines_read: 7, created: 3, duplicates: 2, refused: 2 });
    expect(done.bytes_read).toBe(Buffer.byteLength(file));
    expect(done.bytes_total).toBe(Buffer.byteLength(file));
    expect(done.refused_lines.map((l: { line: number }) => l.line)).toEqual([3, 7]);
    expect(done.refused_lines[0]).toMatchObject({ status_code: 400, error: expect.stringContaining('not valid JSON') });
    // The tasks are tasks like any other: listed, tagged, completed in test mode.
    const tagged = await call('GET', '/v1/tasks?tags=imported');
    expect(tagged.body.total).toBe(1);
    expect(tagged.body.docs[0]).toMatchObject({ status: 'completed', metadata: { row: 7 }, params: { attachment: 'import three' } });
    const byId = await call('GET', '/v1/tasks?unique_id=import-two');
    expect(byId.body.docs.map((t: any) => t.params.attachment)).toEqual(['import two']);
    // The refused lines, as they were, to fix and import again; and their errors.
    const lines = await fetch(`${server.url}/v1/imports/${done.import_id}/refused`, { headers: { authorization: basicAuth(key) } });
    expect(lines.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(await lines.text()).toBe('{"type": "categorization", "attachment"\n{"type":"no-such-type"}\n');
    const errors = await fetch(`${server.url}/v1/imports/${done.import_id}/refused?errors=true`, {
      headers: { authorization: basicAuth(key) },
    });
    const listed = (await errors.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(listed).toEqual(done.refused_lines);
  });

  it('creates nothing twice when the same file is imported again', async () => {
    const file = jsonl(Array.from({ length: 30 }, (_, i) => categorization(`again ${i}`, i % 2 ? { unique_id: `again-${i}` } : {})));
    const first = await importAll(server, key, file);
    expect(first).toMatchObject({ state: 'completed', created: 30, duplicates: 0 });
    const before = (await call('GET', '/v1/tasks?limit=1')).body.total;
    const second = await importAll(server, key, file);
    expect(second).toMatchObject({ state: 'completed', created: 0, duplicates: 30, refused: 0 });
    expect((await call('GET', '/v1/tasks?limit=1')).body.total).toBe(before);
  });

  it('refuses each bad line with the status and message of its single creation', async () => {
    const singles = [];
    for (const [type, body] of badBodies) {
      const { type: _t, ...rest } = body as Record<string, unknown>;
      const res = await call('POST', `/v1/task/${type}`, { json: rest });
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      singles.push({ status_code: res.status, error: res.body.error });
    }
    const done = await importAll(server, key, jsonl(badBodies.map(([type, body]) => ({ ...body, type }))), { max_refused_share: 1 });
    expect(done.refused).toBe(badBodies.length);
    expect(done.refused_lines.map(({ status_code, error }: any) => ({ status_code, error }))).toEqual(singles);
  });

  it('reads CSV by its header: the attachment column, parameter columns, metadata columns and fixed params', async () => {
    await call('POST', '/v1/projects', {
      json: { type: 'categorization', name: `csv-${db}`, params: { categories: ['billing', 'support'] } },
    });
    const csv = [
      'ticket_text,unique_id,metadata.source,tags',
      '"My invoice is wrong, twice.",csv-1,mail,"csv,priority"',
      '"Line one',
      'line two",csv-2,chat,csv',
      'too,many,values,here,extra',
      '',
    ].join('\r\n');
    const done = await importAll(
      server,
      key,
      csv,
      {
        type: 'categorization',
        project: `csv-${db}`,
        attachment_column: 'ticket_text',
        params: { callback_url: cb, attachment_type: 'text', instruction: 'Which?' },
      },
      'text/csv',
    );
    expect(done).toMatchObject({ state: 'completed', format: 'csv', created: 2, refused: 1, lines_read: 3 });
    expect(done.refused_lines).toEqual([{ line: 5, status_code: 400, error: 'The row has 5 values, but the header names 4 columns.' }]);
    const first = (await call('GET', '/v1/tasks?unique_id=csv-1')).body.docs[0];
    expect(first).toMatchObject({
      project: `csv-${db}`,
      metadata: { source: 'mail' },
      tags: ['csv', 'priority'],
      params: { attachment: 'My invoice is wrong, twice.', categories: ['billing', 'support'] },
    });
    expect((await call('GET', '/v1/tasks?unique_id=csv-2')).body.docs[0].params.attachment).toBe('Line one\r\nline two');
    const refused = await fetch(`${server.url}/v1/imports/${done.import_id}/refused`, { headers: { authorization: basicAuth(key) } });
    expect(refused.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await refused.text()).toBe('ticket_text,unique_id,metadata.source,tags\ntoo,many,values,here,extra\n');
  });

  it('fails a CSV import whose header names no parameter, or that names no type', async () => {
    const done = await importAll(server, key, 'attachment,colour\nhello,red\n', { type: 'categorization' }, 'text/csv');
    expect(done).toMatchObject({ state: 'failed', created: 0 });
    expect(done.error).toContain('"colour"');
    const untyped = await importAll(server, key, 'attachment\nhello\n', {}, 'text/csv');
    expect(untyped).toMatchObject({
      state: 'failed',
      error: 'A CSV import needs type: give it for the file, or name each row\'s in a column "type".',
    });
    // Each row may name its own type instead.
    const typed = await importAll(
      server,
      key,
      `type,attachment,instruction,attachment_type,callback_url,categories\ncategorization,per row,Which?,text,${cb},"[""a"",""b""]"\n`,
      {},
      'text/csv',
    );
    expect(typed).toMatchObject({ state: 'completed', created: 1 });
  });

  it('stops when more than the allowed share of lines is refused, keeping what it created', async () => {
    const lines = Array.from({ length: 400 }, (_, i) =>
      i % 3 === 0 ? categorization(`share ${i}`) : { type: 'categorization', attachment: `bad ${i}` },
    );
    const done = await importAll(server, key, jsonl(lines), { max_refused_share: 0.5 });
    expect(done.state).toBe('stopped');
    expect(done.error).toMatch(/more than the allowed share 0\.5; the rest of the file was not read/);
    expect(done.lines_read).toBeLessThan(400);
    expect(done.created + done.refused).toBe(done.lines_read);
    expect(done.refused / done.lines_read).toBeGreaterThan(0.5);
  });

  it('answers 404 for an unknown project or batch of the file, and for an unknown import', async () => {
    const file = jsonl([categorization('x')]);
    expect((await postImport(server, key, file, { project: 'none-such' })).status).toBe(404);
    expect((await postImport(server, key, file, { batch: 'none-such' })).status).toBe(404);
    expect((await call('GET', '/v1/imports/imp_000000000000000000000000')).status).toBe(404);
    // Another account's import is no import of this one.
    const mine = await postImport(server, key, file);
    expect((await client(server, 'current', server.dev.live_key)('GET', `/v1/imports/${mine.body.import_id}`)).status).toBe(404);
    await endedImport(server, key, mine.body.import_id);
  });

  it('completes a test-mode batch once, when the import ends', async () => {
    await call('POST', '/v1/projects', { json: { type: 'categorization', name: `batch-${db}` } });
    await call('POST', '/v1/batches', { json: { project: `batch-${db}`, name: `batch-${db}-1` } });
    const done = await importAll(server, key, jsonl(Array.from({ length: 12 }, (_, i) => categorization(`in batch ${i}`))), {
      batch: `batch-${db}-1`,
    });
    expect(done).toMatchObject({ state: 'completed', created: 12, batch: `batch-${db}-1` });
    const status = await call('GET', `/v1/batches/batch-${db}-1/status`);
    expect(status.body).toMatchObject({ status: 'completed', completed: 12, pending: 0 });
  });

  it('makes live tasks that wait for workers', async () => {
    const live = client(server, 'current', server.dev.live_key);
    const done = await importAll(server, server.dev.live_key, jsonl([categorization('live one'), categorization('live two')]));
    expect(done).toMatchObject({ state: 'completed', created: 2 });
    const pending = await live('GET', '/v1/tasks?status=pending');
    expect(pending.body.docs.map((t: any) => t.params.attachment).sort()).toEqual(['live one', 'live two']);
  });

  it('answers 413 before reading a file whose Content-Length is over the limit, and for a longer chunked body', async () => {
    const small = await startTestServer(db, { IMPORT_MAX_BYTES: '1000' });
    try {
      const big = jsonl(Array.from({ length: 40 }, (_, i) => categorization(`big ${i}`)));
      const refused = await postImport(small, small.dev.test_key, big);
      expect(refused).toMatchObject({ status: 413, body: { error: expect.stringContaining('IMPORT_MAX_BYTES') } });
      // A chunked body has no length: it is cut when the limit is passed, and nothing is kept.
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 40) controller.enqueue(Buffer.from(`${JSON.stringify(categorization(`chunk ${sent}`))}\n`));
          else controller.close();
        },
      });
      const res = await fetch(`${small.url}/v1/imports`, {
        method: 'POST',
        headers: { authorization: basicAuth(small.dev.test_key), 'content-type': 'application/x-ndjson' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect((await client(small, 'current', small.dev.test_key)('GET', '/v1/tasks')).body.total).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('fetches the file from source_url', async () => {
    const file = jsonl([categorization('fetched one'), categorization('fetched two')]);
    const host: Server = createServer((req, res) => {
      if (req.url === '/tasks.jsonl') res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end(file);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const local = await startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' });
    try {
      const { port } = host.address() as { port: number };
      const posted = await postImport(local, local.dev.test_key, '', { source_url: `http://127.0.0.1:${port}/tasks.jsonl` });
      expect(posted).toMatchObject({ status: 200, body: { state: 'fetching' } });
      const done = await endedImport(local, local.dev.test_key, posted.body.import_id);
      expect(done).toMatchObject({ state: 'completed', created: 2, bytes_total: Buffer.byteLength(file) });
      const missing = await postImport(local, local.dev.test_key, '', { source_url: `http://127.0.0.1:${port}/none.jsonl` });
      expect(await endedImport(local, local.dev.test_key, missing.body.import_id)).toMatchObject({
        state: 'failed',
        error: 'The file could not be fetched from source_url: the server answered 404, not 200.',
      });
    } finally {
      await local.close();
      host.close();
    }
  });
});
