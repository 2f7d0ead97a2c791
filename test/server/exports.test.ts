// Issue 36, exports: the tasks the list's filters match, written to a gzip file fetched through a
// signed link, on both databases. JSON Lines is the list itself (each generation's view, in the
// list's order); CSV is read back by csv-parse; a format that cannot write the matching types is
// refused naming them; the link refuses a changed signature and lapses on the server's clock; a kept
// file expires.
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../support/clock.ts';
import { basicAuth } from '../support/net.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { exportAll, gunzipText, importAll } from '../support/transfer.ts';

const cb = 'https://example.com/humantask/callback';

/** Every task of a list query, page by page (limit 100). */
async function listAll(call: ReturnType<typeof client>, query: string, legacy = false) {
  const docs: any[] = [];
  if (legacy) {
    for (let offset = 0; ; offset += 100) {
      const page = await call('GET', `/v1/tasks?limit=100&offset=${offset}${query ? `&${query}` : ''}`);
      docs.push(...page.body.docs);
      if (!page.body.has_more) return docs;
    }
  }
  let token: string | undefined;
  do {
    const page = await call('GET', `/v1/tasks?limit=100${query ? `&${query}` : ''}${token ? `&next_token=${token}` : ''}`);
    docs.push(...page.body.docs);
    token = page.body.next_token;
  } while (token);
  return docs;
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('exports on %s', (db) => {
  let server: TestServer;
  let key: string;
  let call: ReturnType<typeof client>;
  const clock = testClock();
  beforeAll(async () => {
    server = await startTestServer(db, {}, undefined, { now: clock.now });
    key = server.dev.test_key;
    call = client(server, 'current', key);
    const lines = Array.from({ length: 130 }, (_, i) =>
      JSON.stringify({
        type: 'categorization',
        callback_url: cb,
        instruction: 'Billing or support?',
        attachment_type: 'text',
        attachment: `ticket ${i}, "quoted"\nsecond line`,
        categories: ['billing', 'support'],
        ...(i % 4 === 0 ? { tags: ['four'] } : {}),
        metadata: { n: i },
      }),
    );
    const done = await importAll(server, key, `${lines.join('\n')}\n`);
    expect(done.created).toBe(130);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('writes JSON Lines that are the list, in its order, in either view', async () => {
    for (const view of ['current', 'legacy'] as const) {
      const { export: done, gzip } = await exportAll(server, key, { format: 'jsonl', view }, { tags: 'four' });
      expect(done).toMatchObject({
        state: 'completed',
        format: 'jsonl',
        view,
        tasks_total: 33,
        tasks_written: 33,
        filters: { tags: 'four' },
      });
      expect(done.file_name).toBe(`${done.export_id}.jsonl.gz`);
      expect(done.size_bytes).toBe(gzip.length);
      const lines = gunzipText(gzip)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const listed = await listAll(view === 'legacy' ? client(server, 'legacy', key) : call, 'tags=four', view === 'legacy');
      expect(lines).toEqual(listed);
    }
  });

  it('writes CSV that csv-parse reads back into the tasks', async () => {
    const { gzip } = await exportAll(server, key, { format: 'csv' });
    const [header, ...rows] = parse(gunzipText(gzip)) as string[][];
    expect(header).toEqual([
      'task_id',
      'type',
      'status',
      'created_at',
      'completed_at',
      'project',
      'batch',
      'unique_id',
      'tags',
      'attachment',
      'metadata',
      'params',
      'response',
    ]);
    const listed = await listAll(call, '');
    expect(rows.length).toBe(listed.length);
    rows.forEach((row, i) => {
      const task = listed[i];
      expect(row[0]).toBe(task.task_id);
      expect(row[9]).toBe(task.params.attachment);
      expect(JSON.parse(row[10]!)).toEqual(task.metadata);
      expect(JSON.parse(row[12]!)).toEqual(task.response);
      expect(row[8]).toBe((task.tags ?? []).join(','));
    });
  });

  it('refuses a format that cannot write the matching types, naming them', async () => {
    const res = await call('POST', '/v1/exports', { json: { format: 'coco' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^The format coco cannot write tasks of type categorization \(130 of the 130 matching tasks\)/);
    expect((await call('POST', '/v1/exports?type=annotation', { json: { format: 'coco' } })).status).toBe(200);
  });

  it('serves the file only through an untouched link, until it lapses, and expires the kept file', async () => {
    const { export: done } = await exportAll(server, key, { format: 'jsonl' }, { status: 'completed' });
    const url = new URL(done.download_url);
    const forged = new URL(url);
    forged.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expect((await fetch(forged)).status).toBe(403);
    const other = new URL(url);
    other.pathname = other.pathname.replace(done.export_id, 'exp_000000000000000000000000');
    expect((await fetch(other)).status).toBe(403);
    expect((await fetch(url)).status).toBe(200);
    // The link lapses after an hour on the server's clock; a fresh read of the export gives a new one.
    clock.advance(3_601_000);
    const lapsed = await fetch(url);
    expect(lapsed.status).toBe(403);
    expect(((await lapsed.json()) as any).error).toMatch(/expired/);
    const again = await call('GET', `/v1/exports/${done.export_id}`);
    expect((await fetch(again.body.download_url)).status).toBe(200);
    // Kept for 7 days: then the file is gone and the export says so.
    clock.advance(7 * 86_400_000);
    const later = await call('POST', '/v1/exports', { json: { format: 'jsonl' } });
    expect(later.status).toBe(200);
    let expired: any;
    for (let i = 0; i < 200 && expired?.state !== 'expired'; i++) {
      expired = (await call('GET', `/v1/exports/${done.export_id}`)).body;
      if (expired.state !== 'expired') await new Promise((r) => setTimeout(r, 50));
    }
    expect(expired).toMatchObject({ state: 'expired' });
    expect(expired.download_url).toBeUndefined();
  });

  it('answers 404 for an unknown export or one of another account', async () => {
    expect((await call('GET', '/v1/exports/exp_000000000000000000000000')).status).toBe(404);
    const mine = await call('POST', '/v1/exports', { json: {} });
    expect((await client(server, 'current', server.dev.live_key)('GET', `/v1/exports/${mine.body.export_id}`)).status).toBe(404);
    expect((await fetch(`${server.url}/v1/exports/${mine.body.export_id}`, { headers: { authorization: basicAuth(key) } })).status).toBe(
      200,
    );
  });
});
