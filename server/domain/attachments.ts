// Attachments of a task's parameters.
import type { Json } from './model.ts';

/** A host ending in `.invalid` simulates an attachment that cannot be fetched (test mode only). */
export function failedTestAttachments(params: Json): string[] {
  const urls: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string' && /^https?:\/\//i.test(v)) urls.push(v);
  };
  add(params.attachment);
  if (Array.isArray(params.attachments)) {
    for (const a of params.attachments) add(a && typeof a === 'object' ? (a as Json).content : a);
  }
  return urls.filter((u) => {
    try {
      return new URL(u).hostname.endsWith('.invalid');
    } catch {
      return false;
    }
  });
}
