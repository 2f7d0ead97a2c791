// The HTML the API description allows in customer Markdown (section 2.3): the tags, and the
// attributes each keeps. The server sanitizes text-collection Markdown with it (sanitize.ts) and the
// labeling app the task's instruction and those attachments (label/instruction.ts): one list, so
// the two never differ. Plain data, with no imports: the app's bundle takes it as it is.

export const allowedTags: string[] = [
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

/**
 * What every customer-supplied frame (`<iframe>` in an instruction or a Markdown attachment, and a
 * website or PDF attachment) carries, whatever the customer wrote: a sandbox that allows nothing
 * (no scripts, so no dialogs and no reading of the app; no navigation of the app's window, not
 * even after a click; no pop-ups, forms or plug-ins; an origin of its own), and no referrer. Set
 * after sanitizing, over any value the customer gave.
 */
export const frameAttributes: Readonly<Record<string, string>> = { sandbox: '', referrerpolicy: 'no-referrer' };

export const allowedAttributes: Record<string, string[]> = {
  a: ['href', 'title'],
  img: ['src', 'alt', 'title', 'width', 'height'],
  iframe: ['src', 'width', 'height', 'allowfullscreen', ...Object.keys(frameAttributes)],
  data: ['value'],
  time: ['datetime'],
  td: ['colspan', 'rowspan'],
  th: ['colspan', 'rowspan'],
  col: ['span'],
  colgroup: ['span'],
};
