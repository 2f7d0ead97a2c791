// The task's instruction is Markdown or HTML written by the customer: rendered with marked, then
// sanitized with DOMPurify down to the API description's allowlist (the tags and attributes the
// server keeps in text-collection Markdown, server/domain/sanitize.ts).
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { allowedAttributes as attributesByTag, allowedTags } from '../server/domain/markup-allowlist.ts';

const allowedAttributes = [...new Set(Object.values(attributesByTag).flat())];

// A link in the instruction opens beside the task, never in its place.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export function instructionHtml(markdown: string): string {
  const html = marked.parse(markdown, { async: false, gfm: true });
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS: allowedTags,
    ALLOWED_ATTR: allowedAttributes,
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/(?!\/))/i,
  });
}
