// Live mode fetches each attachment after creation: a real file server and a real callback
// receiver on loopback, on PGlite and PostgreSQL.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directLink } from '../../server/domain/attachments.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('attachment checks on %s', (db) => {
  let server: TestServer;
  let files: { server: Server; base: string };
  let hook: { server: Server; base: string };
  const callbacks: unknown[] = [];
  const fetched: string[] = [];

  beforeAll(async () => {
    files = await listen((req, res) => {
      fetched.push(req.url ?? '');
      res.writeHead(req.url === '/ok.jpg' ? 200 : 404).end('x');
    });
    hook = await listen((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        callbacks.push(JSON.parse(body));
        res.writeHead(200).end();
      });
    });
    server = await startTestServer(db, { DELIVERY_POLL_MS: '5', ATTACHMENT_CHECK_POLL_MS: '5', ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32' });
  });
  afterAll(async () => {
    await server?.close();
    files?.server.close();
    hook?.server.close();
  });

  const body = (attachment: string, extra: Record<string, unknown> = {}) => ({
    callback_url: `${hook.base}/cb`,
    instruction: 'Pick one',
    attachment_type: 'image',
    attachment,
    categories: ['a', 'b'],
    ...extra,
  });
  const checked = async (taskId: string) => (await server.uow.tasks.get(server.dev.account_id, 'live', taskId))?.attachmentCheckAt === null;

  it('keeps a task whose attachments answer 200 pending', async () => {
    const api = client(server, 'current', server.dev.live_key);
    const t = await api('POST', '/v1/task/categorization', { json: body(`${files.base}/ok.jpg`) });
    await until(() => checked(t.body.task_id), 'the check');
    expect((await api('GET', `/v1/task/${t.body.task_id}`)).body.status).toBe('pending');
  });

  it('moves a task whose attachment answers 404 to error (older generation: completed with response.error), with the error callback', async () => {
    const api = client(server, 'current', server.dev.live_key);
    const url = `${files.base}/missing.jpg`;
    const kept = await api('POST', '/v1/task/categorization', { json: body(url, { unique_id: `keep-${db}` }) });
    const cleared = await api('POST', '/v1/task/categorization', {
      json: body(url, { unique_id: `clear-${db}`, clear_unique_id_on_error: true }),
    });
    await until(async () => (await api('GET', `/v1/task/${cleared.body.task_id}`)).body.status === 'error', 'the error');
    await until(async () => (await api('GET', `/v1/task/${kept.body.task_id}`)).body.status === 'error', 'the error');
    const now = await api('GET', `/v1/task/${cleared.body.task_id}`);
    expect(now.body.response.error).toContain('missing.jpg');
    expect(now.body).not.toHaveProperty('unique_id');
    expect((await api('GET', `/v1/task/${kept.body.task_id}`)).body.unique_id).toBe(`keep-${db}`);
    const old = await client(server, 'legacy', server.dev.live_key)('GET', `/v1/task/${cleared.body.task_id}`);
    expect(old.body).toMatchObject({ status: 'completed', response: { error: expect.stringContaining('missing.jpg') } });
    await until(() => callbacks.length >= 2, 'the error callbacks');
    expect(callbacks).toContainEqual({
      task_id: cleared.body.task_id,
      error: now.body.response.error,
      attachments: [{ statusCode: 404, url }],
    });
  });

  it('refuses at creation an attachment at an address that is not allowed (400 naming it), storing nothing', async () => {
    // A literal private address is refused before any fetch (server/http/targets.ts); a name that
    // resolves to one is refused at fetch time (test/unit/server/net.test.ts).
    const api = client(server, 'current', server.dev.live_key);
    const port = new URL(files.base).port;
    const before = (await api('GET', '/v1/tasks?limit=100')).body.total;
    const t = await api('POST', '/v1/task/categorization', { json: body(`http://127.0.0.2:${port}/ok.jpg`) });
    expect(t.status).toBe(400);
    expect(t.body.error).toMatch(/attachment .*127\.0\.0\.2.* not a public address/);
    expect((await api('GET', '/v1/tasks?limit=100')).body.total).toBe(before);
  });

  it('neither checks nor fetches nor rewrites a text attachment that reads like a URL (issue 22)', async () => {
    const api = client(server, 'current', server.dev.live_key);
    const port = new URL(files.base).port;
    const requests = fetched.length;
    // Text at a private address and text that 404s: the text is shown to the worker, not fetched.
    const text = `http://127.0.0.2:${port}/missing.jpg`;
    const preview = 'https://github.com/acme/data/blob/main/notes.txt';
    const single = await api('POST', '/v1/task/categorization', { json: body(text, { attachment_type: 'text' }) });
    expect(single.status, single.text).toBe(200);
    const several = await api('POST', '/v1/task/textcollection', {
      json: {
        callback_url: `${hook.base}/cb`,
        attachments: [
          { type: 'text', content: `${files.base}/missing.jpg` },
          { type: 'text', content: preview },
        ],
        fields: [{ type: 'text', field_id: 't', title: 'T' }],
      },
    });
    expect(several.status, several.text).toBe(200);
    for (const t of [single, several]) expect(await checked(t.body.task_id), 'no check scheduled').toBe(true);
    // Let the checker run (a URL attachment created after them is checked), then: both pending, nothing fetched.
    const probe = await api('POST', '/v1/task/categorization', { json: body(`${files.base}/ok.jpg`) });
    await until(() => checked(probe.body.task_id), 'the check of the probe');
    expect((await api('GET', `/v1/task/${single.body.task_id}`)).body).toMatchObject({ status: 'pending', params: { attachment: text } });
    expect((await api('GET', `/v1/task/${several.body.task_id}`)).body).toMatchObject({
      status: 'pending',
      params: { attachments: [{ content: `${files.base}/missing.jpg` }, { content: preview }] },
    });
    expect(fetched.slice(requests)).toEqual(['/ok.jpg']);
  });
});

describe('preview links', () => {
  it.each([
    ['https://www.dropbox.com/s/abc123/photo.jpg?dl=0', 'https://www.dropbox.com/s/abc123/photo.jpg?dl=1'],
    ['https://drive.google.com/file/d/1AbC_dEf/view', 'https://drive.google.com/uc?export=download&id=1AbC_dEf'],
    ['https://github.com/acme/data/blob/main/img/a.png', 'https://raw.githubusercontent.com/acme/data/main/img/a.png'],
    ['https://example.com/a.jpg', 'https://example.com/a.jpg'],
  ])('rewrites %s to its direct link', (from, to) => {
    expect(directLink(from)).toBe(to);
  });
});
