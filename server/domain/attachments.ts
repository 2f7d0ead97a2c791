// Attachments of a task's parameters: which are URLs to fetch, preview links rewritten to direct
// links, and the test-mode simulation of a failed fetch.
import type { Json } from './model.ts';

const isUrl = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\//i.test(v);

/** Every http(s) attachment of the params: `attachment`, and `attachments` (URLs or `{content}`). */
export function attachmentUrls(params: Json): string[] {
  const urls: string[] = [];
  if (isUrl(params.attachment)) urls.push(params.attachment);
  if (Array.isArray(params.attachments)) {
    for (const a of params.attachments) {
      const v = a && typeof a === 'object' ? (a as Json).content : a;
      if (isUrl(v)) urls.push(v);
    }
  }
  return urls;
}

/**
 * Preview pages of well-known storage providers, rewritten to the direct link of the file:
 * Dropbox (`?dl=0` → `?dl=1`), Google Drive (`/file/d/<id>/view` → `/uc?export=download&id=<id>`),
 * and GitHub's blob pages (→ `raw.githubusercontent.com`). Other URLs are kept as they are.
 */
export function directLink(url: string): string {
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

/** The params with every preview link replaced by its direct link. */
export function withDirectLinks(params: Json): Json {
  const out: Json = { ...params };
  if (isUrl(out.attachment)) out.attachment = directLink(out.attachment);
  if (Array.isArray(out.attachments)) {
    out.attachments = out.attachments.map((a: unknown) => {
      if (isUrl(a)) return directLink(a);
      if (a && typeof a === 'object' && isUrl((a as Json).content))
        return { ...(a as Json), content: directLink((a as Json).content as string) };
      return a;
    });
  }
  return out;
}

/** A host ending in `.invalid` simulates an attachment that cannot be fetched (test mode only). */
export function failedTestAttachments(params: Json): string[] {
  return attachmentUrls(params).filter((u) => {
    try {
      return new URL(u).hostname.endsWith('.invalid');
    } catch {
      return false;
    }
  });
}
