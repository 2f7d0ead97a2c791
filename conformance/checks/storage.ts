// Storage (issue 37, current generation), against a bucket the suite and the server can both reach
// (`--bucket`): a connection is tested before it is kept and never shows its secret; a bucket
// attachment needs a connection; an import from a prefix makes one task per object from its
// template; an export with a target is written into the bucket. The suite puts and reads objects
// under `conformance/` with the bucket's keys (an S3 client of its own), and deletes nothing.
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type BucketOption, type Check, type CheckContext, ConformanceFailure, expectStatus, expectThat } from '../types.ts';
import { categorization, listTasks, withSink } from './helpers.ts';

const area = 'Storage';
const seed = 'decision: storage connections (docs/decisions/0016-storage-connections.md), issue 37';

const clients = new Map<string, S3Client>();

/** The suite's own client of the bucket (the keys it was given). */
function s3(bucket: BucketOption): S3Client {
  let client = clients.get(bucket.endpoint);
  if (!client) {
    client = new S3Client({
      endpoint: bucket.endpoint,
      region: bucket.region,
      forcePathStyle: true,
      credentials: { accessKeyId: bucket.accessKeyId, secretAccessKey: bucket.secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    clients.set(bucket.endpoint, client);
  }
  return client;
}

const bucketOf = (ctx: CheckContext): BucketOption => {
  if (!ctx.options.bucket) throw new ConformanceFailure('this check needs --bucket');
  return ctx.options.bucket;
};

/** The connection request for the run's bucket (its keys changed by `change`). */
const connectionBody = (bucket: BucketOption, change: Record<string, string> = {}) => ({
  bucket: bucket.name,
  endpoint: bucket.endpoint,
  region: bucket.region,
  path_style: true,
  access_key_id: bucket.accessKeyId,
  secret_access_key: bucket.secretAccessKey,
  ...change,
});

/** The account's connection to the run's bucket in test mode: the one there is (an earlier run's), or a new one. */
async function connected(ctx: CheckContext): Promise<any> {
  const bucket = bucketOf(ctx);
  const listed = await ctx.call('GET', '/v1/storage/connections');
  expectStatus(listed, 200, 'listing the storage connections');
  const found = (listed.body.connections as any[]).find((c) => c.bucket === bucket.name && c.provider === 's3');
  if (found) return found;
  const made = await ctx.call('POST', '/v1/storage/connections', { json: connectionBody(bucket) });
  expectStatus(made, 200, `connecting bucket ${bucket.name} at ${bucket.endpoint} (the server must reach it)`);
  return made.body;
}

/** A folder of its own under conformance/ in the bucket, for one check. */
const folder = (ctx: CheckContext, what: string) => `conformance/${ctx.unique(what).replace(/[^A-Za-z0-9_-]/g, '-')}/`;

async function endedExport(ctx: CheckContext, exportId: string): Promise<any> {
  return ctx.until(`export ${exportId} to end`, async () => {
    const got = await ctx.call('GET', `/v1/exports/${exportId}`);
    return ['completed', 'failed', 'expired'].includes(got.body?.state) ? got.body : undefined;
  });
}

export const storageChecks: Check[] = [
  {
    id: 'storage/connection-tested',
    area,
    seed,
    rule: 'A storage connection is tested against its bucket before it is kept: unknown keys and an unknown bucket are refused with 400 and a code naming what failed; a kept connection never shows its secret key.',
    kind: 'behaviour',
    generations: ['current'],
    needs: ['bucket'],
    async run(ctx) {
      const bucket = bucketOf(ctx);
      const secret = bucket.secretAccessKey;
      const wrongKey = await ctx.call('POST', '/v1/storage/connections', {
        json: connectionBody(bucket, { access_key_id: `${bucket.accessKeyId}NOTAKEY` }),
      });
      expectStatus(wrongKey, 400, 'connecting the bucket with an access key id the service does not know');
      expectThat(wrongKey.body?.code === 'storage_access_denied', 'the refusal should have code storage_access_denied', wrongKey.body);
      const missing = `${bucket.name}-${ctx
        .unique('none')
        .replace(/[^a-z0-9]/gi, '')
        .toLowerCase()}`.slice(0, 63);
      const noBucket = await ctx.call('POST', '/v1/storage/connections', { json: connectionBody(bucket, { bucket: missing }) });
      expectStatus(noBucket, 400, `connecting bucket ${missing}, which does not exist`);
      expectThat(
        noBucket.body?.code === 'storage_bucket_not_found',
        'the refusal should have code storage_bucket_not_found',
        noBucket.body,
      );
      const connection = await connected(ctx);
      const shown = await ctx.call('GET', `/v1/storage/connections/${connection.connection_id}`);
      expectStatus(shown, 200, 'reading the connection');
      expectThat(shown.body.bucket === bucket.name, 'the connection read should be to the bucket connected', shown.body);
      expectThat(!('secret_access_key' in shown.body), 'the connection read should not show secret_access_key', shown.body);
      // The access key id is shown (it names the key); the secret, where it is another text, nowhere.
      if (!bucket.accessKeyId.includes(secret))
        for (const ex of [wrongKey, noBucket, shown])
          expectThat(!ex.text.includes(secret), 'no answer should show the secret key', ex.text.slice(0, 500));
    },
  },
  {
    id: 'storage/attachment-needs-connection',
    area,
    seed,
    rule: 'An s3:// attachment of a connected bucket is accepted; one of a bucket the account has no connection to is refused with 400 naming the bucket.',
    kind: 'behaviour',
    generations: ['current'],
    needs: ['bucket'],
    async run(ctx) {
      const bucket = bucketOf(ctx);
      await connected(ctx);
      const image = { attachment_type: 'image', categories: ['car', 'truck'] };
      const made = await ctx.call('POST', '/v1/task/categorization', {
        json: await withSink(ctx, categorization({ ...image, attachment: `s3://${bucket.name}/${folder(ctx, 'attachment')}frame.png` })),
      });
      expectStatus(made, 200, 'creating a task whose attachment is an object of the connected bucket');
      const stranger = `${ctx
        .unique('unconnected')
        .replace(/[^a-z0-9]/gi, '')
        .toLowerCase()}`.slice(0, 50);
      const refused = await ctx.call('POST', '/v1/task/categorization', {
        json: await withSink(ctx, categorization({ ...image, attachment: `s3://${stranger}/frame.png` })),
      });
      expectStatus(refused, 400, `creating a task whose attachment is in bucket ${stranger}, which has no connection`);
      expectThat(String(refused.body?.error).includes(stranger), 'the refusal should name the bucket', refused.body);
    },
  },
  {
    id: 'storage/import-prefix',
    area,
    seed,
    rule: 'An import from a bucket prefix (source_url ending with /) makes one task per object under it from the params template, {{url}} the object; importing it again creates nothing.',
    kind: 'behaviour',
    generations: ['current'],
    needs: ['bucket'],
    async run(ctx) {
      const bucket = bucketOf(ctx);
      await connected(ctx);
      const prefix = folder(ctx, 'prefix');
      const keys = [`${prefix}a.png`, `${prefix}b.png`];
      for (const Key of keys)
        await s3(bucket).send(new PutObjectCommand({ Bucket: bucket.name, Key, Body: 'png', ContentType: 'image/png' }));
      const tag = ctx.unique('prefixed').slice(0, 60);
      const template = await withSink(ctx, categorization({ attachment_type: 'image', attachment: '{{url}}', tags: [tag] }));
      const query = { source_url: `s3://${bucket.name}/${prefix}`, type: 'categorization', params: JSON.stringify(template) };
      const importOnce = async () => {
        const posted = await ctx.call('POST', '/v1/imports', { query });
        expectStatus(posted, 200, `importing the prefix ${query.source_url}`);
        return ctx.until(`import ${posted.body.import_id} to end`, async () => {
          const got = await ctx.call('GET', `/v1/imports/${posted.body.import_id}`);
          return ['completed', 'stopped', 'failed'].includes(got.body?.state) ? got.body : undefined;
        });
      };
      const first = await importOnce();
      expectThat(first.state === 'completed' && first.created === 2, 'the import should create one task per object (2)', first);
      const listed = await listTasks(ctx, { tags: tag });
      const attachments = (listed.docs as any[]).map((t) => t.params.attachment).sort();
      expectThat(
        JSON.stringify(attachments) === JSON.stringify(keys.map((k) => `s3://${bucket.name}/${k}`)),
        'each task should have its object as the attachment',
        attachments,
      );
      const again = await importOnce();
      expectThat(
        again.state === 'completed' && again.created === 0 && again.duplicates === 2,
        'the prefix imported again should create nothing',
        again,
      );
    },
  },
  {
    id: 'storage/export-to-bucket',
    area,
    seed,
    rule: "An export with a target folder of a connected bucket is written into the bucket: target_url names the object, which holds the export's tasks.",
    kind: 'behaviour',
    generations: ['current'],
    needs: ['bucket'],
    async run(ctx) {
      const bucket = bucketOf(ctx);
      await connected(ctx);
      const tag = ctx.unique('bucketed').slice(0, 60);
      const ids: string[] = [];
      for (const n of [1, 2]) {
        const made = await ctx.call('POST', '/v1/task/categorization', {
          json: await withSink(ctx, categorization({ attachment: `${tag} ${n}`, tags: [tag] })),
        });
        expectStatus(made, 200, 'creating a task to export');
        ids.push(made.body.task_id);
      }
      const target = `s3://${bucket.name}/${folder(ctx, 'export')}`;
      const asked = await ctx.call('POST', '/v1/exports', { query: { tags: tag }, json: { format: 'jsonl', target } });
      expectStatus(asked, 200, `asking for an export into ${target}`);
      const done = await endedExport(ctx, asked.body.export_id);
      expectThat(done.state === 'completed', 'the export should complete', done);
      expectThat(
        typeof done.target_url === 'string' && done.target_url.startsWith(target),
        `the export should name the object written under ${target} (target_url)`,
        done,
      );
      const key = done.target_url.slice(`s3://${bucket.name}/`.length);
      let body: Buffer;
      try {
        const object = await s3(bucket).send(new GetObjectCommand({ Bucket: bucket.name, Key: key }));
        body = Buffer.from(await object.Body!.transformToByteArray());
      } catch (err) {
        throw new ConformanceFailure(`the object ${done.target_url} should be in the bucket: ${(err as Error).name}`);
      }
      const exported = gunzipSync(body)
        .toString('utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).task_id)
        .sort();
      expectThat(JSON.stringify(exported) === JSON.stringify([...ids].sort()), "the object should hold the export's tasks", exported);
    },
  },
];
