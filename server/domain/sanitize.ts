// Markdown content of text-collection attachments may contain HTML; only the tags of the API
// description's allowlist (section 2.3) survive, everything else is removed (sanitize-html). Every
// frame is stored sandboxed (markup-allowlist.ts's frameAttributes), whatever the customer wrote.
import sanitizeHtml from 'sanitize-html';
import { allowedAttributes, allowedTags, frameAttributes } from '../../shared/markup-allowlist.ts';

function sanitizeMarkdown(markdown: string): string {
  return sanitizeHtml(markdown, {
    allowedTags,
    allowedAttributes,
    allowedSchemes: ['http', 'https', 'mailto'],
    // Set before the attributes are filtered (so they must be allowed), over the customer's own;
    // an empty sandbox is the strictest one, so it must not be dropped as an empty attribute.
    transformTags: { iframe: (tagName, attribs) => ({ tagName, attribs: { ...attribs, ...frameAttributes } }) },
    nonBooleanAttributes: sanitizeHtml.defaults.nonBooleanAttributes.filter((a) => a !== 'sandbox'),
    // Markdown is text: a `<` or `&` that is not a tag stays as written (no entity escaping).
    parser: { decodeEntities: false },
  });
}

/** Text-collection parameters: Markdown attachment content is stored sanitized. */
export function sanitizeTextCollectionParams(params: Record<string, unknown>): void {
  const attachments = params.attachments;
  if (!Array.isArray(attachments)) return;
  params.attachments = attachments.map((a: unknown) => {
    const att = a as { type?: unknown; content?: unknown } | null;
    return att && typeof att === 'object' && att.type === 'markdown' && typeof att.content === 'string'
      ? { ...att, content: sanitizeMarkdown(att.content) }
      : a;
  });
}
