// Attachments of a task's parameters: which are URLs to fetch, preview links rewritten to direct
// links, and the test-mode simulation of a failed fetch.
import type { Json } from './model.ts';

const isUrl = (v: unknown): v is string => typeof v === 'string' && /^(https?|s3|gs):\/\//i.test(v);

/** An object of a customer's bucket, named in a task: `s3://<bucket>/<key>` or `gs://<bucket>/<key>`. */
export interface BucketObject {
  provider: 's3' | 'gcs';
  bucket: string;
  key: string;
}

/** `s3://<bucket>/<key>` or `gs://<bucket>/<key>`, read; null for anything else (an empty key too). */
export function bucketObject(url: string): BucketObject | null {
  const m = /^(s3|gs):\/\/([^/?#]+)\/([^?#]+)$/i.exec(url);
  if (!m) return null;
  return { provider: m[1]!.toLowerCase() === 'gs' ? 'gcs' : 's3', bucket: m[2]!, key: m[3]! };
}

/** A prefix of a customer's bucket: `s3://<bucket>/` or `s3://<bucket>/<prefix>/` (ending with `/`); null otherwise. */
export function bucketPrefix(url: string): { provider: 's3' | 'gcs'; bucket: string; prefix: string } | null {
  const m = /^(s3|gs):\/\/([^/?#]+)\/([^?#]*\/)?$/i.exec(url);
  if (!m) return null;
  return { provider: m[1]!.toLowerCase() === 'gs' ? 'gcs' : 's3', bucket: m[2]!, prefix: m[3] ?? '' };
}

/** The scheme of a provider's attachment URLs. */
export const bucketScheme = (provider: 's3' | 'gcs') => (provider === 'gcs' ? 'gs' : 's3');

/**
 * Every http(s) and bucket (s3://, gs://) attachment of the params: `attachment`, and `attachments` (URLs or `{content}`).
 * A text attachment is text even when it reads like a URL (`attachment_type: text`, or an entry's
 * `type: text`): it is shown, never fetched (issue 22).
 */
export function attachmentUrls(params: Json): string[] {
  const urls: string[] = [];
  const text = params.attachment_type === 'text';
  if (!text && isUrl(params.attachment)) urls.push(params.attachment);
  if (Array.isArray(params.attachments)) {
    for (const a of params.attachments) {
      const v = fetchable(a, text);
      if (v !== undefined) urls.push(v);
    }
  }
  return urls;
}

/** The URL of an entry of `attachments` that is fetched; undefined for text (its own type, or else the task's). */
function fetchable(a: unknown, textByDefault: boolean): string | undefined {
  if (a && typeof a === 'object') {
    const { type, content } = a as Json;
    return (type === undefined ? !textByDefault : type !== 'text') && isUrl(content) ? content : undefined;
  }
  return !textByDefault && isUrl(a) ? a : undefined;
}

/**
 * Preview pages of well-known storage providers, rewritten to the direct link of the file:
 * Dropbox (`?dl=0` → `?dl=1`), Google Drive (`/file/d/<id>/view` → `/uc?export=download&id=<id>`),
 * and GitHub's blob pages (→ `raw.githubusercontent.com`). Other URLs are kept as they are.
 */
export function directLink(url: string): string {
  if (bucketObject(url)) return url;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (/(^|\.)dropbox\.com$/.test(u.hostname) && u.searchParams.get('dl') === '0') {
    u.searchParams.set('dl', '1');
    return u.toString();
  }
  const drive = /^\/file\/d\/([^/]+)\/(view|preview|edit)$/.exec(u.pathname);
  if (u.hostname === 'drive.google.com' && drive) return `https://drive.google.com/uc?export=download&id=${drive[1]}`;
  const blob = /^\/([^/]+)\/([^/]+)\/blob\/(.+)$/.exec(u.pathname);
  if (u.hostname === 'github.com' && blob) return `https://raw.githubusercontent.com/${blob[1]}/${blob[2]}/${blob[3]}`;
  return url;
}

/** The params with every preview link replaced by its direct link (text attachments kept as they are). */
export function withDirectLinks(params: Json): Json {
  const out: Json = { ...params };
  const text = params.attachment_type === 'text';
  if (!text && isUrl(out.attachment)) out.attachment = directLink(out.attachment);
  if (Array.isArray(out.attachments)) {
    out.attachments = out.attachments.map((a: unknown) => {
      const url = fetchable(a, text);
      if (url === undefined) return a;
      return a && typeof a === 'object' ? { ...(a as Json), content: directLink(url) } : directLink(url);
    });
  }
  return out;
}

/** A host ending in `.invalid` simulates an attachment that cannot be fetched (test mode only). */
export function failedTestAttachments(params: Json): string[] {
  return attachmentUrls(params).filter((u) => {
    if (bucketObject(u)) return false;
    try {
      return new URL(u).hostname.endsWith('.invalid');
    } catch {
      return false;
    }
  });
}
