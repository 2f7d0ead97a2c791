// A task's attachment shown as what it is: text as text, media in their elements (loaded through
// the server, `media`), a PDF's pages drawn by pdf.js as the document player draws them (read
// through the server too: Chromium shows no PDF in a sandboxed frame), websites framed (sandboxed
// as every customer frame is, straight from their host: a web page cannot be passed on faithfully)
// with a link to open them.
import { frameAttributes } from '../../server/domain/markup-allowlist.ts';
import type { MediaAddress } from '../media.ts';
import { pdfSource } from './pdf.ts';
import { el } from './types.ts';

export type AttachmentType = 'text' | 'image' | 'video' | 'audio' | 'website' | 'pdf';

export function attachmentView(type: AttachmentType, attachment: string, media: MediaAddress): HTMLElement {
  const box = el('figure', { class: 'attachment', 'data-attachment-type': type });
  switch (type) {
    case 'text':
      box.append(el('blockquote', {}, attachment));
      break;
    case 'image':
      box.append(el('img', { src: media(attachment), alt: 'The image to categorize' }));
      break;
    case 'video':
      box.append(el('video', { src: media(attachment), controls: '', preload: 'metadata' }));
      break;
    case 'audio':
      box.append(el('audio', { src: media(attachment), controls: '', preload: 'metadata' }));
      break;
    case 'pdf':
      box.append(
        pdfPages(media(attachment)),
        el('figcaption', {}, el('a', { href: attachment, target: '_blank', rel: 'noopener noreferrer' }, 'Open the PDF in a new tab')),
      );
      break;
    default:
      box.append(
        el('iframe', {
          src: attachment,
          title: 'The website',
          ...frameAttributes,
        }),
        el('figcaption', {}, el('a', { href: attachment, target: '_blank', rel: 'noopener noreferrer' }, 'Open the website in a new tab')),
      );
  }
  return box;
}

/** Every page of the PDF at `url`, one image each, drawn by pdf.js (loaded now). */
function pdfPages(url: string): HTMLElement {
  const pages = el('div', { class: 'pdf-pages', role: 'group', 'aria-label': 'The PDF document' });
  const status = el('p', { class: 'muted', role: 'status' }, 'Loading the PDF…');
  pages.append(status);
  void (async () => {
    const source = await pdfSource(url);
    for (let n = 1; n <= source.pages; n++) {
      status.textContent = `Drawing page ${n} of ${source.pages}…`;
      pages.insertBefore(el('img', { src: await source.page(n), alt: `Page ${n} of ${source.pages} of the PDF` }), status);
    }
    status.remove();
  })().catch(() => {
    status.textContent = 'The PDF could not be shown here: open it in a new tab.';
  });
  return pages;
}
