// The files of an assignment's task that the server passes on to the worker holding it (the worker
// API's media route): which URLs a task names, and whether a lease token opens an assignment's
// files. The labeling app loads every image, recording, video, PDF and frame file through that
// route, so that no customer's host learns a worker's address (SECURITY.md, "The labeling app").
import { timingSafeEqual } from 'node:crypto';
import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { attachmentUrls, bucketObject } from '../attachments.ts';
import { notFound } from '../errors.ts';
import type { Json, Task } from '../model.ts';
import type { UnitOfWork } from '../ports.ts';
import { assignmentWork } from './assignments.ts';
import { whyNotHeld } from './work.ts';

/** The WHATWG form of an absolute http(s) URL, or null for anything else. */
function httpUrl(text: string): string | null {
  if (!/^https?:\/\//i.test(text)) return null;
  try {
    return new URL(text).href;
  } catch {
    return null;
  }
}

/**
 * The `src` of every image of a Markdown or HTML text, rendered as the labeling app renders it
 * (marked with GitHub's flavour; label/instruction.ts), so that both see the same addresses.
 */
function imageSources(markdown: string): string[] {
  const sources: string[] = [];
  sanitizeHtml(marked.parse(markdown, { async: false, gfm: true }), {
    allowedTags: ['img'],
    allowedAttributes: { img: ['src'] },
    exclusiveFilter: (frame) => {
      if (frame.tag === 'img' && typeof frame.attribs.src === 'string') sources.push(frame.attribs.src);
      return false;
    },
  });
  return sources;
}

/**
 * Every file URL a task names, in the WHATWG form: each http(s) string anywhere in its params, and
 * each image of its instruction and of its Markdown attachments (`{type: 'markdown', content}`).
 */
function taskFileUrls(task: Pick<Task, 'instruction' | 'params'>): Set<string> {
  const urls = new Set<string>();
  const add = (text: string) => {
    const url = httpUrl(text);
    if (url) urls.add(url);
  };
  for (const src of imageSources(task.instruction ?? '')) add(src);
  const walk = (value: unknown): void => {
    if (typeof value === 'string') add(value);
    else if (Array.isArray(value)) for (const v of value) walk(v);
    else if (value && typeof value === 'object') {
      const entry = value as Json;
      if (entry.type === 'markdown' && typeof entry.content === 'string') for (const src of imageSources(entry.content)) add(src);
      for (const v of Object.values(entry)) walk(v);
    }
  };
  walk(task.params);
  // Objects of the account's buckets: its attachments only, compared as written.
  for (const url of attachmentUrls(task.params)) if (bucketObject(url)) urls.add(url);
  return urls;
}

const sameToken = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** A file of an assignment's task that its lease opens: the URL, whose task it is, and until when. */
export interface AssignmentFile {
  url: string;
  accountId: string;
  mode: Task['mode'];
  leaseExpiresAt: Date;
}

/**
 * The file to fetch for `url` of assignment `assignmentId`, opened by `leaseToken`: null when the
 * token is not the assignment's (no such assignment, another one's token: the caller cannot tell);
 * a 409 (`lease_lost`, `task_canceled`, `assignment_closed`) when it was, but the lease has ended;
 * a 404 when the task, as the worker sees it, names no such file.
 */
export async function assignmentFile(
  uow: UnitOfWork,
  input: { assignmentId: string; leaseToken: string; url: string },
  now: Date,
): Promise<AssignmentFile | null> {
  const a = await uow.work.get(input.assignmentId, null);
  if (!a || !sameToken(a.leaseToken, input.leaseToken)) return null;
  if (a.status !== 'active' || a.leaseExpiresAt <= now) throw whyNotHeld(a, now);
  const { task } = await assignmentWork(uow, a);
  const url = bucketObject(input.url) ? input.url : httpUrl(input.url);
  if (!url || !taskFileUrls(task).has(url))
    throw notFound(`The task of assignment ${a.assignmentId} names no file at ${input.url}: only the files of its task are passed on.`);
  return { url, accountId: task.accountId, mode: task.mode, leaseExpiresAt: a.leaseExpiresAt };
}
