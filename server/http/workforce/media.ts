// The worker API's media route (GET /v1/assignments/{assignmentId}/media): a file of the task the
// caller holds, fetched by the server through the SSRF guard and streamed on in bounded memory, so
// that the labeling app never loads anything from a customer's host (its CSP allows images and
// media from its own origin only). Which URLs an assignment's lease opens is the domain's rule
// (domain/workforce/media.ts); here the bytes pass, with the host's range answers, limits, and the
// headers that keep a file opened by itself inert in the server's origin.
import type { Request, Response } from 'express';
import { bucketObject } from '../../domain/attachments.ts';
import type { UnitOfWork } from '../../domain/ports.ts';
import { assignmentFile, type AssignmentFile } from '../../domain/workforce/media.ts';
import { presignedGet } from '../../storage/s3.ts';
import { safeStream } from '../../delivery/net.ts';
import { HttpError } from '../errors.ts';
import { Streamed, type WorkerHandlerTable } from '../typed.ts';
import type { MediaSettings, WorkerApiDeps } from './deps.ts';
import { unauthenticated } from './auth.ts';

/** The defaults of server/config.ts. */
export const defaultMediaSettings: MediaSettings = { timeoutMs: 15_000, maxBytes: 2 ** 31, allowPrivateNetworks: [], linkSeconds: 300 };

/** What a file opened by itself may do in the server's origin: nothing. */
const inert = {
  'Cache-Control': 'private, max-age=3600',
  'X-Content-Type-Options': 'nosniff',
  'Content-Disposition': 'attachment',
  'Content-Security-Policy': "sandbox; default-src 'none'",
};

/** The media types passed on: what the players load. An octet stream, or no type at all, is passed on as an octet stream. */
function passedType(contentType: string | undefined): string | null {
  const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (essence === '' || essence === 'application/octet-stream' || essence === 'binary/octet-stream') return 'application/octet-stream';
  if (/^(image|audio|video)\/[a-z0-9][a-z0-9.+-]*$/.test(essence) || essence === 'application/pdf' || essence === 'application/json')
    return contentType!.trim();
  return null;
}

/** One byte range as browsers send it (`bytes=<first>-[<last>]`), or null: anything else is not passed on. */
function singleRange(header: string | undefined): string | null {
  const m = /^bytes=(\d{1,15})-(\d{0,15})$/.exec((header ?? '').trim());
  if (!m || (m[2] !== '' && Number(m[2]) < Number(m[1]))) return null;
  return `bytes=${m[1]}-${m[2]}`;
}

const unavailable = (message: string) => new HttpError(502, message, {}, 'media_unavailable');

const failureWords: Record<string, string> = {
  timeout: 'did not answer in time',
  refused_address: 'is not a public address',
  connection_refused: 'refused the connection',
  connection_reset: 'closed the connection',
  dns: 'could not be resolved',
  invalid_url: 'is not a valid URL',
  other: 'could not be reached',
};

/** The file at `url` to `res`: the host's status (200, 206) and media headers, then its bytes. */
async function relay(req: Request, res: Response, source: string, settings: MediaSettings, url = source): Promise<void> {
  const range = singleRange(req.get('range'));
  const answer = await safeStream(source, {
    headers: range ? { range } : {},
    timeoutMs: settings.timeoutMs,
    allowPrivateNetworks: settings.allowPrivateNetworks,
  });
  if (!answer.ok) throw unavailable(`The host of ${url} ${failureWords[answer.error] ?? failureWords.other}.`);
  try {
    const { status, headers } = answer;
    const whole = /\/(\d+)$/.exec(headers['content-range'] ?? '')?.[1];
    if (status === 416 && range)
      throw new HttpError(
        416,
        `The host of ${url} cannot serve ${range}${whole !== undefined ? ` (the file has ${whole} bytes)` : ''}.`,
        headers['content-range'] ? { 'Content-Range': headers['content-range'] } : {},
        'range_not_satisfiable',
      );
    if (status !== 200 && status !== 206) throw unavailable(`The host of ${url} answered HTTP ${status}.`);
    const type = passedType(headers['content-type']);
    if (!type)
      throw unavailable(
        `The host of ${url} answered ${headers['content-type']}, which is not passed on (images, audio, video, PDF, JSON and octet streams only).`,
      );
    const length = /^\d+$/.test(headers['content-length'] ?? '') ? Number(headers['content-length']) : null;
    const size = status === 206 && whole !== undefined ? Number(whole) : status === 200 ? length : null;
    if ((size ?? 0) > settings.maxBytes || (length ?? 0) > settings.maxBytes)
      throw unavailable(`The file at ${url} has ${size ?? length} bytes; at most ${settings.maxBytes} are passed on.`);
    res.status(status);
    res.setHeader('Content-Type', type);
    if (length !== null) res.setHeader('Content-Length', String(length));
    if (status === 206 && headers['content-range']) res.setHeader('Content-Range', headers['content-range']);
    if (headers['accept-ranges']?.trim().toLowerCase() === 'bytes') res.setHeader('Accept-Ranges', 'bytes');
    for (const [name, value] of Object.entries(inert)) res.setHeader(name, value);
    await pipe(answer.body, res, url, answer.close, settings);
  } finally {
    answer.close();
  }
}

/**
 * Copies the body to the answer with backpressure (a slow browser pauses the host, so memory
 * stays a buffer's worth), counting bytes: past maxBytes, or when the host falls silent for
 * timeoutMs while the browser waits, or when the browser goes away, both connections end. Before
 * the first byte went out that is a 502; after, the browser sees a cut answer (a media element
 * asks again with a range where it needs more).
 */
function pipe(body: NodeJS.ReadableStream, res: Response, url: string, close: () => void, settings: MediaSettings): Promise<void> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let idle: NodeJS.Timeout | undefined;
    let over = false;
    const stop = (why: string) => {
      if (over) return;
      over = true;
      clearTimeout(idle);
      close();
      if (!res.headersSent) return reject(unavailable(`The host of ${url} ${why}.`));
      if (!res.writableFinished) res.destroy();
      resolve();
    };
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => stop(`sent nothing for ${settings.timeoutMs} ms`), settings.timeoutMs);
    };
    body.on('data', (chunk: Buffer) => {
      if (over) return;
      sent += chunk.length;
      if (sent > settings.maxBytes) return stop(`sent more than ${settings.maxBytes} bytes, the most passed on`);
      if (res.write(chunk)) return arm();
      // The browser reads slower than the host sends: wait for it (its silence is not the host's).
      clearTimeout(idle);
      body.pause();
      res.once('drain', () => {
        arm();
        body.resume();
      });
    });
    body.on('end', () => {
      if (over) return;
      over = true;
      clearTimeout(idle);
      res.end();
      resolve();
    });
    body.on('error', () => stop('broke the connection'));
    res.on('close', () => {
      if (!res.writableFinished) stop('was left: the browser went away');
    });
    arm();
  });
}

/** How long the server's own signed request to a bucket stays valid: it is used at once. */
const proxySeconds = 60;

/**
 * Where an object of the account's bucket is read from: a link signed with the connection's keys,
 * for the server's own request (proxy) or for the browser (presigned: at most linkSeconds, and never
 * past the lease). Null when the account has no connection to the bucket any more.
 */
async function bucketLink(uow: UnitOfWork, file: AssignmentFile, settings: MediaSettings, now: Date) {
  const object = bucketObject(file.url);
  if (!object) return null;
  const access = await uow.storage.forBucket(file.accountId, file.mode, object.provider, object.bucket);
  if (!access) throw unavailable(`${file.url} is in bucket ${object.bucket}, to which the account has no storage connection any more.`);
  const net = { allowPrivateNetworks: settings.allowPrivateNetworks, timeoutMs: settings.timeoutMs };
  if (access.media === 'proxy') return { redirect: false, url: await presignedGet(access, object.key, proxySeconds, net) };
  const leaseLeft = Math.floor((file.leaseExpiresAt.getTime() - now.getTime()) / 1000);
  return { redirect: true, url: await presignedGet(access, object.key, Math.min(settings.linkSeconds, leaseLeft), net) };
}

export function mediaHandlers({ uow, media, now }: WorkerApiDeps): Pick<WorkerHandlerTable, 'getAssignmentMedia'> {
  return {
    getAssignmentMedia: async ({ path, query }) =>
      new Streamed(async (req, res) => {
        // The operation's credential (the contract's leaseToken scheme): the generated query type leaves it out.
        const leaseToken = req.query.lease_token;
        if (typeof leaseToken !== 'string')
          throw unauthenticated('lease_token is required: the lease of the assignment whose file this is.');
        const at = now();
        const file = await assignmentFile(uow, { assignmentId: path.assignmentId, leaseToken, url: query.url }, at);
        if (file === null) throw unauthenticated(`lease_token is not a lease of assignment ${path.assignmentId}.`);
        const link = await bucketLink(uow, file, media, at);
        if (link?.redirect) {
          res.status(307).setHeader('Location', link.url);
          res.setHeader('Cache-Control', 'no-store');
          res.end();
          return;
        }
        await relay(req, res, link?.url ?? file.url, media, file.url);
      }),
  };
}
