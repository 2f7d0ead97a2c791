// Issue 37, an import read from the customer's bucket (an S3-protocol server on loopback), on both
// databases: a manifest object (JSON Lines) whose tasks name the bucket's objects is read with the
// account's connection; without a connection to the bucket the import is refused, naming it. A
// prefix of the bucket is one task per object under it, made from the params template.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Keys, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { endedImport, postImport } from '../support/transfer.ts';

const task = (n: number) => ({
  type: 'categorization',
  callback_url: 'https://example.com/hook',
  instruction: 'Which vehicle?',
  attachment_type: 'image',
  attachment: `s3://fleet-data/frames/${n}.png`,
  categories: ['car', 'truck'],
  unique_id: `frame-${n}`,
});

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('imports from a bucket on %s', (db) => {
  let server: TestServer;
  let buckets: TestBucketServer;
  beforeAll(async () => {
    buckets = await startBucketServer(['fleet-data', 'unconnected', 'fleet-frames']);
    await buckets.put('fleet-data', 'manifests/day-1.jsonl', `${[1, 2, 3].map((n) => JSON.stringify(task(n))).join('\n')}\n`);
    server = await startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
  });
  afterAll(async () => {
    await server?.close();
    await buckets?.close();
  });

  it('reads a manifest object of a connected bucket into tasks, and refuses a bucket with no connection', async () => {
    const key = server.dev.test_key;
    const refused = await postImport(server, key, '', { source_url: 's3://fleet-data/manifests/day-1.jsonl' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('no storage connection to s3://fleet-data/ in test mode');
    const connected = await client(server, 'current', key)('POST', '/v1/storage/connections', {
      json: {
        bucket: 'fleet-data',
        endpoint: buckets.endpoint,
        access_key_id: s3Keys.accessKeyId,
        secret_access_key: s3Keys.secretAccessKey,
      },
    });
    expect(connected.status, connected.text).toBe(200);
    const posted = await postImport(server, key, '', { source_url: 's3://fleet-data/manifests/day-1.jsonl' });
    expect(posted).toMatchObject({ status: 200, body: { state: 'fetching', source_url: 's3://fleet-data/manifests/day-1.jsonl' } });
    const done = await endedImport(server, key, posted.body.import_id);
    expect(done).toMatchObject({ state: 'completed', created: 3, refused: 0 });
    const listed = await client(server, 'current', key)('GET', '/v1/tasks?unique_id=frame-2');
    expect(listed.body.docs[0].params.attachment).toBe('s3://fleet-data/frames/2.png');
    // A manifest that is not there: the import fails, saying so (the signed link never shown).
    const missing = await postImport(server, key, '', { source_url: 's3://fleet-data/manifests/none.jsonl' });
    const failed = await endedImport(server, key, missing.body.import_id);
    expect(failed).toMatchObject({
      state: 'failed',
      error: 'The file could not be fetched from source_url: the server answered 404, not 200.',
    });
  });

  it('makes one task per object under a prefix, from the params template, exactly once', async () => {
    const key = server.dev.test_key;
    for (const name of ['frames/a.png', 'frames/b.png', 'frames/night/c.png', 'other/d.png'])
      await buckets.put('fleet-frames', name, 'png');
    await buckets.put('fleet-frames', 'frames/empty/', '');
    const connected = await client(server, 'current', key)('POST', '/v1/storage/connections', {
      json: {
        bucket: 'fleet-frames',
        endpoint: buckets.endpoint,
        access_key_id: s3Keys.accessKeyId,
        secret_access_key: s3Keys.secretAccessKey,
      },
    });
    expect(connected.status, connected.text).toBe(200);
    const template = {
      callback_url: 'https://example.com/hook',
      instruction: 'Vehicle?',
      attachment_type: 'image',
      attachment: '{{url}}',
      categories: ['car', 'truck'],
      metadata: { file: '{{key}}' },
    };
    const untyped = await postImport(server, key, '', { source_url: 's3://fleet-frames/frames/', params: template });
    expect(untyped).toMatchObject({ status: 400, body: { error: expect.stringContaining('needs type') } });
    const asCsv = await postImport(server, key, '', { source_url: 's3://fleet-frames/frames/', type: 'categorization', format: 'csv' });
    expect(asCsv).toMatchObject({ status: 400, body: { error: expect.stringContaining('format csv does not apply') } });

    const query = { source_url: 's3://fleet-frames/frames/', type: 'categorization', params: template };
    const done = await endedImport(server, key, (await postImport(server, key, '', query)).body.import_id);
    expect(done).toMatchObject({ state: 'completed', created: 3, duplicates: 0, refused: 0 });
    const listed = await client(server, 'current', key)('GET', '/v1/tasks?type=categorization&limit=100');
    const made = listed.body.docs
      .filter((t: any) => String(t.params.attachment).startsWith('s3://fleet-frames/'))
      .map((t: any) => [t.params.attachment, t.metadata.file])
      .sort();
    expect(made).toEqual([
      ['s3://fleet-frames/frames/a.png', 'frames/a.png'],
      ['s3://fleet-frames/frames/b.png', 'frames/b.png'],
      ['s3://fleet-frames/frames/night/c.png', 'frames/night/c.png'],
    ]);
    // The same prefix again: every object's task is there already.
    const again = await endedImport(server, key, (await postImport(server, key, '', query)).body.import_id);
    expect(again).toMatchObject({ state: 'completed', created: 0, duplicates: 3 });
    // A template that names no {{url}}: the object is the attachment.
    const { attachment: _, metadata: __, ...plain } = template;
    const other = await endedImport(
      server,
      key,
      (await postImport(server, key, '', { source_url: 's3://fleet-frames/other/', type: 'categorization', params: plain })).body.import_id,
    );
    expect(other).toMatchObject({ state: 'completed', created: 1 });
    const d = await client(server, 'current', key)('GET', '/v1/tasks?type=categorization&limit=100');
    expect(d.body.docs.map((t: any) => t.params.attachment)).toContain('s3://fleet-frames/other/d.png');
  });
});
