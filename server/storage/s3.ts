// Object storage (issue 37): the customer's S3-compatible buckets, and Google Cloud Storage through
// its S3 interoperability. Requests are made and signed by the AWS SDK (@aws-sdk/client-s3 and its
// presigner): well kept, speaks every S3-compatible service, and signs links without a request.
// Its sockets go through the same guard as callbacks: the endpoint's addresses are checked when
// they are looked up (a customer's endpoint must not reach into our network unless
// ALLOW_PRIVATE_NETWORKS allows it), and a literal address is checked before any request.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import {
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { refusalReason } from '../delivery/net.ts';

/** What reaching a bucket takes (a connection, its secret opened). */
export interface BucketAccess {
  provider: 's3' | 'gcs';
  bucket: string;
  endpoint: string;
  region: string;
  pathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface StorageNetwork {
  allowPrivateNetworks: readonly string[];
  /** Bounds connecting and each wait for the service's answer. */
  timeoutMs: number;
}

/** The storage settings (config.storage) and the networks a customer's endpoint may be in. */
export interface StorageSettings extends StorageNetwork {
  /** The longest a link signed for a worker's browser lives (STORAGE_LINK_SECONDS); never past the lease. */
  linkSeconds: number;
  /** The origins the labeling app may load files from (STORAGE_MEDIA_ORIGINS): a presigned bucket's must be one. */
  mediaOrigins: readonly string[];
}

/** The defaults of server/config.ts (an app made without settings: a test's, the bench's). */
export const defaultStorageSettings: StorageSettings = { allowPrivateNetworks: [], timeoutMs: 15_000, linkSeconds: 300, mediaOrigins: [] };

/** The origin a link signed for one of the bucket's objects points at: the endpoint's, with the bucket before its host unless path-style. */
export function bucketOrigin(access: Pick<BucketAccess, 'bucket' | 'endpoint' | 'pathStyle'>): string {
  const u = new URL(access.endpoint);
  return access.pathStyle ? u.origin : `${u.protocol}//${access.bucket}.${u.host}`;
}

/** The defaults a connection request leaves out. */
export function endpointDefaults(provider: 's3' | 'gcs', region: string | undefined, endpoint: string | undefined) {
  const r = region ?? (provider === 'gcs' ? 'auto' : 'us-east-1');
  const e = endpoint ?? (provider === 'gcs' ? 'https://storage.googleapis.com' : `https://s3.${r}.amazonaws.com`);
  return { region: r, endpoint: e.replace(/\/$/, ''), pathStyle: endpoint !== undefined };
}

class RefusedAddress extends Error {
  readonly code = 'EREFUSED_ADDRESS';
}

/** dns.lookup, then each address checked: a name that resolves into a refused network is not connected to. */
function guardedLookup(allow: readonly string[]) {
  return (
    hostname: string,
    options: LookupOptions,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const refused = addresses.find((a) => refusalReason(a.address, allow) !== null);
      if (refused) return callback(new RefusedAddress(`${hostname} resolves to ${refused.address}, not a public address`), '', 0);
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Why the endpoint's literal address (no DNS involved) is refused, or null. */
function endpointRefusal(endpoint: string, allow: readonly string[]): string | null {
  let host: string;
  try {
    host = new URL(endpoint).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return 'not a valid URL';
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return refusalReason('127.0.0.1', allow) && 'not a public address';
  return isIP(host) && refusalReason(host, allow) ? 'not a public address' : null;
}

const clients = new Map<string, S3Client>();

/** A client for the bucket (kept per endpoint, region and key: sockets are reused). */
function s3Client(access: BucketAccess, net: StorageNetwork): S3Client {
  const id = JSON.stringify([access.endpoint, access.region, access.pathStyle, access.accessKeyId, access.secretAccessKey, net]);
  let client = clients.get(id);
  if (!client) {
    const lookup = guardedLookup(net.allowPrivateNetworks);
    client = new S3Client({
      endpoint: access.endpoint,
      region: access.region,
      forcePathStyle: access.pathStyle,
      credentials: { accessKeyId: access.accessKeyId, secretAccessKey: access.secretAccessKey },
      maxAttempts: 2,
      // Google's interoperability and most S3-compatible services know no CRC32 checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: new NodeHttpHandler({
        connectionTimeout: net.timeoutMs,
        requestTimeout: net.timeoutMs,
        httpAgent: new HttpAgent({ keepAlive: true, lookup }),
        httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
      }),
    });
    if (clients.size > 200) clients.clear();
    clients.set(id, client);
  }
  return client;
}

export type StorageFailure = {
  code: 'storage_bucket_not_found' | 'storage_access_denied' | 'storage_wrong_region' | 'storage_unreachable';
  message: string;
};

const networkWords: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the name could not be resolved',
  ETIMEDOUT: 'timed out',
  ECONNRESET: 'the connection was closed',
  EREFUSED_ADDRESS: 'not a public address',
  TimeoutError: 'timed out',
};

/** A failed request to a bucket, in words that name what failed (never a key's secret). */
function storageFailure(err: unknown, access: BucketAccess): StorageFailure {
  const e = err as S3ServiceException & { code?: string; $response?: { headers?: Record<string, string> } };
  const status = e?.$metadata?.httpStatusCode;
  const at = `The storage service at ${access.endpoint}`;
  if (e instanceof S3ServiceException || status !== undefined) {
    const headers = e.$response?.headers ?? {};
    const actual = headers['x-amz-bucket-region'];
    if (
      (actual && actual !== access.region) ||
      status === 301 ||
      e.name === 'AuthorizationHeaderMalformed' ||
      e.name === 'PermanentRedirect'
    )
      return {
        code: 'storage_wrong_region',
        message: actual
          ? `Bucket "${access.bucket}" is in region ${actual}, not ${access.region}.`
          : `${at} says bucket "${access.bucket}" is not in region ${access.region}.`,
      };
    if (status === 404 || e.name === 'NoSuchBucket' || e.name === 'NotFound')
      return { code: 'storage_bucket_not_found', message: `${at} has no bucket "${access.bucket}".` };
    if (
      status === 403 ||
      status === 401 ||
      e.name === 'AccessDenied' ||
      e.name === 'InvalidAccessKeyId' ||
      e.name === 'SignatureDoesNotMatch'
    )
      return {
        code: 'storage_access_denied',
        message: `${at} denied access to bucket "${access.bucket}" with access key ${access.accessKeyId} (HTTP ${status ?? 403}).`,
      };
    return { code: 'storage_unreachable', message: `${at} answered HTTP ${status ?? 'with an error'} for bucket "${access.bucket}".` };
  }
  const failed = err as { code?: string; name?: string; cause?: { code?: string } } | undefined;
  const code = failed?.code ?? failed?.name ?? '';
  const cause = failed?.cause?.code;
  const words = networkWords[code] ?? (cause ? networkWords[cause] : undefined) ?? 'it did not answer';
  return { code: 'storage_unreachable', message: `The storage endpoint ${access.endpoint} could not be reached: ${words}.` };
}

/** Asks for the bucket with the connection's keys: null when it answers, else what failed. */
export async function testBucket(access: BucketAccess, net: StorageNetwork): Promise<StorageFailure | null> {
  const literal = endpointRefusal(access.endpoint, net.allowPrivateNetworks);
  if (literal)
    return {
      code: 'storage_unreachable',
      message: `The storage endpoint ${access.endpoint} could not be reached: ${literal} (private networks are not allowed on this server).`,
    };
  try {
    await s3Client(access, net).send(new HeadBucketCommand({ Bucket: access.bucket }));
    return null;
  } catch (err) {
    return storageFailure(err, access);
  }
}

/** Whether an object exists: null when it does, else why it cannot be fetched (for the attachment error). */
export async function checkObject(
  access: BucketAccess,
  key: string,
  net: StorageNetwork,
): Promise<{ statusCode: number; reason: string } | null> {
  if (endpointRefusal(access.endpoint, net.allowPrivateNetworks)) return { statusCode: 0, reason: 'address not allowed' };
  try {
    await s3Client(access, net).send(new HeadObjectCommand({ Bucket: access.bucket, Key: key }));
    return null;
  } catch (err) {
    const status = (err as S3ServiceException).$metadata?.httpStatusCode;
    if (status) return { statusCode: status, reason: status === 404 ? 'no such object' : `HTTP ${status}` };
    return { statusCode: 0, reason: storageFailure(err, access).message };
  }
}

/**
 * A link to GET one object, valid `seconds` (at least 1) from now by the bucket's clock: anyone
 * holding it may read that object, and nothing else, until it expires.
 */
export function presignedGet(access: BucketAccess, key: string, seconds: number, net: StorageNetwork): Promise<string> {
  return getSignedUrl(s3Client(access, net), new GetObjectCommand({ Bucket: access.bucket, Key: key }), {
    expiresIn: Math.max(1, Math.floor(seconds)),
  });
}

/**
 * The keys of the objects under `prefix`, in the service's order (by key), page by page; a key
 * ending with `/` (a folder marker) is no object. Throws a StorageError naming what failed.
 */
export async function* listKeys(access: BucketAccess, prefix: string, net: StorageNetwork): AsyncGenerator<string> {
  const literal = endpointRefusal(access.endpoint, net.allowPrivateNetworks);
  if (literal)
    throw new StorageError({
      code: 'storage_unreachable',
      message: `The storage endpoint ${access.endpoint} could not be reached: ${literal}.`,
    });
  let token: string | undefined;
  do {
    const page = await s3Client(access, net)
      .send(new ListObjectsV2Command({ Bucket: access.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }))
      .catch((err: unknown) => {
        throw new StorageError(storageFailure(err, access));
      });
    for (const o of page.Contents ?? []) if (o.Key && !o.Key.endsWith('/')) yield o.Key;
    token = page.NextContinuationToken;
  } while (token);
}

/** A request to a bucket that failed, in the words of StorageFailure. */
export class StorageError extends Error {
  constructor(readonly failure: StorageFailure) {
    super(failure.message);
  }
}

/**
 * Puts one object into the bucket from `size` bytes, held or streamed (a single PUT: at most 5 GiB,
 * the S3 limit of one; only held bytes can be sent again on a retry). Throws a StorageError naming
 * what failed.
 */
export async function putObject(
  access: BucketAccess,
  key: string,
  body: Buffer | AsyncIterable<Buffer>,
  meta: { size: number; contentType: string },
  net: StorageNetwork,
): Promise<void> {
  const literal = endpointRefusal(access.endpoint, net.allowPrivateNetworks);
  if (literal)
    throw new StorageError({
      code: 'storage_unreachable',
      message: `The storage endpoint ${access.endpoint} could not be reached: ${literal}.`,
    });
  try {
    await s3Client(access, net).send(
      new PutObjectCommand({
        Bucket: access.bucket,
        Key: key,
        Body: Buffer.isBuffer(body) ? body : Readable.from(body),
        ContentLength: meta.size,
        ContentType: meta.contentType,
      }),
    );
  } catch (err) {
    throw new StorageError(storageFailure(err, access));
  }
}

/** Reads one object: its bytes as a stream. Throws a StorageError naming what failed (a missing object: storage_bucket_not_found's 404). */
export async function getObject(access: BucketAccess, key: string, net: StorageNetwork): Promise<AsyncIterable<Buffer>> {
  const literal = endpointRefusal(access.endpoint, net.allowPrivateNetworks);
  if (literal)
    throw new StorageError({
      code: 'storage_unreachable',
      message: `The storage endpoint ${access.endpoint} could not be reached: ${literal}.`,
    });
  try {
    const out = await s3Client(access, net).send(new GetObjectCommand({ Bucket: access.bucket, Key: key }));
    return out.Body as Readable;
  } catch (err) {
    throw new StorageError(storageFailure(err, access));
  }
}
