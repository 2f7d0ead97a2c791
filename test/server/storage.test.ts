// Issue 37, storage connections: a customer connects its bucket (an S3-protocol server on loopback),
// per mode; the server tests the connection first and refuses it with a 4xx naming what failed
// (unknown bucket, access denied, wrong region, unreachable or private endpoint), keeps nothing
// then, and never shows, logs or sends the secret key.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Keys, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('storage connections on %s', (db) => {
  let server: TestServer;
  let bucketServer: TestBucketServer;
  let wrongRegion: Server;
  let log = '';
  let call: ReturnType<typeof client>;
  const connect = (body: object, key = server.dev.test_key) =>
    client(server, 'current', key)('POST', '/v1/storage/connections', { json: body });
  const bucket = (name: string, extra: object = {}) => ({
    bucket: name,
    endpoint: bucketServer.endpoint,
    access_key_id: s3Keys.accessKeyId,
    secret_access_key: s3Keys.secretAccessKey,
    ...extra,
  });

  beforeAll(async () => {
    bucketServer = await startBucketServer(['acme-images', 'acme-other']);
    // What Amazon S3 answers HeadBucket in another region's endpoint: 301 naming the bucket's region.
    wrongRegion = createServer((_req, res) => res.writeHead(301, { 'x-amz-bucket-region': 'eu-central-1' }).end());
    await new Promise<void>((resolve) => wrongRegion.listen(0, '127.0.0.1', resolve));
    const stream = new Writable({
      write: (chunk, _enc, done) => {
        log += chunk;
        done();
      },
    });
    server = await startTestServer(
      db,
      { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8', STORAGE_MEDIA_ORIGINS: bucketServer.endpoint },
      pino({ level: 'debug' }, stream),
    );
    call = client(server, 'current', server.dev.test_key);
  });
  afterAll(async () => {
    await server?.close();
    await bucketServer?.close();
    wrongRegion?.close();
  });

  it('connects a bucket after testing it, and shows, lists, and deletes it per mode without its secret', async () => {
    const made = await connect(bucket('acme-images'));
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({
      connection_id: expect.stringMatching(/^stc_[0-9a-f]{24}$/),
      provider: 's3',
      bucket: 'acme-images',
      url_prefix: 's3://acme-images/',
      endpoint: bucketServer.endpoint,
      region: 'us-east-1',
      path_style: true,
      access_key_id: 'S3RVER',
      media: 'proxy',
    });
    expect(made.body).not.toHaveProperty('secret_access_key');
    const id = made.body.connection_id;
    expect((await call('GET', `/v1/storage/connections/${id}`)).body).toEqual(made.body);
    expect((await call('GET', '/v1/storage/connections')).body).toEqual({ connections: [made.body] });
    // The other mode has its own connections: this one is not there.
    const live = client(server, 'current', server.dev.live_key);
    expect((await live('GET', `/v1/storage/connections/${id}`)).status).toBe(404);
    expect((await live('GET', '/v1/storage/connections')).body).toEqual({ connections: [] });
    // One connection per bucket and mode.
    const again = await connect(bucket('acme-images', { media: 'presigned' }));
    expect(again.status).toBe(409);
    expect(again.body.error).toContain(`s3://acme-images/ (${id})`);
    const liveMade = await connect(bucket('acme-images', { media: 'presigned' }), server.dev.live_key);
    expect(liveMade.status).toBe(200);
    expect(liveMade.body.media).toBe('presigned');
    // Deleted: gone from this mode only.
    const gone = await call('DELETE', `/v1/storage/connections/${id}`);
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual(made.body);
    expect((await call('GET', `/v1/storage/connections/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/storage/connections/${id}`)).status).toBe(404);
    expect((await live('GET', '/v1/storage/connections')).body.connections).toHaveLength(1);
  });

  it('refuses a connection whose test fails, naming what failed, and keeps nothing', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const cases: [object, string, string][] = [
      [bucket('no-such-bucket'), 'storage_bucket_not_found', `has no bucket "no-such-bucket"`],
      [
        bucket('acme-other', { access_key_id: 'AKIAUNKNOWN' }),
        'storage_access_denied',
        'denied access to bucket "acme-other" with access key AKIAUNKNOWN',
      ],
      [
        bucket('acme-other', { endpoint: `http://127.0.0.1:${(wrongRegion.address() as AddressInfo).port}`, region: 'eu-west-1' }),
        'storage_wrong_region',
        'Bucket "acme-other" is in region eu-central-1, not eu-west-1.',
      ],
      [
        bucket('acme-other', { endpoint: `http://127.0.0.1:${closedPort}` }),
        'storage_unreachable',
        'could not be reached: connection refused',
      ],
    ];
    for (const [body, code, words] of cases) {
      const r = await connect(body);
      expect(r.status, code).toBe(400);
      expect(r.body).toMatchObject({ status_code: 400, code });
      expect(r.body.error).toContain(words);
    }
    const bad = await connect({ bucket: 'Not_A_Bucket!', access_key_id: 'a', secret_access_key: 'b' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('bucket');
    const noSecret = await connect({ bucket: 'acme-other', endpoint: bucketServer.endpoint, access_key_id: 'a' });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error).toContain('secret_access_key');
    expect((await call('GET', '/v1/storage/connections')).body.connections.map((c: { bucket: string }) => c.bucket)).not.toContain(
      'acme-other',
    );
  });

  it('refuses an endpoint in a private network unless the server allows it', async () => {
    const strict = await startTestServer(db);
    try {
      const r = await client(strict, 'current', strict.dev.test_key)('POST', '/v1/storage/connections', { json: bucket('acme-images') });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'storage_unreachable' });
      expect(r.body.error).toContain('not a public address');
      const named = await client(strict, 'current', strict.dev.test_key)('POST', '/v1/storage/connections', {
        json: bucket('acme-images', { endpoint: bucketServer.endpoint.replace('127.0.0.1', 'localhost') }),
      });
      expect(named.body).toMatchObject({ status_code: 400, code: 'storage_unreachable' });
      // Presigned links to an origin the labeling app may not load from (STORAGE_MEDIA_ORIGINS lists none here).
      const presigned = await client(strict, 'current', strict.dev.test_key)('POST', '/v1/storage/connections', {
        json: bucket('acme-images', { media: 'presigned' }),
      });
      expect(presigned.body).toMatchObject({ status_code: 400, code: 'storage_media_origin_not_allowed' });
      expect(presigned.body.error).toContain(`cannot load files from ${bucketServer.endpoint}`);
    } finally {
      await strict.close();
    }
  });

  it('shows and logs no secret key', async () => {
    const made = await connect(bucket('acme-other'));
    expect(made.status).toBe(200);
    const listed = await call('GET', '/v1/storage/connections');
    for (const text of [made.text, listed.text, (await call('GET', `/v1/storage/connections/${made.body.connection_id}`)).text])
      expect(text).not.toContain('secret_access_key');
    // A distinctive secret, refused: in neither the answer nor the log.
    const distinctive = 'wJalrXUtnFEMI-distinctive-secret-37';
    const refused = await connect(bucket('no-such-bucket', { secret_access_key: distinctive }));
    expect(refused.status).toBe(400);
    expect(refused.text).not.toContain(distinctive);
    const kept = await connect(bucket('acme-images', { secret_access_key: distinctive }), server.dev.live_key);
    expect([200, 409]).toContain(kept.status);
    expect(kept.text).not.toContain(distinctive);
    expect(log).not.toContain(distinctive);
  });
});
