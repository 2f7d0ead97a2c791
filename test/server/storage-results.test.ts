// Issue 37, large results as files (decision record 24), on both databases: a video response's
// tracks and events, and a large response's annotations, are files (in the account's bucket, an
// S3-protocol server on loopback, or on the server for an account without one) that the task and
// its callback link; a link reads its file with the key of the task's account and mode, and is
// refused once it has expired, with another account's or mode's key, or changed. A small response
// stays inline.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, withResultFiles } from '../../client/index.ts';
import { createAccount } from '../../server/domain/accounts.ts';
import { basicAuth } from '../support/net.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { s3Keys, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { testClock } from '../support/clock.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

const video = {
  instruction: 'Track every vehicle and mark each lane change.',
  attachment: 'https://example.com/videos/drive-7.mp4',
  attachment_type: 'video',
  frame_rate: 2,
  geometries: { box: { objects_to_annotate: ['car', 'truck'] }, point: { objects_to_annotate: ['traffic light'] } },
  events_to_annotate: ['lane change'],
};
const boxes = (n: number) => ({
  instruction: 'Box every car.',
  attachment: 'https://example.com/images/street-1.jpg',
  objects_to_annotate: Array.from({ length: n }, (_, i) => `label ${i}`),
});
/** A result link is signed, expiring, and points at the server's file route. */
const link = expect.objectContaining({
  url: expect.stringMatching(/\/v1\/task\/[0-9a-f]{24}\/files\/(annotations|events)\?expires=\d+&signature=[\w-]+$/),
  expires_at: expect.any(String),
});
/** Synthetic `annotation` responses: 79 to 215 bytes with one label, 403 to 544 with six. */
const INLINE_LIMIT = 300;

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('responses kept as files on %s', (db) => {
  let server: TestServer;
  let buckets: TestBucketServer;
  let receiver: Receiver;
  let call: ReturnType<typeof client>;
  const clock = testClock();
  const resultsDir = mkdtempSync(path.join(tmpdir(), 'humantask-results-test-'));
  const read = (url: string, key: string) => fetch(url, { headers: { authorization: basicAuth(key) } });
  const create = async (type: string, body: object) => {
    const r = await call('POST', `/v1/task/${type}`, { json: { callback_url: receiver.url, ...body } });
    expect(r.status, r.text).toBe(200);
    return r.body.task_id as string;
  };

  beforeAll(async () => {
    buckets = await startBucketServer(['fleet-results', 'older']);
    receiver = await startReceiver();
    server = await startTestServer(
      db,
      {
        ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
        DELIVERY_POLL_MS: '20',
        RESULT_INLINE_MAX_BYTES: String(INLINE_LIMIT),
        RESULTS_DIR: resultsDir,
      },
      undefined,
      { now: clock.now },
    );
    call = client(server, 'current', server.dev.test_key);
    // Two connections: the files go to the newest.
    for (const bucket of ['older', 'fleet-results']) {
      const made = await call('POST', '/v1/storage/connections', {
        json: { bucket, endpoint: buckets.endpoint, access_key_id: s3Keys.accessKeyId, secret_access_key: s3Keys.secretAccessKey },
      });
      expect(made.status, made.text).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.close();
    await buckets?.close();
    await receiver?.close();
    rmSync(resultsDir, { recursive: true, force: true });
  });

  it('keeps a video response as files in the newest bucket, read back by raw HTTP and by the typed client', async () => {
    const taskId = await create('videoplaybackannotation', video);
    const got = await call('GET', `/v1/task/${taskId}`);
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('completed');
    expect(got.body.response).toEqual({ annotations: link, events: link });
    expect(JSON.stringify(got.body.response)).not.toContain('frames');

    const tracks = await read(got.body.response.annotations.url, server.dev.test_key);
    expect(tracks.status).toBe(200);
    expect(tracks.headers.get('content-type')).toMatch(/^application\/json/);
    const annotations = await tracks.json();
    expect(Array.isArray(annotations)).toBe(true);
    expect(annotations.length).toBeGreaterThan(0);
    expect(annotations[0]).toMatchObject({ uuid: expect.any(String), label: expect.any(String), frames: expect.any(Array) });
    const events = await (await read(got.body.response.events.url, server.dev.test_key)).json();
    expect(Array.isArray(events)).toBe(true);

    // The files are the bucket's objects, under the task's folder; the older connection got none.
    const key = new URL(got.body.response.annotations.url).pathname;
    expect(key).toBe(`/v1/task/${taskId}/files/annotations`);
    const listed = await fetch(`${buckets.endpoint}/fleet-results?list-type=2&prefix=humantask-results/test/${taskId}/`);
    const keys = [...(await listed.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]!);
    expect(keys.map((k) => k.split('/').at(-1)).sort()).toEqual(['annotations.json', 'events.json']);
    const stored = await buckets.get('fleet-results', keys.find((k) => k.endsWith('annotations.json'))!);
    expect(JSON.parse(stored!)).toEqual(annotations);
    const older = await fetch(`${buckets.endpoint}/older?list-type=2&prefix=humantask-results/`);
    expect(await older.text()).not.toContain('<Key>');

    // The typed client fetches the files when asked.
    const typed = createClient({ apiKey: server.dev.test_key, baseUrl: server.url, throwOnError: true });
    const task = await typed.tasks.get(taskId);
    const inline = await withResultFiles(typed, task.data);
    expect(inline.response).toEqual({ annotations, events });
  });

  it('keeps a large response’s annotations as a file and a small one inline', async () => {
    const large = await create('annotation', boxes(6));
    const small = await create('annotation', boxes(1));
    const bigTask = (await call('GET', `/v1/task/${large}`)).body;
    expect(bigTask.response).toEqual({ annotations: link });
    const file = await read(bigTask.response.annotations.url, server.dev.test_key);
    expect(file.status).toBe(200);
    const annotations = await file.json();
    expect(annotations.length).toBeGreaterThanOrEqual(6);
    expect(Buffer.byteLength(JSON.stringify({ annotations }))).toBeGreaterThan(INLINE_LIMIT);

    const smallTask = (await call('GET', `/v1/task/${small}`)).body;
    expect(Array.isArray(smallTask.response.annotations)).toBe(true);
    expect(smallTask.response.annotations[0]).toMatchObject({ label: 'label 0' });
    // The list shows the same.
    const listed = await call('GET', '/v1/tasks?type=annotation&limit=100');
    const byId = new Map(listed.body.docs.map((t: any) => [t.task_id, t]));
    expect((byId.get(large) as any).response).toEqual({ annotations: link });
    expect(Array.isArray((byId.get(small) as any).response.annotations)).toBe(true);
  });

  it('sends the link in the callback, not the bulk', async () => {
    const taskId = await create('videoplaybackannotation', video);
    const [callback] = await receiver.waitFor((all) => all.some((r) => r.json?.task_id === taskId), 'the callback');
    const body = receiver.bodiesOf(taskId)[0];
    expect(callback).toBeDefined();
    expect(body.response).toEqual({ annotations: link, events: link });
    expect(body.task.response).toEqual({ annotations: link, events: link });
    expect(JSON.stringify(body)).not.toContain('frames');
    const tracks = await read(body.response.annotations.url, server.dev.test_key);
    expect(tracks.status).toBe(200);
    expect(Array.isArray(await tracks.json())).toBe(true);
  });

  it('refuses a link with another account’s or mode’s key, a changed link, and an expired one', async () => {
    const taskId = await create('videoplaybackannotation', video);
    const { url } = (await call('GET', `/v1/task/${taskId}`)).body.response.annotations;
    const other = await createAccount(server.uow, `results-other-${db}`, new Date());
    expect((await read(url, other.test_key)).status).toBe(404);
    expect((await read(url, server.dev.live_key)).status).toBe(404);
    expect((await fetch(url)).status).toBe(401);
    const otherFile = await read(url.replace('/files/annotations', '/files/events'), server.dev.test_key);
    expect(otherFile.status).toBe(403);
    expect((await otherFile.json()).error).toContain('signature does not match');
    const later = url.replace(/expires=(\d+)/, (_: string, s: string) => `expires=${Number(s) + 1}`);
    expect((await read(later, server.dev.test_key)).status).toBe(403);

    expect((await read(url, server.dev.test_key)).status).toBe(200);
    clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const expired = await read(url, server.dev.test_key);
    expect(expired.status).toBe(403);
    expect((await expired.json()).error).toContain('expired');
    // Reading the task again gives a fresh link.
    const fresh = (await call('GET', `/v1/task/${taskId}`)).body.response.annotations.url;
    expect((await read(fresh, server.dev.test_key)).status).toBe(200);
  });

  it('keeps the files on the server for an account without a storage connection', async () => {
    const account = await createAccount(server.uow, `results-local-${db}`, new Date());
    const own = client(server, 'current', account.test_key);
    const made = await own('POST', '/v1/task/videoplaybackannotation', { json: { callback_url: receiver.url, ...video } });
    expect(made.status, made.text).toBe(200);
    const taskId = made.body.task_id;
    const got = (await own('GET', `/v1/task/${taskId}`)).body;
    expect(got.response).toEqual({ annotations: link, events: link });
    const annotations = await (await read(got.response.annotations.url, account.test_key)).json();
    expect(Array.isArray(annotations)).toBe(true);
    // Under RESULTS_DIR: <account>/<mode>/<task>/, whole files only.
    const dir = path.join(resultsDir, account.account_id, 'test', taskId);
    const files = readdirSync(dir).sort();
    expect(files.map((f) => f.replace(/^[0-9a-f]{16}-/, ''))).toEqual(['annotations.json', 'events.json']);
    expect(JSON.parse(readFileSync(path.join(dir, files[0]!), 'utf8'))).toEqual(annotations);
    expect((await read(got.response.annotations.url, server.dev.test_key)).status).toBe(404);
  });
});
