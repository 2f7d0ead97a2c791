// Issue 37, an export written into the customer's bucket (an S3-protocol server on loopback), on
// both databases: the file is put into the target folder with the account's connection, the
// export names the object, and the object is the file the download link gives; a target in a
// bucket with no connection is refused naming it, and a bucket that is gone fails the export,
// saying what the service answered.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../support/net.ts';
import { s3Keys, startBucketServer, type TestBucketServer } from '../support/s3.ts';
import { client, databases, hasPostgres, startTestServer, type TestServer } from '../support/server.ts';
import { importAll } from '../support/transfer.ts';
import { until } from '../support/wait.ts';

describe.each(databases.filter((db) => db === 'pglite' || hasPostgres()))('exports into a bucket on %s', (db) => {
  let server: TestServer;
  let buckets: TestBucketServer;
  let key: string;
  let call: ReturnType<typeof client>;
  const connect = (bucket: string) =>
    call('POST', '/v1/storage/connections', {
      json: { bucket, endpoint: buckets.endpoint, access_key_id: s3Keys.accessKeyId, secret_access_key: s3Keys.secretAccessKey },
    });
  /** POST /v1/exports, then GET it until it has ended. */
  async function ended(body: object) {
    const asked = await call('POST', '/v1/exports', { json: body });
    expect(asked.status, asked.text).toBe(200);
    let done: any;
    await until(async () => {
      done = (await call('GET', `/v1/exports/${asked.body.export_id}`)).body;
      return done.state !== 'queued' && done.state !== 'running';
    }, 'the export to end');
    return done;
  }
  beforeAll(async () => {
    buckets = await startBucketServer(['fleet-exports', 'unconnected', 'short-lived']);
    server = await startTestServer(db, { ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
    key = server.dev.test_key;
    call = client(server, 'current', key);
    const lines = [1, 2, 3].map((n) =>
      JSON.stringify({
        type: 'categorization',
        callback_url: 'https://example.com/hook',
        instruction: 'Billing or support?',
        attachment_type: 'text',
        attachment: `ticket ${n}`,
        categories: ['billing', 'support'],
      }),
    );
    expect((await importAll(server, key, `${lines.join('\n')}\n`)).created).toBe(3);
  });
  afterAll(async () => {
    await server?.close();
    await buckets?.close();
  });

  it('writes the file into the target folder of a connected bucket and names the object', async () => {
    const unconnected = await call('POST', '/v1/exports', { json: { target: 's3://unconnected/weekly/' } });
    expect(unconnected.status).toBe(400);
    expect(unconnected.body.error).toContain('no storage connection to s3://unconnected/ in test mode');
    const notFolder = await call('POST', '/v1/exports', { json: { target: 's3://fleet-exports/weekly.jsonl' } });
    expect(notFolder.status).toBe(400);
    expect(notFolder.body.error).toContain('target');

    expect((await connect('fleet-exports')).status).toBe(200);
    const done = await ended({ format: 'jsonl', target: 's3://fleet-exports/weekly/' });
    expect(done).toMatchObject({
      state: 'completed',
      tasks_written: 3,
      target: 's3://fleet-exports/weekly/',
      target_url: `s3://fleet-exports/weekly/${done.file_name}`,
    });
    const object = await buckets.getBytes('fleet-exports', `weekly/${done.file_name}`);
    expect(object).not.toBeNull();
    const downloaded = Buffer.from(await (await fetch(done.download_url)).arrayBuffer());
    expect(object!.equals(downloaded)).toBe(true);
    const lines = gunzipSync(object!).toString('utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).params.attachment).sort()).toEqual(['ticket 1', 'ticket 2', 'ticket 3']);
  });

  it('fails the export, saying what the bucket answered, when the file cannot be put there', async () => {
    expect((await connect('short-lived')).status).toBe(200);
    await buckets.deleteBucket('short-lived');
    const done = await ended({ target: 's3://short-lived/' });
    expect(done.state).toBe('failed');
    expect(done.error).toMatch(
      /^The file could not be written to s3:\/\/short-lived\/exp_[0-9a-f]{24}\.jsonl\.gz: .*no bucket "short-lived"/,
    );
    expect(done).not.toHaveProperty('download_url');
    expect(done).not.toHaveProperty('target_url');
    const listed = await fetch(`${server.url}/v1/exports/${done.export_id}`, { headers: { authorization: basicAuth(key) } });
    expect(listed.status).toBe(200);
  });
});
