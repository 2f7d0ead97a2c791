// Seed 2.3 (TextCollectionAttachment): Markdown content may contain HTML; only the tags of the
// allowlist remain, all others are removed, and the task's params hold the sanitized content.
import { loadContract } from '../contract.ts';
import { ConformanceFailure, expectStatus, expectThat, type Check, type CheckContext } from '../types.ts';
import { SINK, createTask, readTask } from './helpers.ts';

const area = 'Attachments';
const seed = '2.3 Text-collection attachment (Markdown HTML: only the allowlisted tags remain)';

/**
 * The allowlist as the contract states it (TextCollectionAttachment: "only these tags remain, all
 * other tags are removed: address, article, ..., h1-h6, ..."), ranges such as h1-h6 spelt out.
 */
function allowlist(): string[] {
  const text = String(loadContract('current').doc.components?.schemas?.TextCollectionAttachment?.description ?? '').replace(/\s+/g, ' ');
  const listed = /all other tags are removed: ([^.]+)\./.exec(text)?.[1];
  if (!listed) throw new ConformanceFailure("the contract's TextCollectionAttachment should state the allowlist of Markdown HTML tags");
  return listed.split(',').flatMap((item) => {
    const range = /^([a-z]+)(\d)-\1(\d)$/.exec(item.trim());
    return range
      ? Array.from({ length: Number(range[3]) - Number(range[2]) + 1 }, (_, i) => `${range[1]}${Number(range[2]) + i}`)
      : [item.trim()];
  });
}
const removed = ['script', 'style', 'object', 'embed', 'form', 'input', 'button', 'svg', 'marquee', 'font'];

/** Every tag as an element of its own (each checked apart, so nesting rules cannot drop one). */
const html = (tags: string[]) => tags.map((t) => `<${t}>${t}-text</${t}>`).join('\n');
const plain = 'Plain <script>alert(1)</script> text stays as written.';

/** The tags that an HTML text opens. */
const opened = (text: string) => new Set([...text.matchAll(/<([a-z][a-z0-9]*)\b/gi)].map((m) => m[1]!.toLowerCase()));

function expectSanitized(content: unknown, where: string, allowed: string[]) {
  expectThat(typeof content === 'string', `${where}: the markdown attachment should keep its content`, content);
  const tags = opened(content as string);
  const lost = allowed.filter((t) => !tags.has(t));
  expectThat(lost.length === 0, `${where}: the allowlisted tags ${JSON.stringify(lost)} should remain`, content);
  const kept = removed.filter((t) => tags.has(t));
  expectThat(kept.length === 0, `${where}: the tags ${JSON.stringify(kept)} are not on the allowlist and should be removed`, content);
}

async function attachmentsOf(ctx: CheckContext, path: string): Promise<any[]> {
  const read = await ctx.call('GET', path);
  expectStatus(read, 200, `GET ${path}`);
  return read.body?.params?.attachments ?? [];
}

export const markdownChecks: Check[] = [
  {
    id: 'attachments/markdown-sanitized',
    area,
    seed,
    rule: "A text-collection task's (and training task's) Markdown attachment keeps every allowlisted tag and loses every other; a text attachment is kept as written.",
    kind: 'behaviour',
    // The older generation has no text-collection tasks.
    generations: ['current'],
    async run(ctx) {
      const allowed = allowlist();
      const attachments = [
        { type: 'markdown', content: `${html(allowed)}\n${html(removed)}` },
        { type: 'text', content: plain },
      ];
      const fields = [{ type: 'text', field_id: 'summary', title: 'Summary' }];
      const task = await createTask(ctx, 'textcollection', {
        callback_url: SINK,
        instruction: 'Read the attachments.',
        attachments,
        fields,
      });
      for (const [where, atts] of [
        ['the creation answer', task.params?.attachments ?? []],
        ['the task as read', (await readTask(ctx, task.task_id)).params?.attachments ?? []],
      ] as const) {
        expectSanitized(atts[0]?.content, `${where} (task)`, allowed);
        expectThat(atts[1]?.content === plain, `${where} (task): a text attachment should be kept as written`, atts[1]);
      }
      const training = await ctx.call('POST', '/v1/training_tasks/textcollection', {
        json: { attachments, fields, expected_response: { annotations: { summary: 'Tags.' } } },
      });
      expectStatus(training, 200, 'creating a text-collection training task');
      const stored = await attachmentsOf(ctx, `/v1/training_tasks/${training.body?.id}`);
      expectSanitized(stored[0]?.content, 'the training task as read', allowed);
      expectThat(stored[1]?.content === plain, 'the training task: a text attachment should be kept as written', stored[1]);
    },
  },
  {
    id: 'attachments/markdown-attributes',
    area,
    seed: `${seed}; the contract's attribute list and link schemes (our decision)`,
    rule: 'In a Markdown attachment, the allowlisted tags keep the attributes the contract lists (links with http, https or mailto only) and lose every other attribute.',
    kind: 'behaviour',
    generations: ['current'],
    async run(ctx) {
      const kept = [
        '<a href="https://example.com/a" title="A link">a</a>',
        '<a href="mailto:team@example.com">mail</a>',
        '<img src="https://example.com/i.png" alt="An image" title="Image" width="10" height="20">',
        '<iframe src="https://example.com/v" width="30" height="40" allowfullscreen></iframe>',
        '<data value="42">forty-two</data>',
        '<time datetime="2026-11-21">today</time>',
        '<table><colgroup span="2"><col span="1"></colgroup><tr><th colspan="2" rowspan="1">h</th><td colspan="1" rowspan="2">d</td></tr></table>',
      ];
      const dropped: Array<[string, string]> = [
        ['<a href="javascript:alert(1)" onclick="alert(2)" style="color:red" id="x">bad</a>', 'javascript:'],
        ['<img src="data:image/png;base64,AAAA" onerror="alert(3)" class="c">', 'data:'],
        ['<p onclick="alert(4)" style="x" class="y">p</p>', 'onclick'],
        ['<a href="ftp://example.com/f">ftp</a>', 'ftp:'],
      ];
      const content = [...kept, ...dropped.map(([html]) => html)].join('\n');
      const task = await createTask(ctx, 'textcollection', {
        callback_url: SINK,
        instruction: 'Read the attachment.',
        attachments: [{ type: 'markdown', content }],
        fields: [{ type: 'text', field_id: 'summary', title: 'Summary' }],
      });
      const stored = String((await readTask(ctx, task.task_id)).params?.attachments?.[0]?.content ?? '');
      const attributesOf = (html: string) =>
        [...html.matchAll(/\s([a-z-]+)(?:="([^"]*)")?/gi)].map((m) => `${m[1]!.toLowerCase()}=${m[2] ?? ''}`);
      const present = new Set([...stored.matchAll(/<[a-z][^>]*>/gi)].flatMap((m) => attributesOf(m[0])));
      for (const html of kept) {
        for (const attribute of [...html.matchAll(/<[a-z][^>]*>/gi)].flatMap((m) => attributesOf(m[0]))) {
          expectThat(present.has(attribute), `the listed attribute ${attribute} should remain in the stored Markdown`, stored);
        }
      }
      for (const [, bad] of dropped)
        expectThat(!stored.includes(bad), `${JSON.stringify(bad)} should not remain in the stored Markdown`, stored);
      for (const attribute of ['onclick', 'onerror', 'style', 'class', 'id']) {
        expectThat(
          ![...present].some((a) => a.startsWith(`${attribute}=`)),
          `the attribute ${attribute} is not listed and should be removed`,
          stored,
        );
      }
    },
  },
];
