// A real S3-protocol server on loopback for the storage tests (s3rver, in this process): a bucket
// with CORS set as docs/storage.md says, its accounts' keys, and a client to put objects in it.
// s3rver checks access key ids and the expiry of signed links; it does not check V4 signatures.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** s3rver's one account. */
export const s3Keys = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

const cors = (origin: string) => `<CORSConfiguration>
  <CORSRule>
    <AllowedOrigin>${origin}</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>HEAD</AllowedMethod>
    <AllowedHeader>Range</AllowedHeader>
    <MaxAgeSeconds>3000</MaxAgeSeconds>
  </CORSRule>
</CORSConfiguration>`;

export interface TestBucketServer {
  endpoint: string;
  put(bucket: string, key: string, body: string | Buffer, contentType?: string): Promise<void>;
  get(bucket: string, key: string): Promise<string | null>;
  /** An object's bytes (a gzip file, say), or null when there is none. */
  getBytes(bucket: string, key: string): Promise<Buffer | null>;
  /** Deletes an empty bucket (what a customer who removes it does). */
  deleteBucket(bucket: string): Promise<void>;
  close(): Promise<void>;
}

/** Buckets made at start, each with CORS for `origin` (the labeling app's). */
export async function startBucketServer(buckets: string[], origin = '*'): Promise<TestBucketServer> {
  const directory = mkdtempSync(path.join(tmpdir(), 'humantask-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name, configs: [cors(origin)] })),
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: s3Keys });
  return {
    endpoint,
    async put(bucket, key, body, contentType = 'application/octet-stream') {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
    },
    async get(bucket, key) {
      try {
        const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return (await r.Body?.transformToString()) ?? null;
      } catch {
        return null;
      }
    },
    async getBytes(bucket, key) {
      try {
        const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return r.Body ? Buffer.from(await r.Body.transformToByteArray()) : null;
      } catch {
        return null;
      }
    },
    async deleteBucket(bucket) {
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The storage checks' bucket (`--bucket`) on a test bucket server: a bucket "conformance" made at its start. */
export const conformanceBucket = (buckets: TestBucketServer) =>
  ({ endpoint: buckets.endpoint, name: 'conformance', region: 'us-east-1', ...s3Keys }) as const;
