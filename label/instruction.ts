// The task's instruction is Markdown or HTML written by the customer: rendered with marked, then
// sanitized with DOMPurify down to the API description's allowlist (the tags and attributes the
// server keeps in text-collection Markdown, server/domain/sanitize.ts). Every frame gets the
// allowlist's sandbox and no referrer; every image comes through the server (media.ts).
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { allowedAttributes as attributesByTag, allowedTags, frameAttributes } from '../shared/markup-allowlist.ts';
import type { MediaAddress } from './media.ts';

const allowedAttributes = [...new Set(Object.values(attributesByTag).flat())];

/** The media address of the sanitize call under way (sanitizing is synchronous). */
let mediaOf: MediaAddress = (url) => url;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  // A link in the instruction opens beside the task, never in its place.
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
  // A frame runs nothing, navigates nothing and raises no dialog, whatever the customer asked for.
  if (node.tagName === 'IFRAME') for (const [name, value] of Object.entries(frameAttributes)) node.setAttribute(name, value);
  const src = node.tagName === 'IMG' ? node.getAttribute('src') : null;
  if (src) node.setAttribute('src', mediaOf(src));
});

/** The instruction (or a Markdown attachment) as sanitized HTML, its images loaded through `media`. */
export function instructionHtml(markdown: string, media: MediaAddress): string {
  const html = marked.parse(markdown, { async: false, gfm: true });
  mediaOf = media;
  try {
    return DOMPurify.sanitize(html, {
      ALLOWED_TAGS: allowedTags,
      ALLOWED_ATTR: allowedAttributes,
      ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/(?!\/))/i,
    });
  } finally {
    mediaOf = (url) => url;
  }
}
