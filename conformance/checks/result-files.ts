// Responses kept as files (issue 37, decision record 24; current generation): a test-mode video
// task's response links its `annotations` and `events` as files, signed and expiring; each link
// reads its file (a JSON array) with the key of the task's account and mode, and is refused with
// another account's key, without a key, or changed; the callback carries the links, not the bulk.
import { type Check, type CheckContext, ConformanceFailure, expectThat, type KeyName } from '../types.ts';
import { createTask, settledTask } from './helpers.ts';

const area = 'Tasks';
const seed = 'decision: responses kept as files (docs/decisions/0024-large-results-as-files.md), issue 37';

/** A test-mode video task, to the receiver's mailbox `label` when given. */
const video = (callbackUrl?: string) => ({
  ...(callbackUrl ? { callback_url: callbackUrl } : { callback_url: 'conformance:sink' }),
  instruction: 'Track every vehicle and mark each lane change.',
  attachment: 'https://example.com/videos/drive-7.mp4',
  attachment_type: 'video',
  frame_rate: 2,
  geometries: { box: { objects_to_annotate: ['car', 'truck'] } },
  events_to_annotate: ['lane change'],
});

const isLink = (v: unknown): v is { url: string; expires_at: string } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { url?: unknown }).url === 'string' &&
  typeof (v as { expires_at?: unknown }).expires_at === 'string';

const keyOf = (ctx: CheckContext, key: KeyName): string | undefined =>
  key === 'main' ? ctx.options.key : key === 'other' ? ctx.options.otherKey : key === 'live' ? ctx.options.liveKey : undefined;

/**
 * GETs a result file link on the server under test (its path and query against the suite's base
 * URL: the link's origin is the server's own address, which a proxy or a load balancer may hide),
 * with `key` (none: no Authorization).
 */
async function readResultLink(ctx: CheckContext, url: string, key: KeyName = 'main'): Promise<{ status: number; body: any }> {
  const link = new URL(url);
  if (ctx.generation === 'current') {
    // Through the suite's client: the answer's shape is checked and the operation counted as covered.
    const query = Object.fromEntries(link.searchParams.entries());
    const ex = await ctx.call('GET', link.pathname, { query, key });
    return { status: ex.status, body: ex.body };
  }
  const secret = keyOf(ctx, key);
  const res = await fetch(new URL(link.pathname + link.search, ctx.options.baseUrl.replace(/\/+$/, '') + '/'), {
    headers: secret ? { authorization: `Basic ${Buffer.from(`${secret}:`).toString('base64')}` } : {},
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}

/** The task with every response file it links read and put in place (the inline response, for checks of its content). */
export async function inlineResultFiles(ctx: CheckContext, task: any): Promise<any> {
  const response = task?.response;
  if (!response || typeof response !== 'object' || !Object.values(response).some(isLink)) return task;
  const inline: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(response)) {
    if (!isLink(value)) {
      inline[name] = value;
      continue;
    }
    const read = await readResultLink(ctx, value.url);
    expectThat(read.status === 200 && Array.isArray(read.body), `reading the response file ${name} answered ${read.status}`, read.body);
    inline[name] = read.body;
  }
  return { ...task, response: inline };
}

export const resultFileChecks: Check[] = [
  {
    id: 'result-files/video-links',
    area,
    seed,
    rule:
      "A completed video task's response links its annotations and events as files; each link reads a JSON array with the task's key, " +
      "and is refused with another account's key (404), without a key (401), or when changed (403).",
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const created = await createTask(ctx, 'videoplaybackannotation', video());
      const task = await settledTask(ctx, created.task_id, ['completed']);
      for (const name of ['annotations', 'events']) {
        const link = task.response?.[name];
        expectThat(isLink(link), `response.${name} should be a link {url, expires_at}, got ${JSON.stringify(link)?.slice(0, 200)}`);
        const read = await readResultLink(ctx, link.url);
        expectThat(read.status === 200 && Array.isArray(read.body), `reading response.${name}.url answered ${read.status}`, read.body);
        if (name === 'annotations')
          expectThat(
            read.body.every((t: any) => typeof t?.label === 'string' && Array.isArray(t?.frames)),
            'the annotations file should hold the tracks (label, frames)',
            read.body,
          );
        if (ctx.options.otherKey) {
          const other = await readResultLink(ctx, link.url, 'other');
          expectThat(other.status === 404, `another account's key read response.${name}.url: ${other.status}`, other.body);
        } else ctx.note("no --other-key: another account's key was not tried");
        const none = await readResultLink(ctx, link.url, 'none');
        expectThat(none.status === 401, `reading response.${name}.url without a key answered ${none.status}`, none.body);
        const changed = link.url.replace(/expires=(\d+)/, (_: string, s: string) => `expires=${Number(s) + 60}`);
        const longer = await readResultLink(ctx, changed);
        expectThat(longer.status === 403, `a link with a later expiry (not signed so) answered ${longer.status}`, longer.body);
      }
    },
  },
  {
    id: 'result-files/callback-link',
    area,
    seed,
    rule: "A completed video task's callback carries the links to its response files, not the tracks and events.",
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const receiver = await ctx.receiver();
      const label = ctx.unique('result-files');
      const created = await createTask(ctx, 'videoplaybackannotation', video(receiver.url(label)));
      const body = await ctx.until(
        `the callback of task ${created.task_id}`,
        async () => receiver.received(label).find((r) => (r.method ?? 'POST') === 'POST' && r.body?.task_id === created.task_id)?.body,
      );
      for (const name of ['annotations', 'events']) {
        const link = body?.response?.[name];
        if (!isLink(link))
          throw new ConformanceFailure(
            `the callback's response.${name} should be a link {url, expires_at}, got ${JSON.stringify(link)?.slice(0, 200)}`,
          );
        const read = await readResultLink(ctx, link.url);
        expectThat(
          read.status === 200 && Array.isArray(read.body),
          `reading the callback's response.${name}.url answered ${read.status}`,
          read.body,
        );
      }
    },
  },
];
