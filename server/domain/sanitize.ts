// Markdown content of text-collection attachments may contain HTML; only the tags of the API
// description's allowlist (section 2.3) survive, everything else is removed (sanitize-html).
import sanitizeHtml from 'sanitize-html';

const allowedTags = [
  'address',
  'article',
  'aside',
  'footer',
  'header',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hgroup',
  'main',
  'nav',
  'section',
  'blockquote',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'hr',
  'li',
  'ol',
  'p',
  'pre',
  'ul',
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'br',
  'cite',
  'code',
  'data',
  'dfn',
  'em',
  'i',
  'kbd',
  'mark',
  'q',
  'rb',
  'rp',
  'rt',
  'rtc',
  'ruby',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'caption',
  'col',
  'colgroup',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'img',
  'iframe',
];

function sanitizeMarkdown(markdown: string): string {
  return sanitizeHtml(markdown, {
    allowedTags,
    allowedAttributes: {
      a: ['href', 'title'],
      img: ['src', 'alt', 'title', 'width', 'height'],
      iframe: ['src', 'width', 'height', 'allowfullscreen'],
      data: ['value'],
      time: ['datetime'],
      td: ['colspan', 'rowspan'],
      th: ['colspan', 'rowspan'],
      col: ['span'],
      colgroup: ['span'],
    },
    allowedSchemes: ['http', 'https', 'mailto'],
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
