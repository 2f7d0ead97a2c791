// Issue 37, attachments in the customer's bucket (an S3-protocol server on loopback), on both
// databases: s3:// and gs:// attachments are accepted only when the account has a connection to
// the bucket in that mode (400 naming the bucket otherwise), checked in live mode like http
// attachments (a missing object: the task's error and the error callback, with no secret in it),
// and passed to the worker holding the task through the media route: streamed by the server
// (proxy) or by a link signed for the object that lives no longer than the lease (presigned). A
// lease that ends makes the route refuse, and the link it gave expires with the lease.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../server/domain/accounts.ts';
import { testClock } from '../support/clock.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { s3Keys, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { createWorker, workerClient } from '../support/workers.ts';

/** 1000 bytes that are not text. */
const picture = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) % 251));
const distinctiveSecret = 'S3-secret-never-shown-37-attachments';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('bucket attachments on %s', (db) => {
  let server: TestServer;
  let buckets: TestBucketServer;
  let receiver: Receiver;
  const clock = testClock();

  beforeAll(async () => {
    buckets = await startBucketServer(['street-frames', 'scans']);
    await buckets.put('street-frames', 'day-1/frame-0001.png', picture, 'image/png');
    await buckets.put('scans', 'page-1.png', picture, 'image/png');
    receiver = await startReceiver();
    server = await startTestServer(
      db,
      {
        ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
        STORAGE_MEDIA_ORIGINS: buckets.endpoint,
        ATTACHMENT_CHECK_POLL_MS: '50',
        DELIVERY_POLL_MS: '50',
        WORK_SWEEP_POLL_MS: '0',
      },
      undefined,
      { now: clock.now },
    );
  });
  afterAll(async () => {
    await server?.close();
    await buckets?.close();
    await receiver?.close();
  });

  /** A fresh account with a connection (in `mode`) to `bucket`. */
  async function account(bucket: string, options: { mode?: 'test' | 'live'; media?: 'proxy' | 'presigned'; provider?: 's3' | 'gcs' } = {}) {
    const secrets = await createAccount(server.uow, `storage-${db}-${Math.random().toString(16).slice(2)}`, new Date());
    const key = options.mode === 'test' ? secrets.test_key : secrets.live_key;
    const customer = client(server, 'current', key);
    const made = await customer('POST', '/v1/storage/connections', {
      json: {
        bucket,
        endpoint: buckets.endpoint,
        access_key_id: s3Keys.accessKeyId,
        secret_access_key: distinctiveSecret,
        ...(options.media ? { media: options.media } : {}),
        ...(options.provider ? { provider: options.provider } : {}),
      },
    });
    expect(made.status, made.text).toBe(200);
    return { secrets, customer, key };
  }

  const imageTask = (attachment: string) => ({
    callback_url: receiver.url,
    instruction: 'Which vehicle?',
    attachment_type: 'image',
    attachment,
    categories: ['car', 'truck'],
  });

  it('accepts an s3:// or gs:// attachment only with a connection to its bucket in that mode, and names the bucket otherwise', async () => {
    const { customer, secrets } = await account('street-frames', { mode: 'test' });
    const ok = await customer('POST', '/v1/task/categorization', { json: imageTask('s3://street-frames/day-1/frame-0001.png') });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.params.attachment).toBe('s3://street-frames/day-1/frame-0001.png');
    // The older generation takes the same attachments, by the same rule.
    const legacy = await client(server, 'legacy', secrets.test_key)('POST', '/v1/task/categorization', {
      json: imageTask('s3://street-frames/day-1/frame-0001.png'),
    });
    expect(legacy.status, legacy.text).toBe(200);
    const other = await customer('POST', '/v1/task/categorization', { json: imageTask('s3://scans/page-1.png') });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe(
      'attachment s3://scans/page-1.png is in bucket "scans", and this account has no storage connection to s3://scans/ in test mode (POST /v1/storage/connections).',
    );
    // gs:// is another provider's bucket of the same name: not connected.
    const gs = await customer('POST', '/v1/task/categorization', { json: imageTask('gs://street-frames/day-1/frame-0001.png') });
    expect(gs.status).toBe(400);
    expect(gs.body.error).toContain('gs://street-frames/');
    // The other mode has no connection.
    const live = await client(server, 'current', secrets.live_key)('POST', '/v1/task/categorization', {
      json: imageTask('s3://street-frames/day-1/frame-0001.png'),
    });
    expect(live.status).toBe(400);
    expect(live.body.error).toContain('in live mode');
    // Text collection's file attachments too; other schemes stay refused.
    const text = await customer('POST', '/v1/task/textcollection', {
      json: {
        callback_url: receiver.url,
        instruction: 'Transcribe',
        attachments: [{ type: 'image', content: 's3://scans/page-1.png' }],
        fields: [{ type: 'text', field_id: 'total', title: 'Total' }],
      },
    });
    expect(text.status).toBe(400);
    expect(text.body.error).toContain('bucket "scans"');
    const ftp = await customer('POST', '/v1/task/categorization', { json: imageTask('ftp://street-frames/a.png') });
    expect(ftp.status).toBe(400);
    // A gcs connection serves gs:// attachments.
    const google = await account('scans', { mode: 'test', provider: 'gcs' });
    const viaGs = await google.customer('POST', '/v1/task/categorization', { json: imageTask('gs://scans/page-1.png') });
    expect(viaGs.status, viaGs.text).toBe(200);
  });

  it('checks a live bucket attachment: a missing object is the task error and the error callback, without the secret', async () => {
    const { customer } = await account('street-frames');
    const missing = await customer('POST', '/v1/task/categorization', { json: imageTask('s3://street-frames/no-such-frame.png') });
    expect(missing.status, missing.text).toBe(200);
    const present = await customer('POST', '/v1/task/categorization', { json: imageTask('s3://street-frames/day-1/frame-0001.png') });
    const [callback] = await receiver.waitFor((all) => all.some((r) => r.json?.task_id === missing.body.task_id), 'the error callback');
    const sent = receiver.byTask.get(missing.body.task_id)![0]!;
    expect(callback).toBeDefined();
    expect(sent.json).toMatchObject({
      task_id: missing.body.task_id,
      attachments: [{ url: 's3://street-frames/no-such-frame.png', statusCode: 404 }],
    });
    expect(sent.json.error).toContain('s3://street-frames/no-such-frame.png');
    expect(sent.body).not.toContain(distinctiveSecret);
    const task = await customer('GET', `/v1/task/${missing.body.task_id}`);
    expect(task.body.status).toBe('error');
    // The object that exists passes its check: the task waits for a worker.
    await until(
      async () => (await customer('GET', `/v1/task/${present.body.task_id}`)).body.status === 'pending',
      'check of the present object',
    );
    expect(receiver.byTask.get(present.body.task_id)).toBeUndefined();
  });

  /** A live task of a fresh account whose bucket is connected with `media`, held by a worker. */
  async function held(media: 'proxy' | 'presigned') {
    const { secrets, customer } = await account('street-frames', { media });
    const created = await customer('POST', '/v1/task/categorization', { json: imageTask('s3://street-frames/day-1/frame-0001.png') });
    expect(created.status, created.text).toBe(200);
    const worker = await createWorker(server, { accountId: secrets.account_id });
    const call = workerClient(server, worker.token);
    let next: Awaited<ReturnType<typeof call>> | undefined;
    await until(async () => {
      next = await call('POST', '/v1/assignments/next', {});
      return next.status === 200;
    }, 'an assignment');
    return {
      customer,
      call,
      assignment: next!.body as { assignment_id: string; lease_token: string; lease_expires_at: string; task: any },
    };
  }

  const media = (assignmentId: string, query: Record<string, string>) =>
    fetch(`${server.url}/worker/v1/assignments/${assignmentId}/media?${new URLSearchParams(query)}`, { redirect: 'manual' });

  it('streams the object to the worker holding the task (proxy), never showing a key, and refuses once the lease ends', async () => {
    const { assignment: a } = await held('proxy');
    expect(a.task.params.attachment).toBe('s3://street-frames/day-1/frame-0001.png');
    expect(JSON.stringify(a)).not.toContain(distinctiveSecret);
    const url = { url: 's3://street-frames/day-1/frame-0001.png', lease_token: a.lease_token };
    const res = await media(a.assignment_id, url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(picture);
    // Another object of the bucket, which the task does not name: 404.
    const other = await media(a.assignment_id, { ...url, url: 's3://street-frames/other.png' });
    expect(other.status).toBe(404);
    // The lease lapses on the server's clock: the route refuses.
    clock.advance(11 * 60_000);
    const lapsed = await media(a.assignment_id, url);
    expect(lapsed.status).toBe(409);
    expect(await lapsed.json()).toMatchObject({ code: 'lease_lost' });
  });

  it('hands out a link signed for the object that lives no longer than the lease (presigned), renewed while it is held', async () => {
    const { assignment: a, call } = await held('presigned');
    const url = { url: 's3://street-frames/day-1/frame-0001.png', lease_token: a.lease_token };
    const first = await media(a.assignment_id, url);
    expect(first.status).toBe(307);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const link = new URL(first.headers.get('location')!);
    expect(link.origin).toBe(buckets.endpoint);
    expect(decodeURIComponent(link.pathname)).toBe('/street-frames/day-1/frame-0001.png');
    expect(link.href).not.toContain(distinctiveSecret);
    // At most STORAGE_LINK_SECONDS (300), and the lease has 600 s left.
    expect(Number(link.searchParams.get('X-Amz-Expires'))).toBe(300);
    const direct = await fetch(link);
    expect(direct.status).toBe(200);
    expect(Buffer.from(await direct.arrayBuffer())).toEqual(picture);
    // 9 minutes on, 1 minute of lease left: the link lives 60 s at most.
    clock.advance(9 * 60_000);
    const late = new URL((await media(a.assignment_id, url)).headers.get('location')!);
    expect(Number(late.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(60);
    // A heartbeat renews the lease: the next link lives its full time again.
    const beat = await call('POST', `/v1/assignments/${a.assignment_id}/heartbeat`, { lease_token: a.lease_token, active_ms: 1000 });
    expect(beat.status, beat.text).toBe(200);
    const renewed = new URL((await media(a.assignment_id, url)).headers.get('location')!);
    expect(Number(renewed.searchParams.get('X-Amz-Expires'))).toBe(300);
    // Once the lease has ended, no link at all.
    clock.advance(11 * 60_000);
    const ended = await media(a.assignment_id, url);
    expect(ended.status).toBe(409);
  });

  it('passes nothing on once the connection is deleted', async () => {
    const { assignment: a, customer } = await held('proxy');
    const list = await customer('GET', '/v1/storage/connections');
    await customer('DELETE', `/v1/storage/connections/${list.body.connections[0].connection_id}`);
    const res = await media(a.assignment_id, { url: 's3://street-frames/day-1/frame-0001.png', lease_token: a.lease_token });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ code: 'media_unavailable' });
  });
});
